//! # gemm-spec
//!
//! The first stage of the gemm-aot pipeline: the data model of the TOML specs and every
//! validation rule. No code generation and no CUDA here.
//!
//! A spec folder holds shared definitions (instructions, numeric contracts, argument-ABI
//! structs, kernel families) and one file per SM tier (its compile target, budgets, tiles and
//! first-match route table). [`load_dir`] parses the folder and returns a [`SpecSet`] that has
//! passed every rule, or every error found, each naming the file, the line and the numbers.

mod error;
mod load;
pub mod model;
pub mod raw;
mod resolve;
mod route_table;
pub mod spelling;
pub mod templates;
pub mod vocab;

pub use error::{Location, SpecError, SpecErrorKind, SpecErrors, SpecWarning};
pub use load::{line_of, load_dir, load_sources, SpecSource, Validated};
pub use model::*;
pub use resolve::{shared_bytes, shared_bytes_for};
pub use route_table::DIM_MAX;
pub use vocab::{Dtype, DtypeTriple, Op, Policy};
