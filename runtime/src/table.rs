//! The types a kernel set's tables are made of, from gemm-core: tiers, kernels with their
//! tiles, tensor maps and launch shape, conversions, contracts, routes, argument structs and
//! the sources that fill them, the vocabulary. Generated tables (the shipped set's and every
//! `gemm_codegen::Builder` set's) name them through this module.

pub use gemm_core::args::*;
pub use gemm_core::table::*;
pub use gemm_core::vocab::*;
