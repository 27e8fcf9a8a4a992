//! Builds what the timing tests run beside the runtime's shipped kernels:
//!
//! - `PERTURBED`: the shipped specs' sm90a and sm80 tiers as a timing-perturbation build
//!   (`Builder::timing_perturbation`: seeded delays at every pipeline step), with sm90a's wide
//!   tensor-core tile in clusters of 2 CTAs, so the cluster kind runs under perturbation too
//!   (the shipped tiles use none; the contract lets the cluster decide who computes an
//!   element, never how, so its bits are the shipped wide kernel's);
//! - `CORUNNER_PTX`: the hostile co-runner (`corunner.cu`) as compute_80 PTX, which the driver
//!   JIT-compiles for the device.
//!
//! `GEMM_AOT_NO_CUBINS=1` builds the tables only (and an empty co-runner), as for the runtime.

use gemm_codegen::compile::{cache::cache_root, toolchain};
use std::path::{Path, PathBuf};
use std::process::Command;

fn fail(msg: String) -> ! {
    eprintln!("error: {msg}");
    std::process::exit(1);
}

/// The shipped specs of the tiers built here, with the wide tile clustered.
fn write_specs(shipped: &Path, dir: &Path) {
    std::fs::create_dir_all(dir).unwrap_or_else(|e| fail(format!("{}: {e}", dir.display())));
    // The two tiers' files and the routes files beside them (`sm90a.tuned.toml`).
    let mut names: Vec<String> = ["families.toml", "hardware.toml", "sm80.toml", "sm90a.toml"]
        .map(String::from)
        .to_vec();
    for tier in ["sm80", "sm90a"] {
        let routes = format!("{tier}.tuned.toml");
        if shipped.join(&routes).is_file() {
            names.push(routes);
        }
    }
    for name in &names {
        let name = name.as_str();
        let from = shipped.join(name);
        let mut text = std::fs::read_to_string(&from)
            .unwrap_or_else(|e| fail(format!("{}: {e}", from.display())));
        if name == "sm90a.toml" {
            const WIDE: &str = "family = \"tcwide\"\nname = \"wide\"\nm = 128\nn = 256\nk = 64\nstages = 4\nconsumers = 2\n";
            if text.matches(WIDE).count() != 1 {
                fail(format!(
                    "{}: the wide tcwide tile is no longer written as tests/timing/build.rs expects; update WIDE there",
                    from.display()
                ));
            }
            text = text.replace(
                WIDE,
                &format!("{WIDE}# tests/timing: clusters of 2 CTAs, B multicast (not shipped)\ncluster_m = 2\n"),
            );
        }
        let to = dir.join(name);
        std::fs::write(&to, text).unwrap_or_else(|e| fail(format!("{}: {e}", to.display())));
    }
}

fn main() {
    let manifest = PathBuf::from(std::env::var_os("CARGO_MANIFEST_DIR").unwrap_or_default());
    let out_dir = PathBuf::from(std::env::var_os("OUT_DIR").unwrap_or_default());
    let shipped = manifest.join("../../specs");
    let corunner = manifest.join("corunner.cu");
    println!("cargo:rerun-if-changed={}", shipped.display());
    println!("cargo:rerun-if-changed={}", corunner.display());
    let specs = out_dir.join("timing-specs");
    write_specs(&shipped, &specs);

    let built = gemm_codegen::Builder::new()
        .specs(&specs)
        .tiers(["sm80", "sm90a"])
        .timing_perturbation(true)
        .static_name("PERTURBED")
        .file_name("perturbed_kernels.rs")
        .build();
    let built = match built {
        Ok(b) => b,
        Err(e) => {
            if e.is_toolchain() {
                eprintln!("hint: install the compiler with `cargo run -p gemm-codegen --bin gemm-aot -- toolchain install`, or set GEMM_AOT_NO_CUBINS=1 to build the tables only");
            }
            fail(e.to_string());
        }
    };

    let ptx = out_dir.join("corunner.ptx");
    if !built.report.catalog.kernels.is_empty() && built.report.resources.is_some() {
        let tc = toolchain::find(&cache_root()).unwrap_or_else(|e| fail(e.to_string()));
        let mut cmd = Command::new(&tc.nvcc);
        cmd.args(["-ptx", "-O3", "-std=c++17", "-arch=compute_80", "-o"])
            .arg(&ptx)
            .arg(&corunner);
        for d in &tc.include_dirs {
            cmd.arg("-I").arg(d);
        }
        let res = cmd
            .output()
            .unwrap_or_else(|e| fail(format!("{}: {e}", tc.nvcc.display())));
        if !res.status.success() {
            fail(format!(
                "nvcc could not compile {}:\n{}{}",
                corunner.display(),
                String::from_utf8_lossy(&res.stdout),
                String::from_utf8_lossy(&res.stderr)
            ));
        }
    } else if let Err(e) = std::fs::write(&ptx, "") {
        fail(format!("{}: {e}", ptx.display()));
    }
}
