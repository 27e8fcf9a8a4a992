//! Kernel families: the contract, ABI struct and instruction they name; their template's kind
//! manifest and everything the family must agree with it on (the contract it implements, the
//! TMA tensor-map fields of the ABI, arch-specific target, minimum capability, ops, operand and
//! output types); and the (op, dtype) variants to build, each accumulating in the contract's
//! type, on inputs the contract, the template and the instruction all take.

use super::names::known;
use super::template::check_template;
use super::Sink;
use crate::error::{Location, SpecErrorKind};
use crate::kinds::Role;
use crate::model::*;
use crate::raw::ParsedFile;
use crate::raw::RawFamily;
use crate::vocab::{Dtype, DtypeTriple, Op, Policy};

fn list(dtypes: &[Dtype]) -> String {
    dtypes
        .iter()
        .map(|d| d.to_string())
        .collect::<Vec<_>>()
        .join(", ")
}

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
    let kind = check_template(sink, &specs.kinds, &at, &owner, &raw.template, Role::Gemm);
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
    let contract = specs.contracts.get(&raw.contract);
    let instruction = specs.instructions.get(&raw.instruction);
    if let Some(k) = kind {
        // A kernel that claims a contract it does not implement would let a route switch, by m,
        // between kernels of different reduction orders while both report one contract.
        if contract.is_some() && k.contract(&raw.contract).is_none() {
            let implements: Vec<String> = k
                .contracts
                .iter()
                .map(|c| format!("{} (on {})", c.name, list(&c.inputs)))
                .collect();
            mismatch(
                sink,
                &at,
                format!(
                    "implements {} ({}); the family says contract {}, which its kernels would not keep: rows of one request could then differ with the batch",
                    implements.join(", "),
                    k.manifest,
                    raw.contract
                ),
            );
        }
        if let Some(abi) = specs.abis.get(&raw.abi) {
            for m in &k.tensor_maps {
                let source = match m.operand {
                    MapOperand::A => BindSource::ATensorMap,
                    MapOperand::B => BindSource::BTensorMap,
                    _ => BindSource::CTensorMap,
                };
                if !abi
                    .fields
                    .iter()
                    .any(|f| f.ty == FieldType::TensorMap && f.bind == source)
                {
                    mismatch(
                        sink,
                        &at,
                        format!(
                            "reads a tensor map of {:?} ({}); ABI struct {} has no field of type tensor_map bound to {source}",
                            m.operand, m.location, abi.name
                        ),
                    );
                }
            }
        }
        if let (true, Some(abi)) = (k.batch, specs.abis.get(&raw.abi)) {
            // A batched kernel offsets every operand by its batch stride at grid z: a stride
            // the struct does not carry would leave every entry on entry 0's operands.
            let missing: Vec<String> = BindSource::BATCH_STRIDES
                .iter()
                .filter(|s| {
                    !abi.fields
                        .iter()
                        .any(|f| f.ty == FieldType::I64 && f.bind == **s)
                })
                .map(|s| s.to_string())
                .collect();
            if !missing.is_empty() {
                mismatch(
                    sink,
                    &at,
                    format!(
                        "is batched ({}: batch = true), but ABI struct {} has no i64 field bound to {}: add them, or use a kind without batch",
                        k.manifest,
                        abi.name,
                        missing.join(", ")
                    ),
                );
            }
        }
        if let (Some(why), Some(inst)) = (&k.arch_specific, instruction) {
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
        if let (Some(((major, minor), why)), Some(inst)) = (&k.min_cc, instruction) {
            if inst.min_cc < (*major, *minor) {
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
    let prepass_problem = |sink: &mut Sink, word: &str, problem: String| {
        sink.push(
            at.clone(),
            SpecErrorKind::Prepass {
                family: name.to_string(),
                prepass: word.to_string(),
                problem,
            },
        )
    };
    let prepass = match &raw.prepass {
        None => Prepass::None,
        Some(w) => match Prepass::parse(w) {
            Some(p) => p,
            None => {
                prepass_problem(
                    sink,
                    w,
                    "is not a prepass: the one prepass is `transpose-a` (tn kernels that read A's transposed copy, as nn)".to_string(),
                );
                Prepass::None
            }
        },
    };
    // The copy is made on the repack path of TMA kernels, which always have an `unaligned`
    // kernel to fall back on (a route cannot name a TMA kernel as its unaligned kernel).
    if let (Some(word), Some(k)) = (prepass.as_str(), kind) {
        if k.operands != OperandPath::Tma {
            prepass_problem(
                sink,
                word,
                format!(
                    "needs a kind that reads A and B through TMA; {} reads through {} ({})",
                    k.template,
                    k.operands.as_str(),
                    k.manifest
                ),
            );
        }
    }
    let mut variants = Vec::new();
    for (op_word, dtypes) in &raw.variants {
        let list_at = f_at(dtypes.span());
        let Ok(op) = op_word.parse::<Op>().map_err(|e| word(sink, e.to_string())) else {
            continue;
        };
        if prepass == Prepass::TransposeA && op != Op::Tn {
            prepass_problem(
                sink,
                "transpose-a",
                format!("copies a tn call's A, stored [k, m], into [m, k]; variants.{op} has no such A: list tn variants only"),
            );
            continue;
        }
        // The template is instantiated for the layout the kernel reads (nn for tn under
        // transpose-a).
        if let Some(k) = kind {
            if !k.ops.contains(&prepass.layout(op)) {
                let ops: Vec<&str> = k.ops.iter().map(|o| o.as_str()).collect();
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
            let d = match d.get_ref().parse::<DtypeTriple>() {
                Ok(d) => d,
                Err(e) => {
                    sink.push(d_at, SpecErrorKind::UnknownWord(e.to_string()));
                    continue;
                }
            };
            let inputs_err = |sink: &mut Sink, what: String, inputs: &[Dtype]| {
                sink.push(
                    d_at.clone(),
                    SpecErrorKind::VariantInputs {
                        family: name.to_string(),
                        op: op.to_string(),
                        dtype: d.to_string(),
                        what,
                        inputs: list(inputs),
                    },
                )
            };
            if variants.contains(&(op, d)) {
                sink.push(
                    d_at,
                    SpecErrorKind::UnknownWord(format!(
                        "family {name}: variant {op} {d} is listed twice"
                    )),
                );
                continue;
            }
            if let Some(c) = contract {
                if c.accumulator != d.acc {
                    sink.push(
                        d_at,
                        SpecErrorKind::VariantAccumulator {
                            family: name.to_string(),
                            op: op.to_string(),
                            dtype: d.to_string(),
                            acc: d.acc.to_string(),
                            contract: c.name.clone(),
                            contract_acc: c.accumulator.to_string(),
                        },
                    );
                    continue;
                }
                if !c.inputs.contains(&d.ab) {
                    inputs_err(sink, format!("contract {}", c.name), &c.inputs);
                    continue;
                }
            }
            if let Some(kc) = kind.and_then(|k| k.contract(&raw.contract)) {
                if !kc.inputs.contains(&d.ab) {
                    inputs_err(
                        sink,
                        format!("template {} for contract {}", raw.template, raw.contract),
                        &kc.inputs,
                    );
                    continue;
                }
            }
            if let Some(inst) = instruction {
                if !inst.inputs.contains(&d.ab) {
                    inputs_err(sink, format!("instruction {}", inst.name), &inst.inputs);
                    continue;
                }
            }
            if let Some(k) = kind {
                if !k.outputs.is_empty() && !k.outputs.contains(&d.c) {
                    mismatch(
                        sink,
                        &d_at,
                        format!(
                            "stores C as {} only; the family lists variant {op} {d}",
                            list(&k.outputs)
                        ),
                    );
                    continue;
                }
            }
            variants.push((op, d));
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
        kind: kind?.clone(),
        contract: raw.contract.clone(),
        policy: policy?,
        abi: raw.abi.clone(),
        instruction: raw.instruction.clone(),
        variants,
        prepass,
        location: at,
    })
}
