//! Joins parsed files into a `SpecSet`, checking every per-item rule on the way: names,
//! references, ABI layout and flags, the hardware of each compute capability, templates (each
//! family's kind manifest: contract, ops, types, capability, tile parameters and limits),
//! accumulators, compute capabilities and gencode, tier bases and budgets, zero and empty
//! values, instruction availability, tile shape, threads, shared memory, launch bounds,
//! accumulators against registers, and each route's kernel. Route-table and device-coverage
//! rules live in `route_table`.
//!
//! This file holds the join itself ([`resolve`]: hardware and shared definitions first, since
//! tiers refer to them from any file; each name defined once) and the `Sink` that collects
//! errors and remembers broken items; each kind of item is checked in its own file below.

mod abi;
mod budget;
mod capability;
mod contract;
mod conversion;
mod family;
mod instruction;
mod names;
mod route;
mod template;
mod tier;
mod tile;
mod unaligned;
mod wave_fit;

use crate::error::{Location, SpecError, SpecErrorKind, SpecWarning};
use crate::kinds::KindLibrary;
use crate::model::*;
use crate::raw::ParsedFile;
use crate::routes_files::RoutesFiles;
use abi::resolve_abi;
use budget::resolve_hardware;
use contract::resolve_contract;
use conversion::{check_min_blocks, resolve_conversion};
use family::resolve_family;
use instruction::resolve_instruction;
use names::{check_contract_name, check_name, RESERVED_MODULE};
use std::collections::BTreeMap;
use tier::{check_tier_ambiguity, resolve_tier, tier_source};

struct Sink<'e> {
    errors: &'e mut Vec<SpecError>,
    /// Items that are defined but failed their own rules: references to them raise no
    /// second error, so each mistake is reported once.
    broken: std::collections::BTreeSet<(&'static str, String)>,
}

impl Sink<'_> {
    fn is_broken(&self, what: &'static str, name: &str) -> bool {
        self.broken.contains(&(what, name.to_string()))
    }
}

impl Sink<'_> {
    fn push(&mut self, location: Location, kind: SpecErrorKind) {
        self.errors.push(SpecError { location, kind });
    }
}

pub(crate) fn resolve(
    files: &[ParsedFile<'_>],
    routes_files: &RoutesFiles,
    kinds: &KindLibrary,
    parse_failed: bool,
    errors: &mut Vec<SpecError>,
) -> Option<(SpecSet, Vec<SpecWarning>)> {
    let before = errors.len();
    let mut sink = Sink {
        errors,
        broken: Default::default(),
    };
    let mut specs = SpecSet {
        kinds: kinds.clone(),
        hardware: Vec::new(),
        instructions: BTreeMap::new(),
        contracts: BTreeMap::new(),
        abis: BTreeMap::new(),
        families: BTreeMap::new(),
        conversions: BTreeMap::new(),
        tiers: Vec::new(),
    };
    let mut seen: BTreeMap<(&'static str, String), Location> = BTreeMap::new();
    let mut define = |sink: &mut Sink, what: &'static str, name: &str, at: &Location| -> bool {
        if let Some(first) = seen.get(&(what, name.to_string())) {
            sink.push(
                at.clone(),
                SpecErrorKind::Duplicate {
                    what,
                    name: name.to_string(),
                    first: first.clone(),
                },
            );
            return false;
        }
        seen.insert((what, name.to_string()), at.clone());
        true
    };

    // What each compute capability has, then the shared definitions: tiers refer to them
    // from any file.
    for f in files {
        for raw in &f.raw.hardware {
            let at = f.at(raw.span());
            let [major, minor] = raw.get_ref().compute_capability;
            if define(
                &mut sink,
                "hardware entry",
                &format!("{major}.{minor}"),
                &at,
            ) {
                match resolve_hardware(&mut sink, &at, raw.get_ref()) {
                    Some(h) => specs.hardware.push(h),
                    None => {
                        sink.broken.insert(("hardware", format!("{major}.{minor}")));
                    }
                }
            }
        }
    }
    specs.hardware.sort_by_key(|h| h.cc);
    for f in files {
        for (name, raw) in &f.raw.instruction {
            let at = f.at(raw.span());
            if !check_name(&mut sink, &at, "instruction", name)
                || !define(&mut sink, "instruction", name, &at)
            {
                continue;
            }
            match resolve_instruction(&mut sink, &at, name, raw.get_ref()) {
                Some(inst) => {
                    specs.instructions.insert(name.clone(), inst);
                }
                None => {
                    sink.broken.insert(("instruction", name.clone()));
                }
            }
        }
        for (name, raw) in &f.raw.contract {
            let at = f.at(raw.span());
            if check_contract_name(&mut sink, &at, name) && define(&mut sink, "contract", name, &at)
            {
                match resolve_contract(&mut sink, &at, name, raw.get_ref()) {
                    Some(c) => {
                        specs.contracts.insert(name.clone(), c);
                    }
                    None => {
                        sink.broken.insert(("contract", name.clone()));
                    }
                }
            }
        }
        for (name, raw) in &f.raw.abi {
            let at = f.at(raw.span());
            if define(&mut sink, "ABI struct", name, &at) {
                match resolve_abi(&mut sink, f, &at, name, raw.get_ref()) {
                    Some(abi) => {
                        specs.abis.insert(name.clone(), abi);
                    }
                    None => {
                        sink.broken.insert(("ABI struct", name.clone()));
                    }
                }
            }
        }
    }
    for f in files {
        for (name, raw) in &f.raw.family {
            let at = f.at(raw.span());
            if name == RESERVED_MODULE {
                sink.push(
                    at.clone(),
                    SpecErrorKind::ReservedName {
                        what: "family",
                        name: name.clone(),
                        why: "each family compiles to cuda/<tier>/<family>.cu, and conversions.cu holds the conversion kernels",
                    },
                );
                sink.broken.insert(("family", name.clone()));
                continue;
            }
            if check_name(&mut sink, &at, "family", name) && define(&mut sink, "family", name, &at)
            {
                match resolve_family(&mut sink, &specs, f, at, name, raw.get_ref()) {
                    Some(fam) => {
                        specs.families.insert(name.clone(), fam);
                    }
                    None => {
                        sink.broken.insert(("family", name.clone()));
                    }
                }
            }
        }
    }
    for f in files {
        for (name, raw) in &f.raw.conversion {
            let at = f.at(raw.span());
            if check_name(&mut sink, &at, "conversion", name)
                && define(&mut sink, "conversion", name, &at)
            {
                if let Some(c) = resolve_conversion(&mut sink, &specs, at, name, raw.get_ref()) {
                    specs.conversions.insert(name.clone(), c);
                }
            }
        }
    }
    check_prepass_conversions(&mut sink, &specs);
    for (i, f) in files.iter().enumerate() {
        let Some(raw_tier) = &f.raw.tier else {
            let orphan = if !f.raw.tile.is_empty() {
                Some(("tiles", f.raw.tile[0].span()))
            } else if !f.raw.route.is_empty() {
                Some(("routes", f.raw.route[0].span()))
            } else {
                None
            };
            // Routes alone, when a file failed to parse, may be the routes file of a tier
            // whose list could not be read: one mistake, one error.
            let unlisted_routes = parse_failed && f.raw.tile.is_empty();
            if let Some((what, span)) = orphan.filter(|_| !unlisted_routes) {
                sink.push(f.at(span), SpecErrorKind::OrphanItems { what });
            }
            continue;
        };
        let at = f.at(raw_tier.span());
        let name = &raw_tier.get_ref().name;
        if check_name(&mut sink, &at, "tier", name) && define(&mut sink, "tier", name, &at) {
            // The tier's own keys, tiles and routes over those of its base chain.
            let Some(mut source) = tier_source(&mut sink, files, i, &mut Vec::new()) else {
                continue;
            };
            // The tier's routes files, never its base's (routes tuned on one device).
            (source.routes_files, source.file_routes) = routes_files.for_tier(&f.name, name);
            if let Some(tier) = resolve_tier(&mut sink, &specs, &source) {
                specs.tiers.push(tier);
            }
        }
    }
    if specs.tiers.is_empty() && sink.errors.len() == before && !parse_failed {
        let file = files.first().map(|f| f.name.clone()).unwrap_or_default();
        sink.push(Location { file, line: 0 }, SpecErrorKind::NoTiers);
    }
    specs.tiers.sort_by(|a, b| a.name.cmp(&b.name));
    check_tier_ambiguity(&mut sink, &specs.tiers);
    check_min_blocks(&mut sink, &specs);

    let mut warnings = Vec::new();
    if sink.errors.len() == before {
        for tier in &specs.tiers {
            crate::route_table::check(tier, &specs, sink.errors, &mut warnings);
        }
        crate::route_table::check_coverage(&specs, sink.errors);
    }
    (sink.errors.len() == before).then_some((specs, warnings))
}

/// A family whose launches copy A transposed needs the transposing conversion of each of its
/// input types (conversions are built for every tier).
fn check_prepass_conversions(sink: &mut Sink, specs: &SpecSet) {
    for f in specs.families.values() {
        let Some(word) = f.prepass.as_str() else {
            continue;
        };
        let mut missing: Vec<crate::vocab::Dtype> = Vec::new();
        for (_, d) in &f.variants {
            let built = specs.conversions.values().any(|c| {
                c.kind_of(d.ab, d.ab) == Some(ConversionKind::Transpose)
                    && c.variants.contains(&(d.ab, d.ab))
            });
            if !built && !missing.contains(&d.ab) {
                missing.push(d.ab);
            }
        }
        for d in missing {
            sink.push(
                f.location.clone(),
                SpecErrorKind::Prepass {
                    family: f.name.clone(),
                    prepass: word.to_string(),
                    problem: format!(
                        "needs a transposing conversion of {d} (a `[conversion.*]` of a kind whose manifest says `transposes = true`, with variant `{d}.{d}`), which no conversion builds"
                    ),
                },
            );
        }
    }
}
