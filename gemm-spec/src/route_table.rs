//! Rules over a whole route table: a catch-all for everything a tier routes, and batch
//! invariance (DESIGN §4, check 1): for one (policy, op, dtype, n, k), every m must reach
//! kernels of one numeric contract. Also warns about routes that never win and kernels that
//! no route reaches.
//!
//! Exact, not sampled: the (m, n, k) space is cut at every route boundary, so within a cell
//! the first matching route is constant and one point per cell decides it.

use crate::error::{SpecError, SpecErrorKind, SpecWarning};
use crate::model::{DimRange, Route, SpecSet, Tier};
use std::collections::BTreeSet;

/// Largest dimension the kernels accept (dimensions travel as `i32`).
pub const DIM_MAX: u64 = i32::MAX as u64;

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
        let mut reported = false;
        for &n in &ns {
            for &k in &ks {
                let mut first: Option<(u64, &Route)> = None;
                for &m in &ms {
                    let Some(r) = routes.iter().find(|r| r.matches(m, n, k)) else {
                        continue;
                    };
                    winners.insert((r.rule, op.to_string(), dtype.to_string()));
                    used_kernels.insert((
                        r.family.clone(),
                        r.tile.clone(),
                        op.to_string(),
                        dtype.to_string(),
                    ));
                    match first {
                        None => first = Some((m, r)),
                        Some((m_a, a)) if !reported && contract_of(a) != contract_of(r) => {
                            reported = true;
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
                    "route {} never wins for {} {} {}: earlier routes match every shape it matches",
                    r.rule, r.policy, r.op, r.dtype
                ),
            });
        }
    }
    for tile in &tier.tiles {
        let family = &specs.families[&tile.family];
        for (op, dtype) in &family.variants {
            let key = (
                tile.family.clone(),
                tile.name.clone(),
                op.to_string(),
                dtype.to_string(),
            );
            if !used_kernels.contains(&key) {
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
