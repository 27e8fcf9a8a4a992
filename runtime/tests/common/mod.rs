//! Shared helpers of the GPU tests: random data (never zeros), poison, bit comparison.
#![allow(dead_code)]

use gemm_runtime::{Context, Element, Policy};

/// SplitMix64: small, seedable, good enough for test data.
pub struct Rng(u64);

impl Rng {
    /// Seeded from the test name and the clock, so every run draws fresh data; the seed is
    /// printed so a failure can be replayed with GEMM_TEST_SEED.
    pub fn fresh(label: &str) -> Rng {
        let seed = std::env::var("GEMM_TEST_SEED")
            .ok()
            .and_then(|s| s.parse().ok())
            .unwrap_or_else(|| {
                let t = std::time::SystemTime::now()
                    .duration_since(std::time::UNIX_EPOCH)
                    .map(|d| d.as_nanos() as u64)
                    .unwrap_or(1);
                label.bytes().fold(t, |h, b| h.rotate_left(5) ^ b as u64)
            });
        eprintln!("{label}: seed {seed}");
        Rng(seed)
    }

    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E3779B97F4A7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58476D1CE4E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D049BB133111EB);
        z ^ (z >> 31)
    }

    /// Uniform in [-1, 1), never exactly zero.
    pub fn value(&mut self) -> f32 {
        let u = (self.next_u64() >> 40) as f32 / (1u64 << 24) as f32;
        let v = 2.0 * u - 1.0;
        if v == 0.0 {
            0.5
        } else {
            v
        }
    }

    pub fn vec<T: Element>(&mut self, len: usize) -> Vec<T> {
        (0..len).map(|_| T::from_f32(self.value())).collect()
    }
}

/// A value no kernel produces from finite inputs: NaN.
pub fn poison<T: Element>() -> T {
    T::from_f32(f32::NAN)
}

pub fn bits<T: Element>(v: T) -> u32 {
    v.to_f32().to_bits()
}

/// The device's context, on the tier `GEMM_TEST_TIER` names (read when the test runs, e.g.
/// `GEMM_TEST_TIER=sm80` to run a suite on the sm80 tier's PTX on an H200), else on the tier
/// its capability picks.
pub fn device_context() -> Context {
    let ctx = match std::env::var("GEMM_TEST_TIER") {
        Ok(tier) if !tier.is_empty() => Context::with_tier(0, &tier),
        _ => Context::new(0),
    }
    .unwrap_or_else(|e| panic!("a CUDA device is needed: {e}"));
    eprintln!("context: {}", ctx.tier_selection());
    ctx
}

/// A context whose default policy is pinned to `Exact`: these suites check the exact kernels
/// (fma-k256) through calls that name no policy, and the tensor-core tests name theirs per
/// call. The initial default (`DefaultPolicy::ByDtype`) has its own test in gpu_tensor_core.
/// On the tier `GEMM_TEST_TIER` names, if set ([`device_context`]).
pub fn context() -> Context {
    let ctx = device_context();
    ctx.set_policy(Policy::Exact);
    ctx
}
