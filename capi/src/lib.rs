//! # gemm-aot-c
//!
//! The C library of gemm-aot (`libgemm_aot.so`, header `include/gemm_aot.h`): the runtime's
//! batch-invariant GEMMs over raw device pointers and a `CUstream`, with status codes and a
//! message function. It embeds the shipped kernels as the runtime does. A context opens the
//! device's primary context (the CUDA runtime's, so memory from `cudaMalloc` or PyTorch works
//! as is); each stream a call names gets its own borrowed-stream context, made once.
//!
//! ```c
//! gemm_aot_context *ctx;
//! if (gemm_aot_open(0, &ctx) != GEMM_AOT_OK) { fprintf(stderr, "%s\n", gemm_aot_last_error()); }
//! gemm_aot_linear(ctx, x, w, NULL, y, batch, out, in, GEMM_AOT_BF16, GEMM_AOT_F32, stream);
//! ```
//!
//! `examples/c/gemm_example.c` is a whole program.

#![allow(non_camel_case_types)] // the C names of the ABI's structs

mod api;
mod context;
mod status;
mod types;

pub use api::*;
pub use types::*;
