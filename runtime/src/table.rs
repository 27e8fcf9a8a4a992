//! The types the generated tables are made of, and lookups over them. The tables themselves
//! (tiers, contracts, kernels, dispatch, resources) come from the specs at build time.
//!
//! The free functions here look up the runtime's own set,
//! [`KernelSet::shipped`](crate::KernelSet::shipped); a context's lookups go through its set
//! ([`Context::kernels`](crate::Context::kernels)), which may be a downstream crate's own
//! (docs/downstream.md).

pub use crate::error::Operand;
pub use gemm_spec::vocab::{Dtype, DtypeTriple, Op, Policy};
pub use gemm_spec::ConversionKind;
use std::ops::Range;

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

/// Every value an argument struct can be filled from (a spec field's `bind`): the generated
/// `X::bind(&sources)` of each ABI struct copies the fields it binds, so the runtime fills one
/// `ArgSources` per launch and never builds an argument struct field by field. Pointers are
/// device addresses (0 when absent); dimensions and leading dimensions in elements.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct ArgSources {
    /// `a.ptr`: A as stored.
    pub a: u64,
    /// `b.ptr`: B as stored.
    pub b: u64,
    /// `bias.ptr`: the bias of n elements, or 0.
    pub bias: u64,
    /// `c.ptr`: the output C.
    pub c: u64,
    /// `a.tensor_map`: A's tensor map (kernels whose table entry lists one).
    pub a_map: TensorMap,
    /// `b.tensor_map`: B's tensor map.
    pub b_map: TensorMap,
    /// `c.tensor_map`: C's tensor map.
    pub c_map: TensorMap,
    /// `m`: rows of C.
    pub m: i32,
    /// `n`: columns of C.
    pub n: i32,
    /// `k`: the reduction length.
    pub k: i32,
    /// `lda`: leading dimension of A as stored.
    pub lda: i32,
    /// `ldb`: leading dimension of B as stored.
    pub ldb: i32,
    /// `ldc`: leading dimension of C.
    pub ldc: i32,
    /// `beta`: 0 overwrites C, else C = fma(beta, C, result).
    pub beta: f32,
    /// `flags`: bit 0 adds the bias.
    pub flags: u32,
    /// `src`: a conversion's source.
    pub src: u64,
    /// `dst`: a conversion's destination.
    pub dst: u64,
    /// `rows`: rows a conversion converts.
    pub rows: i32,
    /// `cols`: columns a conversion converts.
    pub cols: i32,
    /// `ld_src`: leading dimension of src.
    pub ld_src: i32,
    /// `ld_dst`: leading dimension of dst.
    pub ld_dst: i32,
}

/// Index into [`TIERS`](crate::TIERS).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct TierId(pub u16);

/// Index into [`KERNELS`](crate::KERNELS).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct KernelId(pub u16);

/// Index into [`CONVERSIONS`](crate::CONVERSIONS).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ConversionId(pub u16);

/// A kernel of the generated tables: a GEMM kernel or a conversion kernel.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum KernelRef {
    /// `KERNELS[id]`.
    Gemm(KernelId),
    /// `CONVERSIONS[id]`.
    Conversion(ConversionId),
}

/// One compile unit of a tier: a family's kernels, or the tier's conversion kernels
/// (`conversions`), compiled to one cubin and loaded as one module.
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
    /// Index in `TIERS`.
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

/// A tile as the spec gives it: the fields every kind has, and its kind's parameters.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TileShape {
    /// Tile name, as in the spec.
    pub name: &'static str,
    /// Rows of C a block computes.
    pub m: u32,
    /// Columns of C a block computes.
    pub n: u32,
    /// Reduction step staged in shared memory (or the K chunk for decode tiles).
    pub k: u32,
    /// Shared-memory buffers (TMA ring stages) in flight.
    pub stages: u32,
    /// The parameters of the tile's kind.
    pub params: TileParams,
}

/// The parameters of a tile, by the kind of its family's template.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TileParams {
    /// Scalar FMA templates.
    Scalar {
        /// Rows of C a thread computes.
        thread_m: u32,
        /// Columns of C a thread computes.
        thread_n: u32,
        /// K chunks one block reduces in parallel.
        k_split: u32,
    },
    /// `wgmma_tma_gemm`: a producer warpgroup and `consumers` consumer warpgroups.
    WgmmaTma {
        /// Consumer warpgroups, 64 rows each.
        consumers: u32,
        /// CTAs a cluster along M.
        cluster_m: u32,
    },
    /// `mma_decode_tma`: 16 rows, one consumer warp per 8 columns and a producer warp.
    MmaDecodeTma,
    /// `mma_gemm`: `warps_m x warps_n` warps, plain loads.
    MmaGemm {
        /// Warps along M.
        warps_m: u32,
        /// Warps along N.
        warps_n: u32,
    },
    /// `mma_async_gemm`: `warps_m x warps_n` warps fed by a cp.async pipeline of `stages`
    /// (`TileShape::stages`), at least `min_blocks` CTAs an SM (0: no launch bound).
    MmaAsync {
        /// Warps along M.
        warps_m: u32,
        /// Warps along N.
        warps_n: u32,
        /// CTAs an SM the kernel's launch bounds ask for (0 when the tile sets none).
        min_blocks: u32,
    },
}

impl std::fmt::Display for TileShape {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{} {}x{}x{}, {} stage(s)",
            self.name, self.m, self.n, self.k, self.stages
        )?;
        match self.params {
            TileParams::Scalar {
                thread_m,
                thread_n,
                k_split,
            } => write!(
                f,
                ", thread tile {thread_m}x{thread_n}, {k_split} K chunk(s) in parallel"
            ),
            TileParams::WgmmaTma {
                consumers,
                cluster_m,
            } => write!(
                f,
                ", {consumers} consumer warpgroup(s), cluster of {cluster_m} along M"
            ),
            TileParams::MmaDecodeTma => write!(f, ", {} consumer warp(s)", self.n / 8),
            TileParams::MmaGemm { warps_m, warps_n } => write!(f, ", {warps_m}x{warps_n} warps"),
            TileParams::MmaAsync {
                warps_m,
                warps_n,
                min_blocks,
            } => {
                write!(f, ", {warps_m}x{warps_n} warps, cp.async")?;
                if min_blocks > 0 {
                    write!(f, ", {min_blocks} CTAs an SM")?;
                }
                Ok(())
            }
        }
    }
}

/// How a kernel's grid covers C.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum GridKind {
    /// One block per tile: grid = (ceil(m / tile.m), ceil(n / tile.n), 1).
    Tiles,
    /// As many CTAs as are co-resident (whole clusters), each walking tiles
    /// `blockIdx.x, + gridDim.x, ...` in a fixed order: see [`KernelInfo::grid_for`].
    Persistent,
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
    /// Index in `KERNELS`.
    pub id: KernelId,
    /// Tier whose cubins hold the kernel.
    pub tier: TierId,
    /// Index into the tier's `modules`: the cubin holding the kernel.
    pub module: u16,
    /// The entry point's name in the cubin (see the README for the pattern).
    pub name: &'static str,
    /// Family (template) it instantiates.
    pub family: &'static str,
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
    /// CTAs a cluster (x, y, z); `(1, 1, 1)` for no cluster. Launched with the cluster
    /// attribute (`cuLaunchKernelEx`) otherwise.
    pub cluster: (u32, u32, u32),
    /// The tensor maps it reads (empty for kernels that do not load through TMA).
    pub tensor_maps: &'static [TensorMapPlan],
    /// Bytes A's and B's addresses and leading dimensions must be multiples of for this kernel
    /// to run at full speed (16 for cp.async chunks), or 0. Otherwise the route's unaligned
    /// kernel runs (the kernel itself would copy element by element: same bits, slower). TMA
    /// kernels have 0: their tensor maps' rules decide.
    pub operand_align: u32,
    /// Threads a block.
    pub block_threads: u32,
    /// Dynamic shared memory per block.
    pub shared_bytes: u32,
    /// The argument struct the kernel takes by value.
    pub abi: &'static str,
}

impl KernelInfo {
    /// Launch grid for a GEMM of `m x n`; `None` when a dimension does not fit a grid (the
    /// caller skips launching when m or n is 0), or, for a persistent kernel, when not one
    /// cluster is co-resident.
    ///
    /// - `Tiles`: `(ceil(m / tile.m), ceil(n / tile.n), 1)`; `max_ctas` is not used.
    /// - `Persistent`: `max_ctas` is the co-resident CTA count (SM count x CTAs an SM at this
    ///   kernel's threads, shared memory and cluster; capped by
    ///   `Context::set_max_persistent_ctas`). The work is `ceil(m / (tile.m * cluster.0)) x
    ///   ceil(n / tile.n)` cluster tiles; the grid is `(cluster.0 * min(work, max_ctas /
    ///   cluster.0), 1, 1)`, whole clusters, at least one. Who computes a tile depends on it,
    ///   never how.
    pub fn grid_for(&self, m: u64, n: u64, max_ctas: u32) -> Option<(u32, u32, u32)> {
        match self.grid {
            GridKind::Tiles => {
                let gx = u32::try_from(m.div_ceil(self.tile.m as u64)).ok()?;
                let gy = u32::try_from(n.div_ceil(self.tile.n as u64)).ok()?;
                (gy <= 65535).then_some((gx, gy, 1))
            }
            GridKind::Persistent => {
                let cx = self.cluster.0.max(1) as u64;
                let clusters = max_ctas as u64 / cx;
                if clusters == 0 {
                    return None;
                }
                let work = m
                    .div_ceil(self.tile.m as u64 * cx)
                    .checked_mul(n.div_ceil(self.tile.n as u64))?;
                let gx = u32::try_from(work.clamp(1, clusters) * cx).ok()?;
                Some((gx, 1, 1))
            }
        }
    }

    /// Whether the kernel needs the launch path for tensor maps, clusters or a persistent
    /// grid (the tensor-core kinds).
    pub fn needs_tma_launch(&self) -> bool {
        !self.tensor_maps.is_empty() || self.cluster != (1, 1, 1) || self.grid != GridKind::Tiles
    }
}

/// One elementwise conversion kernel of one tier (the half fallback's upcast and downcast).
#[derive(Debug)]
pub struct ConversionInfo {
    /// Index in `CONVERSIONS`.
    pub id: ConversionId,
    /// Tier whose cubins hold the kernel.
    pub tier: TierId,
    /// Index into the tier's `modules`: the cubin holding the kernel.
    pub module: u16,
    /// The entry point's name in the cubin.
    pub name: &'static str,
    /// Upcast (half to f32) or downcast (f32 to half).
    pub kind: ConversionKind,
    /// Source element type.
    pub from: Dtype,
    /// Destination element type.
    pub to: Dtype,
    /// Threads a block.
    pub block_threads: u32,
    /// The argument struct the kernel takes by value.
    pub abi: &'static str,
}

impl ConversionInfo {
    /// Most blocks a conversion launches; the kernel loops over the rest (grid stride).
    pub const MAX_BLOCKS: u64 = 8192;

    /// Launch grid for converting `elements` elements (at least one block).
    pub fn grid_for(&self, elements: u64) -> (u32, u32, u32) {
        let blocks = elements
            .div_ceil(self.block_threads as u64)
            .clamp(1, Self::MAX_BLOCKS);
        (blocks as u32, 1, 1)
    }
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
    /// For a kernel that loads through TMA: the kernel of the same contract to launch instead
    /// when TMA cannot take an operand (docs/tensor-core.md §4). `None` for other kernels.
    pub unaligned: Option<KernelId>,
}

/// The tier that serves a device of compute capability `cc` (see the generated
/// `tier_for_capability` for the rule), with its table entry.
pub fn tier_for_capability(cc: (u32, u32)) -> Option<&'static TierInfo> {
    crate::KernelSet::shipped().tier_for_capability(cc)
}

/// The largest n every GEMM kernel of `tier` can launch: `65535 * tile.n` of its narrowest
/// one-block-a-tile kernel (grid.y carries the n tiles and is limited to 65535); persistent
/// kernels put every tile on grid.x and take any n. The runtime refuses an n above this for
/// every m alike, so whether a shape is refused never depends on the batch, even though the
/// routes pick kernels of other tile widths for other m.
pub fn max_n(tier: TierId) -> u64 {
    crate::KernelSet::shipped().max_n(tier)
}

/// An argument struct bound by the generated `bind_abi`: its bytes exactly as the kernel
/// receives them, and where its pointer and tensor-map fields sit.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BoundArgs {
    /// The struct's bytes (padding zeroed).
    pub bytes: Vec<u8>,
    /// (field, byte offset) of every device-pointer field.
    pub pointer_fields: &'static [(&'static str, usize)],
    /// (field, byte offset, operand) of every tensor-map field.
    pub tensor_map_fields: &'static [(&'static str, usize, crate::Operand)],
}

/// Looks up a tier by name.
pub fn tier_by_name(name: &str) -> Option<&'static TierInfo> {
    crate::generated::TIERS.iter().find(|t| t.name == name)
}

/// The kernel with this id.
pub fn kernel(id: KernelId) -> Option<&'static KernelInfo> {
    crate::generated::KERNELS.get(id.0 as usize)
}

/// The contract a kernel implements.
pub fn contract_of(id: KernelId) -> Option<&'static ContractInfo> {
    let name = kernel(id)?.contract;
    crate::generated::CONTRACTS.iter().find(|c| c.name == name)
}

/// Whether kernel `id`'s contract is defined for `input` operands (see
/// [`ContractInfo::inputs`]).
pub fn contract_takes(id: KernelId, input: Dtype) -> bool {
    contract_of(id).is_some_and(|c| c.inputs.contains(&input))
}

/// ptxas's report for a kernel.
pub fn resources(id: KernelId) -> Option<&'static KernelResources> {
    crate::generated::RESOURCES.get(id.0 as usize)
}

/// The conversion kernel with this id.
pub fn conversion(id: ConversionId) -> Option<&'static ConversionInfo> {
    crate::generated::CONVERSIONS.get(id.0 as usize)
}

/// The conversion kernel of `tier` from `from` to `to`, if the specs build one.
pub fn conversion_for(tier: TierId, from: Dtype, to: Dtype) -> Option<&'static ConversionInfo> {
    crate::KernelSet::shipped().conversion_for(tier, from, to)
}
