//! Tiers (one file per SM target): a tier's effective keys, tiles and routes (its own, or its
//! base tier's with its file's changes), compute capability and gencode agreeing, the hardware
//! entry of that capability and the budgets within it, the families used and whether their
//! instruction exists on the target, then the tiles and routes in order; and the check that no
//! two tiers claim the same target.

use super::budget::check_budgets;
use super::capability::{check_cc, parse_gencode};
use super::names::known;
use super::route::resolve_route;
use super::tile::{key_line, resolve_tile, TileSource};
use super::Sink;
use crate::error::{Location, SpecErrorKind};
use crate::model::*;
use crate::raw::ParsedFile;
use crate::raw::{RawRoute, RawTier};
use std::collections::BTreeMap;

/// A tier's keys, tiles and routes after its base.
#[derive(Clone, Debug)]
pub(super) struct TierSource {
    pub keys: RawTier,
    pub file: String,
    pub at: Location,
    pub tiles: Vec<TileSource>,
    /// The file's own routes, or (when it has none) its base's with renamed tiles followed.
    pub routes: Vec<(RawRoute, Location)>,
    /// The tier's routes files (resolved names, merge order); set for the tier being
    /// resolved, never taken from a base.
    pub routes_files: Vec<String>,
    /// Their routes, which come before `routes`.
    pub file_routes: Vec<(RawRoute, Location)>,
}

fn merge_keys(base: &RawTier, ours: &RawTier) -> RawTier {
    RawTier {
        name: ours.name.clone(),
        base: ours.base.clone(),
        doc: ours.doc.clone().or_else(|| base.doc.clone()),
        gencode: ours.gencode.clone().or_else(|| base.gencode.clone()),
        compute_capability: ours.compute_capability.or(base.compute_capability),
        max_shared_bytes: ours.max_shared_bytes.or(base.max_shared_bytes),
        max_registers_per_thread: ours
            .max_registers_per_thread
            .or(base.max_registers_per_thread),
        max_threads_per_block: ours.max_threads_per_block.or(base.max_threads_per_block),
        registers_per_block: ours.registers_per_block.or(base.registers_per_block),
        families: ours.families.clone().or_else(|| base.families.clone()),
        routes_files: ours.routes_files.clone(),
        batch_kernels: ours
            .batch_kernels
            .clone()
            .or_else(|| base.batch_kernels.clone()),
    }
}

/// The effective source of the tier defined in `files[index]`, following `base` chains;
/// `None` after an error (an unknown or circular base, a bad `replaces`).
pub(super) fn tier_source(
    sink: &mut Sink,
    files: &[ParsedFile<'_>],
    index: usize,
    chain: &mut Vec<String>,
) -> Option<TierSource> {
    let f = &files[index];
    let raw_tier = f.raw.tier.as_ref()?;
    let at = f.at(raw_tier.span());
    let keys = raw_tier.get_ref().clone();
    let name = keys.name.clone();
    chain.push(name.clone());
    let base = match &keys.base {
        None => None,
        Some(b) => {
            if chain.contains(b) {
                sink.push(
                    at.clone(),
                    SpecErrorKind::TierBase {
                        tier: name.clone(),
                        problem: format!("base `{b}` leads back to {name} ({} -> {b}): a tier cannot derive from itself", chain.join(" -> ")),
                    },
                );
                return None;
            }
            let Some(bi) = files
                .iter()
                .position(|g| g.raw.tier.as_ref().is_some_and(|t| &t.get_ref().name == b))
            else {
                let tiers: Vec<String> = files
                    .iter()
                    .filter_map(|g| g.raw.tier.as_ref().map(|t| t.get_ref().name.clone()))
                    .collect();
                sink.push(
                    at.clone(),
                    SpecErrorKind::TierBase {
                        tier: name.clone(),
                        problem: format!(
                            "base `{b}` is no tier of the specs; they define {}",
                            tiers.join(", ")
                        ),
                    },
                );
                return None;
            };
            Some(tier_source(sink, files, bi, chain)?)
        }
    };
    let (mut tiles, base_routes, keys) = match base {
        Some(b) => (b.tiles, b.routes, merge_keys(&b.keys, &keys)),
        None => (Vec::new(), Vec::new(), keys),
    };
    let from_base = tiles.len();
    let mut renames: Vec<(String, String)> = Vec::new(); // ("fam.old", "fam.new")
    let mut defined: BTreeMap<(String, String), Location> = BTreeMap::new();
    let mut ok = true;
    for t in &f.raw.tile {
        let raw = t.get_ref();
        let t_at = f.at(t.span());
        let key = (raw.family.clone(), raw.name.clone());
        if let Some(first) = defined.get(&key) {
            sink.push(
                t_at,
                SpecErrorKind::Duplicate {
                    what: "tile",
                    name: format!("{}.{}", raw.family, raw.name),
                    first: first.clone(),
                },
            );
            ok = false;
            continue;
        }
        defined.insert(key, t_at.clone());
        let mut key_lines = BTreeMap::new();
        let names = ["m", "n", "k"]
            .into_iter()
            .map(str::to_string)
            .chain(raw.params.keys().cloned());
        for k in names {
            if let Some(l) = key_line(f.text, t.span(), &k, f) {
                key_lines.insert(k, l);
            }
        }
        let target = raw.replaces.as_deref().unwrap_or(&raw.name);
        // `replaces` names a tile of the base (the first `from_base` tiles), never one of
        // this file's own.
        let existing = tiles
            .iter()
            .position(|x| x.family == raw.family && x.name == target)
            .filter(|&i| raw.replaces.is_none() || i < from_base);
        if raw.replaces.is_some() && existing.is_none() {
            sink.push(
                t_at,
                SpecErrorKind::TierBase {
                    tier: name.clone(),
                    problem: match &keys.base {
                        Some(b) => format!(
                            "tile {}.{} replaces {}.{target}, which tier {b} does not have",
                            raw.family, raw.name, raw.family
                        ),
                        None => format!(
                            "tile {}.{} says replaces = \"{target}\", but the tier has no base = \"...\" to replace a tile of",
                            raw.family, raw.name
                        ),
                    },
                },
            );
            ok = false;
            continue;
        }
        let mut src = match existing {
            Some(i) => tiles[i].clone(),
            None => TileSource {
                family: raw.family.clone(),
                name: raw.name.clone(),
                dims: [None; 3],
                params: BTreeMap::new(),
                key_lines: BTreeMap::new(),
                at: t_at.clone(),
                tuning_candidate: false,
                tile_ps_per_k: None,
            },
        };
        if raw.replaces.is_some() {
            renames.push((
                format!("{}.{target}", raw.family),
                format!("{}.{}", raw.family, raw.name),
            ));
        }
        src.name = raw.name.clone();
        src.at = t_at.clone();
        src.tuning_candidate = raw.tuning_candidate;
        if raw.tile_ps_per_k.is_some() {
            src.tile_ps_per_k = raw.tile_ps_per_k;
        }
        for (i, v) in [raw.m, raw.n, raw.k].into_iter().enumerate() {
            if v.is_some() {
                src.dims[i] = v;
            }
        }
        for (k, v) in &raw.params {
            src.params.insert(k.clone(), v.clone());
        }
        src.key_lines.extend(key_lines);
        match existing {
            Some(i) => tiles[i] = src,
            None => tiles.push(src),
        }
    }
    let own_routes = !f.raw.route.is_empty();
    let routes = if own_routes {
        f.raw
            .route
            .iter()
            .map(|r| (r.get_ref().clone(), f.at(r.span())))
            .collect()
    } else {
        let rename = |k: &str| {
            renames
                .iter()
                .find(|(old, _)| old == k)
                .map_or(k.to_string(), |(_, new)| new.clone())
        };
        base_routes
            .into_iter()
            .map(|(mut r, at)| {
                r.kernel = rename(&r.kernel);
                r.unaligned = r.unaligned.as_deref().map(rename);
                r.wave_fit = r.wave_fit.map(|w| w.iter().map(|k| rename(k)).collect());
                (r, at)
            })
            .collect()
    };
    chain.pop();
    ok.then_some(TierSource {
        keys,
        file: f.name.clone(),
        at,
        tiles,
        routes,
        routes_files: Vec::new(),
        file_routes: Vec::new(),
    })
}

pub(super) fn resolve_tier(sink: &mut Sink, specs: &SpecSet, src: &TierSource) -> Option<Tier> {
    let before = sink.errors.len();
    let raw = &src.keys;
    let at = src.at.clone();
    let name = raw.name.clone();
    let item = format!("tier {name}");
    let missing = |sink: &mut Sink, key: &str| {
        sink.push(
            at.clone(),
            SpecErrorKind::UnknownWord(format!(
                "tier {name} needs `{key}` (or a `base = \"...\"` tier to take it from)"
            )),
        );
    };
    let (Some(cc_raw), Some(gencode), Some(max_shared_bytes), Some(families)) = (
        raw.compute_capability,
        raw.gencode.clone(),
        raw.max_shared_bytes,
        raw.families.clone(),
    ) else {
        for (key, present) in [
            ("compute_capability", raw.compute_capability.is_some()),
            ("gencode", raw.gencode.is_some()),
            ("max_shared_bytes", raw.max_shared_bytes.is_some()),
            ("families", raw.families.is_some()),
        ] {
            if !present {
                missing(sink, key);
            }
        }
        return None;
    };
    let cc = (cc_raw[0], cc_raw[1]);
    let cc_ok = check_cc(sink, &at, &item, "compute_capability", cc_raw);
    let before_gencode = sink.errors.len();
    let mut arch_specific = false;
    match parse_gencode(&gencode) {
        Ok((target, specific)) => {
            arch_specific = specific;
            if cc_ok && target != cc {
                let digits = gencode.rsplit('_').next().unwrap_or_default();
                sink.push(
                    at.clone(),
                    SpecErrorKind::Gencode {
                        tier: name.clone(),
                        gencode: gencode.clone(),
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
                gencode: gencode.clone(),
                problem,
            },
        ),
    }
    // A gencode that disagrees with the capability leaves the capability in doubt: its
    // hardware and budgets are not judged against either.
    if !cc_ok || sink.errors.len() != before_gencode {
        return None;
    }
    let Some(hardware) = specs.hardware_for(cc).cloned() else {
        if sink.is_broken("hardware", &format!("{}.{}", cc.0, cc.1)) {
            return None;
        }
        sink.push(
            at.clone(),
            SpecErrorKind::NoHardware {
                tier: name.clone(),
                major: cc.0,
                minor: cc.1,
                known: specs
                    .hardware
                    .iter()
                    .map(|h| format!("{}.{}", h.cc.0, h.cc.1))
                    .collect::<Vec<_>>()
                    .join(", "),
            },
        );
        return None;
    };
    if families.is_empty() {
        sink.push(
            at.clone(),
            SpecErrorKind::EmptyList {
                item: item.clone(),
                key: "families".into(),
                why: "a tier builds and routes the kernels of its families; name at least one",
            },
        );
    }
    if src.routes.is_empty() && src.file_routes.is_empty() {
        sink.push(at.clone(), SpecErrorKind::NoRoutes { tier: name.clone() });
    }
    let mut tier = Tier {
        name: name.clone(),
        doc: raw.doc.clone().unwrap_or_default(),
        gencode,
        cc,
        arch_specific,
        max_shared_bytes,
        max_registers_per_thread: raw
            .max_registers_per_thread
            .unwrap_or(hardware.registers_per_thread),
        max_threads_per_block: raw
            .max_threads_per_block
            .unwrap_or(hardware.threads_per_block),
        registers_per_block: raw
            .registers_per_block
            .unwrap_or(hardware.registers_per_block),
        hardware,
        base: raw.base.clone(),
        families: families.clone(),
        tiles: Vec::new(),
        routes: Vec::new(),
        routes_files: src.routes_files.clone(),
        batch_kernels: Vec::new(),
        file: src.file.clone(),
        location: at.clone(),
    };
    check_budgets(sink, &tier);
    // Conversions are built for every tier.
    for c in specs.conversions.values() {
        if c.threads > tier.max_threads_per_block {
            sink.push(
                at.clone(),
                SpecErrorKind::Conversion {
                    name: c.name.clone(),
                    problem: format!(
                        "runs {} threads a block; tier {name} allows {} (max_threads_per_block)",
                        c.threads, tier.max_threads_per_block
                    ),
                },
            );
        }
    }
    for fam in &families {
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
    if sink.errors.len() != before {
        return None;
    }
    for t in &src.tiles {
        match resolve_tile(sink, specs, &tier, t) {
            Some(tile) => tier.tiles.push(tile),
            None => {
                for n in [t.name.clone(), t.name.to_lowercase()] {
                    sink.broken.insert(("tile", format!("{}.{}", t.family, n)));
                }
            }
        }
    }
    for word in raw.batch_kernels.iter().flatten() {
        let broken = word
            .split_once('.')
            .is_some_and(|(f, t)| sink.is_broken("tile", &format!("{f}.{t}")));
        let mut bad = |problem: String| {
            sink.push(
                at.clone(),
                SpecErrorKind::BatchKernel {
                    tier: name.clone(),
                    kernel: word.clone(),
                    problem,
                },
            )
        };
        let Some((family, tile)) = word.split_once('.') else {
            bad("is not `family.tile`".into());
            continue;
        };
        if tier.tile(family, tile).is_none() {
            if !broken {
                let tiles: Vec<String> = tier
                    .tiles
                    .iter()
                    .map(|t| format!("{}.{}", t.family, t.name))
                    .collect();
                bad(format!(
                    "names no tile of the tier; its tiles: {}",
                    tiles.join(", ")
                ));
            }
            continue;
        }
        match specs.families.get(family) {
            Some(f) if !f.kind.batch => bad(format!(
                "is a {} kernel, which runs one GEMM a launch ({} has no `batch = true`): name a kernel of a batched kind (e.g. mma_async_gemm)",
                f.kind.template, f.kind.manifest
            )),
            // A strided batch launches its kernel on the operands as stored.
            Some(f) if f.prepass != Prepass::None => bad(format!(
                "is of family {}, whose prepass copies A before each GEMM; a strided batch makes no copy: name a kernel that reads its operands as stored",
                f.name
            )),
            _ => tier.batch_kernels.push((family.to_string(), tile.to_string())),
        }
    }
    // Two batch kernels of one contract, op and dtype: a batch would take the first alone.
    // One reading tensor maps and one not may pair: a batch takes the TMA kernel where TMA
    // takes every entry's operands, the other where it does not (the same bits: one contract).
    for (i, (fa, ta)) in tier.batch_kernels.iter().enumerate() {
        for (fb, tb) in &tier.batch_kernels[i + 1..] {
            let (Some(a), Some(b)) = (specs.families.get(fa), specs.families.get(fb)) else {
                continue;
            };
            let tma = |f: &Family| f.kind.operands == OperandPath::Tma;
            if tma(a) != tma(b) {
                continue;
            }
            if let Some((op, dtype)) = a
                .variants
                .iter()
                .find(|v| a.contract == b.contract && b.variants.contains(v))
            {
                sink.push(
                    at.clone(),
                    SpecErrorKind::BatchKernel {
                        tier: name.clone(),
                        kernel: format!("{fb}.{tb}"),
                        problem: format!(
                            "serves contract {} for {op} {dtype} as `{fa}.{ta}` does: a batch takes one kernel a contract, op and dtype; list one",
                            a.contract
                        ),
                    },
                );
            }
        }
    }
    // Routes files first: the first match lets their routes override the tier's own where
    // their conditions hold. Numbered by position in the merged table.
    for (i, (r, r_at)) in src.file_routes.iter().chain(&src.routes).enumerate() {
        let rule = u32::try_from(i).map_or(u32::MAX, |i| i.saturating_add(1));
        resolve_route(sink, specs, &mut tier, rule, r_at.clone(), r);
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
