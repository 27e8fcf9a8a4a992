//! A downstream crate with its own kernel set. Its `build.rs` runs
//! `gemm_codegen::Builder::new().specs("specs").shipped_definitions(true).extra_templates("templates").tiers(["sm90a"]).build()`:
//! one tier with two families of contract fma-k256, one on the shipped `fma_gemm` template
//! and one on the crate's own kind `fma_row_gemm` (a template and its manifest in
//! `templates/row/`, no Rust), with an argument struct of its own (`RowArgs`, specs/own.toml).
//! The generated file defines [`KERNELS`]; a context opened with
//! `Context::with_kernels(ordinal, &KERNELS)` routes, launches and names kernels from it alone.

include!(concat!(env!("OUT_DIR"), "/gemm_kernels.rs"));

/// The MLP of examples/mlp, the same source.
#[path = "../../mlp/src/mlp.rs"]
pub mod mlp;
