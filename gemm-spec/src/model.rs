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
    /// The operand dtypes it is defined for (every dtype when the spec leaves `inputs` out): a
    /// family's variants must take one of them, and the half fallback may widen half inputs
    /// into an f32 kernel only when its contract lists them.
    pub inputs: Vec<Dtype>,
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

/// An operand of a GEMM, as a tensor map describes it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum MapOperand {
    A,
    B,
    C,
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
}

/// The value type of a bind source (the type of its `ArgSources` field).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SourceType {
    /// A device address (`u64`).
    Pointer,
    /// `TensorMap`.
    TensorMap,
    I32,
    U32,
    F32,
}

impl BindSource {
    /// (spec word, source, `ArgSources` field) of every source; aliases after the canonical word.
    pub const ALL: [(&'static str, BindSource, &'static str); 21] = [
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
    /// Slack to align the first stage to 1024 bytes (128-byte TMA swizzle atoms): 1024.
    Alignment,
    /// Two 8-byte mbarriers (full, empty) a stage: `stages * 16`.
    Barriers,
    /// One k-step of A and B held k-contiguous, rows padded by 8 elements:
    /// `(m + n) * (k + 8) * staging bytes` (mma_gemm).
    PaddedStep,
    /// The TMA-store epilogue's staging of C (wgmma_tma_gemm): each consumer warpgroup writes
    /// its 64 rows in rounds of `round` boxes of 64 rows x 128 bytes, `round` = 2 when
    /// `n / (128 / size of C)` is even, else 1: `consumers * round * 64 * 128`.
    CStaging,
}

impl SharedTerm {
    pub const ALL: [(&'static str, SharedTerm); 8] = [
        ("operands", SharedTerm::Operands),
        ("totals", SharedTerm::Totals),
        ("partials", SharedTerm::Partials),
        ("slices", SharedTerm::Slices),
        ("alignment", SharedTerm::Alignment),
        ("barriers", SharedTerm::Barriers),
        ("padded_step", SharedTerm::PaddedStep),
        ("c_staging", SharedTerm::CStaging),
    ];

    pub fn as_str(self) -> &'static str {
        SharedTerm::ALL
            .iter()
            .find(|(_, t)| *t == self)
            .map_or("", |(s, _)| s)
    }
}

/// Bytes of `SharedTerm::Alignment`.
pub const SHARED_ALIGNMENT_SLACK: u64 = 1024;
/// Bytes of mbarriers a stage (`SharedTerm::Barriers`): a full and an empty barrier of 8 bytes.
pub const BARRIER_BYTES_PER_STAGE: u64 = 16;

/// How a family's grid covers the output.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum GridKind {
    /// One block per `tile.m x tile.n` output tile: grid = (ceil(m / tile.m), ceil(n / tile.n)).
    Tiles,
    /// As many CTAs as fit on the device at once (whole clusters), each walking output tiles
    /// `blockIdx.x, + gridDim.x, ...` in a fixed order (docs/tensor-core.md §5). Only for
    /// templates with a persistent scheduler.
    Persistent,
}

impl GridKind {
    pub fn as_str(self) -> &'static str {
        match self {
            GridKind::Tiles => "tiles",
            GridKind::Persistent => "persistent",
        }
    }
}

/// What kind of kernel a template is; decides a tile's parameters (`TileParams`), its threads
/// and which TMA maps it reads. Given by the family's template (`templates::KNOWN`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum TileKind {
    /// Scalar FMA templates (`fma_gemm`, `fma_decode_gemm`, `fma_decode_staged`).
    Scalar,
    /// `wgmma_tma_gemm`: wgmma, TMA ring, producer + consumer warpgroups, clusters, persistent.
    WgmmaTma,
    /// `mma_decode_tma`: mma.sync m16n8k16 fed by a TMA ring; 16 rows a CTA.
    MmaDecodeTma,
    /// `mma_gemm`: mma.sync m16n8k16 from plain predicated loads (no TMA).
    MmaGemm,
    /// `mma_async_gemm`: mma.sync m16n8k16 from ldmatrix, a cp.async pipeline (sm_80 and later).
    MmaAsync,
}

impl TileKind {
    pub fn as_str(self) -> &'static str {
        match self {
            TileKind::Scalar => "scalar",
            TileKind::WgmmaTma => "wgmma_tma",
            TileKind::MmaDecodeTma => "mma_decode_tma",
            TileKind::MmaGemm => "mma_gemm",
            TileKind::MmaAsync => "mma_async",
        }
    }

    /// The tile keys of the kind beyond `family`, `name`, `m`, `n`, `k`.
    pub fn keys(self) -> &'static [&'static str] {
        match self {
            TileKind::Scalar => &["stages", "thread_m", "thread_n", "k_split", "min_blocks"],
            TileKind::WgmmaTma => &["stages", "consumers", "cluster_m", "scheduler"],
            TileKind::MmaDecodeTma => &["stages"],
            TileKind::MmaGemm => &["stages", "warps_m", "warps_n"],
            TileKind::MmaAsync => &["stages", "warps_m", "warps_n", "min_blocks"],
        }
    }

    /// Whether its kernels load A and B through TMA tensor maps (and so need an `unaligned`
    /// kernel for operands TMA cannot take).
    pub fn uses_tma(self) -> bool {
        matches!(self, TileKind::WgmmaTma | TileKind::MmaDecodeTma)
    }

    /// How its kernels read A and B when they need 16-byte aligned operands (base addresses
    /// and leading dimensions in bytes multiples of 16), so a route to them needs an
    /// `unaligned` kernel; `None` when any alignment runs at full speed.
    pub fn operand_alignment(self) -> Option<&'static str> {
        match self {
            TileKind::WgmmaTma | TileKind::MmaDecodeTma => Some("loads A and B through TMA"),
            TileKind::MmaAsync => Some("copies A and B in 16-byte cp.async chunks"),
            TileKind::Scalar | TileKind::MmaGemm => None,
        }
    }

    /// Whether its kernels walk tiles persistently (`grid = "persistent"`).
    pub fn persistent(self) -> bool {
        self == TileKind::WgmmaTma
    }

    /// Whether its template has `kClusterM` (the tensor-core templates).
    pub fn has_cluster_constant(self) -> bool {
        self != TileKind::Scalar
    }
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
    /// The kind of its template: what its tiles' parameters are.
    pub kind: TileKind,
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

/// A tile of one family on one tier: the common fields, and the parameters of its family's
/// kind.
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
    pub params: TileParams,
    pub location: Location,
}

/// The parameters of a tile, by its family's kind.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TileParams {
    Scalar(ScalarParams),
    WgmmaTma(WgmmaTmaParams),
    MmaDecodeTma(MmaDecodeTmaParams),
    MmaGemm(MmaGemmParams),
    MmaAsync(MmaAsyncParams),
}

/// Scalar FMA tiles: keys `stages`, `thread_m`, `thread_n`, `k_split` (each 1 when omitted)
/// and `min_blocks` (optional).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ScalarParams {
    pub stages: u32,
    /// Rows of C a thread computes.
    pub thread_m: u32,
    /// Columns of C a thread computes.
    pub thread_n: u32,
    /// K chunks a block reduces in parallel (decode kernels); 1 otherwise.
    pub k_split: u32,
    /// Occupancy the compiler must allow (caps registers at registers_per_block / (threads * this)).
    pub min_blocks: Option<u32>,
}

/// How a persistent kernel orders its tiles.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Scheduler {
    /// Each CTA walks tiles `blockIdx.x, + gridDim.x, ...` in groups of 8 tile rows.
    Persistent,
}

/// `wgmma_tma_gemm` tiles: keys `stages`, `consumers`, `cluster_m` (1 when omitted),
/// `scheduler` (`"persistent"` when omitted).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct WgmmaTmaParams {
    /// TMA ring stages of `k` (each an A and a B box set).
    pub stages: u32,
    /// Consumer warpgroups, 64 rows of the tile each (m = 64 * consumers).
    pub consumers: u32,
    /// CTAs a cluster along M (B multicast to each).
    pub cluster_m: u32,
    pub scheduler: Scheduler,
}

/// `mma_decode_tma` tiles: key `stages`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MmaDecodeTmaParams {
    pub stages: u32,
}

/// `mma_gemm` tiles: keys `stages` (1 when omitted; 2 keeps the next k-step's loads in flight
/// in registers), `warps_m`, `warps_n`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MmaGemmParams {
    pub stages: u32,
    /// Warps along M; each covers m / warps_m rows.
    pub warps_m: u32,
    /// Warps along N; each covers n / warps_n columns.
    pub warps_n: u32,
}

/// `mma_async_gemm` tiles: keys `stages` (cp.async stages, all given), `warps_m`, `warps_n`,
/// `min_blocks` (optional).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MmaAsyncParams {
    pub stages: u32,
    /// Warps along M; each covers m / warps_m rows.
    pub warps_m: u32,
    /// Warps along N; each covers n / warps_n columns.
    pub warps_n: u32,
    /// Occupancy the compiler must allow (mma.sync hides its latency with warps of other blocks).
    pub min_blocks: Option<u32>,
}

impl TileParams {
    pub fn kind(&self) -> TileKind {
        match self {
            TileParams::Scalar(_) => TileKind::Scalar,
            TileParams::WgmmaTma(_) => TileKind::WgmmaTma,
            TileParams::MmaDecodeTma(_) => TileKind::MmaDecodeTma,
            TileParams::MmaGemm(_) => TileKind::MmaGemm,
            TileParams::MmaAsync(_) => TileKind::MmaAsync,
        }
    }
}

impl Tile {
    /// Threads per block, by kind: scalar, one per `thread_m x thread_n` micro-tile and
    /// parallel K chunk; wgmma_tma, 128 per warpgroup (one producer and `consumers`);
    /// mma_decode_tma, one warp per 8 columns and a producer warp; mma_gemm and mma_async,
    /// `32 * warps_m * warps_n`.
    pub fn threads(&self) -> u32 {
        match &self.params {
            TileParams::Scalar(p) => (self.m / p.thread_m.max(1))
                .saturating_mul(self.n / p.thread_n.max(1))
                .saturating_mul(p.k_split.max(1)),
            TileParams::WgmmaTma(p) => 128u32.saturating_mul(p.consumers.saturating_add(1)),
            TileParams::MmaDecodeTma(_) => 32u32.saturating_mul(self.n / 8).saturating_add(32),
            TileParams::MmaGemm(p) => 32u32.saturating_mul(p.warps_m).saturating_mul(p.warps_n),
            TileParams::MmaAsync(p) => 32u32.saturating_mul(p.warps_m).saturating_mul(p.warps_n),
        }
    }

    pub fn kind(&self) -> TileKind {
        self.params.kind()
    }

    /// Shared-memory stages (every kind has them).
    pub fn stages(&self) -> u32 {
        match &self.params {
            TileParams::Scalar(p) => p.stages,
            TileParams::WgmmaTma(p) => p.stages,
            TileParams::MmaDecodeTma(p) => p.stages,
            TileParams::MmaGemm(p) => p.stages,
            TileParams::MmaAsync(p) => p.stages,
        }
    }

    /// K chunks a block reduces in parallel (1 for every kind but scalar decode tiles).
    pub fn k_split(&self) -> u32 {
        match &self.params {
            TileParams::Scalar(p) => p.k_split,
            _ => 1,
        }
    }

    /// `__launch_bounds__`'s second value: the spec's `min_blocks` (scalar, mma_async), 1 for the
    /// persistent wgmma kernels (one CTA an SM), none otherwise.
    pub fn min_blocks(&self) -> Option<u32> {
        match &self.params {
            TileParams::Scalar(p) => p.min_blocks,
            TileParams::MmaAsync(p) => p.min_blocks,
            TileParams::WgmmaTma(_) => Some(1),
            _ => None,
        }
    }

    /// CTAs a cluster (x, y, z): (cluster_m, 1, 1) for wgmma_tma tiles, else (1, 1, 1).
    pub fn cluster(&self) -> (u32, u32, u32) {
        match &self.params {
            TileParams::WgmmaTma(p) => (p.cluster_m, 1, 1),
            _ => (1, 1, 1),
        }
    }

    /// `m16n64k32`: the shape part of kernel names.
    pub fn shape_ident(&self) -> String {
        format!("m{}n{}k{}", self.m, self.n, self.k)
    }

    /// One line for people: `64x64x8, 2 stage(s), thread tile 4x4, 1 K chunk(s) in parallel`.
    pub fn describe(&self) -> String {
        let shape = format!("{}x{}x{}", self.m, self.n, self.k);
        match &self.params {
            TileParams::Scalar(p) => format!(
                "{shape}, {} stage(s), thread tile {}x{}, {} K chunk(s) in parallel",
                p.stages, p.thread_m, p.thread_n, p.k_split
            ),
            TileParams::WgmmaTma(p) => format!(
                "{shape}, {} stage(s), {} consumer warpgroup(s), cluster of {} along M, persistent scheduler",
                p.stages, p.consumers, p.cluster_m
            ),
            TileParams::MmaDecodeTma(p) => format!(
                "{shape}, {} stage(s), {} consumer warp(s) and a producer warp",
                p.stages,
                self.n / 8
            ),
            TileParams::MmaGemm(p) => format!(
                "{shape}, {} stage(s), {}x{} warps",
                p.stages, p.warps_m, p.warps_n
            ),
            TileParams::MmaAsync(p) => format!(
                "{shape}, {} cp.async stage(s), {}x{} warps",
                p.stages, p.warps_m, p.warps_n
            ),
        }
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
    /// The kernel used when the route's kernel cannot take the operands (routes to kinds that
    /// need 16-byte aligned operands only: TMA, cp.async): a plain-load tile of the same
    /// contract.
    pub unaligned: Option<TileRef>,
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
