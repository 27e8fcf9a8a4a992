//! Instructions (the MMA or FMA step whose shape a family's tiles are multiples of): a nonzero
//! shape, and a valid capability window `min..=max` in which the instruction exists.

use super::capability::check_cc;
use super::Sink;
use crate::error::{Location, SpecErrorKind};
use crate::model::*;
use crate::raw::RawInstruction;

pub(super) fn resolve_instruction(
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
    if r.inputs.as_ref().is_some_and(|i| i.is_empty()) {
        sink.push(
            at.clone(),
            SpecErrorKind::EmptyList {
                item: format!("instruction {name}"),
                key: "inputs".into(),
                why: "list the operand dtypes it takes, or leave the key out for all",
            },
        );
    }
    let mut inputs = Vec::new();
    for w in r.inputs.as_deref().unwrap_or_default() {
        match w.parse::<crate::vocab::Dtype>() {
            Ok(d) => inputs.push(d),
            Err(e) => sink.push(
                at.clone(),
                SpecErrorKind::UnknownWord(format!("instruction {name}: inputs: {e}")),
            ),
        }
    }
    if r.inputs.is_none() {
        inputs = crate::vocab::Dtype::ALL.to_vec();
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
        inputs,
    })
}
