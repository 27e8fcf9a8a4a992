//! Tiers (one file per SM target): compute capability and gencode agreeing, budgets, the
//! families used and whether their instruction exists on the target, then the file's tiles and
//! routes in order; and the check that no two tiers claim the same target.

use super::budget::check_budgets;
use super::capability::{check_cc, parse_gencode};
use super::names::known;
use super::route::resolve_route;
use super::tile::resolve_tile;
use super::Sink;
use crate::error::{Location, SpecErrorKind};
use crate::load::ParsedFile;
use crate::model::*;
use crate::raw::RawTier;
use std::collections::BTreeMap;

pub(super) fn resolve_tier(
    sink: &mut Sink,
    specs: &SpecSet,
    f: &ParsedFile<'_>,
    at: Location,
    raw: &RawTier,
) -> Option<Tier> {
    let before = sink.errors.len();
    let name = raw.name.clone();
    let item = format!("tier {name}");
    let cc = (raw.compute_capability[0], raw.compute_capability[1]);
    let cc_ok = check_cc(
        sink,
        &at,
        &item,
        "compute_capability",
        raw.compute_capability,
    );
    let mut arch_specific = false;
    match parse_gencode(&raw.gencode) {
        Ok((target, specific)) => {
            arch_specific = specific;
            if cc_ok && target != cc {
                let digits = raw.gencode.rsplit('_').next().unwrap_or_default();
                sink.push(
                    at.clone(),
                    SpecErrorKind::Gencode {
                        tier: name.clone(),
                        gencode: raw.gencode.clone(),
                        problem: format!(
                            "targets sm_{digits} (compute capability {}.{}) but compute_capability is [{}, {}]",
                            target.0, target.1, cc.0, cc.1
                        ),
                    },
                );
            }
        }
        Err(problem) => sink.push(
            at.clone(),
            SpecErrorKind::Gencode {
                tier: name.clone(),
                gencode: raw.gencode.clone(),
                problem,
            },
        ),
    }
    check_budgets(sink, &at, raw);
    if raw.families.is_empty() {
        sink.push(
            at.clone(),
            SpecErrorKind::EmptyList {
                item: item.clone(),
                key: "families".into(),
                why: "a tier builds and routes the kernels of its families; name at least one",
            },
        );
    }
    if f.raw.route.is_empty() {
        sink.push(at.clone(), SpecErrorKind::NoRoutes { tier: name.clone() });
    }
    // Conversions are built for every tier.
    for c in specs.conversions.values() {
        if c.threads > raw.max_threads_per_block {
            sink.push(
                at.clone(),
                SpecErrorKind::Conversion {
                    name: c.name.clone(),
                    problem: format!(
                        "runs {} threads a block; tier {name} allows {} (max_threads_per_block)",
                        c.threads, raw.max_threads_per_block
                    ),
                },
            );
        }
    }
    for fam in &raw.families {
        let Some(family) = specs.families.get(fam) else {
            if sink.is_broken("family", fam) {
                continue;
            }
            sink.push(
                at.clone(),
                SpecErrorKind::UnknownReference {
                    what: "family",
                    name: fam.clone(),
                    known: known(specs.families.keys()),
                },
            );
            continue;
        };
        let Some(inst) = specs.instructions.get(&family.instruction) else {
            continue;
        };
        if !cc_ok {
            continue;
        }
        let above_min = cc >= inst.min_cc;
        let below_max = inst.max_cc.is_none_or(|max| cc <= max);
        let target_ok = !inst.arch_specific || arch_specific;
        if !(above_min && below_max && target_ok) {
            let mut needs = format!("compute capability >= {}.{}", inst.min_cc.0, inst.min_cc.1);
            if let Some(max) = inst.max_cc {
                needs += &format!(" and <= {}.{}", max.0, max.1);
            }
            if inst.arch_specific {
                needs += " on an arch-specific target (sm_XYa)";
            }
            sink.push(
                at.clone(),
                SpecErrorKind::InstructionUnavailable {
                    family: fam.clone(),
                    instruction: inst.name.clone(),
                    needs,
                    tier: name.clone(),
                    major: cc.0,
                    minor: cc.1,
                    arch_specific,
                },
            );
        }
    }
    let mut tier = Tier {
        name: name.clone(),
        doc: raw.doc.clone(),
        gencode: raw.gencode.clone(),
        cc,
        arch_specific,
        max_shared_bytes: raw.max_shared_bytes,
        max_registers_per_thread: raw.max_registers_per_thread,
        max_threads_per_block: raw.max_threads_per_block,
        registers_per_block: raw.registers_per_block,
        families: raw.families.clone(),
        tiles: Vec::new(),
        routes: Vec::new(),
        file: f.name.clone(),
        location: at,
    };
    let mut first_tile: BTreeMap<(String, String), Location> = BTreeMap::new();
    for t in &f.raw.tile {
        let raw = t.get_ref();
        let t_at = f.at(t.span());
        let key = (raw.family.clone(), raw.name.clone());
        if let Some(first) = first_tile.get(&key) {
            sink.push(
                t_at,
                SpecErrorKind::Duplicate {
                    what: "tile",
                    name: format!("{}.{}", raw.family, raw.name),
                    first: first.clone(),
                },
            );
            continue;
        }
        first_tile.insert(key, t_at.clone());
        let span = t.span();
        let key_at = |key: &str| -> Location {
            // The line of `key = ...` inside the tile's table, else the table's line.
            // The table runs from its header to the next header (the span may cover less).
            let text = f.text.get(span.start..).unwrap_or_default();
            let mut offset = 0;
            for (i, line) in text.split_inclusive('\n').enumerate() {
                let l = line.trim_start();
                if i > 0 && l.starts_with('[') {
                    break;
                }
                if let Some(rest) = l.strip_prefix(key) {
                    if rest.trim_start().starts_with('=') {
                        return f.at(span.start + offset..span.start + offset);
                    }
                }
                offset += line.len();
            }
            f.at(span.clone())
        };
        match resolve_tile(sink, specs, &tier, t_at, &key_at, raw) {
            Some(tile) => tier.tiles.push(tile),
            None => {
                for name in [raw.name.clone(), raw.name.to_lowercase()] {
                    sink.broken
                        .insert(("tile", format!("{}.{}", raw.family, name)));
                }
            }
        }
    }
    for (i, r) in f.raw.route.iter().enumerate() {
        let rule = u32::try_from(i).map_or(u32::MAX, |i| i.saturating_add(1));
        resolve_route(sink, specs, &mut tier, rule, f.at(r.span()), r.get_ref());
    }
    (sink.errors.len() == before).then_some(tier)
}

pub(super) fn check_tier_ambiguity(sink: &mut Sink, tiers: &[Tier]) {
    for (i, a) in tiers.iter().enumerate() {
        for b in &tiers[i + 1..] {
            if a.cc == b.cc && a.arch_specific == b.arch_specific {
                sink.push(
                    b.location.clone(),
                    SpecErrorKind::AmbiguousTier {
                        a: a.name.clone(),
                        b: b.name.clone(),
                        major: a.cc.0,
                        minor: a.cc.1,
                        arch_specific: a.arch_specific,
                    },
                );
            }
        }
    }
}
