//! The MLP example on this crate's own kernel set (one tier, sm90a): row 0 gives the same bits
//! at batch 1 and at batch 37, as with the runtime's shipped kernels.

use gemm_downstream_example::{mlp, KERNELS};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let ctx = gemm_runtime::Context::with_kernels(0, &KERNELS)?;
    println!(
        "kernel set: {} ({} kernels)",
        KERNELS.name(),
        KERNELS.kernels().len()
    );
    mlp::run(&ctx)
}
