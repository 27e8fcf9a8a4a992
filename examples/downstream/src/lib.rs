//! A downstream crate with its own kernel set. Its `build.rs` runs
//! `gemm_codegen::Builder::new().specs("specs").tiers(["sm90a"]).build()`: one tier, one
//! family (exact FMA, contract fma-k256) with one tile, for the nn layouts the MLP runs. The
//! generated file defines [`KERNELS`]; a context opened with
//! `Context::with_kernels(ordinal, &KERNELS)` routes, launches and names kernels from it alone.

include!(concat!(env!("OUT_DIR"), "/gemm_kernels.rs"));

/// The MLP of examples/mlp, the same source.
#[path = "../../mlp/src/mlp.rs"]
pub mod mlp;
