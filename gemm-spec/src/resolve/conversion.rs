//! Conversion kernels (elementwise widening of a half type to f32, narrowing back, or a
//! bit-preserving repack of a type to itself): the ABI
//! struct must carry exactly the fields the runtime fills, the template must be a conversion
//! template, the block a whole number of warps, and each `from.to` pair built by one conversion
//! only.

use super::names::known;
use super::template::check_template;
use super::Sink;
use crate::error::{Location, SpecErrorKind};
use crate::kinds::Role;
use crate::model::*;
use crate::raw::RawConversion;
use crate::vocab::Dtype;

/// A row kernel's `min_blocks` against the SMs it is built for: every tier builds every
/// conversion, so each value must fit the SM of every tier (its threads and blocks).
pub(super) fn check_min_blocks(sink: &mut Sink, specs: &SpecSet) {
    for (name, c) in &specs.conversions {
        for &n in &c.min_blocks {
            if let Some(t) = specs.tiers.iter().find(|t| {
                n.saturating_mul(c.threads) > t.hardware.threads_per_sm
                    || n > t.hardware.blocks_per_sm
            }) {
                sink.push(
                    c.location.clone(),
                    SpecErrorKind::Conversion {
                        name: name.clone(),
                        problem: format!(
                            "min_blocks has {n}: {n} blocks of {} threads do not fit an SM of tier {} (compute capability {}.{}: {} threads, {} blocks)",
                            c.threads,
                            t.name,
                            t.cc.0,
                            t.cc.1,
                            t.hardware.threads_per_sm,
                            t.hardware.blocks_per_sm
                        ),
                    },
                );
            }
        }
    }
}

pub(super) fn resolve_conversion(
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
    let row_op = match &raw.row_op {
        None => None,
        Some(word) => match RowOp::parse(word) {
            Some(op) => Some(op),
            None => {
                let known: Vec<&str> = RowOp::ALL.iter().map(|o| o.as_str()).collect();
                problem(
                    sink,
                    format!("row_op `{word}` is none of {}", known.join(", ")),
                );
                None
            }
        },
    };
    // A row kernel's contract names its reduction tree, which is its block's: thread t of
    // N takes elements t, t + N, ... (docs/fronts.md).
    let contract = match (&raw.row_op, &raw.contract) {
        (None, None) => String::new(),
        (None, Some(c)) => {
            problem(
                sink,
                format!("has contract `{c}` but no row_op: only row kernels name a contract"),
            );
            String::new()
        }
        (Some(_), None) => {
            problem(
                sink,
                format!(
                    "is a row kernel without a contract: add contract = \"row-t{}\" (its reduction tree)",
                    raw.threads
                ),
            );
            String::new()
        }
        (Some(_), Some(c)) => {
            let want = format!("row-t{}", raw.threads);
            if *c != want {
                problem(
                    sink,
                    format!(
                        "names contract `{c}`, but a row kernel of {} threads implements `{want}` (thread t of {} takes elements t, t + {}, ...)",
                        raw.threads, raw.threads, raw.threads
                    ),
                );
            }
            c.clone()
        }
    };
    // A row kernel's warp-path lengths: whole warps of columns, at most 64 a lane (the
    // template's registers), ascending.
    let warp_cols = match (&raw.row_op, &raw.warp_cols) {
        (None, None) => Vec::new(),
        (None, Some(_)) => {
            problem(
                sink,
                "has warp_cols but no row_op: only row kernels have a warp path".into(),
            );
            Vec::new()
        }
        (Some(_), None) => vec![gemm_core::table::ConversionInfo::ROW_WARP_COLS as u32],
        (Some(_), Some(list)) => {
            if list.is_empty() {
                problem(
                    sink,
                    "has warp_cols = []: name at least one length (e.g. [512])".into(),
                );
            }
            for &c in list {
                if c == 0 || c % 32 != 0 || c > 2048 {
                    problem(
                        sink,
                        format!("warp_cols has {c}: a length is a multiple of 32 from 32 to 2048 (a warp holds at most 64 values a lane)"),
                    );
                }
            }
            if list.windows(2).any(|w| w[0] >= w[1]) {
                problem(
                    sink,
                    format!("warp_cols {list:?} must ascend, without repeats"),
                );
            }
            list.clone()
        }
    };
    // Blocks an SM a row kernel of each length is built for: as many as warp_cols has
    // lengths (whether they fit each tier's SM: check_min_blocks, once the tiers are known).
    let min_blocks = match (&raw.row_op, &raw.min_blocks) {
        (_, None) => Vec::new(),
        (None, Some(_)) => {
            problem(
                sink,
                "has min_blocks but no row_op: only row kernels take it".into(),
            );
            Vec::new()
        }
        (Some(_), Some(list)) => {
            if list.len() != warp_cols.len() {
                problem(
                    sink,
                    format!(
                        "min_blocks {list:?} names {} value(s) for {} warp-path length(s) {warp_cols:?}: one each",
                        list.len(),
                        warp_cols.len()
                    ),
                );
            }
            if list.contains(&0) {
                problem(
                    sink,
                    "min_blocks has 0: a kernel holds at least 1 block an SM".into(),
                );
            }
            list.clone()
        }
    };
    let halving_fold = match (&raw.row_op, raw.warp_fold.as_deref()) {
        (_, None) => false,
        (None, Some(_)) => {
            problem(
                sink,
                "has warp_fold but no row_op: only row kernels have a warp path".into(),
            );
            false
        }
        (Some(_), Some("butterflies")) => false,
        (Some(_), Some("halving")) => true,
        (Some(_), Some(other)) => {
            problem(
                sink,
                format!("warp_fold `{other}` is neither `butterflies` nor `halving`"),
            );
            false
        }
    };
    let kind = check_template(
        sink,
        &specs.kinds,
        &at,
        &format!("conversion {name}"),
        &raw.template,
        Role::Conversion,
    );
    // A transposing copy is its kind's (transpose_matrix's manifest says `transposes`).
    let transposes = kind.is_some_and(|k| k.transposes);
    let built_elsewhere = |pair: &(Dtype, Dtype)| {
        specs
            .conversions
            .values()
            .find(|c| c.row_op == row_op && c.transpose == transposes && c.variants.contains(pair))
            .map(|c| c.name.clone())
    };
    if let Some(kind) = kind {
        for b in crate::kinds::derive::broken_conversion_limits(kind, raw.threads) {
            problem(
                sink,
                format!(
                    "runs {} threads a block, but template {} needs {}: {} ({})",
                    raw.threads, kind.template, b.limit.rule, b.why, b.limit.location
                ),
            );
        }
    }
    let mut variants = Vec::new();
    for v in &raw.variants {
        let parsed = v
            .split_once('.')
            .and_then(|(f, t)| Some((f.parse::<Dtype>().ok()?, t.parse::<Dtype>().ok()?)));
        match parsed {
            Some((from, to)) if raw.row_op.is_some() && to != from && to != Dtype::F32 => problem(
                sink,
                format!("variant `{v}` reduces {from} rows into {to}; a row kernel writes its input's type or f32"),
            ),
            Some((from, to)) if transposes && (from != to || raw.row_op.is_some()) => problem(
                sink,
                format!("variant `{v}`: a transposing conversion copies a type to itself (and is no row kernel)"),
            ),
            Some((from, to)) if raw.row_op.is_none() && ConversionKind::of(from, to).is_none() => problem(
                sink,
                format!("variant `{v}` converts {from} to {to}; a conversion widens a half type to f32, narrows f32 to a half type, or repacks a type to itself"),
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
        kind: kind?.clone(),
        abi: raw.abi.clone(),
        threads: raw.threads,
        variants,
        row_op,
        contract,
        warp_cols,
        min_blocks,
        halving_fold,
        transpose: transposes,
        location: at,
    })
}
