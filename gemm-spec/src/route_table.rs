//! Rules over a whole route table: a catch-all for everything a tier routes, and batch
//! invariance (DESIGN §4, check 1): for one (policy, op, dtype, n, k), every m must reach
//! kernels of one numeric contract. Also warns about routes that never win and kernels that
//! no route reaches.
//!
//! Exact, not sampled: the (m, n, k) space is cut at every route boundary, so within a cell
//! the first matching route is constant and one point per cell decides it.

use crate::error::{SpecError, SpecErrorKind, SpecWarning};
use crate::model::{serving_tier, DimRange, Route, SpecSet, Tier};
use std::collections::{BTreeMap, BTreeSet};

pub use gemm_core::DIM_MAX;

/// Cell representatives of one axis: 0 and every point where some range starts or ends.
fn cuts<'a>(ranges: impl Iterator<Item = &'a DimRange>) -> Vec<u64> {
    let mut v = BTreeSet::from([0u64]);
    for r in ranges {
        v.insert(r.min);
        if let Some(max) = r.max {
            v.insert(max.saturating_add(1));
        }
    }
    v.into_iter().filter(|&x| x <= DIM_MAX).collect()
}

pub(crate) fn check(
    tier: &Tier,
    specs: &SpecSet,
    errors: &mut Vec<SpecError>,
    warnings: &mut Vec<SpecWarning>,
) {
    let contract_of = |r: &Route| specs.families[&r.family].contract.clone();
    let mut winners: BTreeSet<(u32, String, String)> = BTreeSet::new(); // (rule, op, dtype)
    let mut used_kernels: BTreeSet<(String, String, String, String)> = BTreeSet::new();
    for (policy, op, dtype) in tier.served() {
        let routes = tier.routes_for(policy, op, dtype);
        if !routes.iter().any(|r| r.is_catch_all()) {
            errors.push(SpecError {
                location: routes
                    .last()
                    .map_or(tier.location.clone(), |r| r.location.clone()),
                kind: SpecErrorKind::MissingCatchAll {
                    tier: tier.name.clone(),
                    policy: policy.to_string(),
                    op: op.to_string(),
                    dtype: dtype.to_string(),
                },
            });
        }
        let ms = cuts(routes.iter().map(|r| &r.m));
        let ns = cuts(routes.iter().map(|r| &r.n));
        let ks = cuts(routes.iter().map(|r| &r.k));
        let contracts: Vec<String> = routes.iter().map(|r| contract_of(r)).collect();
        // Each route's own checks run the first time it wins; the cell walk itself allocates
        // nothing (a tuned route file makes it millions of cells).
        let mut won = vec![false; routes.len()];
        let mut reported = false;
        for &n in &ns {
            // The first match over m at one (n, k) is the first of the routes that hold n and
            // k: filtering by n, then k, keeps the walk over m short.
            let by_n: Vec<usize> = (0..routes.len())
                .filter(|&i| routes[i].n.contains(n))
                .collect();
            for &k in &ks {
                let by_nk: Vec<usize> = by_n
                    .iter()
                    .copied()
                    .filter(|&i| routes[i].k.contains(k))
                    .collect();
                let mut first: Option<(u64, usize)> = None;
                for &m in &ms {
                    let Some(i) = by_nk.iter().copied().find(|&i| routes[i].m.contains(m)) else {
                        continue;
                    };
                    let r = routes[i];
                    if !won[i] {
                        won[i] = true;
                        winners.insert((r.rule, op.to_string(), dtype.to_string()));
                        used_kernels.insert((
                            r.family.clone(),
                            r.tile.clone(),
                            op.to_string(),
                            dtype.to_string(),
                        ));
                        // The wave model may run a `wave_fit` kernel instead (validation holds
                        // it to the route's contract): it is reached too.
                        for w in &r.wave_fit {
                            used_kernels.insert((
                                w.family.clone(),
                                w.tile.clone(),
                                op.to_string(),
                                dtype.to_string(),
                            ));
                        }
                        // The unaligned kernel serves the same calls when TMA cannot take an
                        // operand: it is reached too, and must share the route's contract.
                        if let Some(u) = &r.unaligned {
                            used_kernels.insert((
                                u.family.clone(),
                                u.tile.clone(),
                                op.to_string(),
                                dtype.to_string(),
                            ));
                            let uc = specs.families.get(&u.family).map(|f| f.contract.clone());
                            if !reported && uc.as_ref() != Some(&contracts[i]) {
                                reported = true;
                                errors.push(SpecError {
                                    location: r.location.clone(),
                                    kind: SpecErrorKind::RouteUnaligned {
                                        rule: r.rule,
                                        kernel: u.to_string(),
                                        problem: format!(
                                            "implements contract {}, but the route's kernel {} implements {}: batch invariance needs one contract whatever the operands' alignment",
                                            uc.unwrap_or_default(),
                                            r.kernel_ref(),
                                            contracts[i]
                                        ),
                                    },
                                });
                            }
                        }
                    }
                    match first {
                        None => first = Some((m, i)),
                        Some((m_a, a)) if !reported && contracts[a] != contracts[i] => {
                            reported = true;
                            let a = routes[a];
                            errors.push(SpecError {
                                location: r.location.clone(),
                                kind: SpecErrorKind::BatchInvariance {
                                    tier: tier.name.clone(),
                                    policy: policy.to_string(),
                                    op: op.to_string(),
                                    dtype: dtype.to_string(),
                                    n,
                                    k,
                                    m_a,
                                    rule_a: a.rule,
                                    kernel_a: a.kernel_ref(),
                                    contract_a: contract_of(a),
                                    m_b: m,
                                    rule_b: r.rule,
                                    kernel_b: r.kernel_ref(),
                                    contract_b: contract_of(r),
                                },
                            });
                        }
                        Some(_) => {}
                    }
                }
            }
        }
    }
    for r in &tier.routes {
        if !winners.contains(&(r.rule, r.op.to_string(), r.dtype.to_string())) {
            warnings.push(SpecWarning {
                location: r.location.clone(),
                message: format!(
                    "route {} never wins for {} {} {}: {}",
                    r.rule,
                    r.policy,
                    r.op,
                    r.dtype,
                    why_never_wins(tier, r)
                ),
            });
        }
    }
    check_max_k(tier, specs, errors);
    check_batch_tiles(tier, specs, errors);
    for tile in &tier.tiles {
        let family = &specs.families[&tile.family];
        for (op, dtype) in &family.variants {
            let key = (
                tile.family.clone(),
                tile.name.clone(),
                op.to_string(),
                dtype.to_string(),
            );
            // A batch kernel is reached by the strided batches of its contract's routes.
            let for_batches = tier
                .batch_kernels
                .iter()
                .any(|(f, t)| *f == tile.family && *t == tile.name);
            if !used_kernels.contains(&key) && !for_batches && !tile.tuning_candidate {
                warnings.push(SpecWarning {
                    location: tile.location.clone(),
                    message: format!(
                        "kernel {}.{} {op} {dtype} of tier {} is compiled but no route reaches it",
                        tile.family, tile.name, tier.name
                    ),
                });
            }
        }
    }
}

/// A batch kernel's grid z is the batch's entry: a tile that splits K (z its split) or
/// clusters CTAs (B multicast to a peer working on another entry) cannot be one.
fn check_batch_tiles(tier: &Tier, specs: &SpecSet, errors: &mut Vec<SpecError>) {
    for (family, tile_name) in &tier.batch_kernels {
        let Some(tile) = tier.tile(family, tile_name) else {
            continue;
        };
        let Some(&(op, dtype)) = specs.families.get(family).and_then(|f| f.variants.first()) else {
            continue;
        };
        let Some(Ok(derived)) = specs.derive(tier, tile, op, dtype) else {
            continue;
        };
        if derived.cluster > 1 || derived.split_k > 1 {
            errors.push(SpecError {
                location: tile.location.clone(),
                kind: SpecErrorKind::BatchKernel {
                    tier: tier.name.clone(),
                    kernel: format!("{family}.{tile_name}"),
                    problem: format!(
                        "has a cluster of {} CTAs along M and a K split of {}; a batch kernel's grid z is the entry, so it needs neither (1 and 1)",
                        derived.cluster, derived.split_k
                    ),
                },
            });
        }
    }
}

/// A kernel that takes a bounded K (a K split keeps each chunk's partial sums in shared
/// memory: its manifest's `max_k`) may only be reached by routes whose k range stays within it,
/// as their own kernel, their `unaligned` one or one of their `wave_fit` ones. Reported once a
/// route.
fn check_max_k(tier: &Tier, specs: &SpecSet, errors: &mut Vec<SpecError>) {
    let mut reported: BTreeSet<u32> = BTreeSet::new();
    for r in &tier.routes {
        let kernels = std::iter::once((r.family.as_str(), r.tile.as_str())).chain(
            r.unaligned
                .iter()
                .chain(&r.wave_fit)
                .map(|u| (u.family.as_str(), u.tile.as_str())),
        );
        for (family, tile_name) in kernels {
            let Some(tile) = tier.tile(family, tile_name) else {
                continue;
            };
            let Some(Ok(derived)) = specs.derive(tier, tile, r.op, r.dtype) else {
                continue;
            };
            let Some(max_k) = derived.max_k else { continue };
            if r.k.max.is_some_and(|k| k <= max_k) || !reported.insert(r.rule) {
                continue;
            }
            let sends =
                r.k.max
                    .map_or("any k".to_string(), |k| format!("k up to {k}"));
            errors.push(SpecError {
                location: r.location.clone(),
                kind: SpecErrorKind::RouteKernel {
                    rule: r.rule,
                    kernel: format!("{family}.{tile_name}"),
                    problem: format!(
                        "takes k up to {max_k} (the max_k of its {} {} kernel: a K split holds its chunk partials in shared memory), but the route sends {sends}: give the route `k = {{ max = {max_k} }}` or less",
                        r.op, r.dtype
                    ),
                },
            });
        }
    }
}

/// Why a route that never wins does not: a range past the largest dimension, or the earlier
/// routes of its (policy, op, dtype) that overlap it.
fn why_never_wins(tier: &Tier, r: &Route) -> String {
    for (dim, range) in [("m", &r.m), ("n", &r.n), ("k", &r.k)] {
        if range.min > DIM_MAX {
            return format!(
                "its {dim} range {range} lies above the largest dimension {DIM_MAX}, so it matches no shape"
            );
        }
    }
    let overlaps = |a: &DimRange, b: &DimRange| {
        let hi = |x: &DimRange| x.max.unwrap_or(DIM_MAX).min(DIM_MAX);
        a.min.max(b.min) <= hi(a).min(hi(b))
    };
    let covers = |a: &DimRange, b: &DimRange| {
        a.min <= b.min && a.max.is_none_or(|am| b.max.is_some_and(|bm| bm <= am))
    };
    let earlier: Vec<&Route> = tier
        .routes_for(r.policy, r.op, r.dtype)
        .into_iter()
        .filter(|e| e.rule < r.rule)
        .filter(|e| overlaps(&e.m, &r.m) && overlaps(&e.n, &r.n) && overlaps(&e.k, &r.k))
        .collect();
    if let Some(e) = earlier
        .iter()
        .find(|e| covers(&e.m, &r.m) && covers(&e.n, &r.n) && covers(&e.k, &r.k))
    {
        return format!("earlier route {} matches every shape it matches", e.rule);
    }
    let mut rules: Vec<String> = earlier.iter().map(|e| e.rule.to_string()).collect();
    rules.dedup();
    if rules.is_empty() {
        "no shape reaches it".into()
    } else {
        format!(
            "earlier routes {} together match every shape it matches",
            rules.join(", ")
        )
    }
}

/// Device-to-tier coverage (`SpecSet::tier_for_capability`): a tier that takes devices from
/// another tier (a portable tier of a higher minor, or an arch-specific tier of one
/// capability) must serve every (policy, op, dtype) the other serves, or those devices lose
/// what they had.
pub(crate) fn check_coverage(specs: &SpecSet, errors: &mut Vec<SpecError>) {
    let majors: BTreeSet<u32> = specs.tiers.iter().map(|t| t.cc.0).collect();
    // (taker, taken from) -> minors taken, in order.
    let mut taken: BTreeMap<(String, String), (u32, Vec<u32>)> = BTreeMap::new();
    for &major in &majors {
        for minor in 0..=9 {
            let cc = (major, minor);
            let Some(taker) = serving_tier(&specs.tiers, cc) else {
                continue;
            };
            let rest = specs.tiers.iter().filter(|t| t.name != taker.name);
            if let Some(from) = serving_tier(rest, cc) {
                taken
                    .entry((taker.name.clone(), from.name.clone()))
                    .or_insert((major, Vec::new()))
                    .1
                    .push(minor);
            }
        }
    }
    for ((taker, from), (major, minors)) in taken {
        let (Some(t), Some(f)) = (specs.tier(&taker), specs.tier(&from)) else {
            continue;
        };
        let has = t.served();
        let missing: Vec<String> = f
            .served()
            .into_iter()
            .filter(|c| !has.contains(c))
            .map(|(p, o, d)| format!("{p} {o} {d}"))
            .collect();
        if missing.is_empty() {
            continue;
        }
        // Runs of consecutive minors: `8.6 to 8.8`, `9.0`.
        let mut runs: Vec<(u32, u32)> = Vec::new();
        for m in minors {
            match runs.last_mut() {
                Some(run) if run.1 + 1 == m => run.1 = m,
                _ => runs.push((m, m)),
            }
        }
        let devices = runs
            .iter()
            .map(|&(a, b)| {
                if a == b {
                    format!("{major}.{a}")
                } else {
                    format!("{major}.{a} to {major}.{b}")
                }
            })
            .collect::<Vec<_>>()
            .join(", ");
        errors.push(SpecError {
            location: t.location.clone(),
            kind: SpecErrorKind::TierTakesDevices {
                taker,
                from,
                devices,
                missing: missing.join(", "),
            },
        });
    }
}
