//! Joins parsed files into a `SpecSet`, checking every per-item rule on the way:
//! names, references, ABI layout, templates (`templates::KNOWN`: name, header, ops, shared
//! memory, tile limits), accumulators, compute capabilities and gencode, tier budgets, zero and
//! empty values, instruction availability, tile shape, threads, shared memory, and each
//! route's kernel. Route-table and device-coverage rules live in `route_table`.

use crate::error::{Location, SpecError, SpecErrorKind, SpecWarning};
use crate::load::ParsedFile;
use crate::model::*;
use crate::raw::{
    RawAbi, RawContract, RawConversion, RawFamily, RawInstruction, RawRange, RawRoute, RawTier,
    RawTile,
};
use crate::templates::{self, TemplateKind};
use crate::vocab::{Dtype, DtypeTriple, Op, Policy};
use std::collections::BTreeMap;

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
    parse_failed: bool,
    errors: &mut Vec<SpecError>,
) -> Option<(SpecSet, Vec<SpecWarning>)> {
    let before = errors.len();
    let mut sink = Sink {
        errors,
        broken: Default::default(),
    };
    let mut specs = SpecSet {
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

    // Shared definitions first: tiers refer to them from any file.
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
                match resolve_abi(&mut sink, &at, name, raw.get_ref()) {
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
    for f in files {
        let Some(raw_tier) = &f.raw.tier else {
            let orphan = if !f.raw.tile.is_empty() {
                Some(("tiles", f.raw.tile[0].span()))
            } else if !f.raw.route.is_empty() {
                Some(("routes", f.raw.route[0].span()))
            } else {
                None
            };
            if let Some((what, span)) = orphan {
                sink.push(f.at(span), SpecErrorKind::OrphanItems { what });
            }
            continue;
        };
        let at = f.at(raw_tier.span());
        let name = &raw_tier.get_ref().name;
        if check_name(&mut sink, &at, "tier", name) && define(&mut sink, "tier", name, &at) {
            if let Some(tier) = resolve_tier(&mut sink, &specs, f, at, raw_tier.get_ref()) {
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

    let mut warnings = Vec::new();
    if sink.errors.len() == before {
        for tier in &specs.tiers {
            crate::route_table::check(tier, &specs, sink.errors, &mut warnings);
        }
        crate::route_table::check_coverage(&specs, sink.errors);
    }
    (sink.errors.len() == before).then_some((specs, warnings))
}

/// The compile unit of a tier's conversion kernels (`cuda/<tier>/conversions.cu`); no family
/// may take the name.
pub const RESERVED_MODULE: &str = "conversions";

/// Contract names also allow `-` (`fma-k256`): they appear in generated comments and strings,
/// never as identifiers.
fn check_contract_name(sink: &mut Sink, at: &Location, name: &str) -> bool {
    let ok = name.chars().next().is_some_and(|c| c.is_ascii_lowercase())
        && name
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-');
    if !ok {
        sink.push(
            at.clone(),
            SpecErrorKind::BadContractName {
                name: name.to_string(),
            },
        );
    }
    ok
}

fn check_name(sink: &mut Sink, at: &Location, what: &'static str, name: &str) -> bool {
    let ok = name.chars().next().is_some_and(|c| c.is_ascii_lowercase())
        && name
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit());
    if !ok {
        sink.push(
            at.clone(),
            SpecErrorKind::BadName {
                what,
                name: name.to_string(),
            },
        );
    }
    ok
}

fn is_c_identifier(s: &str) -> bool {
    s.chars()
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && s.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
}

fn known<'a>(names: impl Iterator<Item = &'a String>) -> String {
    let v: Vec<&str> = names.map(String::as_str).collect();
    if v.is_empty() {
        "none".into()
    } else {
        v.join(", ")
    }
}

/// Largest major compute-capability version a spec may name. NVIDIA's run to 12 through
/// sm_120; two digits leave room and keep every `sm_XY` name and sum in range.
pub const CC_MAJOR_MAX: u32 = 99;

/// Checks a written compute capability: major 1..=99, minor one digit (sm_XY is major X,
/// minor Y, so the minor never reaches 10).
fn check_cc(sink: &mut Sink, at: &Location, item: &str, key: &'static str, cc: [u32; 2]) -> bool {
    let ok = (1..=CC_MAJOR_MAX).contains(&cc[0]) && cc[1] <= 9;
    if !ok {
        sink.push(
            at.clone(),
            SpecErrorKind::Capability {
                item: item.to_string(),
                key,
                major: cc[0],
                minor: cc[1],
                problem: format!(
                    "is out of range: the major version must be 1..={CC_MAJOR_MAX} and the minor 0..=9 (sm_XY reads major X, minor Y)"
                ),
            },
        );
    }
    ok
}

fn resolve_instruction(
    sink: &mut Sink,
    at: &Location,
    name: &str,
    r: &RawInstruction,
) -> Option<Instruction> {
    let before = sink.errors.len();
    let item = format!("instruction {name}");
    for (key, v) in [
        ("shape.m", r.shape.m),
        ("shape.n", r.shape.n),
        ("shape.k", r.shape.k),
    ] {
        if v == 0 {
            sink.push(
                at.clone(),
                SpecErrorKind::Zero {
                    item: item.clone(),
                    key,
                    why: "an instruction covers at least one element in each dimension (tiles are multiples of its shape)",
                },
            );
        }
    }
    let min_ok = check_cc(
        sink,
        at,
        &item,
        "min_compute_capability",
        r.min_compute_capability,
    );
    let max_ok = r
        .max_compute_capability
        .is_none_or(|max| check_cc(sink, at, &item, "max_compute_capability", max));
    let to_cc = |c: [u32; 2]| (c[0], c[1]);
    if let (true, true, Some(max)) = (min_ok, max_ok, r.max_compute_capability) {
        if to_cc(max) < to_cc(r.min_compute_capability) {
            sink.push(
                at.clone(),
                SpecErrorKind::Capability {
                    item: item.clone(),
                    key: "max_compute_capability",
                    major: max[0],
                    minor: max[1],
                    problem: format!(
                        "lies below min_compute_capability [{}, {}]: the instruction would exist on no tier",
                        r.min_compute_capability[0], r.min_compute_capability[1]
                    ),
                },
            );
        }
    }
    (sink.errors.len() == before).then(|| Instruction {
        name: name.to_string(),
        doc: r.doc.clone(),
        shape: Shape {
            m: r.shape.m,
            n: r.shape.n,
            k: r.shape.k,
        },
        min_cc: to_cc(r.min_compute_capability),
        max_cc: r.max_compute_capability.map(to_cc),
        arch_specific: r.arch_specific,
    })
}

fn resolve_contract(
    sink: &mut Sink,
    at: &Location,
    name: &str,
    r: &RawContract,
) -> Option<Contract> {
    let word = r.accumulator.as_deref().unwrap_or("f32");
    let accumulator = match word.parse::<Dtype>() {
        Ok(d) => d,
        Err(e) => {
            sink.push(
                at.clone(),
                SpecErrorKind::UnknownWord(format!("contract {name}: {e}")),
            );
            return None;
        }
    };
    // Every template declares `float` accumulators (see kernels-templates/); a contract in
    // another type would name kernels that accumulate in f32 anyway.
    if accumulator != Dtype::F32 {
        sink.push(
            at.clone(),
            SpecErrorKind::ContractAccumulator {
                contract: name.to_string(),
                acc: word.to_string(),
            },
        );
        return None;
    }
    Some(Contract {
        name: name.to_string(),
        doc: r.doc.clone(),
        accumulator,
    })
}

fn resolve_abi(sink: &mut Sink, at: &Location, name: &str, raw: &RawAbi) -> Option<Abi> {
    let mut ok = true;
    if !is_c_identifier(name) || !name.starts_with(|c: char| c.is_ascii_uppercase()) {
        sink.push(
            at.clone(),
            SpecErrorKind::BadName {
                what: "ABI struct (CamelCase)",
                name: name.to_string(),
            },
        );
        ok = false;
    }
    let problem = |sink: &mut Sink, field: &str, problem: String| {
        sink.push(
            at.clone(),
            SpecErrorKind::AbiField {
                abi: name.to_string(),
                field: field.to_string(),
                problem,
            },
        );
    };
    if raw.fields.is_empty() {
        problem(sink, "", "list is empty: a struct needs fields".into());
        return None;
    }
    let mut fields: Vec<AbiField> = Vec::new();
    let mut offset = 0u64;
    let mut align = 1u64;
    for f in &raw.fields {
        if !is_c_identifier(&f.name) || f.name.chars().any(|c| c.is_ascii_uppercase()) {
            problem(sink, &f.name, "is not a snake_case identifier".into());
            ok = false;
            continue;
        }
        if fields.iter().any(|g| g.name == f.name) {
            problem(sink, &f.name, "appears twice".into());
            ok = false;
            continue;
        }
        let Some(&(_, ty)) = FieldType::ALL.iter().find(|(s, _)| *s == f.ty) else {
            let names: Vec<&str> = FieldType::ALL.iter().map(|(s, _)| *s).collect();
            problem(
                sink,
                &f.name,
                format!("has type `{}`; expected one of {}", f.ty, names.join(", ")),
            );
            ok = false;
            continue;
        };
        let word = f.bind.as_deref().unwrap_or(&f.name);
        let Some(bind) = BindSource::parse(word) else {
            let words: Vec<&str> = BindSource::ALL.iter().map(|(w, _, _)| *w).collect();
            let how = if f.bind.is_some() {
                format!("binds `{word}`, which")
            } else {
                format!("has no `bind`, and its name `{word}`")
            };
            problem(
                sink,
                &f.name,
                format!(
                    "{how} is not a source of launch arguments; give `bind` one of {}",
                    words.join(", ")
                ),
            );
            ok = false;
            continue;
        };
        if !bind.fits(ty) {
            problem(
                sink,
                &f.name,
                format!(
                    "has type {} but binds {bind}, a {} value",
                    f.ty,
                    match bind.ty() {
                        SourceType::Pointer => "device-address",
                        SourceType::TensorMap => "tensor_map",
                        SourceType::I32 => "i32",
                        SourceType::U32 => "u32",
                        SourceType::F32 => "f32",
                    }
                ),
            );
            ok = false;
            continue;
        }
        if let Some(other) = fields.iter().find(|g| g.bind == bind) {
            problem(
                sink,
                &f.name,
                format!(
                    "binds {bind}, which field `{}` binds already: each source fills one field",
                    other.name
                ),
            );
            ok = false;
            continue;
        }
        offset = offset.next_multiple_of(ty.align());
        align = align.max(ty.align());
        fields.push(AbiField {
            name: f.name.clone(),
            ty,
            bind,
            doc: f.doc.clone(),
            offset,
        });
        offset += ty.size();
    }
    ok.then(|| Abi {
        name: name.to_string(),
        doc: raw.doc.clone(),
        fields,
        size: offset.next_multiple_of(align),
        align,
    })
}

/// Looks a family's (`gemm`) or a conversion's template up in [`templates::KNOWN`] and checks
/// its header; `None` (after an error) when it is not a known template of that kind.
fn check_template(
    sink: &mut Sink,
    at: &Location,
    owner: &str,
    name: &str,
    header: &str,
    gemm: bool,
) -> Option<&'static templates::KernelTemplate> {
    let Some(t) = templates::find(name) else {
        sink.push(
            at.clone(),
            SpecErrorKind::UnknownTemplate {
                owner: owner.to_string(),
                name: name.to_string(),
                suggestion: templates::closest(name).map(str::to_string),
                known: templates::listing(gemm),
            },
        );
        return None;
    };
    if matches!(t.kind, TemplateKind::Gemm(_)) != gemm {
        let (is, needs) = if gemm {
            (
                "an elementwise conversion template",
                "a family needs a GEMM template",
            )
        } else {
            (
                "a GEMM template",
                "a conversion needs a conversion template",
            )
        };
        sink.push(
            at.clone(),
            SpecErrorKind::TemplateMismatch {
                owner: owner.to_string(),
                template: name.to_string(),
                problem: format!("is {is}; {needs}: {}", templates::listing(gemm)),
            },
        );
        return None;
    }
    if header != t.header {
        sink.push(
            at.clone(),
            SpecErrorKind::TemplateHeader {
                owner: owner.to_string(),
                template: name.to_string(),
                header: header.to_string(),
                expected: t.header.to_string(),
            },
        );
    }
    Some(t)
}

fn resolve_conversion(
    sink: &mut Sink,
    specs: &SpecSet,
    at: Location,
    name: &str,
    raw: &RawConversion,
) -> Option<Conversion> {
    let before = sink.errors.len();
    let problem = |sink: &mut Sink, problem: String| {
        sink.push(
            at.clone(),
            SpecErrorKind::Conversion {
                name: name.to_string(),
                problem,
            },
        )
    };
    match specs.abis.get(&raw.abi) {
        Some(abi) => {
            // The runtime fills these fields by name; the template reads them.
            let want = [
                ("src", FieldType::ConstPtr),
                ("dst", FieldType::MutPtr),
                ("rows", FieldType::I32),
                ("cols", FieldType::I32),
                ("ld_src", FieldType::I32),
                ("ld_dst", FieldType::I32),
            ];
            let has = |(name, ty): (&str, FieldType)| {
                abi.fields.iter().any(|f| f.name == name && f.ty == ty)
            };
            if abi.fields.len() != want.len() || !want.iter().all(|&w| has(w)) {
                problem(
                    sink,
                    format!(
                        "ABI struct {} must have exactly the fields src (const_ptr), dst (mut_ptr), rows, cols, ld_src, ld_dst (i32)",
                        raw.abi
                    ),
                );
            }
        }
        None if sink.is_broken("ABI struct", &raw.abi) => {}
        None => sink.push(
            at.clone(),
            SpecErrorKind::UnknownReference {
                what: "ABI struct",
                name: raw.abi.clone(),
                known: known(specs.abis.keys()),
            },
        ),
    }
    let built_elsewhere = |pair: &(Dtype, Dtype)| {
        specs
            .conversions
            .values()
            .find(|c| c.variants.contains(pair))
            .map(|c| c.name.clone())
    };
    check_template(
        sink,
        &at,
        &format!("conversion {name}"),
        &raw.template,
        &raw.header,
        false,
    );
    if raw.threads == 0 || !raw.threads.is_multiple_of(32) || raw.threads > 1024 {
        problem(
            sink,
            format!(
                "runs {} threads a block; it needs a multiple of 32 and at most 1024",
                raw.threads
            ),
        );
    }
    let mut variants = Vec::new();
    for v in &raw.variants {
        let parsed = v
            .split_once('.')
            .and_then(|(f, t)| Some((f.parse::<Dtype>().ok()?, t.parse::<Dtype>().ok()?)));
        match parsed {
            Some((from, to)) if ConversionKind::of(from, to).is_none() => problem(
                sink,
                format!("variant `{v}` converts {from} to {to}; a conversion widens a half type to f32 or narrows f32 to a half type"),
            ),
            Some(pair) if variants.contains(&pair) => {
                problem(sink, format!("variant `{v}` is listed twice"))
            }
            Some(pair) if built_elsewhere(&pair).is_some() => problem(
                sink,
                format!(
                    "variant `{v}` is also built by conversion {}; each pair needs one kernel",
                    built_elsewhere(&pair).unwrap_or_default()
                ),
            ),
            Some(pair) => variants.push(pair),
            None => problem(
                sink,
                format!("variant `{v}` must read `from.to` with dtypes f32, bf16 or f16, e.g. `bf16.f32`"),
            ),
        }
    }
    if variants.is_empty() && sink.errors.len() == before {
        problem(sink, "has no variants: list `from.to` pairs".into());
    }
    if sink.errors.len() != before {
        return None;
    }
    Some(Conversion {
        name: name.to_string(),
        doc: raw.doc.clone(),
        template: raw.template.clone(),
        header: raw.header.clone(),
        abi: raw.abi.clone(),
        threads: raw.threads,
        variants,
        location: at,
    })
}

fn resolve_family(
    sink: &mut Sink,
    specs: &SpecSet,
    file: &ParsedFile<'_>,
    at: Location,
    name: &str,
    raw: &RawFamily,
) -> Option<Family> {
    let before = sink.errors.len();
    let f_at = |span: std::ops::Range<usize>| file.at(span);
    let refer = |sink: &mut Sink, what: &'static str, value: &str, ok: bool, known: String| {
        if !ok {
            sink.push(
                at.clone(),
                SpecErrorKind::UnknownReference {
                    what,
                    name: value.to_string(),
                    known,
                },
            );
        }
    };
    refer(
        sink,
        "contract",
        &raw.contract,
        specs.contracts.contains_key(&raw.contract) || sink.is_broken("contract", &raw.contract),
        known(specs.contracts.keys()),
    );
    let abi_known = specs.abis.contains_key(&raw.abi) || sink.is_broken("ABI struct", &raw.abi);
    refer(
        sink,
        "ABI struct",
        &raw.abi,
        abi_known,
        known(specs.abis.keys()),
    );
    refer(
        sink,
        "instruction",
        &raw.instruction,
        specs.instructions.contains_key(&raw.instruction)
            || sink.is_broken("instruction", &raw.instruction),
        known(specs.instructions.keys()),
    );
    let word =
        |sink: &mut Sink, msg: String| sink.push(at.clone(), SpecErrorKind::UnknownWord(msg));
    let owner = format!("family {name}");
    let template =
        check_template(sink, &at, &owner, &raw.template, &raw.header, true).and_then(|t| match &t
            .kind
        {
            TemplateKind::Gemm(g) => Some(g),
            TemplateKind::Conversion => None,
        });
    let mismatch = |sink: &mut Sink, at: &Location, problem: String| {
        sink.push(
            at.clone(),
            SpecErrorKind::TemplateMismatch {
                owner: owner.clone(),
                template: raw.template.clone(),
                problem,
            },
        )
    };
    let policy = raw
        .policy
        .parse::<Policy>()
        .map_err(|e| word(sink, e.to_string()))
        .ok();
    let staging = match raw.staging.as_str() {
        "f32" => Some(Staging::F32),
        "operand" => Some(Staging::Operand),
        other => {
            word(
                sink,
                format!("unknown staging `{other}`; expected one of f32, operand"),
            );
            None
        }
    };
    // Omitted, `shared` is what the template keeps.
    let template_shared: Vec<String> = template
        .map(|g| {
            g.shared
                .iter()
                .filter_map(|t| SharedTerm::ALL.iter().find(|(_, x)| x == t))
                .map(|(n, _)| n.to_string())
                .collect()
        })
        .unwrap_or_default();
    let raw_shared = raw.shared.as_ref().unwrap_or(&template_shared);
    if raw.shared.as_ref().is_some_and(|v| v.is_empty()) {
        sink.push(
            at.clone(),
            SpecErrorKind::EmptyList {
                item: owner.clone(),
                key: "shared".into(),
                why: "name what the template keeps in shared memory (operands, totals, partials, slices)",
            },
        );
    }
    let mut shared = Vec::new();
    for term in raw_shared {
        match SharedTerm::ALL.iter().find(|(n, _)| n == term) {
            Some(&(_, t)) => shared.push(t),
            None => word(
                sink,
                format!(
                    "unknown shared-memory term `{term}`; expected operands, totals, partials, slices, alignment, barriers or padded_step"
                ),
            ),
        }
    }
    let grid = match raw.grid.as_str() {
        "tiles" => Some(GridKind::Tiles),
        "persistent" => Some(GridKind::Persistent),
        other => {
            word(
                sink,
                format!("unknown grid `{other}`; expected tiles or persistent"),
            );
            None
        }
    };
    let kind = template.map(|g| g.rules.kind());
    if let (Some(kind), Some(grid)) = (kind, grid) {
        if kind.persistent() != (grid == GridKind::Persistent) {
            let want = if kind.persistent() {
                GridKind::Persistent
            } else {
                GridKind::Tiles
            };
            mismatch(
                sink,
                &at,
                format!(
                    "is a {} kernel, whose grid is grid = \"{}\"; the family says grid = \"{}\" (only templates with a persistent scheduler walk tiles on a persistent grid)",
                    kind.as_str(),
                    want.as_str(),
                    grid.as_str()
                ),
            );
        }
    }
    if let (Some(kind), Some(abi)) = (kind, specs.abis.get(&raw.abi)) {
        if kind.uses_tma() {
            for (field, source) in [
                ("a_map", BindSource::ATensorMap),
                ("b_map", BindSource::BTensorMap),
            ] {
                let has = abi
                    .fields
                    .iter()
                    .any(|f| f.name == field && f.ty == FieldType::TensorMap && f.bind == source);
                if !has {
                    mismatch(
                        sink,
                        &at,
                        format!(
                            "loads A and B through TMA from args.a_map and args.b_map; ABI struct {} has no field `{field}` of type tensor_map bound to {source}",
                            abi.name
                        ),
                    );
                }
            }
            // The TMA-store epilogue of wgmma_tma reads args.c_map (used when flags asks).
            if kind == TileKind::WgmmaTma {
                let has = abi.fields.iter().any(|f| {
                    f.name == "c_map"
                        && f.ty == FieldType::TensorMap
                        && f.bind == BindSource::CTensorMap
                });
                if !has {
                    mismatch(
                        sink,
                        &at,
                        format!(
                            "stores C through TMA from args.c_map when flags has bit 1; ABI struct {} has no field `c_map` of type tensor_map bound to c.tensor_map",
                            abi.name
                        ),
                    );
                }
            }
        }
    }
    if let (Some(g), Some(staging)) = (template, staging) {
        if g.staging != staging {
            let want = match g.staging {
                Staging::F32 => "f32",
                Staging::Operand => "operand",
            };
            mismatch(
                sink,
                &at,
                format!(
                    "holds operands in shared memory as staging = \"{want}\"; the family says staging = \"{}\" (its shared-memory size must match the template's kSharedBytes)",
                    raw.staging
                ),
            );
        }
    }
    if let Some(g) = template {
        let same = shared.len() == g.shared.len() && g.shared.iter().all(|t| shared.contains(t));
        if !shared.is_empty() && shared.len() == raw_shared.len() && !same {
            let names = |terms: &[SharedTerm]| {
                terms
                    .iter()
                    .map(|t| {
                        let n = SharedTerm::ALL
                            .iter()
                            .find(|(_, x)| x == t)
                            .map_or("", |x| x.0);
                        format!("\"{n}\"")
                    })
                    .collect::<Vec<_>>()
                    .join(", ")
            };
            mismatch(
                sink,
                &at,
                format!(
                    "keeps shared = [{}] in shared memory; the family says shared = [{}] (its shared-memory size must match the template's kSharedBytes)",
                    names(g.shared),
                    names(&shared)
                ),
            );
        }
        if let (Some(why), Some(inst)) = (g.arch_specific, specs.instructions.get(&raw.instruction))
        {
            if !inst.arch_specific {
                mismatch(
                    sink,
                    &at,
                    format!(
                        "needs an arch-specific target ({why}), but the family's instruction {} is not arch_specific: name an arch-specific instruction",
                        inst.name
                    ),
                );
            }
        }
        if let (Some(((major, minor), why)), Some(inst)) =
            (g.min_cc, specs.instructions.get(&raw.instruction))
        {
            if inst.min_cc < (major, minor) {
                mismatch(
                    sink,
                    &at,
                    format!(
                        "needs compute capability >= {major}.{minor} ({why}), but the family's instruction {} exists from {}.{}: name an instruction that starts at {major}.{minor} or later",
                        inst.name, inst.min_cc.0, inst.min_cc.1
                    ),
                );
            }
        }
    }
    let contract_acc = specs.contracts.get(&raw.contract).map(|c| c.accumulator);
    let mut variants = Vec::new();
    for (op_word, dtypes) in &raw.variants {
        let list_at = f_at(dtypes.span());
        let Ok(op) = op_word.parse::<Op>().map_err(|e| word(sink, e.to_string())) else {
            continue;
        };
        if let Some(g) = template {
            if !g.ops.contains(&op) {
                let ops: Vec<&str> = g.ops.iter().map(|o| o.as_str()).collect();
                mismatch(
                    sink,
                    &list_at,
                    format!(
                        "supports op {} only; the family lists variants.{op}",
                        ops.join(", ")
                    ),
                );
                continue;
            }
        }
        if dtypes.get_ref().is_empty() {
            sink.push(
                list_at.clone(),
                SpecErrorKind::EmptyList {
                    item: owner.clone(),
                    key: format!("variants.{op}"),
                    why: "list the dtype triples to build for the op, or leave the key out",
                },
            );
        }
        for d in dtypes.get_ref() {
            let d_at = f_at(d.span());
            match d.get_ref().parse::<DtypeTriple>() {
                Ok(d) if variants.contains(&(op, d)) => sink.push(
                    d_at,
                    SpecErrorKind::UnknownWord(format!(
                        "family {name}: variant {op} {d} is listed twice"
                    )),
                ),
                Ok(d) if contract_acc.is_some_and(|acc| acc != d.acc) => sink.push(
                    d_at,
                    SpecErrorKind::VariantAccumulator {
                        family: name.to_string(),
                        op: op.to_string(),
                        dtype: d.to_string(),
                        acc: d.acc.to_string(),
                        contract: raw.contract.clone(),
                        contract_acc: contract_acc.map(|a| a.to_string()).unwrap_or_default(),
                    },
                ),
                Ok(d) if template
                    .and_then(|g| g.operand_bytes)
                    .is_some_and(|b| b != d.ab.size_bytes()) =>
                {
                    mismatch(
                        sink,
                        &d_at,
                        format!(
                            "takes A and B of {} bytes an element (bf16, f16); the family lists variant {op} {d}",
                            template.and_then(|g| g.operand_bytes).unwrap_or_default()
                        ),
                    )
                }
                Ok(d) => variants.push((op, d)),
                Err(e) => sink.push(d_at, SpecErrorKind::UnknownWord(e.to_string())),
            }
        }
    }
    if variants.is_empty() && sink.errors.len() == before {
        word(
            sink,
            format!("family {name} has no variants: list dtype triples under `variants.nn` etc."),
        );
    }
    if sink.errors.len() != before {
        return None;
    }
    Some(Family {
        name: name.to_string(),
        doc: raw.doc.clone(),
        template: raw.template.clone(),
        header: raw.header.clone(),
        contract: raw.contract.clone(),
        policy: policy?,
        abi: raw.abi.clone(),
        instruction: raw.instruction.clone(),
        kind: kind?,
        staging: staging?,
        shared,
        grid: grid?,
        variants,
        location: at,
    })
}

/// `arch=compute_90a,code=sm_90a` -> ((9, 0), arch-specific): the last digit is the minor
/// version, the digits before it the major (`100a` -> (10, 0), `120` -> (12, 0)).
fn parse_gencode(gencode: &str) -> Result<((u32, u32), bool), String> {
    let bad = || {
        "must read `arch=compute_XY,code=sm_XY` (XY the compute capability, major then one minor digit, optionally with an `a` suffix on both)".to_string()
    };
    let (arch, code) = gencode.split_once(',').ok_or_else(bad)?;
    let arch = arch.strip_prefix("arch=compute_").ok_or_else(bad)?;
    let code = code.strip_prefix("code=sm_").ok_or_else(bad)?;
    if arch != code {
        return Err(format!(
            "names compute_{arch} but sm_{code}; they must be the same target"
        ));
    }
    let (digits, specific) = match arch.strip_suffix('a') {
        Some(d) => (d, true),
        None => (arch, false),
    };
    let all_digits = digits.bytes().all(|b| b.is_ascii_digit());
    // Two or three digits: a major of 1..=99 without a leading zero, then the minor digit.
    if !all_digits || !(2..=3).contains(&digits.len()) || digits.starts_with('0') {
        return Err(bad());
    }
    let (major, minor) = digits.split_at(digits.len() - 1);
    let major = major.parse::<u32>().map_err(|_| bad())?;
    let minor = minor.parse::<u32>().map_err(|_| bad())?;
    Ok(((major, minor), specific))
}

/// Largest opt-in dynamic shared memory a block may use on any NVIDIA GPU through sm_120
/// (227 KiB on sm_90 and sm_100; sm_80 has 163 KiB, sm_86/89/120 99 KiB). Also keeps every
/// planned kernel's shared bytes well inside the generated tables' `u32` and the templates'
/// `int kSharedBytes`.
pub const SHARED_BYTES_MAX: u64 = 232448;
/// A thread addresses at most 255 registers on every NVIDIA GPU since sm_35; ptxas does not
/// build a kernel below 16 a thread.
pub const REGISTERS_PER_THREAD: std::ops::RangeInclusive<u32> = 16..=255;
/// At most 1024 threads a block on every NVIDIA GPU since sm_20; blocks are whole warps.
pub const THREADS_PER_BLOCK_MAX: u32 = 1024;
/// 64 Ki 32-bit registers a block is the most of any NVIDIA GPU through sm_120.
pub const REGISTERS_PER_BLOCK_MAX: u32 = 65536;
/// No NVIDIA GPU through sm_120 keeps more than 32 resident blocks on an SM.
pub const BLOCKS_PER_SM_MAX: u32 = 32;

fn check_budgets(sink: &mut Sink, at: &Location, raw: &RawTier) {
    let tier = &raw.name;
    let mut budget = |key: &'static str, value: u64, problem: Option<String>| {
        if let Some(problem) = problem {
            sink.push(
                at.clone(),
                SpecErrorKind::Budget {
                    tier: tier.clone(),
                    key,
                    value,
                    problem,
                },
            );
        }
    };
    let smem = raw.max_shared_bytes;
    budget(
        "max_shared_bytes",
        smem,
        if smem == 0 {
            Some("leaves a block no shared memory; every template needs some".into())
        } else if smem > SHARED_BYTES_MAX {
            Some(format!("is more than {SHARED_BYTES_MAX}, the most shared memory a block gets on any NVIDIA GPU through sm_120 (227 KiB on sm_90 and sm_100)"))
        } else {
            None
        },
    );
    let regs = raw.max_registers_per_thread;
    budget(
        "max_registers_per_thread",
        regs as u64,
        (!REGISTERS_PER_THREAD.contains(&regs)).then(|| {
            format!(
                "is outside {}..={}: a thread addresses at most 255 registers on every NVIDIA GPU, and ptxas does not go below 16",
                REGISTERS_PER_THREAD.start(),
                REGISTERS_PER_THREAD.end()
            )
        }),
    );
    let threads = raw.max_threads_per_block;
    budget(
        "max_threads_per_block",
        threads as u64,
        (threads == 0 || threads > THREADS_PER_BLOCK_MAX || !threads.is_multiple_of(32)).then(|| {
            format!("must be a multiple of 32 (blocks are whole warps) from 32 to {THREADS_PER_BLOCK_MAX}, the most any NVIDIA GPU runs in a block")
        }),
    );
    let block_regs = raw.registers_per_block;
    budget(
        "registers_per_block",
        block_regs as u64,
        (block_regs == 0 || block_regs > REGISTERS_PER_BLOCK_MAX).then(|| {
            format!("is outside 1..={REGISTERS_PER_BLOCK_MAX}: no NVIDIA GPU through sm_120 has more than 64 Ki registers for a block")
        }),
    );
}

fn resolve_tier(
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

fn resolve_tile(
    sink: &mut Sink,
    specs: &SpecSet,
    tier: &Tier,
    at: Location,
    key_at: &dyn Fn(&str) -> Location,
    raw: &RawTile,
) -> Option<Tile> {
    if !check_name(sink, &at, "tile", &raw.name) {
        return None;
    }
    if !tier.families.contains(&raw.family) {
        sink.push(
            at,
            SpecErrorKind::FamilyNotUsed {
                tier: tier.name.clone(),
                family: raw.family.clone(),
            },
        );
        return None;
    }
    let family = specs.families.get(&raw.family)?;
    let inst = specs.instructions.get(&family.instruction)?;
    let before = sink.errors.len();
    let item = format!(
        "tile {}.{} {}x{}x{}",
        raw.family, raw.name, raw.m, raw.n, raw.k
    );
    let params = tile_params(sink, key_at, family, raw)?;
    let tile = Tile {
        family: raw.family.clone(),
        name: raw.name.clone(),
        m: raw.m,
        n: raw.n,
        k: raw.k,
        params,
        location: at.clone(),
    };
    let mut zeros: Vec<(&'static str, u32, &'static str)> = vec![
        ("m", tile.m, "a tile covers at least one row of C"),
        ("n", tile.n, "a tile covers at least one column of C"),
        ("k", tile.k, "a tile steps K by at least one"),
        (
            "stages",
            tile.stages(),
            "a tile needs at least one shared-memory stage",
        ),
    ];
    match &tile.params {
        TileParams::Scalar(p) => zeros.extend([
            (
                "thread_m",
                p.thread_m,
                "each thread computes at least one row of C",
            ),
            (
                "thread_n",
                p.thread_n,
                "each thread computes at least one column of C",
            ),
            ("k_split", p.k_split, "a block reduces at least one K chunk"),
            (
                "min_blocks",
                p.min_blocks.unwrap_or(1),
                "an SM holds at least one block (leave min_blocks out for no occupancy bound)",
            ),
        ]),
        TileParams::WgmmaTma(p) => zeros.extend([
            (
                "consumers",
                p.consumers,
                "a tile has at least one consumer warpgroup",
            ),
            ("cluster_m", p.cluster_m, "a cluster holds at least one CTA"),
        ]),
        TileParams::MmaDecodeTma(_) => {}
        TileParams::MmaGemm(p) => zeros.extend([
            (
                "warps_m",
                p.warps_m,
                "a block has at least one warp along M",
            ),
            (
                "warps_n",
                p.warps_n,
                "a block has at least one warp along N",
            ),
        ]),
    }
    for (key, value, why) in zeros {
        if value == 0 {
            sink.push(
                at.clone(),
                SpecErrorKind::Zero {
                    item: item.clone(),
                    key,
                    why,
                },
            );
        }
    }
    if sink.errors.len() != before {
        return None;
    }
    if let Some(b) = tile.min_blocks().filter(|&b| b > BLOCKS_PER_SM_MAX) {
        sink.push(
            at.clone(),
            SpecErrorKind::MinBlocks {
                family: tile.family.clone(),
                tile: tile.name.clone(),
                m: tile.m,
                n: tile.n,
                k: tile.k,
                value: b,
                max: BLOCKS_PER_SM_MAX,
            },
        );
    }
    let shape_err = |sink: &mut Sink, dim, value, multiple, why: String| {
        sink.push(
            at.clone(),
            SpecErrorKind::TileShape {
                family: tile.family.clone(),
                tile: tile.name.clone(),
                m: tile.m,
                n: tile.n,
                k: tile.k,
                dim,
                value,
                multiple,
                why,
            },
        );
    };
    let inst_why = format!(
        "instruction {} is {}x{}x{}",
        inst.name, inst.shape.m, inst.shape.n, inst.shape.k
    );
    for (dim, value, multiple) in [
        ("m", tile.m, inst.shape.m),
        ("n", tile.n, inst.shape.n),
        ("k", tile.k, inst.shape.k),
    ] {
        if !value.is_multiple_of(multiple) {
            shape_err(sink, dim, value, multiple, inst_why.clone());
        }
    }
    if let TileParams::Scalar(p) = &tile.params {
        if !tile.m.is_multiple_of(p.thread_m) {
            shape_err(
                sink,
                "m",
                tile.m,
                p.thread_m,
                "each thread computes thread_m rows".into(),
            );
        }
        if !tile.n.is_multiple_of(p.thread_n) {
            shape_err(
                sink,
                "n",
                tile.n,
                p.thread_n,
                "each thread computes thread_n columns".into(),
            );
        }
    }
    if let Some(TemplateKind::Gemm(g)) = templates::find(&family.template).map(|t| &t.kind) {
        for (key, value, rule, why) in g.rules.broken(&tile) {
            sink.push(
                at.clone(),
                SpecErrorKind::TemplateLimit {
                    family: tile.family.clone(),
                    tile: tile.name.clone(),
                    m: tile.m,
                    n: tile.n,
                    k: tile.k,
                    template: family.template.clone(),
                    key,
                    value,
                    rule,
                    why,
                },
            );
        }
    }
    if sink.errors.len() != before {
        return None;
    }
    let threads = tile.threads();
    if threads == 0 || !threads.is_multiple_of(32) || threads > tier.max_threads_per_block {
        sink.push(
            at.clone(),
            SpecErrorKind::BlockThreads {
                family: tile.family.clone(),
                tile: tile.name.clone(),
                m: tile.m,
                n: tile.n,
                k: tile.k,
                threads,
                tier: tier.name.clone(),
                max: tier.max_threads_per_block,
            },
        );
        return None;
    }
    let needed = shared_bytes(family, &tile);
    if needed > tier.max_shared_bytes {
        sink.push(
            at,
            SpecErrorKind::SharedMemory {
                family: tile.family.clone(),
                tile: tile.name.clone(),
                m: tile.m,
                n: tile.n,
                k: tile.k,
                needed,
                tier: tier.name.clone(),
                allowed: tier.max_shared_bytes,
            },
        );
        return None;
    }
    Some(tile)
}

/// Reads a tile's kind parameters: every key must be one of the kind's, each value a whole
/// number (`scheduler` a word); omitted keys take the kind's default or are errors.
fn tile_params(
    sink: &mut Sink,
    key_at: &dyn Fn(&str) -> Location,
    family: &Family,
    raw: &RawTile,
) -> Option<TileParams> {
    let before = sink.errors.len();
    let kind = family.kind;
    let keys = kind.keys();
    let err = |sink: &mut Sink, key: &str, problem: String| {
        sink.push(
            key_at(key),
            SpecErrorKind::TileKey {
                family: raw.family.clone(),
                tile: raw.name.clone(),
                key: key.to_string(),
                problem,
            },
        )
    };
    for key in raw.params.keys() {
        if !keys.contains(&key.as_str()) {
            err(
                sink,
                key,
                format!(
                    "`{key}` is not a parameter of a {} tile (family {}, template {}); its keys are family, name, m, n, k, {}",
                    kind.as_str(),
                    family.name,
                    family.template,
                    keys.join(", ")
                ),
            );
        }
    }
    let int = |sink: &mut Sink, key: &str, default: Option<u32>| -> Option<u32> {
        match raw.params.get(key) {
            None if default.is_some() => default,
            None => {
                err(
                    sink,
                    key,
                    format!(
                        "needs `{key}`: a {} tile has no default for it",
                        kind.as_str()
                    ),
                );
                None
            }
            Some(toml::Value::Integer(i)) => match u32::try_from(*i) {
                Ok(v) => Some(v),
                Err(_) => {
                    err(
                        sink,
                        key,
                        format!("`{key}` = {i} is not a whole number from 0 to {}", u32::MAX),
                    );
                    None
                }
            },
            Some(v) => {
                err(sink, key, format!("`{key}` = {v} must be a whole number"));
                None
            }
        }
    };
    let params = match kind {
        TileKind::Scalar => {
            let stages = int(sink, "stages", Some(1));
            let thread_m = int(sink, "thread_m", Some(1));
            let thread_n = int(sink, "thread_n", Some(1));
            let k_split = int(sink, "k_split", Some(1));
            let min_blocks = match raw.params.get("min_blocks") {
                None => None,
                Some(_) => Some(int(sink, "min_blocks", None)?),
            };
            TileParams::Scalar(ScalarParams {
                stages: stages?,
                thread_m: thread_m?,
                thread_n: thread_n?,
                k_split: k_split?,
                min_blocks,
            })
        }
        TileKind::WgmmaTma => {
            let stages = int(sink, "stages", None);
            let consumers = int(sink, "consumers", None);
            let cluster_m = int(sink, "cluster_m", Some(1));
            let scheduler = match raw.params.get("scheduler") {
                None => Some(Scheduler::Persistent),
                Some(toml::Value::String(w)) if w == "persistent" => Some(Scheduler::Persistent),
                Some(v) => {
                    err(
                        sink,
                        "scheduler",
                        format!("`scheduler` = {v} is not a scheduler of template {}; expected \"persistent\"", family.template),
                    );
                    None
                }
            };
            TileParams::WgmmaTma(WgmmaTmaParams {
                stages: stages?,
                consumers: consumers?,
                cluster_m: cluster_m?,
                scheduler: scheduler?,
            })
        }
        TileKind::MmaDecodeTma => TileParams::MmaDecodeTma(MmaDecodeTmaParams {
            stages: int(sink, "stages", None)?,
        }),
        TileKind::MmaGemm => {
            let stages = int(sink, "stages", Some(1));
            let warps_m = int(sink, "warps_m", None);
            let warps_n = int(sink, "warps_n", None);
            TileParams::MmaGemm(MmaGemmParams {
                stages: stages?,
                warps_m: warps_m?,
                warps_n: warps_n?,
            })
        }
    };
    (sink.errors.len() == before).then_some(params)
}

/// Shared memory a tile of this family needs, for its largest operand type: the budget a tier
/// must allow.
pub fn shared_bytes(family: &Family, tile: &Tile) -> u64 {
    family
        .variants
        .iter()
        .map(|&(_, d)| shared_bytes_for(family, tile, d))
        .max()
        .unwrap_or(0)
}

/// Shared memory one kernel (a tile of this family at dtype `d`) needs: the sum of the
/// family's shared terms, operands counted at `d`'s size when the family stages them as stored.
pub fn shared_bytes_for(family: &Family, tile: &Tile, d: DtypeTriple) -> u64 {
    let elem = match family.staging {
        Staging::F32 => 4,
        Staging::Operand => d.ab.size_bytes(),
    };
    let (m, n, k) = (tile.m as u64, tile.n as u64, tile.k as u64);
    family
        .shared
        .iter()
        .map(|term| match term {
            SharedTerm::Operands => (tile.stages() as u64)
                .saturating_mul(m.saturating_mul(k).saturating_add(k.saturating_mul(n)))
                .saturating_mul(elem),
            SharedTerm::Totals => m.saturating_mul(n).saturating_mul(4),
            SharedTerm::Partials => (tile.k_split() as u64)
                .saturating_mul(m)
                .saturating_mul(n)
                .saturating_mul(4),
            SharedTerm::Slices => (tile.stages() as u64)
                .saturating_mul(tile.k_split() as u64)
                .saturating_mul(32)
                .saturating_mul(m.saturating_add(n))
                .saturating_mul(elem),
            SharedTerm::Alignment => SHARED_ALIGNMENT_SLACK,
            SharedTerm::Barriers => (tile.stages() as u64).saturating_mul(BARRIER_BYTES_PER_STAGE),
            SharedTerm::PaddedStep => m
                .saturating_add(n)
                .saturating_mul(k.saturating_add(8))
                .saturating_mul(elem),
            SharedTerm::CStaging => {
                let consumers = match &tile.params {
                    TileParams::WgmmaTma(p) => p.consumers as u64,
                    _ => 1,
                };
                let box_inner = 128 / d.c.size_bytes().max(1);
                let round = if (n / box_inner.max(1)).is_multiple_of(2) {
                    2
                } else {
                    1
                };
                consumers.saturating_mul(round).saturating_mul(64 * 128)
            }
        })
        .fold(0u64, u64::saturating_add)
}

fn resolve_range(
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

fn resolve_route(
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
                location: at.clone(),
            });
        }
    }
}

/// A route's `unaligned` kernel: present exactly when the route's family loads through TMA;
/// a tile of the tier whose family has the route family's contract and policy and does not
/// use TMA. `Err` after an error; the (op, dtype) variants are checked per expanded route.
fn resolve_unaligned<'s>(
    sink: &mut Sink,
    specs: &'s SpecSet,
    tier: &Tier,
    rule: u32,
    at: &Location,
    family: &Family,
    raw: &RawRoute,
) -> Result<Option<(TileRef, &'s Family)>, ()> {
    let Some(word) = &raw.unaligned else {
        if family.kind.uses_tma() {
            sink.push(
                at.clone(),
                SpecErrorKind::RouteKernel {
                    rule,
                    kernel: raw.kernel.clone(),
                    problem: format!(
                        "is a {} kernel, which loads A and B through TMA: the route needs `unaligned = \"family.tile\"`, a plain-load kernel of contract {} for operands TMA cannot take",
                        family.kind.as_str(),
                        family.contract
                    ),
                },
            );
            return Err(());
        }
        return Ok(None);
    };
    let problem = |sink: &mut Sink, problem: String| {
        sink.push(
            at.clone(),
            SpecErrorKind::RouteUnaligned {
                rule,
                kernel: word.clone(),
                problem,
            },
        );
        Err(())
    };
    if !family.kind.uses_tma() {
        return problem(
            sink,
            format!(
                "is given, but the route's kernel {} is a {} kernel, which does not load through TMA: only routes to TMA kernels have an unaligned kernel",
                raw.kernel,
                family.kind.as_str()
            ),
        );
    }
    let Some((fam_name, tile_name)) = word.split_once('.') else {
        return problem(sink, "must read `family.tile`, e.g. `mma.wide`".into());
    };
    if !tier.families.iter().any(|f| f == fam_name) {
        return problem(
            sink,
            format!(
                "names family {fam_name}, which tier {} does not use (families: {})",
                tier.name,
                tier.families.join(", ")
            ),
        );
    }
    let Some(ufam) = specs.families.get(fam_name) else {
        return Err(());
    };
    if sink.is_broken("tile", word) {
        return Err(());
    }
    if tier.tile(fam_name, tile_name).is_none() {
        return problem(
            sink,
            format!(
                "names tile {tile_name}, which tier {} does not define for {fam_name}",
                tier.name
            ),
        );
    }
    if ufam.kind.uses_tma() {
        return problem(
            sink,
            format!(
                "is a {} kernel, which loads through TMA too: name a plain-load kernel (e.g. of template mma_gemm)",
                ufam.kind.as_str()
            ),
        );
    }
    if ufam.policy != family.policy {
        return problem(
            sink,
            format!(
                "is family {fam_name} of policy {}, but the route is for policy {}",
                ufam.policy, family.policy
            ),
        );
    }
    if ufam.contract != family.contract {
        return problem(
            sink,
            format!(
                "implements contract {}, but the route's kernel {} implements {}: the same call must give the same bits whether or not TMA can take its operands",
                ufam.contract, raw.kernel, family.contract
            ),
        );
    }
    Ok(Some((
        TileRef {
            family: fam_name.to_string(),
            tile: tile_name.to_string(),
        },
        ufam,
    )))
}

fn check_tier_ambiguity(sink: &mut Sink, tiers: &[Tier]) {
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
