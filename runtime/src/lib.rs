//! # gemm-runtime
//!
//! Batch-invariant GEMMs on NVIDIA GPUs: every output row is a function of that row's inputs
//! alone, whatever the batch size, and identical run to run. The whole path:
//! [`Context::new`] opens a device (its tier chosen from the compute capability),
//! [`Context::upload`] copies host data into a registered [`DeviceBuffer`], [`Context::linear`]
//! checks the call and launches the kernel the routes pick, and [`Context::download`] copies
//! the result back (synchronizing the stream).
//!
//! ```no_run
//! use gemm_runtime::{bf16, Context, GemmError, Mat};
//!
//! fn main() -> Result<(), GemmError> {
//!     // m = batch rows, n = out_features, k = in_features.
//!     let (m, n, k) = (4, 256, 512);
//!     let x_host = vec![bf16::from_f32(0.5); m * k]; // X[m, k], row-major
//!     let w_host = vec![bf16::from_f32(0.25); k * n]; // W[k, n], row-major
//!
//!     let ctx = Context::new(0)?; // device 0
//!     let x = ctx.upload(&x_host)?;
//!     let w = ctx.upload(&w_host)?;
//!     let mut y = ctx.alloc::<f32>(m * n)?;
//!     // Y[m, n] = X[m, k] · W[k, n], bf16 in, f32 out, no bias; a view's argument is its
//!     // leading dimension.
//!     ctx.linear(x.mat(k), w.mat(n), None::<Mat<'_, f32>>, y.mat_mut(n), (m, n, k))?;
//!     let y_host: Vec<f32> = ctx.download(&y)?;
//!     assert_eq!(y_host.len(), m * n);
//!     Ok(())
//! }
//! ```
//!
//! The example needs a CUDA device and a build with cubins: without a driver, without a tier
//! for the device, or in a build made with `GEMM_AOT_NO_CUBINS=1`, [`Context::new`] returns an
//! error (it never panics). The other ops are [`Context::weight_grad`],
//! [`Context::input_grad`], [`Context::lm_head`] and [`Context::gemm`] for any
//! [`GemmRequest`]. Every op's shape tuple is `(batch, out_features, in_features)` (the
//! head's is `(batch, vocab, hidden)`); [`Context::served`] lists what the device serves and
//! [`Context::explain`] the route a shape takes (the same text `gemm-aot explain` prints).
//!
//! A call that names no policy takes the context's default, [`DefaultPolicy::ByDtype`]: the
//! tensor-core kernels (contract `tc-k16`) for bf16 and f16 inputs wherever the tier routes
//! their (op, dtype), the exact kernels (`fma-k256`) for everything else; f32 runs as TF32
//! (`tc-tf32-k8`) only when a call or [`Context::set_policy`] asks for `Policy::TensorCore`.
//! The choice reads (op, dtype) only, so every row stays independent of the batch.
//!
//! ## The serving loop
//!
//! Open the device once; give each worker thread its own stream ([`Context::new_stream`]:
//! the loaded kernels, the allocation registry and the uploaded weights are shared, the
//! fallback's scratch is the stream's own); upload the weights once; name the policy (and
//! mode) per call, so no thread depends on another's defaults; record a decode step, package
//! it, capture it into a CUDA graph and replay it each step; time with the stream's events.
//! docs/serving.md walks through it.
//!
//! ```no_run
//! use gemm_runtime::{
//!     bf16, Context, DeviceBuffer, GemmError, GemmRequest, Mat, Observer, PackageError,
//!     Policy, Request,
//! };
//!
//! /// One decode step of a worker: `y[1, out] = x[1, in] · W[in, out]`.
//! struct DecodeStep<'a> {
//!     x: Mat<'a, bf16>,
//!     w: Mat<'a, bf16>,
//!     y: &'a mut DeviceBuffer<f32>,
//!     dims: (usize, usize, usize), // (batch, out_features, in_features)
//! }
//!
//! impl Request for DecodeStep<'_> {
//!     fn run<O: Observer>(&mut self, ctx: &Context, obs: &mut O) -> Result<(), GemmError> {
//!         let req = GemmRequest::linear(self.x, self.w, None, self.y.mat_mut(self.dims.1), self.dims)
//!             .with_policy(Policy::TensorCore); // per call: another thread's default cannot move it
//!         ctx.gemm_observed(req, obs).map(|_| ())
//!     }
//! }
//!
//! /// A worker: its own stream, its own activations; the device's weights.
//! fn worker(device: &Context, w: &DeviceBuffer<bf16>, (n, k): (usize, usize)) -> Result<(), PackageError> {
//!     let ctx = device.new_stream()?; // one stream a worker: cheap, nothing is loaded again
//!     let mut x = ctx.upload(&vec![bf16::from_f32(1.0); k])?;
//!     let mut y = ctx.alloc::<f32>(n)?;
//!     let graph = {
//!         let mut step = DecodeStep { x: x.mat(k), w: w.mat(n), y: &mut y, dims: (1, n, k) };
//!         let manifest = ctx.record_manifest(&mut step, 1)?; // runs once, recorded
//!         let package = ctx.prepare_package(&manifest, &mut step)?; // checked launch for launch
//!         package.capture(&ctx)? // a CUDA graph, verified node for node
//!     };
//!     for token in 0..100 {
//!         ctx.write(&mut x, &vec![bf16::from_f32(token as f32 / 100.0); k])?;
//!         // Replay checks first: same stream, same allocations, same mode and policy.
//!         let ((), gpu_time) = ctx.time(|ctx| graph.replay(ctx))?;
//!         let logits: Vec<f32> = ctx.download(&y)?;
//!         let _ = (gpu_time, logits);
//!     }
//!     Ok(())
//! }
//!
//! fn main() -> Result<(), PackageError> {
//!     let (n, k) = (4096, 4096); // out_features, in_features
//!     let device = Context::new(0)?; // open the device once
//!     let w = device.upload(&vec![bf16::from_f32(0.01); k * n])?; // upload the weights once
//!     std::thread::scope(|s| {
//!         let workers: Vec<_> = (0..4).map(|_| s.spawn(|| worker(&device, &w, (n, k)))).collect();
//!         workers.into_iter().try_for_each(|h| h.join().expect("a worker panicked"))
//!     })
//! }
//! ```
//!
//! This crate is the last stage of the gemm-aot pipeline, linked by downstream code. Its
//! build script builds the shipped specs with `gemm_codegen::Builder`, as a downstream crate
//! builds its own; this crate embeds what it made: the tier table with each tier's cubin, the
//! kernel, route and contract tables, the argument structs with their binds and the dispatch
//! `match`. Everything it knows about kernels comes from that generated code; the planning
//! (route, half fallback, default policy, unaligned kernel, grid, explain) is gemm-core's,
//! over any set. The free lookups below ([`dispatch`], [`kernel`], [`TIERS`], ...) are this
//! build's tables, [`shipped`].
//!
//! ```
//! use gemm_runtime::{dispatch, kernel, tier_for_capability, Dtype, DtypeTriple, Op, Policy};
//! let tier = tier_for_capability((9, 0)).expect("an H100/H200 is served");
//! let bf16 = DtypeTriple::new(Dtype::Bf16, Dtype::Bf16, Dtype::F32);
//! let hit = dispatch(tier.id, Policy::Exact, Op::Nn, bf16, 1, 4096, 4096).unwrap();
//! let k = kernel(hit.kernel).unwrap();
//! assert_eq!(k.contract, "fma-k256");
//! assert_eq!(k.op, Op::Nn);
//! ```

//! ## A kernel set of your own
//!
//! A downstream crate can build its own [`KernelSet`] (only its model's shapes and tiers)
//! from its build script with `gemm_codegen::Builder`, include the generated file and open
//! contexts on it; turning this crate's default `shipped-kernels` feature off leaves the
//! shipped cubins out of its binary. docs/downstream.md walks through it.
//!
//! ```ignore
//! // build.rs
//! gemm_codegen::Builder::new().specs("specs").tiers(["sm90a"]).build()?;
//! // src/lib.rs
//! include!(concat!(env!("OUT_DIR"), "/gemm_kernels.rs")); // pub static KERNELS: KernelSet
//! let ctx = gemm_runtime::Context::with_kernels(0, &KERNELS)?;
//! ```

#![warn(missing_docs)]

// The generated set file names `::gemm_runtime` (as in every crate that includes one).
extern crate self as gemm_runtime;

mod borrowed_stream;
mod buffer;
mod context;
mod conversion;
mod device;
mod element;
mod emit;
mod error;
mod external;
mod fallback;
mod gemm;
mod io;
mod launch_plan;
mod launcher;
mod maps;
mod modules;
mod observer;
mod occupancy;
mod ops;
mod package;
mod prepared;
mod raw;
mod raw_batch;
pub mod reference;
mod registry;
mod repack;
mod request;
mod rows;
mod scratch;
mod served;
mod shipped;
mod stream;
mod strided;
pub mod table;
mod tensor_map_cache;
mod timer;
pub mod tuning;

/// The cudarc this crate is built on, so a caller uses the same version (its stream, events,
/// pinned memory) without pinning its own.
pub use cudarc;

/// The hasher of the maps a call consults (also the C library's and the Python package's).
pub use gemm_core::fast_hash;

pub use buffer::{DeviceBuffer, ExternalSpan, Mat, MatMut};
pub use context::Context;
pub use element::Element;
pub use error::{GemmError, Operand};
pub use gemm::{vendor_calls, DIM_MAX};
pub use gemm_core::{
    check_tma, DefaultPolicy, DeviceCaps, DispatchFn, ExplainError, Explanation, KernelSet,
    KernelSetError, KernelSetParts, NotRunnable, Query, Refusal, Routed, StoredAb, StoredOperand,
    TensorMapKey, TierChoice, TierChoiceError, TierCode, TierSelection, TmaProblem, TMA_MAX_BOX,
    TMA_MAX_DIM, TMA_MAX_STRIDE_BYTES,
};
pub use gemm_core::{wave_time, WAVE_FIT_MARGIN_PERCENT};
pub use half::{bf16, f16};
pub use observer::{
    argument_digest, argument_digest_with_maps, LaunchKind, LaunchRecord, NoObserver, Observer,
    PointerIdentity, PreparedLaunch, Recorder, TENSOR_MAP_BYTES,
};
pub use package::{record_difference, CapturedPackage, Manifest, Package, PackageError, Request};
pub use prepared::PreparedWeight;
pub use raw::{BatchFailure, RawExtents, RawGemm, RawMatrix, MAX_BATCH};
pub use registry::Span;
pub use request::{GemmRequest, Launch, Repacked};
pub use rows::{RawRows, MAX_COLS};
pub use served::{served, Served};
pub use shipped::{
    contract_of, contract_takes, conversion, conversion_for, kernel, max_n, resources, shipped,
    tier_by_name, tier_for_capability,
};
pub use stream::Mode;
pub use table::{
    AbiFieldInfo, AbiFlagInfo, AbiInfo, ArgBytes, ArgSources, ContractInfo, ConversionId,
    ConversionInfo, ConversionKind, Dtype, DtypeTriple, FieldKind, GridKind, KernelId, KernelInfo,
    KernelRef, KernelResources, ModuleInfo, Op, OperandPath, Policy, Prepass, PtxModule, RouteHit,
    RouteInfo, RowOp, TensorMap, TensorMapPlan, TierId, TierInfo, TierPtx, TileShape,
};
pub use tensor_map_cache::TensorMapBytes;
pub use timer::Timer;

// The shipped set, built from the specs by build.rs with gemm_codegen::Builder, like any
// downstream set (`@generated`): `pub static SHIPPED: KernelSet` and its tables' module.
include!(concat!(env!("OUT_DIR"), "/shipped_kernels.rs"));

/// The shipped set's generated tables and argument structs (`@generated` from the specs at
/// build time; see `build.rs`).
pub use __gemm_kernels_shipped as generated;
pub use generated::{
    dispatch, ABIS, CONTRACTS, CONVERSIONS, CUBINS_PRESENT, KERNELS, RESOURCES, ROUTES, TIERS,
    TIER_PTX,
};
