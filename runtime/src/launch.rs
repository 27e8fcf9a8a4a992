//! One launch of a generated kernel: its argument struct, how it is enqueued, and how an
//! observer sees it. Every GEMM and conversion launch goes through [`Context::emit`], so
//! recording, deferring (package preparation) and plain launching share one path.

use crate::context::Context;
use crate::error::GemmError;
use crate::observer::{
    argument_digest_with_maps, LaunchKind, LaunchRecord, Observer, PointerIdentity,
};
use crate::registry::Span;
use crate::table::{Dtype, KernelRef, Op, Policy};
use crate::tensor_map::TensorMapKey;
use crate::{ConvertArgs, GemmArgs};
use cudarc::driver::{sys, LaunchConfig, PushKernelArg};

/// A cluster of one block: a launch without clusters.
pub const NO_CLUSTER: (u32, u32, u32) = (1, 1, 1);

/// Bytes of one [`Line`].
const LINE: usize = 128;

/// 128 bytes, 128-byte aligned: the unit [`ArgBlob`] stores its bytes in.
#[repr(C, align(128))]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Line([u8; LINE]);

/// Any generated argument struct as its bytes, 128-byte aligned (as a struct holding a
/// `CUtensorMap` is under CUDA 13's `cuda.h`), with its pointer fields: what a launch of an ABI other than
/// [`GemmArgs`] and [`ConvertArgs`] (the tensor-core ABI) carries.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ArgBlob {
    abi: &'static str,
    pointer_fields: &'static [(&'static str, usize)],
    len: usize,
    lines: Vec<Line>,
}

impl ArgBlob {
    /// The struct named `abi` from its exact bytes (the generated `to_bytes`) and its
    /// generated `POINTER_FIELDS`.
    pub fn new(
        abi: &'static str,
        pointer_fields: &'static [(&'static str, usize)],
        bytes: &[u8],
    ) -> Self {
        let mut lines = vec![Line([0; LINE]); bytes.len().div_ceil(LINE).max(1)];
        for (line, chunk) in lines.iter_mut().zip(bytes.chunks(LINE)) {
            line.0[..chunk.len()].copy_from_slice(chunk);
        }
        ArgBlob {
            abi,
            pointer_fields,
            len: bytes.len(),
            lines,
        }
    }

    /// The ABI's name, as the kernel table gives it.
    pub fn abi(&self) -> &'static str {
        self.abi
    }

    /// The struct's bytes.
    pub fn bytes(&self) -> &[u8] {
        // SAFETY: `lines` is a contiguous array of `[u8; LINE]` of at least `len` bytes.
        unsafe { std::slice::from_raw_parts(self.lines.as_ptr() as *const u8, self.len) }
    }
}

/// The by-value argument struct of one launch.
#[derive(Clone, Debug, PartialEq)]
pub enum LaunchArgs {
    /// A GEMM kernel's arguments.
    Gemm(GemmArgs),
    /// A conversion kernel's arguments.
    Convert(ConvertArgs),
    /// Another generated struct (the tensor-core ABI), as its bytes.
    Blob(ArgBlob),
}

impl LaunchArgs {
    /// The struct's bytes exactly as the kernel receives them.
    pub fn to_bytes(&self) -> Vec<u8> {
        match self {
            LaunchArgs::Gemm(a) => a.to_bytes().to_vec(),
            LaunchArgs::Convert(a) => a.to_bytes().to_vec(),
            LaunchArgs::Blob(b) => b.bytes().to_vec(),
        }
    }

    /// (field, byte offset) of every device-pointer field.
    pub fn pointer_fields(&self) -> &'static [(&'static str, usize)] {
        match self {
            LaunchArgs::Gemm(_) => GemmArgs::POINTER_FIELDS,
            LaunchArgs::Convert(_) => ConvertArgs::POINTER_FIELDS,
            LaunchArgs::Blob(b) => b.pointer_fields,
        }
    }

    /// The struct's first byte, as the kernel's single parameter.
    fn param(&self) -> *const u8 {
        match self {
            LaunchArgs::Gemm(a) => a as *const GemmArgs as *const u8,
            LaunchArgs::Convert(a) => a as *const ConvertArgs as *const u8,
            LaunchArgs::Blob(b) => b.lines.as_ptr() as *const u8,
        }
    }
}

/// Where and how a kernel runs: grid, block, dynamic shared memory and cluster.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Geometry {
    pub cfg: LaunchConfig,
    /// (1, 1, 1) for a launch without clusters.
    pub cluster: (u32, u32, u32),
}

impl Geometry {
    pub fn plain(cfg: LaunchConfig) -> Self {
        Geometry {
            cfg,
            cluster: NO_CLUSTER,
        }
    }
}

/// Where a pointer field of a launch points: the registered span and the byte offset into it
/// (`None` for a null pointer).
pub(crate) type Target = (&'static str, Option<(Span, u64)>);

/// What a record says about the request a launch belongs to.
#[derive(Clone, Copy)]
pub(crate) struct RequestFacts {
    pub op: Op,
    pub logical: (Dtype, Dtype),
    pub shape: (u64, u64, u64),
    pub leading_dims: (u64, u64, u64),
    /// The policy the call routed under.
    pub policy: Policy,
    /// Whether that policy is the context's default (the request named none): then a
    /// package must refuse a context whose default changed.
    pub policy_from_context: bool,
}

/// A launch as an observer sees it: its record, the spans its pointers (and tensor maps)
/// point into, and whether its policy came from the context.
pub(crate) struct Described {
    pub record: LaunchRecord,
    pub spans: Vec<Span>,
    pub policy_from_context: bool,
}

/// The record of one launch, and the spans its pointers point into. `maps` gives each
/// tensor-map field of the struct (byte offset) with the key it was encoded from and its span.
pub(crate) fn describe(
    ctx: &Context,
    facts: RequestFacts,
    (kind, kernel, execution): (LaunchKind, KernelRef, (Dtype, Dtype)),
    geometry: &Geometry,
    args: &LaunchArgs,
    targets: &[Target],
    maps: &[(usize, Option<(TensorMapKey, Span)>)],
) -> Described {
    let cfg = &geometry.cfg;
    let identity = |name: &str| {
        targets
            .iter()
            .find(|(n, _)| *n == name)
            .and_then(|(_, t)| *t)
            .map_or(PointerIdentity::default(), |(span, offset)| {
                PointerIdentity {
                    allocation: span.id,
                    generation: span.generation,
                    offset,
                }
            })
    };
    let map_keys: Vec<(usize, Option<TensorMapKey>)> = maps
        .iter()
        .map(|(offset, m)| (*offset, m.map(|(key, _)| key)))
        .collect();
    let record = LaunchRecord {
        kind,
        kernel,
        tier: ctx.tier.id,
        policy: facts.policy,
        op: facts.op,
        logical: facts.logical,
        execution,
        shape: facts.shape,
        leading_dims: facts.leading_dims,
        grid: cfg.grid_dim,
        block: cfg.block_dim,
        shared_bytes: cfg.shared_mem_bytes,
        cluster: geometry.cluster,
        args_digest: argument_digest_with_maps(
            &args.to_bytes(),
            args.pointer_fields(),
            identity,
            &map_keys,
        ),
    };
    let mut spans: Vec<Span> = Vec::with_capacity(targets.len());
    let map_spans = maps.iter().filter_map(|(_, m)| m.map(|(_, span)| span));
    for span in targets
        .iter()
        .filter_map(|(_, t)| t.map(|(span, _)| span))
        .chain(map_spans)
    {
        if !spans.iter().any(|s| s.id == span.id) {
            spans.push(span);
        }
    }
    Described {
        record,
        spans,
        policy_from_context: facts.policy_from_context,
    }
}

impl Context {
    /// Hands one launch to the observer: deferred (package preparation), or enqueued and
    /// then recorded. `describe` runs only for an enabled observer, so with
    /// [`NoObserver`](crate::NoObserver) this is the bare launch. (Built with
    /// `--cfg gemm_observer_stripped`, every observer branch is removed from the source;
    /// `bench/observer-asm.sh` compares the two builds' machine code.)
    #[inline(always)]
    #[cfg_attr(gemm_observer_stripped, allow(unused_variables))]
    pub(crate) fn emit<O: Observer>(
        &self,
        observer: &mut O,
        kernel: KernelRef,
        geometry: Geometry,
        args: LaunchArgs,
        describe: impl FnOnce(&LaunchArgs) -> Described,
    ) -> Result<(), GemmError> {
        #[cfg(not(gemm_observer_stripped))]
        if O::ENABLED {
            let d = describe(&args);
            if O::DEFERS {
                observer.defer(crate::package::PreparedLaunch {
                    record: d.record,
                    args,
                    spans: d.spans,
                    policy_from_context: d.policy_from_context,
                });
                return Ok(());
            }
            self.launch_args(kernel, geometry, &args)?;
            observer.record(d.record);
            return Ok(());
        }
        self.launch_args(kernel, geometry, &args)
    }

    /// Enqueues one kernel with its argument struct: through cudarc's launch for the scalar
    /// ABIs without a cluster, otherwise through the driver (`cuLaunchKernel`, or
    /// `cuLaunchKernelEx` with the cluster attribute when the cluster is not (1, 1, 1)) with
    /// the struct's bytes as the single parameter.
    pub(crate) fn launch_args(
        &self,
        kernel: KernelRef,
        geometry: Geometry,
        args: &LaunchArgs,
    ) -> Result<(), GemmError> {
        let func = self.function(kernel)?;
        let cfg = geometry.cfg;
        if geometry.cluster == NO_CLUSTER {
            let mut builder = self.stream.launch_builder(&func);
            match args {
                LaunchArgs::Gemm(a) => {
                    builder.arg(a);
                }
                LaunchArgs::Convert(a) => {
                    builder.arg(a);
                }
                LaunchArgs::Blob(_) => {
                    // SAFETY: as below; the blob is the generated struct's exact bytes.
                    return unsafe { self.launch_raw(&func, geometry, args.param()) };
                }
            };
            // SAFETY: every pointer in `args` was checked, when the call was validated, to lie
            // inside a live allocation of this context (or its scratch), long enough for the
            // shape, with outputs overlapping no input; packages re-check that the allocations
            // are still live.
            unsafe { builder.launch(cfg) }?;
            return Ok(());
        }
        // SAFETY: as above.
        unsafe { self.launch_raw(&func, geometry, args.param()) }
    }

    /// Launches `func` on the context's stream with one by-value parameter whose bytes start
    /// at `param`: `cuLaunchKernel`, or `cuLaunchKernelEx` with
    /// `CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION` for a cluster other than (1, 1, 1).
    ///
    /// # Safety
    /// `param` points to the kernel's argument struct, as many bytes as the kernel takes, and
    /// every device pointer in it was validated.
    pub(crate) unsafe fn launch_raw(
        &self,
        func: &cudarc::driver::CudaFunction,
        geometry: Geometry,
        param: *const u8,
    ) -> Result<(), GemmError> {
        let Geometry { cfg, cluster } = geometry;
        self.cuda.bind_to_thread()?;
        let mut params = [param as *mut std::ffi::c_void];
        if cluster == NO_CLUSTER {
            unsafe {
                sys::cuLaunchKernel(
                    func.cu_function(),
                    cfg.grid_dim.0,
                    cfg.grid_dim.1,
                    cfg.grid_dim.2,
                    cfg.block_dim.0,
                    cfg.block_dim.1,
                    cfg.block_dim.2,
                    cfg.shared_mem_bytes,
                    self.stream.cu_stream(),
                    params.as_mut_ptr(),
                    std::ptr::null_mut(),
                )
            }
            .result()?;
            return Ok(());
        }
        let mut attr = cluster_attribute(cluster);
        let config = sys::CUlaunchConfig {
            gridDimX: cfg.grid_dim.0,
            gridDimY: cfg.grid_dim.1,
            gridDimZ: cfg.grid_dim.2,
            blockDimX: cfg.block_dim.0,
            blockDimY: cfg.block_dim.1,
            blockDimZ: cfg.block_dim.2,
            sharedMemBytes: cfg.shared_mem_bytes,
            hStream: self.stream.cu_stream(),
            attrs: &mut attr,
            numAttrs: 1,
        };
        unsafe {
            sys::cuLaunchKernelEx(
                &config,
                func.cu_function(),
                params.as_mut_ptr(),
                std::ptr::null_mut(),
            )
        }
        .result()?;
        Ok(())
    }
}

/// The launch attribute asking for clusters of `cluster` blocks.
pub(crate) fn cluster_attribute(cluster: (u32, u32, u32)) -> sys::CUlaunchAttribute {
    // SAFETY: a zeroed attribute (id IGNORE, zero value) is valid; both fields are set below.
    let mut attr: sys::CUlaunchAttribute = unsafe { std::mem::zeroed() };
    attr.id = sys::CUlaunchAttributeID::CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION;
    attr.value.clusterDim = sys::CUlaunchAttributeValue_union__bindgen_ty_1 {
        x: cluster.0,
        y: cluster.1,
        z: cluster.2,
    };
    attr
}
