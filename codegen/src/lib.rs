//! # gemm-codegen
//!
//! The second stage of the gemm-aot pipeline, after `gemm-spec` has validated the specs:
//!
//! 1. [`plan`]: every kernel of every tier, named from every axis;
//! 2. [`emit`]: per-tier CUDA sources instantiating `kernels-templates/`, the ABI header, and
//!    the Rust (ABI structs, kernel table, dispatch `match`, resources);
//! 3. [`compile`]: nvcc per tier in parallel through a content cache, the ptxas report parsed
//!    and checked against each tier's budgets, nvcc itself found or bootstrapped; portable
//!    tiers also keep each unit's PTX ([`ptx`]);
//! 4. [`pipeline`]: all of the above as one call, used by `gemm-aot build` and by the
//!    runtime's `build.rs`;
//! 5. [`builder`]: [`Builder`], the same pipeline from a downstream crate's `build.rs`, for a
//!    kernel set of its own specs and tiers.

pub mod builder;
pub mod compile;
pub mod emit;
pub mod explain;
pub mod pipeline;
pub mod plan;
pub mod ptx;
pub mod staging;
pub mod templates;
pub mod write;

pub use builder::{Builder, BuilderError, Built};
pub use emit::{Instrumentation, Provenance};
pub use pipeline::{build, BuildError, BuildOptions, BuildReport, CompileMode};
pub use plan::{Plan, PlannedKernel};
