//! `explain`: the route a GEMM shape takes on a tier of a kernel set, read back in words: the
//! routes tried and why each earlier one did not match, the half fallback, the kernel with its
//! contract, tile, tensor maps, cluster and grid, the unaligned kernel and when it runs, and
//! every refusal. One function over a [`KernelSet`]: `gemm-aot explain` calls it on a set made
//! in memory from the specs, `Context::explain` on the set it serves, a downstream crate on its
//! own set without a device; all print the same.

use crate::kernel_set::KernelSet;
use crate::planner::{Refusal, Routed, StoredAb, StoredOperand, GRID_X_MAX, GRID_YZ_MAX};
use crate::table::{GridKind, KernelInfo, OperandPath, Prepass, TierId};
use crate::vocab::{Dtype, DtypeTriple, Op, Policy, DIM_MAX};
use std::fmt::Write;
use thiserror::Error;

/// A GEMM request in the GEMM view `C[m, n] = sum_k A(m, k) B(k, n)`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Query {
    /// The policy routed under.
    pub policy: Policy,
    /// The operand layout.
    pub op: Op,
    /// The element types.
    pub dtype: DtypeTriple,
    /// Rows of C.
    pub m: u64,
    /// Columns of C.
    pub n: u64,
    /// The reduction length.
    pub k: u64,
    /// SMs of the device to name a route's `wave_fit` choice for, one CTA of each kernel an
    /// SM; `None`: the text lists the candidates and leaves the choice to the device.
    pub sms: Option<u32>,
}

/// Why a query cannot be explained at all.
#[derive(Debug, Error, Clone, PartialEq, Eq)]
pub enum ExplainError {
    /// The set has no tier of this id.
    #[error("the kernel set has no tier {0}")]
    UnknownTier(u16),
    /// The tier routes neither the combination nor its half fallback.
    #[error("tier {tier} does not route {policy} {op} {dtype}; it routes: {served}")]
    NotServed {
        /// The tier's name.
        tier: &'static str,
        /// The policy asked for.
        policy: Policy,
        /// The op asked for.
        op: Op,
        /// The dtypes asked for.
        dtype: DtypeTriple,
        /// `policy op dtype; ...` of what it routes.
        served: String,
    },
}

/// The answer of [`KernelSet::explain`]: its text (the `Display`), and what it found.
#[derive(Clone, Debug)]
pub struct Explanation {
    text: String,
    /// The route and its kernels, unless the shape is refused.
    pub routed: Option<Routed>,
    /// The kernel that runs with operands TMA and cp.async take (the route's, or at k = 0 a
    /// TMA route's unaligned kernel).
    pub kernel: Option<&'static KernelInfo>,
    /// Why the call is refused, if it is.
    pub refusal: Option<Refusal>,
    /// The grid of a one-block-a-tile kernel (a persistent grid depends on the device).
    pub grid: Option<(u32, u32, u32)>,
}

impl std::fmt::Display for Explanation {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.text)
    }
}

impl KernelSet {
    /// The lines on a route's `wave_fit`, and the routed call with the kernel the wave model
    /// picks on `q.sms` SMs (unchanged without them).
    fn explain_wave_fit(&self, s: &mut String, routed: Routed, q: &Query) -> Routed {
        let name = |k: &KernelInfo| format!("{}.{}", k.family, k.tile.name);
        let others: Vec<&'static KernelInfo> = routed
            .hit
            .wave_fit
            .iter()
            .filter_map(|&id| self.kernel(id))
            .collect();
        let _ = writeln!(
            s,
            "  wave fit: each call runs whichever of {} and {} the wave model says finishes first on the device (rounds of tiles, as many at once as are co-resident, x the tile's time per k x k); the same contract, so the same bits",
            name(routed.kernel),
            others.iter().map(|k| name(k)).collect::<Vec<_>>().join(", ")
        );
        let Some(sms) = q.sms else {
            let _ = writeln!(
                s,
                "    (--sms N names the kernel for a device of N SMs, one CTA of each an SM)"
            );
            return routed;
        };
        for k in std::iter::once(routed.kernel).chain(others) {
            if let Some(ps) = crate::wave_time(k, q.m, q.n, q.k, sms) {
                let _ = writeln!(
                    s,
                    "    {} ({}x{}): {} ps a k a round -> {:.1} us on {sms} SMs",
                    name(k),
                    k.tile.m,
                    k.tile.n,
                    k.tile_ps_per_k,
                    ps as f64 / 1e6
                );
            }
        }
        let fitted = routed.fit_waves(self, q.m, q.n, q.k, |_| Some(sms));
        let _ = writeln!(
            s,
            "    runs {}{}",
            name(fitted.kernel),
            if std::ptr::eq(fitted.kernel, routed.kernel) {
                format!(
                    " (the route's: no other kernel at least {}% sooner)",
                    crate::WAVE_FIT_MARGIN_PERCENT
                )
            } else {
                String::new()
            }
        );
        fitted
    }
}

/// A stand-in for an operand TMA and cp.async take (16-byte aligned, a row of 64 elements).
const ALIGNED: StoredOperand = StoredOperand {
    address: 0x1000,
    rows: 1,
    cols: 64,
    ld: 64,
};

impl KernelSet {
    /// Every (policy, op, dtype) tier `tier` serves, natively or (`true`) through the half
    /// fallback, sorted. Each routed combination has a catch-all route (the specs refuse one
    /// without), so one probe a combination is exact.
    pub fn served(&self, tier: TierId) -> Vec<(Policy, Op, DtypeTriple, bool)> {
        let mut out = Vec::new();
        for policy in Policy::ALL {
            for op in Op::ALL {
                for ab in Dtype::ALL {
                    for c in Dtype::ALL {
                        let dtype = DtypeTriple::new(ab, c, Dtype::F32);
                        if let Some((_, fallback)) =
                            self.route_or_fallback(tier, policy, op, dtype, 1, 1, 1)
                        {
                            out.push((policy, op, dtype, fallback));
                        }
                    }
                }
            }
        }
        out
    }

    /// Which route serves `q` on `tier`, why the earlier ones did not, and the kernel it
    /// launches (see the [module docs](self)). Operands are not known here: the text names the
    /// unaligned kernel and when it runs instead.
    pub fn explain(&self, tier: TierId, q: &Query) -> Result<Explanation, ExplainError> {
        let t = self.tier(tier).ok_or(ExplainError::UnknownTier(tier.0))?;
        let f32s = DtypeTriple::new(Dtype::F32, Dtype::F32, Dtype::F32);
        let probe = |m, n, k| self.route_or_fallback(tier, q.policy, q.op, q.dtype, m, n, k);
        // Served at all (every routed combination has a catch-all route)?
        let Some((_, fallback)) =
            probe(q.m.min(DIM_MAX), q.n.min(DIM_MAX), q.k.min(DIM_MAX)).or_else(|| probe(1, 1, 1))
        else {
            return Err(ExplainError::NotServed {
                tier: t.name,
                policy: q.policy,
                op: q.op,
                dtype: q.dtype,
                served: self
                    .served(tier)
                    .iter()
                    .filter(|s| !s.3)
                    .map(|(p, o, d, _)| format!("{p} {o} {d}"))
                    .collect::<Vec<_>>()
                    .join("; "),
            });
        };
        let mut s = String::new();
        let mut out = Explanation {
            text: String::new(),
            routed: None,
            kernel: None,
            refusal: None,
            grid: None,
        };
        let _ = writeln!(
            s,
            "tier {} ({}), {} {} {}, m = {}, n = {}, k = {}",
            t.name, t.spec_file, q.policy, q.op, q.dtype, q.m, q.n, q.k
        );
        let mut routed = match self.route(tier, q.policy, q.op, q.dtype, q.m, q.n, q.k) {
            Ok(r) => r,
            Err(refusal) => {
                let how = match refusal {
                    Refusal::DimensionOverflow { .. } => {
                        "the runtime returns GemmError::DimensionOverflow before routing, and launches nothing"
                    }
                    Refusal::ColumnsTooMany { .. } => {
                        "the runtime returns GemmError::ColumnsTooMany before routing, and launches nothing"
                    }
                    _ => "the runtime launches nothing",
                };
                let what = match refusal {
                    Refusal::ColumnsTooMany { n, max } => format!(
                        "n = {n} is more than tier {} launches for every batch size (at most {max}: {GRID_YZ_MAX} column tiles of its narrowest one-block-a-tile kernel)",
                        t.name
                    ),
                    other => other.to_string(),
                };
                let _ = writeln!(s, "refused: {what}; {how}");
                out.refusal = Some(refusal);
                out.text = s;
                return Ok(out);
            }
        };
        if fallback {
            let _ = writeln!(
                s,
                "  no route for {dtype}: the half fallback widens the half operands to f32, runs the f32 route below, and rounds the result into {c}",
                dtype = q.dtype,
                c = q.dtype.c
            );
        }
        let dtype = if routed.half_fallback { f32s } else { q.dtype };
        for r in self.routes_for(tier, q.policy, q.op, dtype) {
            if r.matches(q.m, q.n, q.k) {
                let _ = writeln!(
                    s,
                    "  route {} ({}): {} -> matches",
                    r.rule,
                    r.location,
                    r.conditions()
                );
                break;
            }
            let misses: Vec<String> = [("m", r.m, q.m), ("n", r.n, q.n), ("k", r.k, q.k)]
                .iter()
                .filter(|(_, range, v)| !range.contains(*v))
                .map(|(dim, range, v)| format!("{dim} = {v} is not {range}"))
                .collect();
            let _ = writeln!(
                s,
                "  route {} ({}): {} -> no: {}",
                r.rule,
                r.location,
                r.conditions(),
                misses.join(", ")
            );
        }
        if !routed.hit.wave_fit.is_empty() {
            routed = self.explain_wave_fit(&mut s, routed, q);
        }
        let k_present = (q.k > 0).then_some(ALIGNED);
        // The call as routed: a kernel that reads A's transposed copy gets it (below); the half
        // fallback's f32 call makes no copy, so its route's unaligned kernel runs.
        let transposes_a = routed.kernel.prepass == Prepass::TransposeA && !routed.half_fallback;
        let ab = StoredAb {
            a: k_present,
            b: k_present,
            dtype: dtype.ab,
            a_transposed: transposes_a,
        };
        let picked = routed.pick(&ab).ok();
        let k = picked.map_or(routed.kernel, |p| p.kernel);
        let k0_unaligned = picked.is_some_and(|p| p.unaligned.is_some());
        let _ = writeln!(s, "kernel {} (id {})", k.name, k.id.0);
        if k0_unaligned {
            let _ = writeln!(
                s,
                "  k = 0: no operand for TMA to map, so the route's unaligned kernel runs"
            );
        }
        let _ = writeln!(
            s,
            "  family {}, template {}, contract {}:",
            k.family, k.template, k.contract
        );
        if let Some(contract) = self.contract_of(k.id) {
            let _ = writeln!(
                s,
                "    {}",
                contract
                    .doc
                    .split_whitespace()
                    .collect::<Vec<_>>()
                    .join(" ")
            );
        }
        let _ = writeln!(s, "  tile {}", k.tile);
        if transposes_a && !k0_unaligned {
            let _ = writeln!(
                s,
                "  A, stored [k, m], is copied transposed into [m, k] scratch first (bits unchanged), and this kernel reads the copy as nn does, within the context's repack limit"
            );
        }
        if k.vector_bytes > 0 && self.conversion_for(tier, dtype.ab, dtype.ab).is_some() {
            let _ = writeln!(
                s,
                "  reads A and B as {}-byte vectors where their addresses and leading dimensions allow: an operand off that is copied (bits unchanged) into aligned scratch and this kernel reads the copy, within the context's repack limit (element by element beyond it, the same bits){}",
                k.vector_bytes,
                if std::ptr::eq(k, routed.kernel) && routed.narrower_unaligned().is_some() {
                    ", unless the unaligned kernel below takes both as they are"
                } else {
                    ""
                }
            );
        }
        let repacks = routed.kernel.operands == OperandPath::Tma
            && self.conversion_for(tier, dtype.ab, dtype.ab).is_some();
        if repacks && !k0_unaligned {
            let _ = writeln!(
                s,
                "  when TMA cannot take A or B for its address or ld alone: that operand is copied (bits unchanged) into aligned scratch and this kernel reads the copy, within the context's repack limit"
            );
        }
        // A plain-load route's unaligned kernel runs only through a narrower vector path
        // (`Routed::vector_unaligned`).
        let loads = routed.kernel.operands == OperandPath::Loads;
        if let Some(u) = routed.narrower_unaligned() {
            let _ = writeln!(
                s,
                "  when A or B is off {} bytes (address, or ld * element size) and both are on {}: kernel {} (id {}), tile {}, reads them as they are (nothing copied)",
                routed.kernel.vector_bytes,
                u.vector_bytes,
                u.name,
                u.id.0,
                u.tile
            );
        } else if let Some(u) = routed.unaligned.filter(|_| !k0_unaligned && !loads) {
            let _ = writeln!(
                s,
                "  {}{}: kernel {} (id {}), tile {}",
                capitalised(routed.kernel.operands.unaligned_when()),
                if repacks {
                    ", and no copy is made (over the repack limit, or a problem a copy does not solve)"
                } else {
                    ""
                },
                u.name,
                u.id.0,
                u.tile
            );
        }
        for m in k.tensor_maps {
            let _ = writeln!(
                s,
                "  tensor map {} ({}): box {} x {} elements (inner x outer, as stored), {}-byte swizzle{}",
                m.field,
                m.operand,
                m.box_inner,
                m.box_outer,
                m.swizzle_bytes,
                if m.optional { ", used when the operand can take TMA" } else { "" }
            );
        }
        if k.has_cluster() {
            let _ = writeln!(
                s,
                "  cluster {:?}: launched with cuLaunchKernelEx",
                k.cluster
            );
        }
        out.routed = Some(routed);
        out.kernel = Some(k);
        if q.m == 0 || q.n == 0 {
            let _ = writeln!(
                s,
                "no launch: the output has no elements (m = {}, n = {}); the runtime validates the call and returns without launching",
                q.m, q.n
            );
            out.text = s;
            return Ok(out);
        }
        let (gx, gy) = (q.m.div_ceil(k.tile.m as u64), q.n.div_ceil(k.tile.n as u64));
        // A cluster along z splits K: the grid's z is its size.
        let gz = k.cluster.2.max(1);
        let split = if gz > 1 {
            format!(", K split {gz} ways by a cluster of (1, 1, {gz}) CTAs")
        } else {
            String::new()
        };
        match k.grid {
            GridKind::Tiles => {
                if gx > GRID_X_MAX || gy > GRID_YZ_MAX {
                    let _ = writeln!(
                        s,
                        "refused: the grid would be ({gx}, {gy}, {gz}) = (ceil(m / {}), ceil(n / {}), {gz}), over the CUDA launch limits ({GRID_X_MAX}, {GRID_YZ_MAX}, {GRID_YZ_MAX}); the runtime returns GemmError::GridTooLarge and launches nothing",
                        k.tile.m, k.tile.n
                    );
                    out.text = s;
                    return Ok(out);
                }
                out.grid = Some((gx as u32, gy as u32, gz));
                let _ = writeln!(
                    s,
                    "  grid ({gx}, {gy}, {gz}) = (ceil(m / {}), ceil(n / {}), {gz}){split}, block {} threads, {} bytes of shared memory",
                    k.tile.m, k.tile.n, k.block_threads, k.shared_bytes
                );
            }
            GridKind::Persistent => {
                let cx = k.cluster.0.max(1) as u64;
                let work = q.m.div_ceil(k.tile.m as u64 * cx) * gy;
                let _ = writeln!(
                    s,
                    "  persistent grid: ({} x min({work}, co-resident clusters), 1, {gz}), {work} = ceil(m / {}) x ceil(n / {}) tiles of {} CTA(s), each walked in a fixed order{split}; block {} threads, {} bytes of shared memory",
                    cx,
                    k.tile.m as u64 * cx,
                    k.tile.n,
                    cx,
                    k.block_threads,
                    k.shared_bytes
                );
            }
        }
        if q.k == 0 {
            let _ = writeln!(s, "  k = 0: only the epilogue runs (bias, beta * C)");
        }
        out.text = s;
        Ok(out)
    }
}

fn capitalised(s: &str) -> String {
    let mut c = s.chars();
    match c.next() {
        Some(f) => f.to_uppercase().collect::<String>() + c.as_str(),
        None => String::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::table::OperandPath;

    #[test]
    fn unaligned_conditions_are_worded_per_operand_path() {
        assert!(OperandPath::CpAsync
            .unaligned_when()
            .contains("16-byte aligned"));
        assert!(!OperandPath::CpAsync.unaligned_when().contains("TMA"));
        assert!(OperandPath::Tma.unaligned_when().contains("TMA"));
        assert_eq!(capitalised("when x"), "When x");
    }
}
