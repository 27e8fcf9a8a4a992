//! What every bench measurement shares: random inputs that are never zero (zeros hide unwritten
//! outputs and can run faster than real data) and the median of repeated timings.

/// The median of `v` (sorted in place).
pub fn median(v: &mut [f64]) -> f64 {
    v.sort_by(|a, b| a.total_cmp(b));
    v[v.len() / 2]
}

/// An LCG, values in [-1, 1), never zero.
pub struct Rng(pub u64);
impl Rng {
    /// The next value.
    pub fn value(&mut self) -> f32 {
        self.0 = self
            .0
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        let u = ((self.0 >> 40) as f32) / (1u64 << 24) as f32;
        let v = 2.0 * u - 1.0;
        if v == 0.0 {
            0.25
        } else {
            v
        }
    }
}
