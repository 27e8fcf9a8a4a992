//! A two-layer MLP, `y = relu(x·W1 + b1)·W2 + b2`, in bf16 with f32 logits, run on the same
//! first row at batch 1 and at batch 37. With gemm-runtime's deterministic mode the row's
//! output does not depend on the other 36 rows: the bits are identical. It runs twice, the
//! policy named per call: exact (contract fma-k256) and tensor-core (contract tc-k16, what the
//! context's default gives bf16 where the tier routes it; skipped, saying why, on a tier
//! without tensor-core routes). Each run prints its policy and the kernels it launched.

//!
//! This binary serves the runtime's shipped kernels (`Context::new`, every tier of specs/);
//! examples/downstream runs the same MLP on a kernel set of its own specs and one tier.

mod mlp;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let ctx = gemm_runtime::Context::new(0)?;
    mlp::run(&ctx)
}
