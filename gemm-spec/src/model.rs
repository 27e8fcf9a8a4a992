//! The validated spec model: what the generator plans from. Every value here has passed the
//! rules in `resolve`; cross-references (family of a tile, kernel of a route, template of a
//! family) resolve. What a kernel template is and derives lives in its kind manifest
//! ([`crate::kinds`]), never in a Rust type of its own.

use crate::kinds::{Kind, KindLibrary};
use crate::vocab::{Dtype, DtypeTriple, Op, Policy};
use crate::Location;
/// An operand as a tensor map describes it (A, B or C).
pub use gemm_core::Operand as MapOperand;
pub use gemm_core::{ConversionKind, DimRange, GridKind, OperandPath, Prepass, RowOp};
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
    /// The operand (A and B) dtypes it takes (every dtype when the spec leaves `inputs` out).
    pub inputs: Vec<Dtype>,
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
    /// The operand dtypes it is defined for (every dtype when the spec leaves `inputs` out): a
    /// family's variants must take one of them, and the half fallback may widen half inputs
    /// into an f32 kernel only when its contract lists them.
    pub inputs: Vec<Dtype>,
    /// The k of one step of its chain (16 for tc-k16, 8 for tc-tf32-k8, 1 for a scalar chain);
    /// templates read it as `Cfg::kStepK`.
    pub k_step: u32,
    /// The K chunk its sums restart at (256 for fma-k256), 0 for none; `Cfg::kChunk`.
    pub chunk: u32,
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
    /// A TMA descriptor (`CUtensorMap`): 128 bytes, 128-byte aligned (CUDA 13's `<cuda.h>`
    /// declares it `alignas(128)`; TMA itself needs 64), passed as `__grid_constant__`;
    /// `TensorMap` on the Rust side.
    TensorMap,
}

impl FieldType {
    pub const ALL: [(&'static str, FieldType); 8] = [
        ("const_ptr", FieldType::ConstPtr),
        ("mut_ptr", FieldType::MutPtr),
        ("i32", FieldType::I32),
        ("u32", FieldType::U32),
        ("i64", FieldType::I64),
        ("u64", FieldType::U64),
        ("f32", FieldType::F32),
        ("tensor_map", FieldType::TensorMap),
    ];

    pub fn size(self) -> u64 {
        match self {
            FieldType::TensorMap => 128,
            FieldType::ConstPtr | FieldType::MutPtr | FieldType::I64 | FieldType::U64 => 8,
            FieldType::I32 | FieldType::U32 | FieldType::F32 => 4,
        }
    }

    /// Natural alignment, as both C and `#[repr(C)]` Rust lay it out.
    pub fn align(self) -> u64 {
        match self {
            FieldType::TensorMap => 128,
            other => other.size(),
        }
    }

    /// The spec word for the type (`const_ptr`, `tensor_map`, ...).
    pub fn as_str(self) -> &'static str {
        FieldType::ALL
            .iter()
            .find(|(_, t)| *t == self)
            .map_or("", |(s, _)| s)
    }

    pub fn is_pointer(self) -> bool {
        matches!(self, FieldType::ConstPtr | FieldType::MutPtr)
    }
}

/// What fills an ABI field at launch: a field of the runtime's `ArgSources` (docs/tensor-core.md
/// §3). Written in the specs as `bind = "a.tensor_map"`; omitted, the field's name.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum BindSource {
    APtr,
    BPtr,
    BiasPtr,
    CPtr,
    ATensorMap,
    BTensorMap,
    CTensorMap,
    M,
    N,
    K,
    Lda,
    Ldb,
    Ldc,
    Beta,
    Flags,
    Src,
    Dst,
    Rows,
    Cols,
    LdSrc,
    LdDst,
    ABatchStride,
    BBatchStride,
    CBatchStride,
    BiasBatchStride,
}

/// The value type of a bind source (the type of its `ArgSources` field).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SourceType {
    /// A device address (`u64`).
    Pointer,
    /// `TensorMap`.
    TensorMap,
    I32,
    /// A signed 64-bit value (a batch stride in elements).
    I64,
    U32,
    F32,
}

impl BindSource {
    /// (spec word, source, `ArgSources` field) of every source; aliases after the canonical word.
    pub const ALL: [(&'static str, BindSource, &'static str); 25] = [
        ("a.ptr", BindSource::APtr, "a"),
        ("b.ptr", BindSource::BPtr, "b"),
        ("bias.ptr", BindSource::BiasPtr, "bias"),
        ("c.ptr", BindSource::CPtr, "c"),
        ("a.tensor_map", BindSource::ATensorMap, "a_map"),
        ("b.tensor_map", BindSource::BTensorMap, "b_map"),
        ("c.tensor_map", BindSource::CTensorMap, "c_map"),
        ("m", BindSource::M, "m"),
        ("n", BindSource::N, "n"),
        ("k", BindSource::K, "k"),
        ("lda", BindSource::Lda, "lda"),
        ("ldb", BindSource::Ldb, "ldb"),
        ("ldc", BindSource::Ldc, "ldc"),
        ("beta", BindSource::Beta, "beta"),
        ("flags", BindSource::Flags, "flags"),
        ("src", BindSource::Src, "src"),
        ("dst", BindSource::Dst, "dst"),
        ("rows", BindSource::Rows, "rows"),
        ("cols", BindSource::Cols, "cols"),
        ("ld_src", BindSource::LdSrc, "ld_src"),
        ("ld_dst", BindSource::LdDst, "ld_dst"),
        ("a.batch_stride", BindSource::ABatchStride, "a_batch_stride"),
        ("b.batch_stride", BindSource::BBatchStride, "b_batch_stride"),
        ("c.batch_stride", BindSource::CBatchStride, "c_batch_stride"),
        (
            "bias.batch_stride",
            BindSource::BiasBatchStride,
            "bias_batch_stride",
        ),
    ];

    /// The batch strides a batched kind reads (grid z walks the entries).
    pub const BATCH_STRIDES: [BindSource; 4] = [
        BindSource::ABatchStride,
        BindSource::BBatchStride,
        BindSource::CBatchStride,
        BindSource::BiasBatchStride,
    ];

    /// `a.ptr` or its short form `a` (likewise `b`, `bias`, `c`), and every other word as listed.
    pub fn parse(word: &str) -> Option<BindSource> {
        let word = match word {
            "a" => "a.ptr",
            "b" => "b.ptr",
            "bias" => "bias.ptr",
            "c" => "c.ptr",
            w => w,
        };
        BindSource::ALL
            .iter()
            .find(|(w, _, _)| *w == word)
            .map(|(_, s, _)| *s)
    }

    /// The spec word (`a.tensor_map`).
    pub fn as_str(self) -> &'static str {
        BindSource::ALL
            .iter()
            .find(|(_, s, _)| *s == self)
            .map_or("", |(w, _, _)| w)
    }

    /// The `ArgSources` field that holds the value.
    pub fn field(self) -> &'static str {
        BindSource::ALL
            .iter()
            .find(|(_, s, _)| *s == self)
            .map_or("", |(_, _, f)| f)
    }

    pub fn ty(self) -> SourceType {
        use BindSource::*;
        match self {
            APtr | BPtr | BiasPtr | CPtr | Src | Dst => SourceType::Pointer,
            ATensorMap | BTensorMap | CTensorMap => SourceType::TensorMap,
            M | N | K | Lda | Ldb | Ldc | Rows | Cols | LdSrc | LdDst => SourceType::I32,
            ABatchStride | BBatchStride | CBatchStride | BiasBatchStride => SourceType::I64,
            Beta => SourceType::F32,
            Flags => SourceType::U32,
        }
    }

    /// The operand a tensor-map source describes.
    pub fn map_operand(self) -> Option<MapOperand> {
        match self {
            BindSource::ATensorMap => Some(MapOperand::A),
            BindSource::BTensorMap => Some(MapOperand::B),
            BindSource::CTensorMap => Some(MapOperand::C),
            _ => None,
        }
    }

    /// Whether a field of type `ty` can hold this source's value (exactly, or widened:
    /// pointers into `u64`, i32 into `i64`, u32 into `u64`).
    pub fn fits(self, ty: FieldType) -> bool {
        match self.ty() {
            SourceType::Pointer => {
                matches!(ty, FieldType::ConstPtr | FieldType::MutPtr | FieldType::U64)
            }
            SourceType::TensorMap => ty == FieldType::TensorMap,
            SourceType::I32 => matches!(ty, FieldType::I32 | FieldType::I64),
            SourceType::I64 => ty == FieldType::I64,
            SourceType::U32 => matches!(ty, FieldType::U32 | FieldType::U64),
            SourceType::F32 => ty == FieldType::F32,
        }
    }
}

impl std::fmt::Display for BindSource {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AbiField {
    pub name: String,
    pub ty: FieldType,
    /// What fills the field at launch.
    pub bind: BindSource,
    pub doc: String,
    /// Byte offset in the struct, computed with C layout rules.
    pub offset: u64,
    pub location: Location,
}

/// One bit of an ABI's `flags` field: set at launch exactly when its source is present (a
/// bias pointer, a C tensor map). Templates read it as `Args::kFlag<Name>`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AbiFlag {
    pub name: String,
    pub bit: u32,
    pub set: BindSource,
    pub doc: String,
    pub location: Location,
}

impl AbiFlag {
    /// `kFlagCTensorMap` for `c_tensor_map`: the constant the generated struct carries.
    pub fn constant(&self) -> String {
        format!("kFlag{}", crate::kinds::camel(&self.name))
    }
}

/// A by-value kernel argument struct, generated for both CUDA and Rust.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Abi {
    pub name: String,
    pub doc: String,
    pub fields: Vec<AbiField>,
    /// The bits of its `flags` field (empty when it has none).
    pub flags: Vec<AbiFlag>,
    pub size: u64,
    pub align: u64,
    pub location: Location,
}

impl Abi {
    /// The field bound to `source`, if any.
    pub fn field_bound_to(&self, source: BindSource) -> Option<&AbiField> {
        self.fields.iter().find(|f| f.bind == source)
    }

    /// Whether any field is a tensor map.
    pub fn has_tensor_map(&self) -> bool {
        self.fields.iter().any(|f| f.ty == FieldType::TensorMap)
    }
}

/// A kernel template plus the numeric contract it implements, and the (op, dtype) variants it
/// is built for.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Family {
    pub name: String,
    pub doc: String,
    /// The template's kind manifest: its parameters, limits, derived numbers, grid and more.
    pub kind: Kind,
    pub contract: String,
    pub policy: Policy,
    pub abi: String,
    pub instruction: String,
    /// The (op, dtype) pairs the family instantiates, in spec order.
    pub variants: Vec<(Op, DtypeTriple)>,
    /// A copy each launch makes before the kernel ([`Prepass::None`]: none).
    pub prepass: Prepass,
    pub location: Location,
}

impl Family {
    /// The layout the kernels of variant `op` read (and their template is instantiated for):
    /// nn for a tn variant whose A is copied transposed, else `op`.
    pub fn layout(&self, op: Op) -> Op {
        self.prepass.layout(op)
    }

    pub fn has_variant(&self, op: Op, dtype: DtypeTriple) -> bool {
        self.variants.contains(&(op, dtype))
    }

    /// The C++ class template the family instantiates.
    pub fn template(&self) -> &str {
        &self.kind.template
    }

    /// Its header, relative to `kernels-templates/`.
    pub fn header(&self) -> &str {
        &self.kind.header
    }

    /// How its grid covers C (its template's).
    pub fn grid(&self) -> GridKind {
        self.kind.grid
    }
}

/// An elementwise conversion of a strided matrix, or a row kernel (`row_op`), built for every
/// tier.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Conversion {
    pub name: String,
    pub doc: String,
    /// The conversion template's kind manifest (instantiated as `template<From, To, Cfg>`).
    pub kind: Kind,
    pub abi: String,
    /// Threads a block.
    pub threads: u32,
    /// The (from, to) pairs it instantiates, in spec order.
    pub variants: Vec<(Dtype, Dtype)>,
    /// A row kernel's op; `None` for an elementwise conversion.
    pub row_op: Option<RowOp>,
    /// A row kernel's contract (`row-t256`); empty for an elementwise conversion.
    pub contract: String,
    /// A row kernel's warp-path lengths, ascending: one kernel of each variant per length, the
    /// first named as the conversion, the others `_w<cols>` after it. Rows of at most that
    /// many columns take the warp path (a row held in registers); the runtime picks the
    /// shortest length a row fits, and the first for longer rows (the block path, where the
    /// fewest registers serve best). Every length computes the same tree (the contract), so
    /// the pick never changes a bit. Empty for an elementwise conversion.
    pub warp_cols: Vec<u32>,
    /// A row kernel's blocks an SM, one for each of [`warp_cols`](Self::warp_cols): the kernel
    /// of that length is built to hold that many blocks at once (`__launch_bounds__(threads,
    /// n)`, which caps its registers at the registers an SM over n blocks). Empty: no bound.
    pub min_blocks: Vec<u32>,
    /// A row kernel's warp path folds the block's warps it plays by one recursive halving
    /// (`warp_fold = "halving"`) rather than one butterfly a warp (the default). Both compute
    /// the contract's tree; the halving takes fewer shuffles and more registers.
    pub halving_fold: bool,
    /// A transposing bit copy ([`ConversionKind::Transpose`]).
    pub transpose: bool,
    pub location: Location,
}

impl Conversion {
    /// What a `from -> to` kernel of this conversion does (`None`: no pair it may build).
    pub fn kind_of(&self, from: Dtype, to: Dtype) -> Option<ConversionKind> {
        match self.row_op {
            Some(op) => Some(ConversionKind::Row(op)),
            None if self.transpose => (from == to).then_some(ConversionKind::Transpose),
            None => ConversionKind::of(from, to),
        }
    }
}

/// A tile of one family on one tier: the common fields, and the values of its template's
/// parameters (every parameter of the kind, in manifest order, defaults filled in).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Tile {
    pub family: String,
    pub name: String,
    /// Rows of C a block (CTA) computes.
    pub m: u32,
    /// Columns of C a block computes.
    pub n: u32,
    /// Reduction step (a stage), or the K chunk for the scalar decode tiles.
    pub k: u32,
    /// (parameter, value) in the kind's order; a parameter the tile left out has its default
    /// (a default below the parameter's least value, such as `min_blocks = 0`, means none).
    pub params: Vec<(String, u32)>,
    /// A candidate for `gemm-aot tune` (key `tuning_candidate`): compiled whether or not a
    /// route names it, without the unreached-kernel warning.
    pub tuning_candidate: bool,
    /// The wave model's cost (key `tile_ps_per_k`): picoseconds one CTA spends on one tile per
    /// unit of k on the tier's GPU. Required of the kernels a route's `wave_fit` names.
    pub tile_ps_per_k: Option<u32>,
    pub location: Location,
}

impl Tile {
    /// The value of a parameter.
    pub fn param(&self, name: &str) -> Option<u32> {
        self.params.iter().find(|(n, _)| n == name).map(|(_, v)| *v)
    }

    /// `m16n64k32`: the shape part of kernel names.
    pub fn shape_ident(&self) -> String {
        format!("m{}n{}k{}", self.m, self.n, self.k)
    }

    /// `64x64x8`.
    pub fn shape(&self) -> String {
        format!("{}x{}x{}", self.m, self.n, self.k)
    }
}

/// A `family.tile` reference.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct TileRef {
    pub family: String,
    pub tile: String,
}

impl std::fmt::Display for TileRef {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}.{}", self.family, self.tile)
    }
}

/// One routing rule after expansion: a single (policy, op, dtype), conditions, and a kernel.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Route {
    /// 1-based position of the `[[route]]` block in its tier's table: the routes of its
    /// routes files first, then those of its tier file (`location` says which file).
    pub rule: u32,
    pub policy: Policy,
    pub op: Op,
    pub dtype: DtypeTriple,
    pub m: DimRange,
    pub n: DimRange,
    pub k: DimRange,
    pub family: String,
    pub tile: String,
    /// The kernel used when the route's kernel cannot take the operands (routes to kinds that
    /// need 16-byte aligned operands only: TMA, cp.async): a plain-load tile of the same
    /// contract.
    pub unaligned: Option<TileRef>,
    /// Kernels of the same contract that may run instead of the route's (key `wave_fit`): the
    /// runtime runs whichever of them and the route's kernel finishes first under the wave
    /// model (rounds of tiles on the device's SMs times each tile's `tile_ps_per_k` times k).
    /// Which one runs depends on m, never how an element is computed.
    pub wave_fit: Vec<TileRef>,
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
    /// What the tier's compute capability has (`[[hardware]]`).
    pub hardware: Hardware,
    /// The tier it was derived from (`base = "..."`), if any.
    pub base: Option<String>,
    pub families: Vec<String>,
    pub tiles: Vec<Tile>,
    /// Expanded routes, in spec order (first match wins within a (policy, op, dtype)): its
    /// routes files' routes, then its own.
    pub routes: Vec<Route>,
    /// Its routes files, as named relative to the spec folder (a build's own as it named
    /// them), in merge order: those a build added, then those the tier lists.
    pub routes_files: Vec<String>,
    /// Kernels (family, tile) that run a strided batch in one launch where a route's own
    /// kernel is not batched: a batch takes the one of its route's contract, op and dtype.
    pub batch_kernels: Vec<(String, String)>,
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

/// What one compute capability has: the limits of one SM and one block (`[[hardware]]`,
/// specs/hardware.toml), against which tier budgets and tiles are checked.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Hardware {
    pub cc: (u32, u32),
    /// The most dynamic shared memory a block may opt in to.
    pub shared_bytes_per_block: u64,
    /// Shared memory of one SM, shared by its resident blocks.
    pub shared_bytes_per_sm: u64,
    /// Shared memory the driver reserves for each block beside its own.
    pub reserved_shared_bytes_per_block: u64,
    pub registers_per_sm: u32,
    pub registers_per_block: u32,
    pub registers_per_thread: u32,
    pub threads_per_sm: u32,
    pub threads_per_block: u32,
    pub blocks_per_sm: u32,
    pub location: Location,
}

/// The values a kind's formulas read for the kernel of `tile` at (`op`, `dtype`) on `tier`,
/// whose family has `contract` and `instruction`.
pub fn kernel_point<'a>(
    kind: &'a Kind,
    tile: &'a Tile,
    op: Op,
    dtype: DtypeTriple,
    contract: &Contract,
    instruction: &Instruction,
    tier: &Tier,
) -> crate::kinds::KernelPoint<'a> {
    crate::kinds::KernelPoint {
        kind,
        shape: (tile.m, tile.n, tile.k),
        params: &tile.params,
        op,
        dtype,
        k_step: contract.k_step,
        chunk: contract.chunk,
        instruction: (
            instruction.shape.m,
            instruction.shape.n,
            instruction.shape.k,
        ),
        max_threads_per_block: tier.max_threads_per_block,
        max_shared_bytes: tier.max_shared_bytes,
        max_registers_per_thread: tier.max_registers_per_thread,
    }
}

/// A whole validated spec folder.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SpecSet {
    /// The kernel templates the specs may name (their manifests).
    pub kinds: KindLibrary,
    /// What each compute capability has.
    pub hardware: Vec<Hardware>,
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

    /// Every number the kernel (tile of `tier` at `op`, `dtype`) derives from its kind's
    /// manifest: threads, shared memory, cluster, launch bounds, tensor maps, and every value
    /// its config carries. `None` when a reference does not resolve (validation rules that out).
    pub fn derive(
        &self,
        tier: &Tier,
        tile: &Tile,
        op: Op,
        dtype: DtypeTriple,
    ) -> Option<Result<crate::kinds::Derived, crate::kinds::DeriveError>> {
        let family = self.families.get(&tile.family)?;
        Some(crate::kinds::derive(&kernel_point(
            &family.kind,
            tile,
            family.layout(op),
            dtype,
            self.contracts.get(&family.contract)?,
            self.instructions.get(&family.instruction)?,
            tier,
        )))
    }

    /// The hardware entry of compute capability `cc`.
    pub fn hardware_for(&self, cc: (u32, u32)) -> Option<&Hardware> {
        self.hardware.iter().find(|h| h.cc == cc)
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
