//! `gemm-aot explain` and `gemm-aot list`: the route tables read back in words.

use crate::plan::Plan;
use gemm_spec::{DimRange, Dtype, DtypeTriple, Op, Policy, Route, DIM_MAX};
use std::fmt::Write;
use thiserror::Error;

#[derive(Debug, Error, PartialEq, Eq)]
pub enum ExplainError {
    #[error("no tier named `{tier}`; the specs define {known}")]
    UnknownTier { tier: String, known: String },
    #[error("tier {tier} does not route {policy} {op} {dtype}; it routes: {served}")]
    NotServed {
        tier: String,
        policy: Policy,
        op: Op,
        dtype: DtypeTriple,
        served: String,
    },
}

/// CUDA's launch limits: grid.x up to 2^31 - 1, grid.y and grid.z up to 65535.
pub const GRID_X_MAX: u64 = (1 << 31) - 1;
pub const GRID_YZ_MAX: u64 = 65535;

/// A GEMM request in the GEMM view.
#[derive(Clone, Copy, Debug)]
pub struct Query {
    pub policy: Policy,
    pub op: Op,
    pub dtype: DtypeTriple,
    pub m: u64,
    pub n: u64,
    pub k: u64,
}

fn why_not(r: &Route, q: &Query) -> String {
    let mut misses = Vec::new();
    for (dim, range, v) in [("m", r.m, q.m), ("n", r.n, q.n), ("k", r.k, q.k)] {
        if !range.contains(v) {
            misses.push(format!("{dim} = {v} is not {range}"));
        }
    }
    misses.join(", ")
}

fn conditions(r: &Route) -> String {
    let c: Vec<String> = [("m", r.m), ("n", r.n), ("k", r.k)]
        .iter()
        .filter(|(_, d)| *d != DimRange::ANY)
        .map(|(n, d)| format!("{n} {d}"))
        .collect();
    if c.is_empty() {
        "any shape (catch-all)".into()
    } else {
        c.join(", ")
    }
}

/// Which route serves the query, why the earlier ones did not, and the kernel it launches.
pub fn explain(plan: &Plan, tier: &str, q: &Query) -> Result<String, ExplainError> {
    let t = plan
        .specs
        .tier(tier)
        .ok_or_else(|| ExplainError::UnknownTier {
            tier: tier.to_string(),
            known: plan
                .specs
                .tiers
                .iter()
                .map(|t| t.name.as_str())
                .collect::<Vec<_>>()
                .join(", "),
        })?;
    // The runtime's half fallback: a half combination no route serves runs on the f32 route
    // between conversions (see the runtime's `fallback` module).
    let f32 = DtypeTriple::new(Dtype::F32, Dtype::F32, Dtype::F32);
    let native = t.routes_for(q.policy, q.op, q.dtype);
    // It widens only into kernels whose contract is defined for the half inputs (fma-k256's
    // `inputs` list them; TF32's tc-tf32-k8 does not).
    let widens = t.routes_for(q.policy, q.op, f32).iter().all(|r| {
        plan.specs
            .family(&r.family)
            .and_then(|f| plan.specs.contracts.get(&f.contract))
            .is_some_and(|c| c.inputs.contains(&q.dtype.ab))
    });
    let fallback =
        native.is_empty() && q.dtype != f32 && !plan.specs.conversions.is_empty() && widens;
    let routes = if fallback {
        t.routes_for(q.policy, q.op, f32)
    } else {
        native
    };
    if routes.is_empty() {
        return Err(ExplainError::NotServed {
            tier: tier.to_string(),
            policy: q.policy,
            op: q.op,
            dtype: q.dtype,
            served: t
                .served()
                .iter()
                .map(|(p, o, d)| format!("{p} {o} {d}"))
                .collect::<Vec<_>>()
                .join("; "),
        });
    }
    let mut s = String::new();
    let _ = writeln!(
        s,
        "tier {} ({}), {} {} {}, m = {}, n = {}, k = {}",
        t.name, t.file, q.policy, q.op, q.dtype, q.m, q.n, q.k
    );
    // The runtime checks the dimensions before it routes (GemmError::DimensionOverflow).
    let too_big: Vec<String> = [("m", q.m), ("n", q.n), ("k", q.k)]
        .iter()
        .filter(|(_, v)| *v > DIM_MAX)
        .map(|(d, v)| format!("{d} = {v}"))
        .collect();
    if !too_big.is_empty() {
        let _ = writeln!(
            s,
            "refused: {} does not fit the kernels' i32 dimensions (max {DIM_MAX}); the runtime returns GemmError::DimensionOverflow before routing, and launches nothing",
            too_big.join(", ")
        );
        return Ok(s);
    }
    // The runtime refuses an n its narrowest one-block-a-tile kernel cannot put on grid.y,
    // for every m alike (GemmError::ColumnsTooMany), so a refusal never depends on the batch.
    let max_n = plan
        .tier_kernels(&t.name)
        .filter(|k| k.grid == gemm_spec::GridKind::Tiles)
        .map(|k| GRID_YZ_MAX * k.tile.n as u64)
        .min()
        .unwrap_or(u64::MAX);
    if q.n > max_n {
        let _ = writeln!(
            s,
            "refused: n = {} is more than tier {} launches for every batch size (at most {max_n}: {GRID_YZ_MAX} column tiles of its narrowest one-block-a-tile kernel); the runtime returns GemmError::ColumnsTooMany before routing, and launches nothing",
            q.n, t.name
        );
        return Ok(s);
    }
    if fallback {
        let _ = writeln!(
            s,
            "  no route for {dtype}: the half fallback widens the half operands to f32, runs the f32 route below, and rounds the result into {c}",
            dtype = q.dtype,
            c = q.dtype.c
        );
    }
    let mut chosen = None;
    for r in routes {
        if r.matches(q.m, q.n, q.k) {
            let _ = writeln!(
                s,
                "  route {} ({}): {} -> matches",
                r.rule,
                r.location,
                conditions(r)
            );
            chosen = Some(r);
            break;
        }
        let _ = writeln!(
            s,
            "  route {} ({}): {} -> no: {}",
            r.rule,
            r.location,
            conditions(r),
            why_not(r, q)
        );
    }
    let Some(r) = chosen else {
        let _ = writeln!(s, "no route matches (the specs lack a catch-all)");
        return Ok(s);
    };
    let dtype = if fallback { f32 } else { q.dtype };
    let Some(k) = plan.kernel_for(&t.name, &r.family, &r.tile, q.op, dtype) else {
        let _ = writeln!(
            s,
            "the route names {}.{}, which the plan has no {} {dtype} kernel of",
            r.family, r.tile, q.op
        );
        return Ok(s);
    };
    // k = 0 leaves A and B without elements: TMA has nothing to map, so the route's unaligned
    // kernel runs (as for any operand TMA cannot take).
    let mut k = k;
    let mut k0_unaligned = false;
    if q.k == 0 {
        if let Some(uk) = r
            .unaligned
            .as_ref()
            .and_then(|u| plan.kernel_for(&t.name, &u.family, &u.tile, q.op, dtype))
        {
            k = uk;
            k0_unaligned = true;
        }
    }
    let (gx, gy, gz) = Plan::grid(k, q.m, q.n);
    let _ = writeln!(s, "kernel {} (id {})", k.name, k.id);
    if k0_unaligned {
        let _ = writeln!(
            s,
            "  k = 0: no operand for TMA to map, so the route's unaligned kernel runs"
        );
    }
    let _ = writeln!(s, "  family {}, contract {}:", k.family, k.contract);
    if let Some(contract) = plan.specs.contracts.get(&k.contract) {
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
    let _ = writeln!(s, "  tile {} {}", k.tile.name, k.tile.describe());
    if let Some(u) = r.unaligned.as_ref().filter(|_| !k0_unaligned) {
        match plan.kernel_for(&t.name, &u.family, &u.tile, q.op, dtype) {
            Some(uk) => {
                let _ = writeln!(
                    s,
                    "  when TMA cannot take A or B (address not 16-byte aligned, ld * size not a multiple of 16 bytes, or k = 0): kernel {} (id {}), tile {} {}",
                    uk.name,
                    uk.id,
                    uk.tile.name,
                    uk.tile.describe()
                );
            }
            None => {
                let _ = writeln!(
                    s,
                    "  unaligned kernel {u} has no {} {dtype} kernel in the plan",
                    q.op
                );
            }
        }
    }
    for m in &k.tensor_maps {
        let _ = writeln!(
            s,
            "  tensor map {} ({:?}): box {} x {} elements (inner x outer, as stored), {}-byte swizzle",
            m.field, m.operand, m.box_inner, m.box_outer, m.swizzle_bytes
        );
    }
    if k.cluster != (1, 1, 1) {
        let _ = writeln!(
            s,
            "  cluster {:?}: launched with cuLaunchKernelEx",
            k.cluster
        );
    }
    if q.m == 0 || q.n == 0 {
        let _ = writeln!(
            s,
            "no launch: the output has no elements (m = {}, n = {}); the runtime validates the call and returns without launching",
            q.m, q.n
        );
        return Ok(s);
    }
    let over: Vec<String> = [
        ("x", gx, GRID_X_MAX),
        ("y", gy, GRID_YZ_MAX),
        ("z", gz, GRID_YZ_MAX),
    ]
    .iter()
    .filter(|(_, g, max)| g > max)
    .map(|(axis, g, max)| format!("grid.{axis} = {g} is over {max}"))
    .collect();
    if !over.is_empty() && k.grid == gemm_spec::GridKind::Tiles {
        let _ = writeln!(
            s,
            "refused: the grid would be ({gx}, {gy}, {gz}) = (ceil(m / {}), ceil(n / {}), 1), over the CUDA launch limits: {}; the runtime returns GemmError::GridTooLarge and launches nothing",
            k.tile.m,
            k.tile.n,
            over.join(", ")
        );
        return Ok(s);
    }
    if k.grid == gemm_spec::GridKind::Persistent {
        let cx = k.cluster.0.max(1) as u64;
        let work = q.m.div_ceil(k.tile.m as u64 * cx) * gy;
        let _ = writeln!(
            s,
            "  persistent grid: ({} x min({work}, co-resident clusters), 1, 1), {work} = ceil(m / {}) x ceil(n / {}) tiles of {} CTA(s), each walked in a fixed order; block {} threads, {} bytes of shared memory",
            cx,
            k.tile.m as u64 * cx,
            k.tile.n,
            cx,
            k.threads,
            k.shared_bytes
        );
    } else {
        let _ = writeln!(
            s,
            "  grid ({gx}, {gy}, {gz}) = (ceil(m / {}), ceil(n / {}), 1), block {} threads, {} bytes of shared memory",
            k.tile.m, k.tile.n, k.threads, k.shared_bytes
        );
    }
    if q.k == 0 {
        let _ = writeln!(s, "  k = 0: only the epilogue runs (bias, beta * C)");
    }
    Ok(s)
}

/// Every kernel and route of the plan's tiers.
pub fn list(plan: &Plan) -> String {
    let mut s = String::new();
    for t in &plan.specs.tiers {
        let _ = writeln!(
            s,
            "tier {} ({}): compute capability {}.{}, {}, {} bytes of shared memory",
            t.name, t.file, t.cc.0, t.cc.1, t.gencode, t.max_shared_bytes
        );
        let _ = writeln!(s, "  kernels:");
        for k in plan.tier_kernels(&t.name) {
            let mut line = format!(
                "    {:>3}  {:<48} {:<8} {:>4} threads {:>6} B smem",
                k.id, k.name, k.contract, k.threads, k.shared_bytes
            );
            if k.tile.kind() != gemm_spec::TileKind::Scalar {
                line += &format!("  ({})", k.tile.describe());
            }
            let _ = writeln!(s, "{line}");
        }
        let _ = writeln!(s, "  conversions (half fallback):");
        for c in plan.tier_conversions(&t.name) {
            let _ = writeln!(
                s,
                "    {:>3}  {:<48} {} -> {} {:>4} threads",
                c.id, c.name, c.from, c.to, c.threads
            );
        }
        let _ = writeln!(s, "  routes (first match wins):");
        let mut last_rule = 0;
        for r in &t.routes {
            if r.rule == last_rule {
                continue;
            }
            last_rule = r.rule;
            let expanded: Vec<String> = t
                .routes
                .iter()
                .filter(|x| x.rule == r.rule)
                .map(|x| format!("{} {}", x.op, x.dtype))
                .collect();
            let unaligned = r
                .unaligned
                .as_ref()
                .map(|u| format!(" (unaligned: {u})"))
                .unwrap_or_default();
            let _ = writeln!(
                s,
                "    {:>2}. {} [{}] when {} -> {}{unaligned}",
                r.rule,
                r.policy,
                expanded.join(", "),
                conditions(r),
                r.kernel_ref()
            );
        }
    }
    s
}
