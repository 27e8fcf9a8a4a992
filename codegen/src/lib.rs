//! # gemm-codegen
//!
//! The second stage of the gemm-aot pipeline, after `gemm-spec` has validated the specs:
//!
//! 1. [`catalog`]: every kernel of every tier, named from every axis, with every number its
//!    template's manifest derives for it ([`template_files`]: the templates and their kinds);
//! 2. [`emit`]: per-tier CUDA sources instantiating `kernels-templates/` with each kernel's
//!    config, the ABI header, and the Rust (ABI structs with their binds, kernel and route
//!    tables, dispatch `match`, resources, the include file of a set);
//! 3. [`compile`]: nvcc per tier in parallel through a content cache, the ptxas report parsed
//!    and checked against each tier's budgets, nvcc itself found or bootstrapped; portable
//!    tiers also keep each unit's PTX ([`ptx`]);
//! 4. [`pipeline`]: all of the above as one call, used by `gemm-aot build` and by the
//!    runtime's `build.rs`;
//! 5. [`builder`]: [`Builder`], the same pipeline from a build script (gemm-runtime's own, and
//!    any downstream crate's), for a kernel set of its specs and tiers;
//! 6. [`explain`]: the route tables read back in words, through gemm-core's `explain` over a
//!    set made in memory ([`memory_set`]).

pub mod builder;
pub mod catalog;
pub mod compile;
pub mod emit;
pub mod explain;
pub mod memory_set;
pub mod output_staging;
pub mod pipeline;
pub mod ptx;
pub mod shipped_specs;
pub mod template_files;
pub mod write;

pub use builder::{Builder, BuilderError, Built};
pub use catalog::{CatalogKernel, KernelCatalog};
pub use emit::{Instrumentation, Provenance};
pub use pipeline::{build, BuildError, BuildOptions, BuildReport, CompileMode, Templates};
