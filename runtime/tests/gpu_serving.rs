//! The runtime as a serving engine uses it: streams of one device from several threads
//! (sharing the loaded modules, each with its own scratch), mode and policy per call, honest
//! copies, nothing run by a refused recording, timing and route listing.

mod common;
use common::*;
use gemm_runtime::*;

const M: usize = 5;
const K: usize = 300;
const N: usize = 129;

fn bits_of<T: Element>(v: &[T]) -> Vec<u32> {
    v.iter().map(|x| bits(*x)).collect()
}

/// One worker's outputs: a bf16 linear into f32, and a bf16 weight gradient into bf16 (the
/// half fallback where no route has bf16 out, which uses the stream's scratch).
fn worker_outputs(
    ctx: &Context,
    x: &DeviceBuffer<bf16>,
    w: &DeviceBuffer<bf16>,
    dy: &DeviceBuffer<bf16>,
) -> (Vec<f32>, Vec<bf16>) {
    let mut y = ctx.alloc::<f32>(M * N).unwrap();
    let mut dw = ctx.alloc::<bf16>(K * N).unwrap();
    for _ in 0..10 {
        ctx.linear(
            x.mat(K),
            w.mat(N),
            None::<Mat<'_, f32>>,
            y.mat_mut(N),
            (M, N, K),
        )
        .unwrap();
    }
    ctx.weight_grad(x.mat(K), dy.mat(N), dw.mat_mut(N), (M, N, K))
        .unwrap();
    (ctx.download(&y).unwrap(), ctx.download(&dw).unwrap())
}

#[test]
#[ignore = "needs a CUDA device"]
fn streams_from_threads_share_the_modules_and_give_the_same_bits() {
    let ctx = context();
    let mut rng = Rng::fresh("streams");
    let x = ctx.upload(&rng.vec::<bf16>(M * K)).unwrap();
    let w = ctx.upload(&rng.vec::<bf16>(K * N)).unwrap();
    let dy = ctx.upload(&rng.vec::<bf16>(M * N)).unwrap();
    let (want_y, want_dw) = worker_outputs(&ctx, &x, &w, &dy);
    let loaded = ctx.loaded_modules();
    assert!(loaded >= 1);
    let streams: Vec<Context> = (0..4).map(|_| ctx.new_stream().unwrap()).collect();
    let got: Vec<(Vec<f32>, Vec<bf16>)> = std::thread::scope(|s| {
        let handles: Vec<_> = streams
            .iter()
            .map(|c| {
                let (x, w, dy) = (&x, &w, &dy);
                s.spawn(move || worker_outputs(c, x, w, dy))
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    });
    for (i, (y, dw)) in got.iter().enumerate() {
        assert_eq!(bits_of(y), bits_of(&want_y), "stream {i}: linear");
        assert_eq!(bits_of(dw), bits_of(&want_dw), "stream {i}: weight_grad");
    }
    assert_eq!(
        ctx.loaded_modules(),
        loaded,
        "new streams loaded modules again instead of sharing the device's"
    );
    for c in &streams {
        assert_eq!(c.loaded_modules(), loaded);
    }
}

#[test]
#[ignore = "needs a CUDA device"]
fn the_mode_of_a_call_wins_over_the_context_default() {
    let ctx = context();
    let mut rng = Rng::fresh("mode per call");
    let x = ctx.upload(&rng.vec::<f32>(M * K)).unwrap();
    let w = ctx.upload(&rng.vec::<f32>(K * N)).unwrap();
    let mut y = ctx.alloc::<f32>(M * N).unwrap();
    fn req<'a>(
        x: &'a DeviceBuffer<f32>,
        w: &'a DeviceBuffer<f32>,
        y: &'a mut DeviceBuffer<f32>,
    ) -> GemmRequest<'a, f32, f32> {
        GemmRequest::linear(x.mat(K), w.mat(N), None, y.mat_mut(N), (M, N, K))
    }
    let plain = ctx.gemm(req(&x, &w, &mut y)).unwrap();
    assert!(!plain.vendor);
    let want = ctx.download(&y).unwrap();

    ctx.set_mode(Mode::CublasFast);
    let calls = vendor_calls();
    let own = ctx
        .gemm(req(&x, &w, &mut y).with_mode(Mode::Deterministic))
        .unwrap();
    assert!(!own.vendor && own.mode == Mode::Deterministic);
    assert_eq!(
        vendor_calls(),
        calls,
        "a Deterministic call crossed into cuBLAS"
    );
    assert_eq!(bits_of(&ctx.download(&y).unwrap()), bits_of(&want));
    ctx.set_mode(Mode::Deterministic);

    let vendor = ctx
        .gemm(req(&x, &w, &mut y).with_mode(Mode::CublasPedantic))
        .unwrap();
    assert!(vendor.vendor && vendor.mode == Mode::CublasPedantic);
    assert_eq!(vendor_calls(), calls + 1);

    // Another thread flipping the context's default cannot move a call that names its mode.
    std::thread::scope(|s| {
        s.spawn(|| {
            for _ in 0..20_000 {
                ctx.set_mode(Mode::CublasFast);
                ctx.set_mode(Mode::Deterministic);
            }
        });
        for _ in 0..200 {
            let l = ctx
                .gemm(req(&x, &w, &mut y).with_mode(Mode::Deterministic))
                .unwrap();
            assert!(!l.vendor);
        }
    });
    ctx.set_mode(Mode::Deterministic);
    assert_eq!(bits_of(&ctx.download(&y).unwrap()), bits_of(&want));

    // Recording a call that names a cuBLAS mode is refused.
    struct Vendor<'a> {
        x: &'a DeviceBuffer<f32>,
        w: &'a DeviceBuffer<f32>,
        y: &'a mut DeviceBuffer<f32>,
    }
    impl Request for Vendor<'_> {
        fn run<O: Observer>(&mut self, ctx: &Context, obs: &mut O) -> Result<(), GemmError> {
            let req = GemmRequest::linear(
                self.x.mat(K),
                self.w.mat(N),
                None,
                self.y.mat_mut(N),
                (M, N, K),
            )
            .with_mode(Mode::CublasFast);
            ctx.gemm_observed(req, obs).map(|_| ())
        }
    }
    let r = ctx.record_manifest(
        &mut Vendor {
            x: &x,
            w: &w,
            y: &mut y,
        },
        1,
    );
    match r {
        Err(PackageError::Gemm(GemmError::VendorUnsupported(_))) => {}
        other => panic!("expected VendorUnsupported, got {other:?}"),
    }
}

#[test]
#[ignore = "needs a CUDA device"]
fn copies_are_exact_about_lengths_and_ranges() {
    let ctx = context();
    let start: Vec<f32> = (0..8).map(|i| i as f32).collect();
    let mut buf = ctx.upload(&start).unwrap();
    match ctx.write(&mut buf, &[9.0; 7]) {
        Err(e @ GemmError::LengthMismatch { buffer: 8, host: 7 }) => {
            assert_eq!(e.kind(), "length_mismatch")
        }
        other => panic!("expected LengthMismatch, got {other:?}"),
    }
    assert_eq!(ctx.download(&buf).unwrap(), start, "a refused write wrote");
    ctx.write_at(&mut buf, 6, &[60.0, 70.0]).unwrap();
    match ctx.write_at(&mut buf, 7, &[1.0, 2.0]) {
        Err(GemmError::RangeOutOfBounds {
            offset: 7,
            len: 2,
            buffer: 8,
        }) => {}
        other => panic!("expected RangeOutOfBounds, got {other:?}"),
    }
    let mut part = [0.0f32; 3];
    ctx.read_at(&buf, 5, &mut part).unwrap();
    assert_eq!(part, [5.0, 60.0, 70.0]);
    assert!(ctx.read_at(&buf, 6, &mut part).is_err());

    // Device to device, and to pinned memory, neither synchronizing the stream.
    // SAFETY: every element is written by the copy below before the download reads it.
    let mut dst = unsafe { ctx.alloc_uninit::<f32>(4) }.unwrap();
    ctx.copy((&buf, 4), (&mut dst, 0), 4).unwrap();
    assert!(ctx.copy((&buf, 5), (&mut dst, 0), 4).is_err());
    let mut pinned = ctx.alloc_pinned::<f32>(4).unwrap();
    ctx.read_at_async(&dst, 0, &mut pinned).unwrap();
    assert_eq!(pinned.as_slice().unwrap(), &[4.0, 5.0, 60.0, 70.0]);
    assert_eq!(ctx.download(&dst).unwrap(), [4.0, 5.0, 60.0, 70.0]);

    // External spans are checked against the driver's allocation.
    let a = ctx.upload(&vec![1.0f32; 1024]).unwrap();
    let base = a.span().base();
    let inside = ctx.register_external::<f32>(base, 1024).unwrap();
    ctx.unregister(inside);
    match ctx.register_external::<f32>(base, 1 << 30) {
        Err(GemmError::ExternalOverrun {
            address,
            bytes,
            allocation_bytes,
            ..
        }) => {
            assert_eq!(address, base);
            assert_eq!(bytes, 4 << 30);
            assert!((4096..(4 << 30)).contains(&allocation_bytes));
        }
        other => panic!("expected ExternalOverrun, got {other:?}"),
    }
}

/// Two linears into outputs poisoned first.
struct TwoLinears<'a> {
    x: &'a DeviceBuffer<f32>,
    w: &'a DeviceBuffer<f32>,
    y1: &'a mut DeviceBuffer<f32>,
    y2: &'a mut DeviceBuffer<f32>,
}

impl Request for TwoLinears<'_> {
    fn run<O: Observer>(&mut self, ctx: &Context, obs: &mut O) -> Result<(), GemmError> {
        for y in [&mut *self.y1, &mut *self.y2] {
            let req =
                GemmRequest::linear(self.x.mat(K), self.w.mat(N), None, y.mat_mut(N), (M, N, K));
            ctx.gemm_observed(req, obs)?;
        }
        Ok(())
    }
}

#[test]
#[ignore = "needs a CUDA device"]
fn a_manifest_over_capacity_runs_no_gemm() {
    let ctx = context();
    // One launch a request: W's odd leading dimension (129 f32) would add the exact kernels'
    // repack of it (gpu_repack covers those launches).
    ctx.set_repack_limit(0);
    let mut rng = Rng::fresh("manifest capacity");
    let x = ctx.upload(&rng.vec::<f32>(M * K)).unwrap();
    let w = ctx.upload(&rng.vec::<f32>(K * N)).unwrap();
    let mut y1 = ctx.upload(&vec![poison::<f32>(); M * N]).unwrap();
    let mut y2 = ctx.upload(&vec![poison::<f32>(); M * N]).unwrap();
    let mut two = TwoLinears {
        x: &x,
        w: &w,
        y1: &mut y1,
        y2: &mut y2,
    };
    match ctx.record_manifest(&mut two, 1) {
        Err(PackageError::Gemm(GemmError::ObserverFull {
            capacity: 1,
            needed: 2,
        })) => {}
        other => panic!("expected ObserverFull, got {other:?}"),
    }
    for y in [&*two.y1, &*two.y2] {
        assert!(
            ctx.download(y).unwrap().iter().all(|v| v.is_nan()),
            "a refused recording ran a GEMM"
        );
    }
    // With room for both, both run (the check above can fail).
    let manifest = ctx.record_manifest(&mut two, 2).unwrap();
    assert_eq!(manifest.records().len(), 2);
    for y in [&*two.y1, &*two.y2] {
        assert!(ctx.download(y).unwrap().iter().all(|v| v.is_finite()));
    }
}

#[test]
#[ignore = "needs a CUDA device"]
fn timing_explain_and_served_agree_with_the_call() {
    let ctx = context();
    let mut rng = Rng::fresh("timing");
    let (m, n, k) = (16, 4096, 4096);
    let x = ctx.upload(&rng.vec::<bf16>(m * k)).unwrap();
    let w = ctx.upload(&rng.vec::<bf16>(k * n)).unwrap();
    let mut y = ctx.alloc::<f32>(m * n).unwrap();
    let (launch, gpu_time) = ctx
        .time(|c| {
            c.linear(
                x.mat(k),
                w.mat(n),
                None::<Mat<'_, f32>>,
                y.mat_mut(n),
                (m, n, k),
            )
        })
        .unwrap();
    assert!(gpu_time > std::time::Duration::ZERO, "{gpu_time:?}");
    assert!(gpu_time < std::time::Duration::from_secs(1), "{gpu_time:?}");
    let timer = ctx.timer().unwrap();
    timer.start().unwrap();
    timer.stop().unwrap();
    assert!(
        timer.elapsed().unwrap() < gpu_time,
        "an empty interval outlasted a GEMM"
    );

    let bf16_in = DtypeTriple::new(Dtype::Bf16, Dtype::F32, Dtype::F32);
    let choice = ctx
        .explain(ctx.policy_for(Op::Nn, bf16_in), Op::Nn, bf16_in, (m, n, k))
        .unwrap();
    let kernel = choice.kernel.expect("a launching shape names its kernel");
    assert_eq!(Some(kernel.id), launch.kernel);
    assert_eq!(choice.routed.map(|r| r.hit.rule), Some(launch.rule));
    assert_eq!(choice.grid, Some(launch.grid));
    let text = choice.to_string();
    assert!(text.contains(kernel.name), "{text}");
    // The device-free explain of the same set prints the same.
    let q = gemm_runtime::Query {
        policy: ctx.policy_for(Op::Nn, bf16_in),
        op: Op::Nn,
        dtype: bf16_in,
        m: m as u64,
        n: n as u64,
        k: k as u64,
        sms: None,
    };
    let free = ctx.kernels().explain(ctx.tier().id, &q).unwrap();
    assert_eq!(free.to_string(), text);
    let served = ctx.served();
    assert!(served
        .iter()
        .any(|s| (s.policy, s.op, s.dtype) == (launch.policy, Op::Nn, bf16_in)));
    let refused = ctx
        .explain(Policy::Exact, Op::Nn, bf16_in, (1, 1 << 31, 1))
        .unwrap();
    assert!(
        matches!(
            refused.refusal,
            Some(gemm_runtime::Refusal::DimensionOverflow { dim: "n", .. })
        ),
        "{refused}"
    );
}
