//! Numeric contracts: the accumulator type a contract promises (only f32, because every
//! template accumulates in `float`; any other type would be a promise no kernel keeps), the
//! inputs it is defined for, its k step and its K chunk.

use super::Sink;
use crate::error::{Location, SpecErrorKind};
use crate::model::*;
use crate::raw::RawContract;
use crate::vocab::Dtype;

pub(super) fn resolve_contract(
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
    let inputs = match &r.inputs {
        None => Dtype::ALL.to_vec(),
        Some(words) if words.is_empty() => {
            sink.push(
                at.clone(),
                SpecErrorKind::ContractInputsEmpty {
                    contract: name.to_string(),
                },
            );
            return None;
        }
        Some(words) => {
            let mut inputs = Vec::new();
            for w in words {
                match w.parse::<Dtype>() {
                    Ok(d) if !inputs.contains(&d) => inputs.push(d),
                    Ok(_) => {
                        sink.push(
                            at.clone(),
                            SpecErrorKind::UnknownWord(format!(
                                "contract {name}: input `{w}` is listed twice"
                            )),
                        );
                        return None;
                    }
                    Err(e) => {
                        sink.push(
                            at.clone(),
                            SpecErrorKind::UnknownWord(format!("contract {name}: inputs: {e}")),
                        );
                        return None;
                    }
                }
            }
            inputs
        }
    };
    for (key, v) in [("k_step", r.k_step), ("chunk", r.chunk)] {
        if v == Some(0) {
            sink.push(
                at.clone(),
                SpecErrorKind::Zero {
                    item: format!("contract {name}"),
                    key,
                    why:
                        "leave the key out for a chain of single k (k_step) or no K chunks (chunk)",
                },
            );
            return None;
        }
    }
    Some(Contract {
        name: name.to_string(),
        doc: r.doc.clone(),
        accumulator,
        inputs,
        k_step: r.k_step.unwrap_or(1),
        chunk: r.chunk.unwrap_or(0),
    })
}
