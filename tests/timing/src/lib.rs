//! # gemm-timing-tests
//!
//! Timing independence on the GPU (docs/timing.md): a kernel's bits must not depend on which
//! side of a pipeline is faster, on what runs beside it, or on an instrumenting tool. The tests
//! (all `#[ignore = "needs a CUDA device"]`; `tests/timing/run.sh` runs them on a GPU machine,
//! compute-sanitizer included):
//!
//! - `gpu_perturbed`: [`PERTURBED`], the sm90a and sm80 tiers built with seeded delays at every
//!   pipeline step, against the shipped kernels' bits, under several seeds: every kernel kind
//!   (TMA, cp.async, persistent, cluster), an invariance sweep, a packaged decode step;
//! - `gpu_stress`: the shipped decode and wide kernels many times beside a hostile co-runner
//!   ([`corunner`]) and beside other GEMM streams, against their quiet bits;
//! - `gpu_sanitized`: the cases compute-sanitizer runs, small and GPU-filling, each checked
//!   against float64 (or the exact CPU model) and against the plain run's bits ([`digest`]).
//!
//! This crate holds what they share: the perturbed set, the co-runner, one GEMM call as host
//! data ([`case`]), what "every kernel kind" of a tier is ([`every_kind`]) and the reported decode
//! step ([`step`]).

pub mod case;
pub mod corunner;
pub mod digest;
pub mod every_kind;
pub mod step;

include!(concat!(env!("OUT_DIR"), "/perturbed_kernels.rs"));

/// The hostile co-runner (`corunner.cu`) as compute_80 PTX; empty in a build without cubins.
pub const CORUNNER_PTX: &str = include_str!(concat!(env!("OUT_DIR"), "/corunner.ptx"));

/// The seeds the perturbation tests run under: `GEMM_PERTURB_SEEDS` (comma-separated, decimal
/// or 0x-hex), else four fixed ones. Seed 0 (no delays) is never among them.
pub fn perturbation_seeds() -> Vec<u32> {
    let parsed: Option<Vec<u32>> = std::env::var("GEMM_PERTURB_SEEDS").ok().map(|s| {
        s.split(',')
            .filter_map(|t| {
                let t = t.trim();
                match t.strip_prefix("0x") {
                    Some(h) => u32::from_str_radix(h, 16).ok(),
                    None => t.parse().ok(),
                }
            })
            .filter(|&v| v != 0)
            .collect()
    });
    match parsed {
        Some(v) if !v.is_empty() => v,
        _ => vec![0x0000_0001, 0x2545_F491, 0x9E37_79B9, 0xDEAD_BEEF],
    }
}
