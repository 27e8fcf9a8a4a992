//! `--launch-overhead`: host time to enqueue one small GEMM, three ways, on the same buffers:
//! the plain call (`gemm`, the disabled observer), the same call with a recording observer,
//! and a bare driver launch of the same kernel with the argument bytes the runtime launches it
//! with, taken once by a deferring observer (no validation, no dispatch, no observer: the
//! floor; through `cuLaunchKernel` and through
//! `cuLaunchKernelEx`, the runtime's entry). Then the fronts' path (the Python and C calls): a
//! 1x64x64 bf16 tensor-core GEMM bare, through `gemm` on registered buffers, through
//! `gemm_raw` on the same memory as raw addresses, and through `gemm_raw_batch` of one call,
//! with the pieces a raw call adds: its device-free check and one driver bounds query an
//! operand. Each is timed over batches of launches (the stream drained between batches,
//! untimed), and the median per launch reported.

use crate::sample::median;
use gemm_runtime::{
    bf16, Context, DeviceBuffer, Dtype, GemmRequest, Op, Policy, RawGemm, RawMatrix, Recorder,
};
use std::time::Instant;

const BATCH: usize = 400;
const BATCHES: usize = 25;
const SHAPE: (usize, usize, usize) = (1, 256, 256);

/// Median microseconds a launch over `BATCHES` batches of `BATCH` launches of `launch`.
fn per_launch(
    ctx: &Context,
    mut launch: impl FnMut() -> Result<(), Box<dyn std::error::Error>>,
) -> Result<f64, Box<dyn std::error::Error>> {
    let mut samples = Vec::with_capacity(BATCHES);
    for batch in 0..BATCHES + 2 {
        ctx.synchronize()?;
        let t = Instant::now();
        for _ in 0..BATCH {
            launch()?;
        }
        let us = t.elapsed().as_secs_f64() * 1e6 / BATCH as f64;
        if batch >= 2 {
            samples.push(us); // the first two batches warm up
        }
    }
    ctx.synchronize()?;
    Ok(median(&mut samples))
}

/// Takes the launches of the calls it is passed to instead of letting them run: their exact
/// argument bytes (tensor maps included), for the bare launches.
#[derive(Default)]
struct Taken(Vec<gemm_runtime::PreparedLaunch>);

impl gemm_runtime::Observer for Taken {
    const ENABLED: bool = true;
    const DEFERS: bool = true;
    fn reserve(&mut self, _launches: usize) -> Result<(), gemm_runtime::GemmError> {
        Ok(())
    }
    fn record(&mut self, _record: gemm_runtime::LaunchRecord) {}
    fn defer(&mut self, launch: gemm_runtime::PreparedLaunch) {
        self.0.push(launch);
    }
}

/// The argument bytes the runtime launches `req` with.
fn launched_args<A: gemm_runtime::Element, C: gemm_runtime::Element>(
    ctx: &Context,
    req: GemmRequest<'_, A, C>,
) -> Result<gemm_runtime::ArgBytes, Box<dyn std::error::Error>> {
    let mut taken = Taken::default();
    let launch = ctx.gemm_observed(req, &mut taken)?;
    match taken.0.as_slice() {
        // The same kernel and grid as the launch it stands for.
        [one]
            if launch.kernel.map(gemm_runtime::KernelRef::Gemm) == Some(one.record.kernel)
                && one.record.grid == launch.grid =>
        {
            Ok(one.args)
        }
        [_] => Err("the taken launch is not the call's kernel and grid".into()),
        other => Err(format!("{} launches where one was expected", other.len()).into()),
    }
}

/// Microseconds a bare launch of `kernel` (the geometry `launch` had, the argument struct its
/// set binds from `sources`) takes through `cuLaunchKernel` and through `cuLaunchKernelEx` (the
/// runtime's entry, with the cluster attribute where the kernel runs in clusters): no
/// validation, no dispatch, no observer, the floor under a call. `plain` is `None` for a
/// cluster kernel, which `cuLaunchKernel` cannot launch.
struct Bare {
    plain: Option<f64>,
    ex: f64,
}

fn bare_launch(
    ctx: &Context,
    kernel: &gemm_runtime::KernelInfo,
    launch: &gemm_runtime::Launch,
    args: &gemm_runtime::ArgBytes,
) -> Result<Bare, Box<dyn std::error::Error>> {
    let module = ctx
        .stream()
        .context()
        .load_module(cudarc::nvrtc::Ptx::from_binary(
            ctx.tier().modules[kernel.module as usize].cubin.to_vec(),
        ))?;
    let func = module.load_function(kernel.name)?;
    if kernel.shared_bytes > 48 * 1024 {
        // As the runtime does: above 48 KiB a kernel must opt in to its shared memory.
        func.set_attribute(
            cudarc::driver::sys::CUfunction_attribute::CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
            kernel.shared_bytes as i32,
        )?;
    }
    let (g, b) = (launch.grid, launch.block);
    let clustered = launch.cluster != (1, 1, 1);
    let plain = (!clustered)
        .then(|| {
            per_launch(ctx, || {
                let mut params = [args.as_ptr() as *mut std::ffi::c_void];
                // SAFETY: the same kernel, geometry and argument bytes the validated call launched
                // with; `params` outlives the call.
                unsafe {
                    cudarc::driver::sys::cuLaunchKernel(
                        func.cu_function(),
                        g.0,
                        g.1,
                        g.2,
                        b.0,
                        b.1,
                        b.2,
                        launch.shared_bytes,
                        ctx.stream().cu_stream(),
                        params.as_mut_ptr(),
                        std::ptr::null_mut(),
                    )
                }
                .result()?;
                Ok(())
            })
        })
        .transpose()?;
    // SAFETY: a zeroed attribute (id IGNORE) is valid; both fields are set below.
    let mut attr: cudarc::driver::sys::CUlaunchAttribute = unsafe { std::mem::zeroed() };
    attr.id = cudarc::driver::sys::CUlaunchAttributeID::CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION;
    attr.value.clusterDim = cudarc::driver::sys::CUlaunchAttributeValue_union__bindgen_ty_1 {
        x: launch.cluster.0,
        y: launch.cluster.1,
        z: launch.cluster.2,
    };
    let ex = per_launch(ctx, || {
        let mut params = [args.as_ptr() as *mut std::ffi::c_void];
        let config = cudarc::driver::sys::CUlaunchConfig {
            gridDimX: g.0,
            gridDimY: g.1,
            gridDimZ: g.2,
            blockDimX: b.0,
            blockDimY: b.1,
            blockDimZ: b.2,
            sharedMemBytes: launch.shared_bytes,
            hStream: ctx.stream().cu_stream(),
            attrs: &mut attr,
            numAttrs: u32::from(clustered),
        };
        // SAFETY: as above; `config`, its attribute and `params` outlive the call.
        unsafe {
            cudarc::driver::sys::cuLaunchKernelEx(
                &config,
                func.cu_function(),
                params.as_mut_ptr(),
                std::ptr::null_mut(),
            )
        }
        .result()?;
        Ok(())
    })?;
    Ok(Bare { plain, ex })
}

/// The measured request: `y = x · w` at `SHAPE`, all row-major and unpadded.
fn request<'a>(
    x: &'a DeviceBuffer<f32>,
    w: &'a DeviceBuffer<f32>,
    y: &'a mut DeviceBuffer<f32>,
) -> GemmRequest<'a, f32, f32> {
    let (m, n, k) = SHAPE;
    GemmRequest::linear(x.mat(k), w.mat(n), None, y.mat_mut(n), (m, n, k))
}

pub fn run(ctx: &Context, commit: &str) -> Result<serde_json::Value, Box<dyn std::error::Error>> {
    let (m, n, k) = SHAPE;
    let x = ctx.upload(&vec![0.5f32; m * k])?;
    let w = ctx.upload(&vec![0.25f32; k * n])?;
    let mut y = ctx.alloc::<f32>(m * n)?;
    let launch = ctx.gemm(request(&x, &w, &mut y))?;
    let kernel = launch
        .kernel
        .and_then(gemm_runtime::kernel)
        .ok_or("no kernel launched")?;

    let plain = per_launch(ctx, || {
        ctx.gemm(request(&x, &w, &mut y))?;
        Ok(())
    })?;
    let mut recorder = Recorder::with_capacity(BATCH);
    let recorded = per_launch(ctx, || {
        if recorder.records().len() == BATCH {
            recorder.take();
        }
        ctx.gemm_observed(request(&x, &w, &mut y), &mut recorder)?;
        Ok(())
    })?;
    // The floor: the same kernel and argument bytes through the driver directly.
    let args = launched_args(ctx, request(&x, &w, &mut y))?;
    let bare = bare_launch(ctx, kernel, &launch, &args)?;
    let (bare_plain, bare_ex) = (bare.plain, bare.ex);
    // The floor the printout subtracts: cuLaunchKernel's, or the runtime's own entry for a
    // cluster kernel (which cuLaunchKernel cannot launch); the JSON keeps both as measured.
    let bare = bare_plain.unwrap_or(bare_ex);
    println!(
        "launch overhead, {m}x{n}x{k} f32 ({}), median of {BATCHES} batches of {BATCH}:",
        kernel.name
    );
    println!("  bare driver launch      {bare:>7.2} us  (cuLaunchKernelEx {bare_ex:.2} us)");
    println!(
        "  gemm (NoObserver)       {plain:>7.2} us  (+{:.2} us: validation, dispatch)",
        plain - bare
    );
    println!(
        "  gemm_observed(Recorder) {recorded:>7.2} us  (+{:.2} us over NoObserver)",
        recorded - plain
    );
    let raw = raw_path(ctx)?;
    Ok(serde_json::json!({
        "commit": commit,
        "shape": [m, n, k], "kernel": kernel.name, "batch": BATCH, "batches": BATCHES,
        "bare_driver_us": bare_plain, "bare_driver_ex_us": bare_ex, "gemm_no_observer_us": plain, "gemm_recorder_us": recorded,
        "raw_path": raw,
        "method": "host time to enqueue, median over batches; stream drained between batches (untimed)",
    }))
}

/// The fronts' path: what a raw call costs on top of `gemm`, and its pieces.
fn raw_path(ctx: &Context) -> Result<serde_json::Value, Box<dyn std::error::Error>> {
    const RAW: (usize, usize, usize) = (1, 64, 64);
    let (m, n, k) = RAW;
    let x = ctx.upload(&vec![bf16::from_f32(0.5); m * k])?;
    let w = ctx.upload(&vec![bf16::from_f32(0.25); k * n])?;
    let mut y = ctx.alloc::<bf16>(m * n)?;
    let registered = |y: &mut DeviceBuffer<bf16>| {
        let mut req = GemmRequest::linear(x.mat(k), w.mat(n), None, y.mat_mut(n), (m, n, k));
        req.policy = Some(Policy::TensorCore);
        ctx.gemm(req)
    };
    let launch = registered(&mut y)?;
    let info = launch
        .kernel
        .and_then(gemm_runtime::kernel)
        .ok_or("no kernel launched")?;
    let kernel = info.name;
    let call = RawGemm {
        op: Op::Nn,
        m,
        n,
        k,
        ab: Dtype::Bf16,
        c_dtype: Dtype::Bf16,
        a: RawMatrix {
            ptr: x.span().base(),
            ld: k,
        },
        b: RawMatrix {
            ptr: w.span().base(),
            ld: n,
        },
        c: RawMatrix {
            ptr: y.span().base(),
            ld: n,
        },
        bias: None,
        beta: 0.0,
        policy: Some(Policy::TensorCore),
        mode: None,
    };
    let gemm = per_launch(ctx, || {
        registered(&mut y)?;
        Ok(())
    })?;
    let raw = per_launch(ctx, || {
        ctx.gemm_raw(&call)?;
        Ok(())
    })?;
    let batch = per_launch(ctx, || {
        ctx.gemm_raw_batch(std::slice::from_ref(&call))
            .map_err(|f| f.error)?;
        Ok(())
    })?;
    // The same kernel bare: what the runtime adds is the difference.
    let args = {
        let mut req = GemmRequest::linear(x.mat(k), w.mat(n), None, y.mat_mut(n), (m, n, k));
        req.policy = Some(Policy::TensorCore);
        launched_args(ctx, req)?
    };
    let bare = bare_launch(ctx, info, &launch, &args)?;
    // The pieces, each over as many repetitions (nothing launched).
    let check = per_launch(ctx, || {
        std::hint::black_box(call.check()?);
        Ok(())
    })?;
    let bounds = per_launch(ctx, || {
        for ptr in [call.a.ptr, call.b.ptr, call.c.ptr] {
            let (mut base, mut size) = (0, 0);
            // SAFETY: both out-pointers are valid; the driver only reads `ptr` as an address.
            unsafe { cudarc::driver::sys::cuMemGetAddressRange_v2(&mut base, &mut size, ptr) }
                .result()?;
            std::hint::black_box((base, size));
        }
        Ok(())
    })?;
    println!("the fronts' path, {m}x{n}x{k} bf16 tensor-core ({kernel}):");
    match bare.plain {
        Some(plain) => println!(
            "  bare driver launch      {plain:>7.2} us  (cuLaunchKernelEx {:.2} us)",
            bare.ex
        ),
        None => println!(
            "  bare driver launch      {:>7.2} us  (cuLaunchKernelEx: a cluster kernel)",
            bare.ex
        ),
    }
    println!("  gemm (registered)       {gemm:>7.2} us");
    println!(
        "  gemm_raw                {raw:>7.2} us  (+{:.2} us: raw addresses)",
        raw - gemm
    );
    // gemm_raw_batch of one call runs gemm_raw: the two differ by the timing's spread alone.
    println!("  gemm_raw_batch of one   {batch:>7.2} us  (the same work as gemm_raw)");
    println!("  of which: check         {check:>7.2} us");
    println!("  of which: 3 bounds queries {bounds:>4.2} us (cuMemGetAddressRange)");
    Ok(serde_json::json!({
        "shape": [m, n, k], "kernel": kernel, "bare_driver_us": bare.plain,
        "bare_driver_ex_us": bare.ex, "gemm_us": gemm, "gemm_raw_us": raw,
        "gemm_raw_batch_us": batch, "check_us": check, "bounds_queries_us": bounds,
    }))
}
