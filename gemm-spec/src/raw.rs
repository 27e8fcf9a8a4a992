//! The TOML shape of a spec file, exactly as written (serde), before any cross-file checks.
//!
//! Every table rejects unknown keys. Items that errors must point at are `Spanned`, so a
//! validation error can name the line.

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
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawContract {
    pub doc: String,
    /// The accumulator type every kernel of the contract reduces in; `f32` when omitted.
    pub accumulator: Option<String>,
    /// The operand (A and B) dtypes the contract is defined for; all when omitted.
    pub inputs: Option<Vec<String>>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawAbi {
    #[serde(default)]
    pub doc: String,
    pub fields: Vec<RawAbiField>,
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
    pub template: String,
    pub header: String,
    pub contract: String,
    pub policy: String,
    pub abi: String,
    pub instruction: String,
    pub staging: String,
    /// What the family keeps in shared memory: any of `operands`, `totals`, `partials`, `slices`;
    /// what its template keeps when omitted.
    pub shared: Option<Vec<String>>,
    pub grid: String,
    /// Op name to the dtype triples the family instantiates for it.
    pub variants: BTreeMap<String, Spanned<Vec<Spanned<String>>>>,
}

/// An elementwise conversion kernel (the half fallback's upcast and downcast).
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawConversion {
    #[serde(default)]
    pub doc: String,
    pub template: String,
    pub header: String,
    pub abi: String,
    pub threads: u32,
    /// `from.to` dtype pairs, e.g. `bf16.f32`.
    pub variants: Vec<String>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawTier {
    pub name: String,
    #[serde(default)]
    pub doc: String,
    pub gencode: String,
    pub compute_capability: [u32; 2],
    pub max_shared_bytes: u64,
    pub max_registers_per_thread: u32,
    #[serde(default = "default_max_threads")]
    pub max_threads_per_block: u32,
    #[serde(default = "default_registers_per_block")]
    pub registers_per_block: u32,
    pub families: Vec<String>,
}

fn default_max_threads() -> u32 {
    1024
}

fn default_registers_per_block() -> u32 {
    65536
}

/// A `[[tile]]`: the common keys, and the parameters of the family's kind (checked against
/// the kind's keys when the family is known, so they are collected here as written).
#[derive(Debug, Deserialize)]
pub struct RawTile {
    pub family: String,
    pub name: String,
    pub m: u32,
    pub n: u32,
    pub k: u32,
    /// Every other key: `stages`, `thread_m`, ... for scalar tiles, `consumers`, ... for
    /// wgmma tiles (see `model::TileKind::keys`).
    #[serde(flatten)]
    pub params: BTreeMap<String, toml::Value>,
}

/// A value that may be written as one string or a list of strings.
#[derive(Debug, Deserialize)]
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

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawRange {
    pub min: Option<u64>,
    pub max: Option<u64>,
}

#[derive(Debug, Deserialize)]
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
}
