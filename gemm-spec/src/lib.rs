//! # gemm-spec
//!
//! The first stage of the gemm-aot pipeline: the data model of the TOML specs and every
//! validation rule. No code generation and no CUDA here.
//!
//! A spec folder holds shared definitions (instructions, numeric contracts, argument-ABI
//! structs, kernel families) and one file per SM tier (its compile target, budgets, tiles and
//! first-match route table), and the hardware of each compute capability. What a kernel
//! template is comes from its manifest beside it ([`kinds`]). [`load_dir`] parses the folder
//! against a [`KindLibrary`] and returns a [`SpecSet`] that has passed every rule, or every
//! error found, each naming the file, the line and the numbers. A tier may include routes
//! files (`routes_files`: `[[route]]` tables alone, such as those `gemm-aot tune` writes),
//! whose routes come before its own.

mod error;
pub mod kinds;
mod load;
pub mod model;
pub mod raw;
mod resolve;
mod route_table;
mod routes_files;
pub mod spelling;
/// The vocabulary every spec speaks (gemm-core's).
pub use gemm_core::vocab;

pub use error::{Location, SpecError, SpecErrorKind, SpecErrors, SpecWarning};
pub use gemm_core::DIM_MAX;
pub use kinds::KindLibrary;
pub use load::{
    load_dir, load_dir_with_routes, load_sources, load_sources_with_routes, Defaults, SpecSource,
    TierRoutesFile, Validated,
};
pub use model::*;
pub use raw::line_of;
pub use vocab::{Dtype, DtypeTriple, Op, Policy};
