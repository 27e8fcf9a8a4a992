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
//! [`GemmRequest`].
//!
//! This crate is the last stage of the gemm-aot pipeline, linked by downstream code. Its
//! build script runs the generator on the specs; this crate embeds what it made: the tier
//! table with each tier's cubin, the kernel table, the contract table, the argument-ABI
//! structs and the dispatch `match`. Everything it knows about kernels comes from that
//! generated code.
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

#![warn(missing_docs)]

mod buffer;
mod context;
mod element;
mod error;
mod fallback;
mod gemm;
mod launch;
mod observer;
mod ops;
mod package;
mod persistent;
mod plan;
pub mod reference;
mod registry;
mod scratch;
pub mod table;
mod tensor_map;

pub use buffer::{DeviceBuffer, ExternalSpan, Mat, MatMut};
pub use context::{Context, Mode};
pub use element::Element;
pub use error::{GemmError, Operand};
pub use gemm::{vendor_calls, GemmRequest, Launch, DIM_MAX};
pub use half::{bf16, f16};
pub use launch::{ArgBlob, LaunchArgs};
pub use observer::{
    argument_digest, argument_digest_with_maps, LaunchKind, LaunchRecord, NoObserver, Observer,
    PointerIdentity, Recorder, TENSOR_MAP_BYTES,
};
pub use package::{
    record_difference, CapturedPackage, Manifest, Package, PackageError, PreparedLaunch, Request,
};
pub use registry::Span;
pub use tensor_map::{
    check_tma, TensorMapBytes, TensorMapKey, TmaProblem, TMA_MAX_BOX, TMA_MAX_DIM,
    TMA_MAX_STRIDE_BYTES,
};

/// Code generated from the specs at build time (`@generated`; see `build.rs`).
#[allow(clippy::all)]
pub mod generated {
    use crate::table::*;

    /// The embedded cubin of one compile unit of a tier (a family, or `conversions`), from
    /// the build script's output.
    macro_rules! cubin {
        ($tier:literal, $module:literal) => {
            include_bytes!(concat!(
                env!("OUT_DIR"),
                "/gemm-aot/cubins/",
                $tier,
                "/",
                $module,
                ".cubin"
            ))
        };
    }

    include!(concat!(env!("OUT_DIR"), "/gemm-aot/rust/abi.rs"));
    include!(concat!(env!("OUT_DIR"), "/gemm-aot/rust/kernels.rs"));
    include!(concat!(env!("OUT_DIR"), "/gemm-aot/rust/dispatch.rs"));
    include!(concat!(env!("OUT_DIR"), "/gemm-aot/rust/resources.rs"));
}

pub use generated::{
    bind_abi, dispatch, ConvertArgs, GemmArgs, TcGemmArgs, CONTRACTS, CONVERSIONS, CUBINS_PRESENT,
    KERNELS, RESOURCES, TIERS,
};
pub use table::{
    conversion, conversion_for, kernel, resources, tier_by_name, tier_for_capability, ArgSources,
    BoundArgs, ContractInfo, ConversionId, ConversionInfo, ConversionKind, Dtype, DtypeTriple,
    GridKind, KernelId, KernelInfo, KernelRef, KernelResources, ModuleInfo, Op, Policy, RouteHit,
    TensorMap, TensorMapPlan, TierId, TierInfo, TileParams, TileShape,
};
