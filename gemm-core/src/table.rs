//! The types a kernel set's generated tables are made of: tiers with their compile units,
//! contracts, kernels with their tiles, tensor maps and launch shape, conversions, routes,
//! argument structs and ptxas's report. The generator writes `static`s of these types from
//! the specs; the runtime and the planner read them.

use crate::vocab::{Dtype, DtypeTriple, Op, Policy};
use std::ops::Range;

/// Index into a set's tiers.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct TierId(pub u16);

/// Index into a set's kernels.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct KernelId(pub u16);

/// Index into a set's conversion kernels.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ConversionId(pub u16);

/// A kernel of the tables: a GEMM kernel or a conversion kernel.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum KernelRef {
    /// A GEMM kernel.
    Gemm(KernelId),
    /// A conversion kernel.
    Conversion(ConversionId),
}

/// An operand of a GEMM call.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Operand {
    /// The left operand (`[m, k]`, or `[k, m]` for `tn`).
    A,
    /// The right operand (`[k, n]`, or `[n, k]` for `nt`).
    B,
    /// The output (also read when beta != 0).
    C,
    /// The bias of n elements.
    Bias,
}

impl Operand {
    /// `a`, `b`, `c` or `bias`, as specs and manifests write it.
    pub fn as_str(self) -> &'static str {
        match self {
            Operand::A => "a",
            Operand::B => "b",
            Operand::C => "c",
            Operand::Bias => "bias",
        }
    }
}

impl std::fmt::Display for Operand {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Operand::A => "A",
            Operand::B => "B",
            Operand::C => "C",
            Operand::Bias => "bias",
        })
    }
}

/// How a kernel's grid covers C (its template's manifest, `grid`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum GridKind {
    /// One block per `tile.m x tile.n` output tile: grid = (ceil(m / tile.m), ceil(n / tile.n), 1).
    Tiles,
    /// As many CTAs as are co-resident (whole clusters), each walking output tiles
    /// `blockIdx.x, + gridDim.x, ...` in a fixed order.
    Persistent,
}

impl GridKind {
    /// `tiles` or `persistent`, as manifests write it.
    pub fn as_str(self) -> &'static str {
        match self {
            GridKind::Tiles => "tiles",
            GridKind::Persistent => "persistent",
        }
    }
}

/// How a kernel reads A and B (its template's manifest, `operands`), which decides when the
/// route's unaligned kernel runs instead.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum OperandPath {
    /// Plain loads: any address and leading dimension.
    Loads,
    /// 16-byte cp.async chunks: A's and B's addresses and leading dimensions (in bytes) must
    /// be multiples of 16, else the route's unaligned kernel runs.
    CpAsync,
    /// TMA tensor maps: what TMA takes (its rules decide), and k > 0, else the route's
    /// unaligned kernel runs.
    Tma,
}

/// A copy a kernel's launch makes of an operand before the kernel runs, because the kernel
/// reads it in another layout than the call stores it (a family's `prepass`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum Prepass {
    /// None: the kernel reads A and B as stored (or through an aligned repack).
    #[default]
    None,
    /// A tn kernel that reads A as nn does, K-major: each call copies A, stored `[k, m]`,
    /// transposed into `[m, k]` scratch (a bit copy), and the kernel reads the copy. TF32
    /// wgmma reads its shared-memory operand only K-major, and tn stores both operands
    /// MN-major; the copy is memory-bound, the kernel then runs at nn's speed.
    TransposeA,
}

impl Prepass {
    /// `transpose-a`, as families write it (`None` for no prepass).
    pub fn as_str(self) -> Option<&'static str> {
        match self {
            Prepass::None => None,
            Prepass::TransposeA => Some("transpose-a"),
        }
    }

    /// The prepass a spec word names.
    pub fn parse(word: &str) -> Option<Prepass> {
        (word == "transpose-a").then_some(Prepass::TransposeA)
    }

    /// The layout the kernel's body reads for a call of `op`: nn for a tn kernel whose A is
    /// copied transposed.
    pub fn layout(self, op: Op) -> Op {
        match (self, op) {
            (Prepass::TransposeA, Op::Tn) => Op::Nn,
            _ => op,
        }
    }
}

impl OperandPath {
    /// `loads`, `cp.async` or `tma`, as manifests write it.
    pub fn as_str(self) -> &'static str {
        match self {
            OperandPath::Loads => "loads",
            OperandPath::CpAsync => "cp.async",
            OperandPath::Tma => "tma",
        }
    }

    /// Whether a route to such a kernel needs an unaligned kernel for operands it cannot take.
    pub fn needs_unaligned(self) -> bool {
        self != OperandPath::Loads
    }

    /// Bytes A's and B's addresses and leading dimensions must be multiples of (cp.async
    /// kernels: 16); 0 when any alignment runs, or when the tensor maps' rules decide.
    pub fn alignment(self) -> u32 {
        match self {
            OperandPath::CpAsync => 16,
            OperandPath::Loads | OperandPath::Tma => 0,
        }
    }

    /// How it takes operands, in words.
    pub fn describe(self) -> &'static str {
        match self {
            OperandPath::Loads => "reads A and B with plain loads",
            OperandPath::CpAsync => "copies A and B in 16-byte cp.async chunks",
            OperandPath::Tma => "loads A and B through TMA",
        }
    }

    /// When the route's unaligned kernel runs instead of such a kernel, in words.
    pub fn unaligned_when(self) -> &'static str {
        match self {
            OperandPath::Loads => "never",
            OperandPath::CpAsync => {
                "when A or B is not 16-byte aligned (address, or ld * element size)"
            }
            OperandPath::Tma => {
                "when TMA cannot take A or B (address not 16-byte aligned, ld * size not a multiple of 16 bytes) or k = 0"
            }
        }
    }
}

/// What a conversion kernel does: in the half fallback, or the repack of an operand.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ConversionKind {
    /// Half to f32 (exact), for the fallback's f32 GEMM inputs.
    InputUpcast,
    /// f32 to half, rounding to nearest even once, for the fallback's output.
    OutputDowncast,
    /// A type to itself, bits unchanged: an operand TMA cannot take copied into aligned
    /// scratch (or a prepared weight), for the route's own kernel.
    Repack,
    /// A type to itself, bits unchanged, transposed: `dst[c, r] = src[r, c]`, for a kernel
    /// whose [`Prepass`] reads an operand in the other layout.
    Transpose,
    /// A reduction along each row, its tree fixed by the kernel's contract and independent
    /// of the number of rows (the fronts' batch-invariant softmax, log_softmax and mean).
    Row(RowOp),
}

/// What a row kernel computes for each row `x` of `cols` elements.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum RowOp {
    /// `y = exp(x - max(x)) / sum(exp(x - max(x)))`, a row out.
    Softmax,
    /// `y = (x - max(x)) - log(sum(exp(x - max(x))))`, a row out.
    LogSoftmax,
    /// `y = sum(x) / cols`, one element out.
    Mean,
}

impl RowOp {
    /// Every row op.
    pub const ALL: [RowOp; 3] = [RowOp::Softmax, RowOp::LogSoftmax, RowOp::Mean];

    /// The word specs use (`row_op = "softmax"`), also its `kOp` number in the template.
    pub fn as_str(self) -> &'static str {
        match self {
            RowOp::Softmax => "softmax",
            RowOp::LogSoftmax => "log_softmax",
            RowOp::Mean => "mean",
        }
    }

    /// The template's `kOp` for this op (`kernels-templates/rows/row_reduce.cuh`).
    pub fn template_code(self) -> u32 {
        match self {
            RowOp::Softmax => 0,
            RowOp::LogSoftmax => 1,
            RowOp::Mean => 2,
        }
    }

    /// Output elements a row.
    pub fn outputs_per_row(self, cols: u64) -> u64 {
        match self {
            RowOp::Softmax | RowOp::LogSoftmax => cols,
            RowOp::Mean => 1,
        }
    }

    /// The op a spec word names.
    pub fn parse(word: &str) -> Option<RowOp> {
        RowOp::ALL.into_iter().find(|o| o.as_str() == word)
    }
}

impl std::fmt::Display for RowOp {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

impl ConversionKind {
    /// The kind of a `from -> to` conversion: half to f32 widens, f32 to half narrows, a type
    /// to itself repacks; half to the other half is no conversion the runtime uses.
    pub fn of(from: Dtype, to: Dtype) -> Option<ConversionKind> {
        match (from, to) {
            _ if from == to => Some(ConversionKind::Repack),
            (Dtype::Bf16 | Dtype::F16, Dtype::F32) => Some(ConversionKind::InputUpcast),
            (Dtype::F32, Dtype::Bf16 | Dtype::F16) => Some(ConversionKind::OutputDowncast),
            _ => None,
        }
    }
}

/// A TMA descriptor (`CUtensorMap`) as a kernel argument struct holds it: 128 bytes, aligned to
/// 128 as CUDA 13's `<cuda.h>` declares `CUtensorMap` (`alignas(128)`; TMA itself needs 64), so
/// the argument structs' Rust layout equals the C one. Filled on the host by
/// `cuTensorMapEncodeTiled`; zeros for kernels that read none.
#[repr(C, align(128))]
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct TensorMap(pub [u8; 128]);

impl Default for TensorMap {
    fn default() -> Self {
        TensorMap([0; 128])
    }
}

/// The compile unit (module) of a tier's conversion and row kernels; every other unit is a
/// family's GEMM kernels.
pub const CONVERSIONS_MODULE: &str = "conversions";

/// One compile unit of a tier: a family's kernels, or the tier's conversion kernels
/// ([`CONVERSIONS_MODULE`]), compiled to one cubin and loaded as one module.
#[derive(Debug)]
pub struct ModuleInfo {
    /// The unit's name: its family, or `conversions`.
    pub name: &'static str,
    /// Its cubin (empty when built without cubins).
    pub cubin: &'static [u8],
}

/// One SM tier: its compile target and its embedded cubins.
#[derive(Debug)]
pub struct TierInfo {
    /// Index in the set's tiers.
    pub id: TierId,
    /// Tier name, as in its spec file.
    pub name: &'static str,
    /// The spec file the tier came from.
    pub spec_file: &'static str,
    /// The nvcc `-gencode` value the tier was built with.
    pub gencode: &'static str,
    /// (major, minor) compute capability of the target.
    pub compute_capability: (u32, u32),
    /// Built for an `sm_XYa` target: loads only on exactly this compute capability.
    pub arch_specific: bool,
    /// Shared memory a block may use on this tier, in bytes.
    pub max_shared_bytes: u32,
    /// The tier's kernels, as a range of kernel ids.
    pub kernels: Range<u16>,
    /// The tier's conversion kernels, as a range of conversion ids.
    pub conversions: Range<u16>,
    /// The tier's compile units; a kernel's `module` indexes this list.
    pub modules: &'static [ModuleInfo],
}

impl TierInfo {
    /// Whether every module carries a cubin (false when built without cubins).
    pub fn has_cubins(&self) -> bool {
        !self.modules.is_empty() && self.modules.iter().all(|m| !m.cubin.is_empty())
    }
}

/// The PTX of one compile unit of a tier (empty when built without cubins).
#[derive(Debug)]
pub struct PtxModule {
    /// The unit's name: its family, or `conversions`.
    pub name: &'static str,
    /// Its PTX text, which the driver JIT-compiles for the device at load.
    pub ptx: &'static str,
}

/// The embedded PTX of a tier none of whose families uses an arch-specific instruction: what
/// runs on a device newer than every tier's cubin target (forward compatibility), or when a
/// context is opened on a tier whose cubin the device cannot load.
#[derive(Debug)]
pub struct TierPtx {
    /// The tier's name, as in its [`TierInfo`].
    pub tier: &'static str,
    /// Its index in the set's tiers.
    pub tier_index: usize,
    /// The virtual architecture of the PTX (`compute_80`): it JITs on devices of this compute
    /// capability and later.
    pub target: &'static str,
    /// Its compile units, in the order of the tier's [`TierInfo::modules`].
    pub modules: &'static [PtxModule],
}

impl TierPtx {
    /// Whether every unit carries PTX text (false when built without cubins).
    pub fn has_ptx(&self) -> bool {
        !self.modules.is_empty() && self.modules.iter().all(|m| !m.ptx.is_empty())
    }
}

/// A numeric contract: the reduction order every kernel claiming it follows.
#[derive(Debug)]
pub struct ContractInfo {
    /// Contract name, as kernels name it.
    pub name: &'static str,
    /// The reduction order it promises.
    pub doc: &'static str,
    /// The operand dtypes it is defined for. A half request may run through an f32 kernel
    /// (the half fallback) only when that kernel's contract lists the half dtype.
    pub inputs: &'static [Dtype],
}

/// A tile as the spec gives it: the fields every kind has, and the values of its template's
/// parameters.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TileShape {
    /// Tile name, as in the spec.
    pub name: &'static str,
    /// Rows of C a block computes.
    pub m: u32,
    /// Columns of C a block computes.
    pub n: u32,
    /// The tile's k: its reduction step (a stage), or its K chunk.
    pub k: u32,
    /// (parameter, value) of every parameter of the template's manifest, in its order
    /// (defaults filled in).
    pub params: &'static [(&'static str, u32)],
    /// The template's one-line description of the tile (its manifest's `describe`, filled).
    pub describe: &'static str,
}

impl TileShape {
    /// The value of a template parameter (`stages`, `warps_m`, ...), if the template has it.
    pub fn param(&self, name: &str) -> Option<u32> {
        self.params
            .iter()
            .find(|(n, _)| *n == name)
            .map(|(_, v)| *v)
    }
}

impl std::fmt::Display for TileShape {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} {}x{}x{}", self.name, self.m, self.n, self.k)?;
        if !self.describe.is_empty() {
            write!(f, ": {}", self.describe)?;
        }
        Ok(())
    }
}

/// A tensor map a kernel reads: which argument field carries it, which operand it describes,
/// and the box and swizzle to encode it with. The box is in elements of the operand as stored
/// (`[rows, cols]` row-major): `box_inner` along the contiguous dimension (cols), `box_outer`
/// along the rows.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TensorMapPlan {
    /// The ABI field (`a_map`, `b_map`).
    pub field: &'static str,
    /// The operand it describes (A, B or C).
    pub operand: Operand,
    /// Whether the kernel also runs without it (C's TMA store: the direct stores otherwise).
    pub optional: bool,
    /// Box extent along the contiguous dimension, in elements.
    pub box_inner: u32,
    /// Box extent along the other dimension, in elements.
    pub box_outer: u32,
    /// Swizzle span in bytes (32, 64 or 128).
    pub swizzle_bytes: u32,
}

/// One kernel of one tier.
#[derive(Debug)]
pub struct KernelInfo {
    /// Index in the set's kernels.
    pub id: KernelId,
    /// Tier whose cubins hold the kernel.
    pub tier: TierId,
    /// Index into the tier's `modules`: the cubin holding the kernel.
    pub module: u16,
    /// The entry point's name in the cubin (see the README for the pattern).
    pub name: &'static str,
    /// Family it belongs to.
    pub family: &'static str,
    /// The kernel template it instantiates (its kind).
    pub template: &'static str,
    /// Numeric contract it implements.
    pub contract: &'static str,
    /// Policy it serves.
    pub policy: Policy,
    /// Operand layout.
    pub op: Op,
    /// Element types (A and B, C, accumulator).
    pub dtype: DtypeTriple,
    /// Its tile.
    pub tile: TileShape,
    /// How its grid covers C.
    pub grid: GridKind,
    /// How it reads A and B.
    pub operands: OperandPath,
    /// CTAs a cluster (x, y, z); `(1, 1, 1)` for no cluster. A cluster along z splits K
    /// between its CTAs (they fold their chunks through distributed shared memory).
    pub cluster: (u32, u32, u32),
    /// It runs strided batches in one launch: grid z walks the entries, each at its operands'
    /// batch strides. Its tier names it among its `batch_kernels` (its kind is batched, with
    /// no K split); strided batches of routes of its contract, op and dtype run on it.
    pub batch: bool,
    /// The largest K the kernel takes (a K split holds each chunk's partial sums in shared
    /// memory); `None`: any. Routes to it bound k by it (validation checks).
    pub max_k: Option<u64>,
    /// The tensor maps it reads (empty for kernels that do not load through TMA).
    pub tensor_maps: &'static [TensorMapPlan],
    /// Threads a block.
    pub block_threads: u32,
    /// Dynamic shared memory per block.
    pub shared_bytes: u32,
    /// `__launch_bounds__`'s blocks an SM, 0 for none.
    pub min_blocks: u32,
    /// The argument struct the kernel takes by value (one of the set's [`AbiInfo`]s).
    pub abi: &'static str,
    /// A copy its launch makes first ([`Prepass::TransposeA`]: A transposed into scratch).
    pub prepass: Prepass,
    /// A plain-load kernel's vector path: bytes A's and B's addresses and leading dimensions
    /// must be multiples of for it (element by element otherwise, the same bits); the repack
    /// copies an operand off it into aligned scratch. 0: no such path.
    pub vector_bytes: u32,
    /// The wave model's cost of one tile, in picoseconds per unit of k (the tile's
    /// `tile_ps_per_k`): what a route's `wave_fit` weighs. 0: none.
    pub tile_ps_per_k: u32,
}

impl KernelInfo {
    /// Whether this kernel may run in place of `routed` on one GEMM of depth `k` whose
    /// operands the routed kernel reads: same contract, op and dtype (so the same bits, by the
    /// contract), not a strided-batch kernel, not a plain-load kernel (routes name those as
    /// their `unaligned` kernel), and `k` within its `max_k`: on the runtime's tables, the rule
    /// `gemm-aot tune` applies to the spec (tune/src/tier_view.rs); the GPU tests hold every such
    /// kernel to the routed bits.
    pub fn can_stand_in_for(&self, routed: &KernelInfo, k: u64) -> bool {
        self.contract == routed.contract
            && self.op == routed.op
            && self.dtype == routed.dtype
            && !self.batch
            && self.operands != OperandPath::Loads
            && self.max_k.is_none_or(|max_k| k <= max_k)
    }
}

/// One elementwise conversion kernel of one tier (the half fallback's upcast and downcast).
#[derive(Debug)]
pub struct ConversionInfo {
    /// Index in the set's conversions.
    pub id: ConversionId,
    /// Tier whose cubins hold the kernel.
    pub tier: TierId,
    /// Index into the tier's `modules`: the cubin holding the kernel.
    pub module: u16,
    /// The entry point's name in the cubin.
    pub name: &'static str,
    /// Upcast (half to f32), downcast (f32 to half), repack, or a row kernel.
    pub kind: ConversionKind,
    /// Source element type.
    pub from: Dtype,
    /// Destination element type.
    pub to: Dtype,
    /// Threads a block.
    pub block_threads: u32,
    /// The argument struct the kernel takes by value.
    pub abi: &'static str,
    /// The numeric contract of a row kernel (its reduction tree, `row-t256`); empty for an
    /// elementwise conversion.
    pub contract: &'static str,
    /// A row kernel's warp-path length: rows of at most this many columns are reduced a warp
    /// a row (`Cfg::kWarpCols`); 0 for an elementwise conversion. A row conversion may build
    /// several lengths (its spec's `warp_cols`), all computing the same tree:
    /// [`KernelSet::row_kernel`](crate::KernelSet::row_kernel) picks by the row's length.
    pub warp_cols: u32,
}

impl ConversionInfo {
    /// Most blocks a conversion launches; the kernel loops over the rest (grid stride).
    pub const MAX_BLOCKS: u64 = 8192;

    /// The default warp-path length of a row conversion whose spec gives no `warp_cols`:
    /// rows of at most this many columns are reduced a warp a row, the block's warps on
    /// consecutive rows; longer rows a block a row (`rows/row_reduce.cuh`, whose two paths
    /// compute the same tree). 512 (16 values a lane): the warp path holds its row in
    /// registers, and at 1024 the kernels took 98 registers, 16 warps an SM, too few loads in
    /// flight to stream a 512-column row (attention's softmax at 0.52x torch's, 2026-12-05); at
    /// 512 they take 48. Longer lengths are separate kernels (`warp_cols = [512, 1024]`).
    pub const ROW_WARP_COLS: u64 = 512;

    /// Source tiles of a [`ConversionKind::Transpose`] kernel (`transpose_matrix.cuh`): a
    /// block moves one square of this many rows and columns at a time.
    pub const TRANSPOSE_TILE: u64 = 32;

    /// Launch grid of this conversion over a `rows x cols` source: a block per 32 x 32 tile
    /// for a transposition; for a row kernel a block a row, or a block per `threads / 32` rows
    /// when rows have at most its [`warp_cols`](Self::warp_cols) columns; a thread per element
    /// for the others. At most [`MAX_BLOCKS`](Self::MAX_BLOCKS) either way: the
    /// kernels loop over the rest (a row kernel reduces a row whole in one block or one warp
    /// whatever the grid, so the grid never changes a row's bits).
    pub fn launch_grid(&self, rows: u64, cols: u64) -> (u32, u32, u32) {
        conversion_grid(self.kind, self.block_threads, self.warp_cols, rows, cols)
    }
}

/// The grid [`ConversionInfo::launch_grid`] launches for a conversion of `kind` with blocks of
/// `threads` (a row kernel: whose warp path takes rows of at most `warp_cols` columns) over a
/// `rows x cols` source.
pub fn conversion_grid(
    kind: ConversionKind,
    threads: u32,
    warp_cols: u32,
    rows: u64,
    cols: u64,
) -> (u32, u32, u32) {
    let blocks = match kind {
        ConversionKind::Transpose => {
            let t = ConversionInfo::TRANSPOSE_TILE;
            rows.div_ceil(t).saturating_mul(cols.div_ceil(t))
        }
        ConversionKind::Row(_) if cols <= u64::from(warp_cols) => {
            rows.div_ceil(u64::from(threads / 32).max(1))
        }
        ConversionKind::Row(_) => rows,
        _ => rows.saturating_mul(cols).div_ceil(threads.max(1) as u64),
    };
    (blocks.clamp(1, ConversionInfo::MAX_BLOCKS) as u32, 1, 1)
}

/// What ptxas reported for a kernel.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct KernelResources {
    /// Registers a thread.
    pub registers: u32,
    /// Static shared memory a block, in bytes.
    pub static_shared_bytes: u32,
    /// Stack frame, in bytes.
    pub stack_bytes: u32,
    /// Spill stores plus loads, in bytes (0 for every shipped kernel).
    pub spill_bytes: u32,
}

/// The kernel a route table picked, and which route (1-based, as in the tier's spec file).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RouteHit {
    /// The kernel to launch.
    pub kernel: KernelId,
    /// 1-based position of the route in its tier file.
    pub rule: u16,
    /// For a kernel that needs aligned operands (TMA, cp.async): the kernel of the same
    /// contract to launch instead when it cannot take them. `None` for other kernels.
    pub unaligned: Option<KernelId>,
    /// Kernels of the same contract the wave model may run instead of `kernel` (the route's
    /// `wave_fit`; [`crate::Routed::fit_waves`]). Empty for most routes.
    pub wave_fit: &'static [KernelId],
}

/// One expanded route of a tier's table, as data: what the generated `dispatch` match
/// decides, and what `explain` reads back.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RouteInfo {
    /// The tier whose table holds it.
    pub tier: TierId,
    /// 1-based position of its `[[route]]` block in the tier file.
    pub rule: u16,
    /// The policy, op and dtypes it serves.
    pub policy: Policy,
    /// The op it serves.
    pub op: Op,
    /// The dtypes it serves.
    pub dtype: DtypeTriple,
    /// Its conditions on m, n and k.
    pub m: crate::vocab::DimRange,
    /// Its condition on n.
    pub n: crate::vocab::DimRange,
    /// Its condition on k.
    pub k: crate::vocab::DimRange,
    /// The kernel it launches.
    pub kernel: KernelId,
    /// Its unaligned kernel, for kernels that need aligned operands.
    pub unaligned: Option<KernelId>,
    /// Its `wave_fit` kernels: the wave model may run one of them instead.
    pub wave_fit: &'static [KernelId],
    /// `sm90a.toml:120`: where the route is written.
    pub location: &'static str,
}

impl RouteInfo {
    /// Whether the route's conditions hold for `(m, n, k)`.
    pub fn matches(&self, m: u64, n: u64, k: u64) -> bool {
        self.m.contains(m) && self.n.contains(n) && self.k.contains(k)
    }

    /// The hit a match gives.
    pub fn hit(&self) -> RouteHit {
        RouteHit {
            kernel: self.kernel,
            rule: self.rule,
            unaligned: self.unaligned,
            wave_fit: self.wave_fit,
        }
    }

    /// `m <= 16, n >= 4096`, or `any shape (catch-all)`.
    pub fn conditions(&self) -> String {
        let c: Vec<String> = [("m", self.m), ("n", self.n), ("k", self.k)]
            .iter()
            .filter(|(_, d)| !d.is_any())
            .map(|(n, d)| format!("{n} {d}"))
            .collect();
        if c.is_empty() {
            "any shape (catch-all)".into()
        } else {
            c.join(", ")
        }
    }
}

/// A persistent bf16 NN wgmma-like kernel with an `m x n` tile and wave cost `ps`, for the
/// planner's unit tests.
#[cfg(test)]
pub(crate) fn test_kernel(m: u32, n: u32, ps: u32) -> KernelInfo {
    use crate::vocab::Dtype;
    KernelInfo {
        id: KernelId(0),
        tier: TierId(0),
        module: 0,
        name: "k",
        family: "f",
        template: "t",
        contract: "c",
        policy: Policy::TensorCore,
        op: Op::Nn,
        dtype: DtypeTriple::new(Dtype::Bf16, Dtype::Bf16, Dtype::F32),
        tile: TileShape {
            name: "x",
            m,
            n,
            k: 64,
            params: &[],
            describe: "",
        },
        grid: GridKind::Persistent,
        operands: OperandPath::Tma,
        cluster: (1, 1, 1),
        batch: false,
        max_k: None,
        tensor_maps: &[],
        block_threads: 384,
        shared_bytes: 0,
        min_blocks: 0,
        abi: "a",
        prepass: Prepass::None,
        vector_bytes: 0,
        tile_ps_per_k: ps,
    }
}
