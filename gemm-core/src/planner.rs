//! The planning of one GEMM over a kernel set, as pure functions: the policy of a call that
//! names none, the bounds a call must keep (i32 dimensions, the `max_n` of its tier), the route
//! (or the half fallback's), which kernel runs (the route's, or its unaligned kernel when the
//! operands do not suit it), and the launch grid. The runtime's launch, its `explain` and the
//! generator's `explain` all call these; none needs a device.
//!
//! Every decision reads the call's (policy, op, dtype, n, k), its operands' addresses and
//! leading dimensions, and the set; none reads m, except the grid and the route's own m
//! ranges (which one contract spans), so every row stays independent of the batch.

use crate::kernel_set::KernelSet;
use crate::table::{
    GridKind, KernelInfo, KernelRef, Operand, OperandPath, Prepass, RouteHit, TierId,
};
use crate::tma::{check_tma, TensorMapKey, TmaProblem};
use crate::vocab::{Dtype, DtypeTriple, Op, Policy, DIM_MAX};

/// CUDA's launch limits: grid.x up to 2^31 - 1.
pub const GRID_X_MAX: u64 = (1 << 31) - 1;
/// CUDA's launch limits: grid.y and grid.z up to 65535.
pub const GRID_YZ_MAX: u64 = 65535;

/// What a call that names no policy routes under.
///
/// The default, [`ByDtype`](Self::ByDtype), is decided by the call's (op, dtype) alone, never by
/// its shape, so it keeps every row independent of the batch like any fixed policy.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum DefaultPolicy {
    /// bf16 and f16 inputs: `TensorCore` where the tier routes that (op, dtype) under it
    /// natively, else `Exact`. f32 inputs: `Exact` (TF32 only when a call asks for it).
    #[default]
    ByDtype,
    /// This policy for every call that names none.
    Always(Policy),
}

impl From<Policy> for DefaultPolicy {
    fn from(p: Policy) -> Self {
        DefaultPolicy::Always(p)
    }
}

impl std::fmt::Display for DefaultPolicy {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            DefaultPolicy::ByDtype => {
                f.write_str("by dtype (tensor-core for half inputs where routed, exact otherwise)")
            }
            DefaultPolicy::Always(p) => write!(f, "{p}"),
        }
    }
}

/// Why a call is refused for its shape and types alone, before any operand is looked at. The
/// same for every m of one (policy, op, dtype, n, k): a refusal never depends on the batch.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Refusal {
    /// A dimension does not fit the kernels' `i32`.
    DimensionOverflow {
        /// `m`, `n` or `k`.
        dim: &'static str,
        /// Its value.
        value: u64,
    },
    /// n is more than the tier launches for every m.
    ColumnsTooMany {
        /// The call's n.
        n: u64,
        /// The tier's [`KernelSet::max_n`].
        max: u64,
    },
    /// The tier routes neither the (policy, op, dtype) nor, for half inputs, its fallback.
    NoRoute,
    /// The route names a kernel the set does not have.
    UnknownKernel(KernelRef),
}

impl std::fmt::Display for Refusal {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Refusal::DimensionOverflow { dim, value } => write!(
                f,
                "{dim} = {value} does not fit the kernels' i32 dimensions (max {DIM_MAX})"
            ),
            Refusal::ColumnsTooMany { n, max } => write!(
                f,
                "n = {n} is more than the tier launches for every batch size (at most {max}: {GRID_YZ_MAX} column tiles of its narrowest one-block-a-tile kernel)"
            ),
            Refusal::NoRoute => f.write_str("no route serves it"),
            Refusal::UnknownKernel(k) => write!(f, "its route names kernel {k:?}, which the set lacks"),
        }
    }
}

/// A call's route: the hit, whether it runs as the half fallback, and its kernels.
#[derive(Clone, Copy, Debug)]
pub struct Routed {
    /// The route table's hit.
    pub hit: RouteHit,
    /// Whether it runs as the half fallback (the f32 route between conversions).
    pub half_fallback: bool,
    /// The route's kernel.
    pub kernel: &'static KernelInfo,
    /// Its unaligned kernel, for kernels that need aligned operands.
    pub unaligned: Option<&'static KernelInfo>,
}

/// One operand as stored, as far as the kernel choice needs it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct StoredOperand {
    /// Device address of element (0, 0).
    pub address: u64,
    /// Rows as stored.
    pub rows: u64,
    /// Columns as stored (the contiguous dimension).
    pub cols: u64,
    /// Leading dimension, in elements.
    pub ld: u64,
}

/// A and B as the kernel that runs will read them (`None`: no elements, k = 0), and their
/// element type.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct StoredAb {
    /// A as stored.
    pub a: Option<StoredOperand>,
    /// B as stored.
    pub b: Option<StoredOperand>,
    /// Their element type (the kernel's: f32 in the half fallback).
    pub dtype: Dtype,
    /// Whether `a` is A's transposed copy (`[m, k]`), which a [`Prepass::TransposeA`] kernel
    /// reads; `false`: A as the call stores it.
    pub a_transposed: bool,
}

/// Why the route's unaligned kernel runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum UnalignedWhy {
    /// A cp.async kernel's A or B is not 16-byte aligned (address or `ld * size`), or a
    /// vector-path kernel's is off its `vector_bytes` where the route's unaligned kernel's
    /// vector path takes both operands as they are ([`Routed::vector_unaligned`]).
    Misaligned(Operand),
    /// TMA cannot take A or B.
    Tma(Operand, TmaProblem),
    /// The kernel reads a copy of the operand (its [`Prepass`]) that the call could not make
    /// (the scratch bound, a frozen scratch, k = 0).
    NotCopied(Operand),
}

/// The kernel that runs a call.
#[derive(Clone, Copy, Debug)]
pub struct Picked {
    /// The kernel.
    pub kernel: &'static KernelInfo,
    /// Set when it is the route's unaligned kernel, with why.
    pub unaligned: Option<UnalignedWhy>,
}

/// Why no kernel of a route can run a call.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PickError {
    /// TMA cannot take an operand and the route has no unaligned kernel, or the kernel table's
    /// box or swizzle breaks TMA's rules (which no fallback should hide).
    Tma(Operand, TmaProblem),
    /// The kernel reads a copy of the operand that the call could not make, and the route has
    /// no unaligned kernel.
    NotCopied(Operand),
}

/// Why a kernel's grid cannot be launched.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum GridProblem {
    /// A grid dimension is over CUDA's limits.
    TooLarge,
    /// The grid is not whole clusters.
    ClusterShape {
        /// The grid.
        grid: (u32, u32, u32),
        /// The cluster.
        cluster: (u32, u32, u32),
    },
    /// A persistent kernel without one co-resident cluster.
    Unschedulable,
}

/// Most CTAs a persistent grid may have: the co-resident CTAs, or the cap if lower, rounded
/// down to whole clusters of `cluster_ctas` CTAs, and at least one cluster.
pub fn persistent_limit(coresident: u32, cap: Option<u32>, cluster_ctas: u32) -> u32 {
    let cluster_ctas = cluster_ctas.max(1);
    let limit = cap.map_or(coresident, |c| c.min(coresident));
    (limit / cluster_ctas).max(1).saturating_mul(cluster_ctas)
}

impl KernelInfo {
    /// Launch grid for a GEMM of `m x n`; `None` when a dimension does not fit a grid (the
    /// caller skips launching when m or n is 0), or, for a persistent kernel, when not one
    /// cluster fits in `max_ctas`.
    ///
    /// - `Tiles`: `(ceil(m / tile.m), ceil(n / tile.n), cluster.2)`: one CTA a tile, or one
    ///   cluster along z a tile for a kernel that splits K; `max_ctas` is not used.
    /// - `Persistent`: `max_ctas` is the co-resident CTA count (capped, [`persistent_limit`]).
    ///   The work is `ceil(m / (tile.m * cluster.0)) x ceil(n / tile.n)` cluster tiles; the
    ///   grid is `(cluster.0 * min(work, max_ctas / (cluster.0 * cluster.2)), 1, cluster.2)`,
    ///   whole clusters, at least one; a cluster along z splits each tile's K. Who computes a
    ///   tile depends on it, never how.
    pub fn grid_for(&self, m: u64, n: u64, max_ctas: u32) -> Option<(u32, u32, u32)> {
        match self.grid {
            GridKind::Tiles => {
                let gx = m.div_ceil(self.tile.m as u64);
                let gy = n.div_ceil(self.tile.n as u64);
                let gz = self.cluster.2.max(1);
                (gx <= GRID_X_MAX && gy <= GRID_YZ_MAX && gz as u64 <= GRID_YZ_MAX)
                    .then_some((gx as u32, gy as u32, gz))
            }
            GridKind::Persistent => {
                let cx = self.cluster.0.max(1) as u64;
                let cz = self.cluster.2.max(1);
                let clusters = max_ctas as u64 / (cx * cz as u64);
                if clusters == 0 {
                    return None;
                }
                let work = m
                    .div_ceil(self.tile.m as u64 * cx)
                    .checked_mul(n.div_ceil(self.tile.n as u64))?;
                let gx = u32::try_from(work.clamp(1, clusters) * cx).ok()?;
                (cz as u64 <= GRID_YZ_MAX).then_some((gx, 1, cz))
            }
        }
    }

    /// The launch grid, checked to be whole clusters: `max_ctas` (the co-resident CTAs of a
    /// persistent kernel, capped; ignored for one block a tile).
    pub fn launch_grid(
        &self,
        m: u64,
        n: u64,
        max_ctas: u32,
    ) -> Result<(u32, u32, u32), GridProblem> {
        if self.grid == GridKind::Persistent
            && max_ctas < self.cluster.0.max(1) * self.cluster.2.max(1)
        {
            return Err(GridProblem::Unschedulable);
        }
        let grid = self.grid_for(m, n, max_ctas).ok_or(GridProblem::TooLarge)?;
        let c = self.cluster;
        let whole = |g: u32, c: u32| c >= 1 && g.is_multiple_of(c);
        if !(whole(grid.0, c.0) && whole(grid.1, c.1) && whole(grid.2, c.2)) {
            return Err(GridProblem::ClusterShape { grid, cluster: c });
        }
        Ok(grid)
    }

    /// Whether the kernel needs the launch with attributes (a cluster other than (1, 1, 1)).
    pub fn has_cluster(&self) -> bool {
        self.cluster != (1, 1, 1)
    }
}

impl KernelSet {
    /// The policy a call of `op` and `dtype` that names none routes under on `tier`, under
    /// the default `default`: resolved from (op, dtype), never the shape.
    pub fn policy_for(
        &self,
        tier: TierId,
        default: DefaultPolicy,
        op: Op,
        dtype: DtypeTriple,
    ) -> Policy {
        match default {
            DefaultPolicy::Always(p) => p,
            DefaultPolicy::ByDtype => {
                let half = matches!(dtype.ab, Dtype::Bf16 | Dtype::F16);
                // Every routed (policy, op, dtype) has a catch-all route, so one probe is exact.
                let routed = self
                    .dispatch(tier, Policy::TensorCore, op, dtype, 1, 1, 1)
                    .is_some();
                if half && routed {
                    Policy::TensorCore
                } else {
                    Policy::Exact
                }
            }
        }
    }

    /// The largest n every GEMM kernel of `tier` can launch: `65535 * tile.n` of its narrowest
    /// one-block-a-tile kernel (grid.y carries the n tiles); persistent kernels put every tile
    /// on grid.x and take any n. A call above it is refused for every m alike, so whether a
    /// shape is refused never depends on the batch, though the routes pick kernels of other
    /// tile widths for other m. 0 for a tier the set lacks.
    pub fn max_n(&self, tier: TierId) -> u64 {
        let tiers = self.max_n.get_or_init(|| {
            (0..self.tiers().len())
                .map(|i| self.widest_n(TierId(i as u16)))
                .collect()
        });
        tiers.get(usize::from(tier.0)).copied().unwrap_or(0)
    }

    /// [`max_n`](Self::max_n), computed from the tier's kernels.
    fn widest_n(&self, tier: TierId) -> u64 {
        if self.tier(tier).is_none() {
            return 0;
        }
        self.tier_kernels(tier)
            .iter()
            .filter(|k| k.grid == GridKind::Tiles)
            .map(|k| GRID_YZ_MAX * k.tile.n as u64)
            .min()
            .unwrap_or(u64::MAX)
    }

    /// The route of a call in the GEMM view, after the checks of its shape alone: every
    /// dimension fits `i32`, n is at most [`max_n`](Self::max_n), and a route (or the half
    /// fallback's) serves it.
    #[allow(clippy::too_many_arguments)]
    pub fn route(
        &self,
        tier: TierId,
        policy: Policy,
        op: Op,
        dtype: DtypeTriple,
        m: u64,
        n: u64,
        k: u64,
    ) -> Result<Routed, Refusal> {
        for (dim, value) in [("m", m), ("n", n), ("k", k)] {
            if value > DIM_MAX {
                return Err(Refusal::DimensionOverflow { dim, value });
            }
        }
        let max = self.max_n(tier);
        if n > max {
            return Err(Refusal::ColumnsTooMany { n, max });
        }
        let (hit, half_fallback) = self
            .route_or_fallback(tier, policy, op, dtype, m, n, k)
            .ok_or(Refusal::NoRoute)?;
        let kernel = self
            .kernel(hit.kernel)
            .ok_or(Refusal::UnknownKernel(KernelRef::Gemm(hit.kernel)))?;
        let unaligned = match hit.unaligned {
            Some(id) => Some(
                self.kernel(id)
                    .ok_or(Refusal::UnknownKernel(KernelRef::Gemm(id)))?,
            ),
            None => None,
        };
        Ok(Routed {
            hit,
            half_fallback,
            kernel,
            unaligned,
        })
    }
}

/// The key of `map` over an operand as stored, with no allocation: what TMA's rules read.
pub(crate) fn map_key(
    s: StoredOperand,
    dtype: Dtype,
    map: &crate::table::TensorMapPlan,
) -> TensorMapKey {
    TensorMapKey {
        allocation: 0,
        generation: 0,
        offset: 0,
        rows: s.rows,
        cols: s.cols,
        ld: s.ld,
        dtype,
        box_inner: map.box_inner,
        box_outer: map.box_outer,
        swizzle_bytes: map.swizzle_bytes,
        batch: None,
    }
}

/// The first of A and B whose address or row pitch is off `vector` bytes (`None`: both on it,
/// or absent).
fn off_vector(vector: u32, ab: &StoredAb) -> Option<Operand> {
    let (vector, elem) = (u64::from(vector), ab.dtype.size_bytes());
    [(Operand::A, ab.a), (Operand::B, ab.b)]
        .into_iter()
        .find(|(_, s)| {
            s.is_some_and(|s| {
                !s.address.is_multiple_of(vector) || !(s.ld * elem).is_multiple_of(vector)
            })
        })
        .map(|(o, _)| o)
}

impl Routed {
    /// The operand that makes the route's vector-path kernel give way to its unaligned kernel:
    /// one off the kernel's `vector_bytes`, where the unaligned kernel (plain loads, a vector
    /// path of its own) takes A and B as they are. Then neither is copied (an odd vocabulary's
    /// weight at decode would be copied whole every call) and the unaligned kernel runs: the
    /// same contract, so the same bits. Decided by addresses and leading dimensions alone.
    pub fn vector_unaligned(&self, ab: &StoredAb) -> Option<Operand> {
        let u = self.narrower_unaligned()?;
        if ab.a_transposed || off_vector(u.vector_bytes, ab).is_some() {
            return None;
        }
        off_vector(self.kernel.vector_bytes, ab)
    }

    /// The route's unaligned kernel where it can stand in for a vector-path kernel without a
    /// copy ([`Routed::vector_unaligned`]): both plain-load kernels, the unaligned one with a
    /// narrower vector path of its own and no prepass. Operands decide whether it runs.
    pub fn narrower_unaligned(&self) -> Option<&'static KernelInfo> {
        let (k, u) = (self.kernel, self.unaligned?);
        let narrower = u.vector_bytes > 0 && u.vector_bytes < k.vector_bytes;
        (k.operands == OperandPath::Loads
            && u.operands == OperandPath::Loads
            && u.prepass == Prepass::None
            && narrower)
            .then_some(u)
    }

    /// The kernel that runs the call: the route's, or its unaligned kernel (same contract, so
    /// the same bits) when the route's kernel cannot take A or B: a cp.async kernel's operands
    /// not 16-byte aligned, a TMA kernel's map of A or B refused by TMA (k = 0 leaves them
    /// without elements), or a vector-path kernel's operand off its path where the unaligned
    /// kernel's takes it ([`Routed::vector_unaligned`]). Decided by addresses, leading
    /// dimensions and k, never by m: TMA's rules read the rows only as "at least one"
    /// ([`check_tma`]).
    pub fn pick(&self, ab: &StoredAb) -> Result<Picked, PickError> {
        let k = self.kernel;
        let why = match k.operands {
            // Its A is the transposed copy or nothing it can read.
            _ if k.prepass == Prepass::TransposeA && !ab.a_transposed => {
                Some(UnalignedWhy::NotCopied(Operand::A))
            }
            OperandPath::Loads => self.vector_unaligned(ab).map(UnalignedWhy::Misaligned),
            OperandPath::CpAsync => {
                off_vector(k.operands.alignment(), ab).map(UnalignedWhy::Misaligned)
            }
            OperandPath::Tma => {
                let mut why = None;
                for map in k.tensor_maps.iter().filter(|m| !m.optional) {
                    let stored = match map.operand {
                        Operand::A => ab.a,
                        Operand::B => ab.b,
                        _ => continue,
                    };
                    let problem = match stored {
                        None => Some(TmaProblem::Dimension { rows: 0, cols: 0 }),
                        Some(s) => {
                            let key = map_key(s, ab.dtype, map);
                            check_tma(s.address, &key).err()
                        }
                    };
                    match problem {
                        None => {}
                        Some(p) if p.is_operand() => {
                            why = Some(UnalignedWhy::Tma(map.operand, p));
                            break;
                        }
                        Some(p) => return Err(PickError::Tma(map.operand, p)),
                    }
                }
                why
            }
        };
        // A's transposed copy is read by this kernel alone (the unaligned kernel reads tn's A
        // as stored), so no fallback then: a problem is the call's error.
        if ab.a_transposed {
            return match why {
                None => Ok(Picked {
                    kernel: k,
                    unaligned: None,
                }),
                Some(UnalignedWhy::Tma(o, p)) => Err(PickError::Tma(o, p)),
                Some(UnalignedWhy::Misaligned(o) | UnalignedWhy::NotCopied(o)) => {
                    Err(PickError::NotCopied(o))
                }
            };
        }
        match (why, self.unaligned) {
            (None, _) => Ok(Picked {
                kernel: k,
                unaligned: None,
            }),
            (Some(w), Some(u)) => Ok(Picked {
                kernel: u,
                unaligned: Some(w),
            }),
            // A cp.async kernel without an unaligned kernel copies element by element itself
            // (same bits, slower); a TMA kernel cannot.
            (Some(UnalignedWhy::Misaligned(_)), None) => Ok(Picked {
                kernel: k,
                unaligned: None,
            }),
            (Some(UnalignedWhy::Tma(o, p)), None) => Err(PickError::Tma(o, p)),
            (Some(UnalignedWhy::NotCopied(o)), None) => Err(PickError::NotCopied(o)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A kernel of `grid` with a `tile_m` x 64 tile and `cluster`, for the grid rules.
    fn kernel(grid: GridKind, tile_m: u32, cluster: (u32, u32, u32)) -> KernelInfo {
        KernelInfo {
            grid,
            cluster,
            ..crate::table::test_kernel(tile_m, 64, 0)
        }
    }

    #[test]
    fn a_cluster_along_z_splits_k_and_is_the_grids_z() {
        // One CTA a tile, eight along z: (ceil(m / 16), ceil(n / 64), 8).
        let split = kernel(GridKind::Tiles, 16, (1, 1, 8));
        assert_eq!(split.launch_grid(1, 1024, u32::MAX), Ok((1, 16, 8)));
        assert_eq!(split.launch_grid(17, 1000, u32::MAX), Ok((2, 16, 8)));
        let plain = kernel(GridKind::Tiles, 16, (1, 1, 1));
        assert_eq!(plain.launch_grid(17, 1000, u32::MAX), Ok((2, 16, 1)));
        // Persistent: whole clusters of 4 CTAs within the co-resident 132, at most one a tile.
        let p = kernel(GridKind::Persistent, 64, (1, 1, 4));
        assert_eq!(p.launch_grid(256, 1024, 132), Ok((33, 1, 4)));
        assert_eq!(p.launch_grid(64, 128, 132), Ok((2, 1, 4)));
        assert_eq!(
            p.launch_grid(64, 128, 3),
            Err(GridProblem::Unschedulable),
            "not one cluster of 4 fits in 3 CTAs"
        );
    }

    #[test]
    fn persistent_limits_are_capped_whole_clusters() {
        assert_eq!(persistent_limit(132, None, 1), 132);
        assert_eq!(persistent_limit(132, Some(66), 1), 66);
        assert_eq!(persistent_limit(132, Some(500), 1), 132);
        assert_eq!(persistent_limit(133, None, 2), 132);
        assert_eq!(persistent_limit(132, Some(65), 2), 64);
        assert_eq!(persistent_limit(132, Some(1), 2), 2);
        assert_eq!(persistent_limit(132, Some(0), 1), 1);
        for cap in [None, Some(0), Some(1), Some(7), Some(64), Some(1000)] {
            for cs in [1u32, 2, 4] {
                let n = persistent_limit(132, cap, cs);
                assert_eq!(n % cs, 0);
                assert!(n >= cs && n <= 132);
            }
        }
    }
}
