//! The TOML shape of a spec file, exactly as written (serde), before any cross-file checks.
//!
//! Every table rejects unknown keys. Items that errors must point at are `Spanned`, so a
//! validation error can name the line.

use crate::error::Location;
use serde::Deserialize;
use std::collections::BTreeMap;
use toml::Spanned;

/// One `.toml` file of a spec folder. A file may hold shared definitions (instructions,
/// contracts, ABI structs, families), one tier with its tiles and routes, or both.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawFile {
    #[serde(default)]
    pub instruction: BTreeMap<String, Spanned<RawInstruction>>,
    #[serde(default)]
    pub contract: BTreeMap<String, Spanned<RawContract>>,
    #[serde(default)]
    pub abi: BTreeMap<String, Spanned<RawAbi>>,
    #[serde(default)]
    pub family: BTreeMap<String, Spanned<RawFamily>>,
    #[serde(default)]
    pub conversion: BTreeMap<String, Spanned<RawConversion>>,
    /// What each compute capability has (specs/hardware.toml).
    #[serde(default)]
    pub hardware: Vec<Spanned<RawHardware>>,
    pub tier: Option<Spanned<RawTier>>,
    #[serde(default)]
    pub tile: Vec<Spanned<RawTile>>,
    #[serde(default)]
    pub route: Vec<Spanned<RawRoute>>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawShape {
    pub m: u32,
    pub n: u32,
    pub k: u32,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawInstruction {
    #[serde(default)]
    pub doc: String,
    pub shape: RawShape,
    pub min_compute_capability: [u32; 2],
    pub max_compute_capability: Option<[u32; 2]>,
    #[serde(default)]
    pub arch_specific: bool,
    /// The operand (A and B) dtypes it takes; all when omitted.
    pub inputs: Option<Vec<String>>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawContract {
    pub doc: String,
    /// The accumulator type every kernel of the contract reduces in; `f32` when omitted.
    pub accumulator: Option<String>,
    /// The operand (A and B) dtypes the contract is defined for; all when omitted.
    pub inputs: Option<Vec<String>>,
    /// The k of one step of its chain; 1 when omitted.
    pub k_step: Option<u32>,
    /// K cut into chunks of this many k; none when omitted.
    pub chunk: Option<u32>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawAbi {
    #[serde(default)]
    pub doc: String,
    pub fields: Vec<Spanned<RawAbiField>>,
    /// The bits of the struct's `flags` field, each set when its source is present.
    #[serde(default)]
    pub flags: Vec<Spanned<RawAbiFlag>>,
}

/// One bit of an ABI's `flags` field (`{ name = "bias", bit = 0, set = "bias.ptr" }`).
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawAbiFlag {
    pub name: String,
    pub bit: u32,
    /// The source whose presence sets the bit (`bias.ptr`, `c.tensor_map`).
    pub set: String,
    #[serde(default)]
    pub doc: String,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawAbiField {
    pub name: String,
    #[serde(rename = "type")]
    pub ty: String,
    /// What fills the field (`a.tensor_map`, `m`, ...); the field's name when omitted.
    pub bind: Option<String>,
    #[serde(default)]
    pub doc: String,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawFamily {
    #[serde(default)]
    pub doc: String,
    /// The kernel template (its kind manifest says the rest: header, parameters, grid, ...).
    pub template: String,
    pub contract: String,
    pub policy: String,
    pub abi: String,
    pub instruction: String,
    /// Op name to the dtype triples the family instantiates for it.
    pub variants: BTreeMap<String, Spanned<Vec<Spanned<String>>>>,
    /// A copy each launch makes before the kernel (`transpose-a`: tn kernels that read A
    /// transposed, as nn); none when absent.
    pub prepass: Option<String>,
}

/// An elementwise conversion kernel (the half fallback's upcast and downcast, the repack) or
/// a row kernel (`row_op`).
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawConversion {
    #[serde(default)]
    pub doc: String,
    pub template: String,
    pub abi: String,
    pub threads: u32,
    /// `from.to` dtype pairs, e.g. `bf16.f32`.
    pub variants: Vec<String>,
    /// A row kernel's op (`softmax`, `log_softmax`, `mean`); none for an elementwise one.
    pub row_op: Option<String>,
    /// A row kernel's contract, `row-t<threads>` (its reduction tree).
    pub contract: Option<String>,
    /// A row kernel's warp-path lengths: one kernel each, rows of at most that many columns
    /// a warp a row (default: `[512]`).
    pub warp_cols: Option<Vec<u32>>,
    /// A row kernel's blocks an SM, one a warp-path length: each kernel is built to hold that
    /// many blocks at once (`__launch_bounds__(threads, n)`, which caps its registers).
    pub min_blocks: Option<Vec<u32>>,
    /// How a row kernel's warp path folds the block's warps it plays: `butterflies` (the
    /// default: one butterfly a warp, the fewest live registers) or `halving` (one recursive
    /// halving over them: fewer shuffles, more registers). The same tree either way.
    pub warp_fold: Option<String>,
}

/// One compute capability's limits (`[[hardware]]`).
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawHardware {
    pub compute_capability: [u32; 2],
    pub shared_bytes_per_block: u64,
    pub shared_bytes_per_sm: u64,
    pub reserved_shared_bytes_per_block: u64,
    pub registers_per_sm: u32,
    pub registers_per_block: u32,
    pub registers_per_thread: u32,
    pub threads_per_sm: u32,
    pub threads_per_block: u32,
    pub blocks_per_sm: u32,
}

/// A `[tier]`. With `base`, every key but `name` may be left out and comes from the base tier;
/// without, `gencode`, `compute_capability`, `max_shared_bytes` and `families` are required
/// (checked when the tier is resolved, so the error names the key).
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawTier {
    pub name: String,
    /// A tier this one copies: its keys, tiles and routes, then this file's changes.
    pub base: Option<String>,
    pub doc: Option<String>,
    pub gencode: Option<String>,
    pub compute_capability: Option<[u32; 2]>,
    pub max_shared_bytes: Option<u64>,
    /// At most the hardware's; the hardware's when omitted.
    pub max_registers_per_thread: Option<u32>,
    pub max_threads_per_block: Option<u32>,
    pub registers_per_block: Option<u32>,
    pub families: Option<Vec<String>>,
    /// Files of `[[route]]` tables alone (tuned routes, `gemm-aot tune`), relative to this
    /// file, whose routes come before the tier's own. Never taken from a base: routes tuned
    /// on one device are that tier's.
    pub routes_files: Option<Vec<Spanned<String>>>,
    /// Kernels (`family.tile`) that run strided batches in one launch, for routes whose
    /// kernels are not batched themselves (docs/specs.md, "Batch kernels").
    pub batch_kernels: Option<Vec<String>>,
}

/// A routes file (`routes_files` of a tier, or one a build adds): `[[route]]` tables and
/// nothing else, in the syntax of a tier file's routes.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawRoutesFile {
    #[serde(default)]
    pub route: Vec<Spanned<RawRoute>>,
}

/// A `[[tile]]`: the common keys, and the parameters of the family's kind (checked against
/// the kind's manifest when the family is known, so they are collected here as written). In a
/// tier with a base, a tile of a base tile's family and name changes that tile (keys left out
/// keep the base's), and `replaces = "old"` renames base tile `old` (routes follow it).
#[derive(Debug, Deserialize)]
pub struct RawTile {
    pub family: String,
    pub name: String,
    pub replaces: Option<String>,
    pub m: Option<u32>,
    pub n: Option<u32>,
    pub k: Option<u32>,
    /// Compiled for `gemm-aot tune` to choose among: no warning when no route names it.
    #[serde(default)]
    pub tuning_candidate: bool,
    /// The wave model's cost of one tile, in picoseconds per unit of k: how long one CTA
    /// spends on one tile of this kernel per k on the tier's GPU (routes' `wave_fit`).
    pub tile_ps_per_k: Option<u32>,
    /// Every other key: the parameters of the family's kind (its manifest's `[[param]]`s).
    #[serde(flatten)]
    pub params: BTreeMap<String, toml::Value>,
}

/// A value that may be written as one string or a list of strings.
#[derive(Clone, Debug, Deserialize)]
#[serde(untagged)]
pub enum OneOrMany {
    One(String),
    Many(Vec<String>),
}

impl OneOrMany {
    pub fn items(&self) -> Vec<&str> {
        match self {
            OneOrMany::One(s) => vec![s.as_str()],
            OneOrMany::Many(v) => v.iter().map(String::as_str).collect(),
        }
    }
}

#[derive(Clone, Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawRange {
    pub min: Option<u64>,
    pub max: Option<u64>,
}

#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawRoute {
    pub policy: String,
    pub op: OneOrMany,
    /// Dtype triples, or `"any"`: every triple the named kernel's family has for the op.
    pub dtype: OneOrMany,
    pub m: Option<RawRange>,
    pub n: Option<RawRange>,
    pub k: Option<RawRange>,
    /// `family.tile`, e.g. `fma.thin`.
    pub kernel: String,
    /// `family.tile` of a plain-load kernel of the same contract, used when TMA cannot take
    /// an operand; routes to TMA kernels only (and they must have it).
    pub unaligned: Option<String>,
    /// `family.tile` kernels of the route's contract that may run instead of `kernel`: each
    /// call runs whichever of them and `kernel` the wave model says finishes first.
    pub wave_fit: Option<Vec<String>>,
}

/// A parsed file with what is needed to turn spans into lines.
pub(crate) struct ParsedFile<'a> {
    pub name: String,
    pub text: &'a str,
    pub raw: RawFile,
    pub lines: LineIndex,
}

impl<'a> ParsedFile<'a> {
    pub fn new(name: String, text: &'a str, raw: RawFile) -> Self {
        ParsedFile {
            name,
            text,
            raw,
            lines: LineIndex::new(text),
        }
    }

    pub fn at(&self, span: std::ops::Range<usize>) -> Location {
        Location {
            file: self.name.clone(),
            line: self.lines.line(span.start),
        }
    }
}

/// The offsets of a text's newlines, to turn byte offsets into lines in O(log n): a tier with
/// a routes file locates hundreds of items, and counting from the start for each was most of
/// a debug build's spec load.
pub(crate) struct LineIndex(Vec<usize>);

impl LineIndex {
    pub fn new(text: &str) -> Self {
        LineIndex(
            text.bytes()
                .enumerate()
                .filter(|&(_, b)| b == b'\n')
                .map(|(i, _)| i)
                .collect(),
        )
    }

    /// 1-based line of a byte offset (clamped to the text), as [`line_of`].
    pub fn line(&self, offset: usize) -> usize {
        self.0.partition_point(|&nl| nl < offset) + 1
    }
}

/// 1-based line of a byte offset (clamped to the text).
pub fn line_of(text: &str, offset: usize) -> usize {
    let end = offset.min(text.len());
    text.as_bytes()[..end]
        .iter()
        .filter(|&&b| b == b'\n')
        .count()
        + 1
}

#[cfg(test)]
mod tests {
    use super::{line_of, LineIndex};

    #[test]
    fn the_line_index_gives_line_of_at_every_offset() {
        for text in ["", "a", "\n", "a\nb\n\nc", "\n\nx\n"] {
            let lines = LineIndex::new(text);
            for offset in 0..text.len() + 3 {
                assert_eq!(
                    lines.line(offset),
                    line_of(text, offset),
                    "{text:?} at {offset}"
                );
            }
        }
    }
}
