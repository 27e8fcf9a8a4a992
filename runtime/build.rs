//! Runs the gemm-aot pipeline on the shipped specs: validates them, generates the Rust tables
//! and compiles every tier's cubin (through the shared content cache, so an unchanged rebuild
//! compiles nothing). The runtime `include!`s the results from OUT_DIR.
//!
//! Features: `shipped-kernels` (default) compiles and embeds the cubins; without it the tables
//! are generated without nvcc and `KernelSet::shipped()` carries no cubins (a crate serving only
//! its own `gemm_codegen::Builder` set leaves the shipped cubins out of its binary).
//!
//! Environment:
//! - `GEMM_AOT_SPECS`: another spec folder (default: the workspace's `specs/`).
//! - `GEMM_AOT_NO_CUBINS=1`: generate the Rust only, embed no cubins (docs, clippy); the
//!   runtime then reports that the build carries no cubins instead of launching.
//! - `NVCC`, `CUDA_HOME`, `PATH`: where nvcc is looked for; with none, the pinned CUDA 13.0
//!   compiler is bootstrapped from PyPI into the gemm-aot cache (`GEMM_AOT_CACHE`).

use gemm_codegen::{build, builder::abi_layouts_rust, BuildOptions, CompileMode};
use std::path::PathBuf;

fn main() {
    for var in [
        "GEMM_AOT_SPECS",
        "GEMM_AOT_NO_CUBINS",
        "GEMM_AOT_CACHE",
        "NVCC",
        "CUDA_HOME",
        "DOCS_RS",
    ] {
        println!("cargo:rerun-if-env-changed={var}");
    }
    let manifest = PathBuf::from(std::env::var_os("CARGO_MANIFEST_DIR").unwrap_or_default());
    let specs = std::env::var_os("GEMM_AOT_SPECS")
        .map(PathBuf::from)
        .unwrap_or_else(|| manifest.join("..").join("specs"));
    println!("cargo:rerun-if-changed={}", specs.display());
    let out_dir = PathBuf::from(std::env::var_os("OUT_DIR").unwrap_or_default());
    let out = out_dir.join("gemm-aot");

    let no_cubins_env = std::env::var_os("GEMM_AOT_NO_CUBINS")
        .is_some_and(|v| !v.is_empty() && v != "0")
        || std::env::var_os("DOCS_RS").is_some();
    let shipped = std::env::var_os("CARGO_FEATURE_SHIPPED_KERNELS").is_some();
    let no_cubins = no_cubins_env || !shipped;
    let mut opts = BuildOptions::new(&specs, &out, "gemm-runtime build.rs");
    opts.compile = if no_cubins {
        CompileMode::NoCubins
    } else {
        CompileMode::Cubins { bootstrap: true }
    };
    let say = |m: &str| println!("cargo:warning=gemm-aot: {m}");
    match build(&opts, &say) {
        Ok(report) => {
            for w in &report.warnings {
                println!("cargo:warning={w}");
            }
            for w in &report.compile_warnings {
                println!("cargo:warning=gemm-aot: {w}");
            }
            if no_cubins_env {
                println!("cargo:warning=gemm-aot: GEMM_AOT_NO_CUBINS is set: this build of gemm-runtime carries no cubins and cannot launch kernels");
            }
            // The layouts of the argument structs this runtime binds, which every kernel set
            // it serves must share (`KernelSet::check`).
            let layouts = out_dir.join("abi_layouts.rs");
            let text = abi_layouts_rust("ABI_LAYOUTS", &report.plan.specs);
            if let Err(e) = std::fs::write(&layouts, text) {
                eprintln!("error: cannot write {}: {e}", layouts.display());
                std::process::exit(1);
            }
        }
        Err(e) => {
            eprintln!(
                "error: gemm-aot could not build the kernels of {}:\n{e}",
                specs.display()
            );
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
