//! Tiles of a tier: a lowercase name and a family the tier uses; positive m, n and k; every key
//! a parameter of the family's kind (its manifest), whole numbers at least each parameter's
//! least value, defaults filled; a shape that is a multiple of the instruction's; the kind's
//! limits for every variant of the family; then, from the kind's derived numbers, threads a
//! block, shared memory and launch bounds within the tier's budgets and hardware, and the
//! accumulators a thread within its registers. Errors point at the key's own line.

use super::names::check_name;
use super::Sink;
use crate::error::{Location, SpecErrorKind};
use crate::kinds::{broken_limits, derive};
use crate::model::*;
use std::collections::BTreeMap;

/// A tile as a tier has it after its base: its keys with the line each came from.
#[derive(Clone, Debug)]
pub(super) struct TileSource {
    pub family: String,
    pub name: String,
    /// m, n, k.
    pub dims: [Option<u32>; 3],
    pub params: BTreeMap<String, toml::Value>,
    /// Where each key was written (`m`, `stages`, ...).
    pub key_lines: BTreeMap<String, Location>,
    /// The `[[tile]]` that defines (or last changed) it.
    pub at: Location,
    /// `tuning_candidate`, as the last `[[tile]]` writing it says.
    pub tuning_candidate: bool,
    /// `tile_ps_per_k`, as the last `[[tile]]` writing it says.
    pub tile_ps_per_k: Option<u32>,
}

impl TileSource {
    pub fn key_at(&self, key: &str) -> Location {
        self.key_lines
            .get(key)
            .cloned()
            .unwrap_or_else(|| self.at.clone())
    }
}

pub(super) fn resolve_tile(
    sink: &mut Sink,
    specs: &SpecSet,
    tier: &Tier,
    src: &TileSource,
) -> Option<Tile> {
    let at = src.at.clone();
    if !check_name(sink, &at, "tile", &src.name) {
        return None;
    }
    if !tier.families.contains(&src.family) {
        sink.push(
            at,
            SpecErrorKind::FamilyNotUsed {
                tier: tier.name.clone(),
                family: src.family.clone(),
            },
        );
        return None;
    }
    let family = specs.families.get(&src.family)?;
    let inst = specs.instructions.get(&family.instruction)?;
    let contract = specs.contracts.get(&family.contract)?;
    let kind = &family.kind;
    let before = sink.errors.len();
    let key_err = |sink: &mut Sink, key: &str, problem: String| {
        sink.push(
            src.key_at(key),
            SpecErrorKind::TileKey {
                family: src.family.clone(),
                tile: src.name.clone(),
                key: key.to_string(),
                problem,
            },
        )
    };
    let mut dims = [0u32; 3];
    for (i, (dim, why)) in [
        ("m", "a tile covers at least one row of C"),
        ("n", "a tile covers at least one column of C"),
        ("k", "a tile steps K by at least one"),
    ]
    .into_iter()
    .enumerate()
    {
        match src.dims[i] {
            None => key_err(sink, dim, format!("needs `{dim}`: {why}")),
            Some(0) => sink.push(
                src.key_at(dim),
                SpecErrorKind::Zero {
                    item: format!("tile {}.{}", src.family, src.name),
                    key: dim,
                    why,
                },
            ),
            Some(v) => dims[i] = v,
        }
    }
    for key in src.params.keys() {
        if kind.param(key).is_none() {
            key_err(
                sink,
                key,
                format!(
                    "`{key}` is not a parameter of template {} (family {}, {}); its keys are family, name, m, n, k{}{}",
                    kind.template,
                    family.name,
                    kind.manifest,
                    if kind.params.is_empty() { "" } else { ", " },
                    kind.keys().join(", ")
                ),
            );
        }
    }
    let mut params = Vec::new();
    for p in &kind.params {
        let v = match src.params.get(&p.name) {
            None => match p.default {
                Some(d) => d,
                None => {
                    key_err(
                        sink,
                        &p.name,
                        format!(
                            "needs `{}` ({}): template {} has no default for it",
                            p.name, p.doc, kind.template
                        ),
                    );
                    continue;
                }
            },
            Some(toml::Value::Integer(i)) => match u32::try_from(*i) {
                Ok(v) if v >= p.min && p.max.is_none_or(|max| v <= max) => v,
                Ok(v) if v >= p.min => {
                    key_err(
                        sink,
                        &p.name,
                        format!(
                            "`{}` = {v}, but its greatest value is {} ({})",
                            p.name,
                            p.max.unwrap_or(u32::MAX),
                            p.doc
                        ),
                    );
                    continue;
                }
                Ok(v) => {
                    key_err(
                        sink,
                        &p.name,
                        format!(
                            "`{}` = {v}, but its least value is {} ({}){}",
                            p.name,
                            p.min,
                            p.doc,
                            if p.default.is_some_and(|d| d < p.min) {
                                "; leave it out for none"
                            } else {
                                ""
                            }
                        ),
                    );
                    continue;
                }
                Err(_) => {
                    key_err(
                        sink,
                        &p.name,
                        format!(
                            "`{}` = {i} is not a whole number from 0 to {}",
                            p.name,
                            u32::MAX
                        ),
                    );
                    continue;
                }
            },
            Some(v) => {
                key_err(
                    sink,
                    &p.name,
                    format!("`{}` = {v} must be a whole number", p.name),
                );
                continue;
            }
        };
        params.push((p.name.clone(), v));
    }
    if sink.errors.len() != before {
        return None;
    }
    let tile = Tile {
        family: src.family.clone(),
        name: src.name.clone(),
        m: dims[0],
        n: dims[1],
        k: dims[2],
        params,
        tuning_candidate: src.tuning_candidate,
        tile_ps_per_k: src.tile_ps_per_k,
        location: at.clone(),
    };
    let tile_err = |sink: &mut Sink, problem: String| {
        sink.push(
            at.clone(),
            SpecErrorKind::Tile {
                family: tile.family.clone(),
                tile: tile.name.clone(),
                shape: tile.shape(),
                problem,
            },
        )
    };
    if tile.tile_ps_per_k == Some(0) {
        sink.push(
            src.key_at("tile_ps_per_k"),
            SpecErrorKind::TileKey {
                family: tile.family.clone(),
                tile: tile.name.clone(),
                key: "tile_ps_per_k".into(),
                problem: "`tile_ps_per_k` = 0: a tile's time per unit of k is at least 1 picosecond (leave it out where no route's `wave_fit` names the tile)".into(),
            },
        );
    }
    for (dim, value, multiple) in [
        ("m", tile.m, inst.shape.m),
        ("n", tile.n, inst.shape.n),
        ("k", tile.k, inst.shape.k),
    ] {
        if !value.is_multiple_of(multiple) {
            sink.push(
                src.key_at(dim),
                SpecErrorKind::TileShape {
                    family: tile.family.clone(),
                    tile: tile.name.clone(),
                    m: tile.m,
                    n: tile.n,
                    k: tile.k,
                    dim,
                    value,
                    multiple,
                    why: format!(
                        "instruction {} is {}x{}x{}",
                        inst.name, inst.shape.m, inst.shape.n, inst.shape.k
                    ),
                },
            );
        }
    }
    if sink.errors.len() != before {
        return None;
    }
    // The kind's limits, for every variant (some read the operand types or the op); each broken
    // rule is reported once.
    let mut reported: Vec<String> = Vec::new();
    let hw = &tier.hardware;
    let mut most_smem = 0u64;
    for &(op, dtype) in &family.variants {
        let point = kernel_point(kind, &tile, family.layout(op), dtype, contract, inst, tier);
        for b in broken_limits(&point) {
            let rule = b.limit.rule.text().to_string();
            if reported.contains(&rule) {
                continue;
            }
            reported.push(rule.clone());
            let mut values: Vec<String> =
                b.values.iter().map(|(n, v)| format!("{n} = {v}")).collect();
            if b.values.iter().any(|(n, _)| {
                matches!(
                    n.as_str(),
                    "ab_bytes" | "c_bytes" | "a_k_major" | "b_k_major"
                )
            }) {
                values.push(format!("variant {op} {dtype}"));
            }
            if let Some(e) = &b.error {
                values.push(format!("the rule {e}"));
            }
            sink.push(
                at.clone(),
                SpecErrorKind::TemplateLimit {
                    family: tile.family.clone(),
                    tile: tile.name.clone(),
                    shape: tile.shape(),
                    template: kind.template.clone(),
                    rule,
                    values: values.join(", "),
                    why: b.why,
                    manifest: b.limit.location.clone(),
                },
            );
        }
        if !reported.is_empty() {
            continue;
        }
        let d = match derive(&point) {
            Ok(d) => d,
            Err(e) => {
                tile_err(
                    sink,
                    format!("template {}'s {e} ({})", kind.template, kind.manifest),
                );
                return None;
            }
        };
        most_smem = most_smem.max(d.shared_bytes);
        if let Some(acc) = d.accumulators {
            // The tier may cap registers below the hardware (max_registers_per_thread); the
            // accumulators must fit the lower of the two.
            let (cap, whose) = if tier.max_registers_per_thread < hw.registers_per_thread {
                (
                    tier.max_registers_per_thread,
                    format!("tier {} allows a thread", tier.name),
                )
            } else {
                (
                    hw.registers_per_thread,
                    format!("a thread has on compute capability {}.{}", hw.cc.0, hw.cc.1),
                )
            };
            if acc > cap as u64 && !reported.contains(&"accumulators".to_string()) {
                reported.push("accumulators".into());
                tile_err(
                    sink,
                    format!(
                        "each thread keeps {acc} f32 accumulators ({} of template {}), more than the {cap} registers {whose}: spread the tile over more threads (warps, thread tile)",
                        kind.lets.iter().find(|l| l.name == crate::kinds::keys::ACCUMULATORS).map_or("", |l| l.value.text()),
                        kind.template,
                    ),
                );
            }
        }
        let threads = d.threads;
        if (threads == 0 || !threads.is_multiple_of(32) || threads > tier.max_threads_per_block)
            && !reported.contains(&"threads".to_string())
        {
            reported.push("threads".into());
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
        }
        if let Some(b) = d.min_blocks {
            // A tile over the tier's shared memory is reported as that, below.
            if reported.contains(&"min_blocks".to_string())
                || d.shared_bytes > tier.max_shared_bytes
            {
                continue;
            }
            let smem =
                (d.shared_bytes + hw.reserved_shared_bytes_per_block).saturating_mul(b as u64);
            let problem = if b > hw.blocks_per_sm {
                Some(format!("an SM holds at most {} blocks", hw.blocks_per_sm))
            } else if (threads as u64) * (b as u64) > hw.threads_per_sm as u64 {
                Some(format!(
                    "{b} blocks of {threads} threads are {} threads, more than an SM's {}",
                    threads as u64 * b as u64,
                    hw.threads_per_sm
                ))
            } else if smem > hw.shared_bytes_per_sm {
                Some(format!(
                    "{b} blocks of {} bytes of shared memory (and {} reserved each) are {smem} bytes, more than an SM's {}",
                    d.shared_bytes, hw.reserved_shared_bytes_per_block, hw.shared_bytes_per_sm
                ))
            } else if let Some(cap) = register_cap(hw, threads, b)
                .map(|cap| granted_cap(hw, cap, b, d.accumulator_registers))
                .filter(|&cap| cap < 16 || d.accumulators.is_some_and(|a| a > cap))
            {
                let share = register_cap(hw, threads, b).unwrap_or(cap);
                let granted = if cap > share {
                    format!(" (the template grants its accumulating warps {cap})")
                } else {
                    String::new()
                };
                Some(format!(
                    "{b} blocks of {threads} threads leave {cap} registers a thread of the SM's {}{granted}, fewer than {}",
                    hw.registers_per_sm,
                    match d.accumulators {
                        Some(a) if a > cap => format!("the tile's {a} f32 accumulators a thread"),
                        _ => "the 16 ptxas needs".to_string(),
                    }
                ))
            } else {
                None
            };
            if let Some(problem) = problem {
                reported.push("min_blocks".into());
                tile_err(
                    sink,
                    format!(
                        "min_blocks = {b} cannot be resident on compute capability {}.{} ({}): {problem}",
                        hw.cc.0, hw.cc.1, hw.location
                    ),
                );
            }
        }
    }
    if sink.errors.len() != before {
        return None;
    }
    if most_smem > tier.max_shared_bytes {
        sink.push(
            at,
            SpecErrorKind::SharedMemory {
                family: tile.family.clone(),
                tile: tile.name.clone(),
                m: tile.m,
                n: tile.n,
                k: tile.k,
                needed: most_smem,
                tier: tier.name.clone(),
                allowed: tier.max_shared_bytes,
            },
        );
        return None;
    }
    Some(tile)
}

/// The registers a thread may use when `blocks` blocks of `threads` threads are to be resident on
/// one SM of `hw` (what `__launch_bounds__(threads, blocks)` lets ptxas use: the SM's registers
/// shared out, in the allocation's granules of 8, at most the hardware's a thread).
fn register_cap(hw: &Hardware, threads: u32, blocks: u32) -> Option<u64> {
    let per_thread = (hw.registers_per_sm as u64) / (threads as u64 * blocks as u64).max(1);
    Some((per_thread / 8 * 8).min(hw.registers_per_thread as u64))
}

/// The registers the accumulating warps have: the even share `cap`, or what the template grants
/// them (setmaxnreg) where that is more, within the hardware's registers a thread. A grant moves
/// registers between the warps of one block, so it counts only when one block holds the SM.
fn granted_cap(hw: &Hardware, cap: u64, blocks: u32, granted: Option<u64>) -> u64 {
    match granted {
        Some(g) if blocks == 1 => cap.max(g.min(hw.registers_per_thread as u64)),
        _ => cap,
    }
}

/// The location of the tile's `key`, or of the tile.
pub(super) fn key_line(
    text: &str,
    span: std::ops::Range<usize>,
    key: &str,
    file: &crate::raw::ParsedFile<'_>,
) -> Option<Location> {
    // The line of `key = ...` inside the tile's table; the table runs from its header to the
    // next header (the span may cover less).
    let body = text.get(span.start..).unwrap_or_default();
    let mut offset = 0;
    for (i, line) in body.split_inclusive('\n').enumerate() {
        let l = line.trim_start();
        if i > 0 && l.starts_with('[') {
            break;
        }
        if let Some(rest) = l.strip_prefix(key) {
            if rest.trim_start().starts_with('=') {
                return Some(file.at(span.start + offset..span.start + offset));
            }
        }
        offset += line.len();
    }
    None
}
