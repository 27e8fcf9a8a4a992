//! Kernel families: the contract, ABI struct and instruction they name; their template and
//! everything the family must agree with it on (grid, staging, shared-memory terms, TMA
//! tensor-map fields, arch-specific target, minimum capability, ops, operand size); and the
//! (op, dtype) variants to build, each accumulating in the contract's type.

use super::names::known;
use super::template::check_template;
use super::Sink;
use crate::error::{Location, SpecErrorKind};
use crate::load::ParsedFile;
use crate::model::*;
use crate::raw::RawFamily;
use crate::templates::TemplateKind;
use crate::vocab::{Dtype, DtypeTriple, Op, Policy};

pub(super) fn resolve_family(
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
    let contract_inputs = specs.contracts.get(&raw.contract).map(|c| &c.inputs);
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
                Ok(d)
                    if template.is_some_and(|g| {
                        !g.operand_bytes.is_empty() && !g.operand_bytes.contains(&d.ab.size_bytes())
                    }) =>
                {
                    let allowed = template.map_or(&[][..], |g| g.operand_bytes);
                    let sizes: Vec<String> = allowed.iter().map(|b| b.to_string()).collect();
                    let names: Vec<&str> = Dtype::ALL
                        .iter()
                        .filter(|d| allowed.contains(&d.size_bytes()))
                        .map(|d| d.as_str())
                        .collect();
                    mismatch(
                        sink,
                        &d_at,
                        format!(
                            "takes A and B of {} bytes an element ({}); the family lists variant {op} {d}",
                            sizes.join(" or "),
                            names.join(", ")
                        ),
                    )
                }
                Ok(d) if contract_inputs.is_some_and(|ins| !ins.contains(&d.ab)) => sink.push(
                    d_at,
                    SpecErrorKind::VariantInputs {
                        family: name.to_string(),
                        op: op.to_string(),
                        dtype: d.to_string(),
                        contract: raw.contract.clone(),
                        inputs: contract_inputs
                            .map(|ins| {
                                ins.iter()
                                    .map(|d| d.to_string())
                                    .collect::<Vec<_>>()
                                    .join(", ")
                            })
                            .unwrap_or_default(),
                    },
                ),
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
