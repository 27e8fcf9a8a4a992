//! Routes of a tier's first-match table: op and dtype lists, m/n/k ranges, and the `family.tile`
//! kernel, which must exist on the tier with the route's policy; each route expands into one
//! `Route` per (op, dtype) its family builds.

use super::unaligned::resolve_unaligned;
use super::wave_fit::resolve_wave_fit;
use super::Sink;
use crate::error::{Location, SpecErrorKind};
use crate::model::*;
use crate::raw::{RawRange, RawRoute};
use crate::vocab::{DtypeTriple, Op, Policy};

pub(super) fn resolve_range(
    sink: &mut Sink,
    at: &Location,
    rule: u32,
    dim: &'static str,
    raw: &Option<RawRange>,
) -> Option<DimRange> {
    let Some(raw) = raw else {
        return Some(DimRange::ANY);
    };
    let r = DimRange {
        min: raw.min.unwrap_or(0),
        max: raw.max,
    };
    if let Some(max) = r.max {
        if r.min > max {
            sink.push(
                at.clone(),
                SpecErrorKind::EmptyRange {
                    rule,
                    dim,
                    min: r.min,
                    max,
                },
            );
            return None;
        }
    }
    Some(r)
}

pub(super) fn resolve_route(
    sink: &mut Sink,
    specs: &SpecSet,
    tier: &mut Tier,
    rule: u32,
    at: Location,
    raw: &RawRoute,
) {
    let kernel_err = |sink: &mut Sink, problem: String| {
        sink.push(
            at.clone(),
            SpecErrorKind::RouteKernel {
                rule,
                kernel: raw.kernel.clone(),
                problem,
            },
        );
    };
    let word = |sink: &mut Sink, msg: String| {
        sink.push(
            at.clone(),
            SpecErrorKind::UnknownWord(format!("route {rule}: {msg}")),
        )
    };
    let policy = raw
        .policy
        .parse::<Policy>()
        .map_err(|e| word(sink, e.to_string()));
    for (key, list, why) in [
        ("op", &raw.op, "name the ops the route serves (nn, tn, nt)"),
        (
            "dtype",
            &raw.dtype,
            "name dtype triples such as \"f32.f32.f32\", or write \"any\"",
        ),
    ] {
        if list.items().is_empty() {
            sink.push(
                at.clone(),
                SpecErrorKind::EmptyList {
                    item: format!("route {rule}"),
                    key: key.into(),
                    why,
                },
            );
        }
    }
    let mut ops = Vec::new();
    for o in raw.op.items() {
        match o.parse::<Op>() {
            Ok(op) => ops.push(op),
            Err(e) => word(sink, e.to_string()),
        }
    }
    let m = resolve_range(sink, &at, rule, "m", &raw.m);
    let n = resolve_range(sink, &at, rule, "n", &raw.n);
    let k = resolve_range(sink, &at, rule, "k", &raw.k);
    let Some((fam_name, tile_name)) = raw.kernel.split_once('.') else {
        kernel_err(sink, "must read `family.tile`, e.g. `fma.thin`".into());
        return;
    };
    if !tier.families.iter().any(|f| f == fam_name) {
        kernel_err(
            sink,
            format!(
                "names family {fam_name}, which tier {} does not use (families: {})",
                tier.name,
                tier.families.join(", ")
            ),
        );
        return;
    }
    let Some(family) = specs.families.get(fam_name) else {
        return;
    };
    if sink.is_broken("tile", &raw.kernel) {
        return;
    }
    if tier.tile(fam_name, tile_name).is_none() {
        let tiles: Vec<String> = tier
            .tiles
            .iter()
            .filter(|t| t.family == fam_name)
            .map(|t| t.name.clone())
            .collect();
        kernel_err(
            sink,
            format!(
                "names tile {tile_name}, which tier {} does not define for {fam_name} (tiles: {})",
                tier.name,
                if tiles.is_empty() {
                    "none".into()
                } else {
                    tiles.join(", ")
                }
            ),
        );
        return;
    }
    let Ok(policy) = policy else { return };
    if family.policy != policy {
        kernel_err(
            sink,
            format!(
                "is family {fam_name} of policy {}, but the route is for policy {policy}",
                family.policy
            ),
        );
        return;
    }
    let (Some(m), Some(n), Some(k)) = (m, n, k) else {
        return;
    };
    let unaligned = match resolve_unaligned(sink, specs, tier, rule, &at, family, raw) {
        Ok(u) => u,
        Err(()) => return,
    };
    let wave_fit = match resolve_wave_fit(sink, specs, tier, rule, &at, family, raw) {
        Ok(w) => w,
        Err(()) => return,
    };
    let dtype_words = raw.dtype.items();
    for op in ops {
        let dtypes: Vec<DtypeTriple> = if dtype_words == ["any"] {
            let v: Vec<DtypeTriple> = family
                .variants
                .iter()
                .filter(|(o, _)| *o == op)
                .map(|(_, d)| *d)
                .collect();
            if v.is_empty() {
                kernel_err(sink, format!("has no {op} variant in family {fam_name}"));
            }
            v
        } else {
            let mut v = Vec::new();
            for w in &dtype_words {
                match w.parse::<DtypeTriple>() {
                    Ok(d) if family.has_variant(op, d) => v.push(d),
                    Ok(d) => kernel_err(
                        sink,
                        format!("has no {op} {d} variant: family {fam_name} does not list it"),
                    ),
                    Err(e) => word(sink, e.to_string()),
                }
            }
            v
        };
        for dtype in dtypes {
            if let Some((w, _)) = wave_fit.iter().find(|(_, f)| !f.has_variant(op, dtype)) {
                sink.push(
                    at.clone(),
                    SpecErrorKind::RouteWaveFit {
                        rule,
                        kernel: w.to_string(),
                        problem: format!(
                            "has no {op} {dtype} variant, which the route serves: family {} does not list it",
                            w.family
                        ),
                    },
                );
                continue;
            }
            if let Some((u, ufam)) = &unaligned {
                if !ufam.has_variant(op, dtype) {
                    sink.push(
                        at.clone(),
                        SpecErrorKind::RouteUnaligned {
                            rule,
                            kernel: u.to_string(),
                            problem: format!(
                                "has no {op} {dtype} variant, which the route serves: family {} does not list it",
                                ufam.name
                            ),
                        },
                    );
                    continue;
                }
            }
            tier.routes.push(Route {
                rule,
                policy,
                op,
                dtype,
                m,
                n,
                k,
                family: fam_name.to_string(),
                tile: tile_name.to_string(),
                unaligned: unaligned.as_ref().map(|(u, _)| u.clone()),
                wave_fit: wave_fit.iter().map(|(w, _)| w.clone()).collect(),
                location: at.clone(),
            });
        }
    }
}
