//! The validated spec model: what the generator plans from. Every value here has passed the
//! rules in `validate`; cross-references (family of a tile, kernel of a route) resolve.

use crate::vocab::{Dtype, DtypeTriple, Op, Policy};
use crate::Location;
use std::collections::BTreeMap;

/// An MMA-like instruction a family is built on, and where it exists.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Instruction {
    pub name: String,
    pub doc: String,
    /// The instruction's own m, n, k: tiles must be multiples of it.
    pub shape: Shape,
    pub min_cc: (u32, u32),
    pub max_cc: Option<(u32, u32)>,
    /// Only on an arch-specific target such as `sm_90a`.
    pub arch_specific: bool,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Shape {
    pub m: u32,
    pub n: u32,
    pub k: u32,
}

/// A numeric contract: the exact reduction order a family promises for every output element.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Contract {
    pub name: String,
    pub doc: String,
    /// What every kernel of the contract accumulates in (the `acc` of its dtype triples).
    pub accumulator: Dtype,
}

/// Scalar type of an ABI field. Pointers are device addresses (`u64` on the Rust side).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FieldType {
    ConstPtr,
    MutPtr,
    I32,
    U32,
    I64,
    U64,
    F32,
}

impl FieldType {
    pub const ALL: [(&'static str, FieldType); 7] = [
        ("const_ptr", FieldType::ConstPtr),
        ("mut_ptr", FieldType::MutPtr),
        ("i32", FieldType::I32),
        ("u32", FieldType::U32),
        ("i64", FieldType::I64),
        ("u64", FieldType::U64),
        ("f32", FieldType::F32),
    ];

    pub fn size(self) -> u64 {
        match self {
            FieldType::ConstPtr | FieldType::MutPtr | FieldType::I64 | FieldType::U64 => 8,
            FieldType::I32 | FieldType::U32 | FieldType::F32 => 4,
        }
    }

    /// Natural alignment, as both C and `#[repr(C)]` Rust lay it out.
    pub fn align(self) -> u64 {
        self.size()
    }

    pub fn is_pointer(self) -> bool {
        matches!(self, FieldType::ConstPtr | FieldType::MutPtr)
    }
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AbiField {
    pub name: String,
    pub ty: FieldType,
    pub doc: String,
    /// Byte offset in the struct, computed with C layout rules.
    pub offset: u64,
}

/// A by-value kernel argument struct, generated for both CUDA and Rust.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Abi {
    pub name: String,
    pub doc: String,
    pub fields: Vec<AbiField>,
    pub size: u64,
    pub align: u64,
}

/// How operand tiles are held in shared memory; decides the shared-memory budget of a tile.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Staging {
    /// Converted to f32 on load (4 bytes an element).
    F32,
    /// Kept in the operand's storage type.
    Operand,
}

/// One term of a family's shared-memory need, per block.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SharedTerm {
    /// `stages` copies of the A and B k-tiles: `stages * (m*k + k*n) * staging bytes`.
    Operands,
    /// The f32 running totals of a tile of C across K chunks: `m * n * 4`.
    Totals,
    /// One f32 partial per output element and parallel K chunk: `k_split * m * n * 4`.
    Partials,
    /// Per parallel K chunk (one warp each), `stages` slices of 32 k of A and B streamed by
    /// cp.async: `stages * k_split * 32 * (m + n) * staging bytes`.
    Slices,
}

impl SharedTerm {
    pub const ALL: [(&'static str, SharedTerm); 4] = [
        ("operands", SharedTerm::Operands),
        ("totals", SharedTerm::Totals),
        ("partials", SharedTerm::Partials),
        ("slices", SharedTerm::Slices),
    ];
}

/// How a family's grid covers the output.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum GridKind {
    /// One block per `tile.m x tile.n` output tile: grid = (ceil(m / tile.m), ceil(n / tile.n)).
    Tiles,
}

/// A kernel template plus the numeric contract it implements.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Family {
    pub name: String,
    pub doc: String,
    /// C++ function template in `header` that the generator instantiates.
    pub template: String,
    /// Path of the template header, relative to `kernels-templates/`.
    pub header: String,
    pub contract: String,
    pub policy: Policy,
    pub abi: String,
    pub instruction: String,
    pub staging: Staging,
    /// What it keeps in shared memory (summed for the tile's budget).
    pub shared: Vec<SharedTerm>,
    pub grid: GridKind,
    /// The (op, dtype) pairs the family instantiates, in spec order.
    pub variants: Vec<(Op, DtypeTriple)>,
    pub location: Location,
}

impl Family {
    pub fn has_variant(&self, op: Op, dtype: DtypeTriple) -> bool {
        self.variants.contains(&(op, dtype))
    }
}

/// What a conversion kernel does in the half fallback.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ConversionKind {
    /// Half to f32 (exact), for the fallback's f32 GEMM inputs.
    InputUpcast,
    /// f32 to half, rounding to nearest even once, for the fallback's output.
    OutputDowncast,
}

impl ConversionKind {
    /// The kind of a `from -> to` conversion: half to f32 widens, f32 to half narrows;
    /// anything else is not a conversion the fallback uses.
    pub fn of(from: Dtype, to: Dtype) -> Option<ConversionKind> {
        match (from, to) {
            (Dtype::Bf16 | Dtype::F16, Dtype::F32) => Some(ConversionKind::InputUpcast),
            (Dtype::F32, Dtype::Bf16 | Dtype::F16) => Some(ConversionKind::OutputDowncast),
            _ => None,
        }
    }
}

/// An elementwise conversion of a strided matrix, built for every tier.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Conversion {
    pub name: String,
    pub doc: String,
    /// C++ class template in `header`, instantiated as `template<From, To, threads>`.
    pub template: String,
    /// Path of the template header, relative to `kernels-templates/`.
    pub header: String,
    pub abi: String,
    /// Threads a block.
    pub threads: u32,
    /// The (from, to) pairs it instantiates, in spec order.
    pub variants: Vec<(Dtype, Dtype)>,
    pub location: Location,
}

/// A tile of one family on one tier.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Tile {
    pub family: String,
    pub name: String,
    pub m: u32,
    pub n: u32,
    pub k: u32,
    pub stages: u32,
    pub thread_m: u32,
    pub thread_n: u32,
    /// K chunks a block reduces in parallel (decode kernels); 1 otherwise.
    pub k_split: u32,
    /// Occupancy the compiler must allow (caps registers at registers_per_block / (threads * this)).
    pub min_blocks: Option<u32>,
    pub location: Location,
}

impl Tile {
    /// Threads per block: one per `thread_m x thread_n` micro-tile and parallel K chunk.
    pub fn threads(&self) -> u32 {
        (self.m / self.thread_m.max(1))
            .saturating_mul(self.n / self.thread_n.max(1))
            .saturating_mul(self.k_split.max(1))
    }

    /// `m16n64k32`: the shape part of kernel names.
    pub fn shape_ident(&self) -> String {
        format!("m{}n{}k{}", self.m, self.n, self.k)
    }
}

/// An inclusive range of one dimension; `max = None` is unbounded.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DimRange {
    pub min: u64,
    pub max: Option<u64>,
}

impl DimRange {
    pub const ANY: DimRange = DimRange { min: 0, max: None };

    pub fn contains(&self, v: u64) -> bool {
        v >= self.min && self.max.is_none_or(|max| v <= max)
    }

    pub fn is_any(&self) -> bool {
        *self == DimRange::ANY
    }
}

impl std::fmt::Display for DimRange {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.max {
            None => write!(f, ">= {}", self.min),
            Some(max) if self.min == 0 => write!(f, "<= {max}"),
            Some(max) => write!(f, "{}..={max}", self.min),
        }
    }
}

/// One routing rule after expansion: a single (policy, op, dtype), conditions, and a kernel.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Route {
    /// 1-based position of the `[[route]]` block in its tier file.
    pub rule: u32,
    pub policy: Policy,
    pub op: Op,
    pub dtype: DtypeTriple,
    pub m: DimRange,
    pub n: DimRange,
    pub k: DimRange,
    pub family: String,
    pub tile: String,
    pub location: Location,
}

impl Route {
    pub fn is_catch_all(&self) -> bool {
        self.m.is_any() && self.n.is_any() && self.k.is_any()
    }

    pub fn matches(&self, m: u64, n: u64, k: u64) -> bool {
        self.m.contains(m) && self.n.contains(n) && self.k.contains(k)
    }

    pub fn kernel_ref(&self) -> String {
        format!("{}.{}", self.family, self.tile)
    }
}

/// One SM tier: a compile target, its budgets, its tiles and its route table.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Tier {
    pub name: String,
    pub doc: String,
    pub gencode: String,
    pub cc: (u32, u32),
    /// Built for an `sm_XYa` target: runs only on exactly this compute capability.
    pub arch_specific: bool,
    pub max_shared_bytes: u64,
    pub max_registers_per_thread: u32,
    pub max_threads_per_block: u32,
    pub registers_per_block: u32,
    pub families: Vec<String>,
    pub tiles: Vec<Tile>,
    /// Expanded routes, in spec order (first match wins within a (policy, op, dtype)).
    pub routes: Vec<Route>,
    /// The spec file this tier came from, relative to the spec folder.
    pub file: String,
    pub location: Location,
}

impl Tier {
    pub fn tile(&self, family: &str, name: &str) -> Option<&Tile> {
        self.tiles
            .iter()
            .find(|t| t.family == family && t.name == name)
    }

    /// Routes for one (policy, op, dtype), in match order.
    pub fn routes_for(&self, policy: Policy, op: Op, dtype: DtypeTriple) -> Vec<&Route> {
        self.routes
            .iter()
            .filter(|r| r.policy == policy && r.op == op && r.dtype == dtype)
            .collect()
    }

    /// The first route that matches, as the generated dispatch picks it.
    pub fn select(
        &self,
        policy: Policy,
        op: Op,
        dtype: DtypeTriple,
        m: u64,
        n: u64,
        k: u64,
    ) -> Option<&Route> {
        self.routes_for(policy, op, dtype)
            .into_iter()
            .find(|r| r.matches(m, n, k))
    }

    /// Every (policy, op, dtype) this tier routes, sorted.
    pub fn served(&self) -> Vec<(Policy, Op, DtypeTriple)> {
        let mut v: Vec<_> = self
            .routes
            .iter()
            .map(|r| (r.policy, r.op, r.dtype))
            .collect();
        v.sort();
        v.dedup();
        v
    }
}

/// A whole validated spec folder.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SpecSet {
    pub instructions: BTreeMap<String, Instruction>,
    pub contracts: BTreeMap<String, Contract>,
    pub abis: BTreeMap<String, Abi>,
    pub families: BTreeMap<String, Family>,
    /// Conversion kernels, built for every tier.
    pub conversions: BTreeMap<String, Conversion>,
    /// Sorted by name.
    pub tiers: Vec<Tier>,
}

impl SpecSet {
    pub fn tier(&self, name: &str) -> Option<&Tier> {
        self.tiers.iter().find(|t| t.name == name)
    }

    /// The tier that serves a device of compute capability `cc`: an arch-specific tier of
    /// exactly that capability, else the portable tier of the same major version with the
    /// highest minor not above the device's (cubins run on later minors of their major).
    pub fn tier_for_capability(&self, cc: (u32, u32)) -> Option<&Tier> {
        serving_tier(&self.tiers, cc)
    }

    pub fn family(&self, name: &str) -> Option<&Family> {
        self.families.get(name)
    }

    /// Keep only the named tiers (for `--tier`); the names must exist.
    pub fn retain_tiers(&mut self, names: &[String]) -> Result<(), String> {
        if let Some(missing) = names.iter().find(|n| self.tier(n).is_none()) {
            let known: Vec<&str> = self.tiers.iter().map(|t| t.name.as_str()).collect();
            return Err(format!(
                "no tier named `{missing}`; the specs define {}",
                known.join(", ")
            ));
        }
        if !names.is_empty() {
            self.tiers.retain(|t| names.contains(&t.name));
        }
        Ok(())
    }
}

/// The tier of `tiers` that serves a device of compute capability `cc`: an arch-specific tier
/// of exactly that capability, else the portable tier of the same major version with the
/// highest minor not above the device's (cubins run on later minors of their major).
pub fn serving_tier<'a>(
    tiers: impl IntoIterator<Item = &'a Tier> + Clone,
    cc: (u32, u32),
) -> Option<&'a Tier> {
    tiers
        .clone()
        .into_iter()
        .find(|t| t.arch_specific && t.cc == cc)
        .or_else(|| {
            tiers
                .into_iter()
                .filter(|t| !t.arch_specific && t.cc.0 == cc.0 && t.cc.1 <= cc.1)
                .max_by_key(|t| t.cc.1)
        })
}
