//! Numeric contracts: the accumulator type a contract promises. Only f32 is accepted, because
//! every template accumulates in `float`; any other type would be a promise no kernel keeps.

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
    Some(Contract {
        name: name.to_string(),
        doc: r.doc.clone(),
        accumulator,
        inputs,
    })
}
