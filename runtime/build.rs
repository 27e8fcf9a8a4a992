//! Builds the shipped set: the shipped specs (or `GEMM_AOT_SPECS`) through
//! `gemm_codegen::Builder`, exactly as a downstream crate builds its own set (validation,
//! generation, every tier's cubin through the shared content cache, so an unchanged rebuild
//! compiles nothing). The runtime includes the set file it writes (`SHIPPED`).
//!
//! Features: `shipped-kernels` (default) compiles and embeds the cubins; without it the tables
//! are generated without nvcc and `gemm_runtime::shipped()` carries no cubins (a crate serving
//! only its own `gemm_codegen::Builder` set leaves the shipped cubins out of its binary).
//!
//! Environment: `GEMM_AOT_SPECS` (another spec folder; default the workspace's `specs/`), and
//! what every Builder build reads: `GEMM_AOT_NO_CUBINS=1` (the Rust only, no cubins: docs,
//! clippy), `NVCC`, `CUDA_HOME`, `PATH` (where nvcc is looked for; with none the pinned CUDA
//! 13.0 compiler is bootstrapped into the gemm-aot cache, `GEMM_AOT_CACHE`).

use gemm_codegen::{Builder, CompileMode};
use std::path::PathBuf;

fn main() {
    println!("cargo:rerun-if-env-changed=GEMM_AOT_SPECS");
    let manifest = PathBuf::from(std::env::var_os("CARGO_MANIFEST_DIR").unwrap_or_default());
    let specs = std::env::var_os("GEMM_AOT_SPECS")
        .map(PathBuf::from)
        .unwrap_or_else(|| manifest.join("..").join("specs"));
    let mut builder = Builder::new()
        .specs(&specs)
        .static_name("SHIPPED")
        .file_name("shipped_kernels.rs")
        .label("gemm-runtime (shipped specs)");
    if std::env::var_os("CARGO_FEATURE_SHIPPED_KERNELS").is_none() {
        builder = builder.compile(CompileMode::NoCubins);
    }
    match builder.build() {
        Ok(built)
            if !built.report.catalog.kernels.is_empty() && built.report.resources.is_none() =>
        {
            println!("cargo:warning=gemm-aot: this build of gemm-runtime carries no cubins (GEMM_AOT_NO_CUBINS, or the shipped-kernels feature off) and cannot launch its own kernels");
        }
        Ok(_) => {}
        Err(e) => {
            eprintln!("error: {e}");
            if e.is_toolchain() {
                // Only a missing or broken compiler is worked around by not compiling.
                eprintln!(
                    "hint: to install the compiler first, run `cargo run -p gemm-codegen --bin gemm-aot -- toolchain install` \
                     (or set NVCC=/path/to/nvcc); to build without cubins (docs, lints), set GEMM_AOT_NO_CUBINS=1"
                );
            } else {
                eprintln!(
                    "hint: the same error shows with `cargo run -p gemm-codegen --bin gemm-aot -- build --specs {}`",
                    specs.display()
                );
            }
            std::process::exit(1);
        }
    }
}
