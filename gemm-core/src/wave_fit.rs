//! The wave model: which of a route's kernels finishes an m x n x k GEMM first on a device.
//!
//! A kernel's grid runs its work units (tiles, or a cluster's tiles) in rounds of as many as
//! are co-resident; a round costs one unit's time, its tile's `tile_ps_per_k` times k. So a
//! kernel whose tile count leaves its last round nearly empty loses to one whose tiles divide
//! the SMs better, though the latter's tiles may be slower each (a 128 x 128 tile against a
//! 128 x 256 one). A route's `wave_fit` names the kernels it may run instead of its own; they
//! implement the route's contract (validation), so the choice, which depends on m, moves no
//! element's bits. The costs are measured (the tuner's times of every candidate; the tier's
//! spec says where from).

use crate::planner::Routed;
use crate::table::KernelInfo;
use crate::KernelSet;

/// How much sooner (percent of the route kernel's modeled time) another kernel must finish to
/// run instead: a guard against the model's error where two kernels are near (on the tuner's
/// times of every candidate, NN, its picks averaged 1.004-1.021x the fastest kernel's time).
pub const WAVE_FIT_MARGIN_PERCENT: u64 = 2;

/// The wave model's time of `info` on an m x n x k GEMM, in picoseconds, where `max_ctas` of
/// its CTAs can run at once (the co-resident count, capped as its grid would be): rounds of
/// its work units, whole clusters each, times its tile's cost times k. `None` for a kernel
/// with no cost or a grid that cannot run.
pub fn wave_time(info: &KernelInfo, m: u64, n: u64, k: u64, max_ctas: u32) -> Option<u64> {
    if info.tile_ps_per_k == 0 {
        return None;
    }
    let (cx, cz) = (
        u64::from(info.cluster.0.max(1)),
        u64::from(info.cluster.2.max(1)),
    );
    let slots = u64::from(max_ctas) / (cx * cz);
    if slots == 0 {
        return None;
    }
    let work = m
        .div_ceil(u64::from(info.tile.m) * cx)
        .checked_mul(n.div_ceil(u64::from(info.tile.n)))?;
    work.div_ceil(slots)
        .checked_mul(u64::from(info.tile_ps_per_k))?
        .checked_mul(k.max(1))
}

impl Routed {
    /// The routed call with the kernel the wave model says finishes first among the route's
    /// kernel and its `wave_fit` kernels: the fastest of those, where it beats the route's by
    /// [`WAVE_FIT_MARGIN_PERCENT`], else the route's (also where the route's has no cost);
    /// `max_ctas` says how many CTAs of a kernel can run at once on the device (`None`: it
    /// cannot run there, and is not chosen). A kernel whose `max_k` is below k is not chosen.
    /// The route's unaligned kernel stays the fallback of whichever runs.
    pub fn fit_waves(
        self,
        set: &KernelSet,
        m: u64,
        n: u64,
        k: u64,
        mut max_ctas: impl FnMut(&'static KernelInfo) -> Option<u32>,
    ) -> Routed {
        if self.hit.wave_fit.is_empty() {
            return self;
        }
        let mut time = |info: &'static KernelInfo| wave_time(info, m, n, k, max_ctas(info)?);
        let Some(own) = time(self.kernel) else {
            return self;
        };
        let mut best: Option<(u64, &'static KernelInfo)> = None;
        for &id in self.hit.wave_fit {
            let Some(info) = set.kernel(id) else { continue };
            if !info.can_stand_in_for(self.kernel, k) {
                continue;
            }
            if let Some(t) = time(info) {
                if best.is_none_or(|(b, _)| t < b) {
                    best = Some((t, info));
                }
            }
        }
        match best {
            Some((t, kernel))
                if u128::from(t) * 100
                    <= u128::from(own) * u128::from(100 - WAVE_FIT_MARGIN_PERCENT) =>
            {
                Routed { kernel, ..self }
            }
            _ => self,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tile(m: u32, n: u32, ps: u32, cluster_m: u32) -> KernelInfo {
        KernelInfo {
            cluster: (cluster_m, 1, 1),
            ..crate::table::test_kernel(m, n, ps)
        }
    }

    #[test]
    fn rounds_of_work_units_times_the_tiles_cost() {
        // 1024 x 5120 in 128 x 128 tiles: 320 tiles, 3 rounds on 132 SMs.
        let mid2 = tile(128, 128, 5925, 1);
        assert_eq!(
            wave_time(&mid2, 1024, 5120, 4096, 132),
            Some(3 * 5925 * 4096)
        );
        // In 128 x 256 tiles: 160, 2 rounds.
        let wide = tile(128, 256, 11500, 1);
        assert_eq!(
            wave_time(&wide, 1024, 5120, 4096, 132),
            Some(2 * 11500 * 4096)
        );
        // Clusters of 2 along m: a work unit is 256 x 256, 66 of them at once.
        let widec2 = tile(128, 256, 11500, 2);
        assert_eq!(
            wave_time(&widec2, 1024, 5120, 4096, 132),
            Some(2 * 11500 * 4096)
        );
        assert_eq!(
            wave_time(&widec2, 1024, 5120, 4096, 1),
            None,
            "no whole cluster"
        );
        assert_eq!(
            wave_time(&tile(128, 128, 0, 1), 1024, 5120, 4096, 132),
            None
        );
        // One tile: one round, whatever the SMs.
        assert_eq!(wave_time(&mid2, 1, 1, 0, 132), Some(5925));
    }
}
