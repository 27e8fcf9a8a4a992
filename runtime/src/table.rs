//! The types the generated tables are made of, and lookups over them. The tables themselves
//! (tiers, contracts, kernels, dispatch, resources) come from the specs at build time.

pub use gemm_spec::vocab::{Dtype, DtypeTriple, Op, Policy};
pub use gemm_spec::ConversionKind;
use std::ops::Range;

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

/// One SM tier: its compile target and its embedded cubin.
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
    /// The cubin holding every kernel of the tier (empty when built without cubins).
    pub cubin: &'static [u8],
}

/// A numeric contract: the reduction order every kernel claiming it follows.
#[derive(Debug)]
pub struct ContractInfo {
    /// Contract name, as kernels name it.
    pub name: &'static str,
    /// The reduction order it promises.
    pub doc: &'static str,
}

/// A tile as the spec gives it.
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
    /// Shared-memory buffers in flight.
    pub stages: u32,
    /// Rows of C a thread computes.
    pub thread_m: u32,
    /// Columns of C a thread computes.
    pub thread_n: u32,
    /// K chunks one block reduces in parallel.
    pub k_split: u32,
}

/// How a kernel's grid covers C.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum GridKind {
    /// One block per tile: grid = (ceil(m / tile.m), ceil(n / tile.n), 1).
    Tiles,
}

/// One kernel of one tier.
#[derive(Debug)]
pub struct KernelInfo {
    /// Index in `KERNELS`.
    pub id: KernelId,
    /// Tier whose cubin holds the kernel.
    pub tier: TierId,
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
    /// Threads a block.
    pub block_threads: u32,
    /// Dynamic shared memory per block.
    pub shared_bytes: u32,
    /// The argument struct the kernel takes by value.
    pub abi: &'static str,
}

impl KernelInfo {
    /// Launch grid for a GEMM of `m x n`; `None` when a dimension does not fit a grid (the
    /// caller skips launching when m or n is 0).
    pub fn grid_for(&self, m: u64, n: u64) -> Option<(u32, u32, u32)> {
        match self.grid {
            GridKind::Tiles => {
                let gx = u32::try_from(m.div_ceil(self.tile.m as u64)).ok()?;
                let gy = u32::try_from(n.div_ceil(self.tile.n as u64)).ok()?;
                (gy <= 65535).then_some((gx, gy, 1))
            }
        }
    }
}

/// One elementwise conversion kernel of one tier (the half fallback's upcast and downcast).
#[derive(Debug)]
pub struct ConversionInfo {
    /// Index in `CONVERSIONS`.
    pub id: ConversionId,
    /// Tier whose cubin holds the kernel.
    pub tier: TierId,
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
}

/// The tier that serves a device of compute capability `cc` (see the generated
/// `tier_for_capability` for the rule), with its table entry.
pub fn tier_for_capability(cc: (u32, u32)) -> Option<&'static TierInfo> {
    let id = crate::generated::tier_for_capability(cc.0, cc.1)?;
    crate::generated::TIERS.get(id.0 as usize)
}

/// Looks up a tier by name.
pub fn tier_by_name(name: &str) -> Option<&'static TierInfo> {
    crate::generated::TIERS.iter().find(|t| t.name == name)
}

/// The kernel with this id.
pub fn kernel(id: KernelId) -> Option<&'static KernelInfo> {
    crate::generated::KERNELS.get(id.0 as usize)
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
    let t = crate::generated::TIERS.get(tier.0 as usize)?;
    crate::generated::CONVERSIONS
        .get(t.conversions.start as usize..t.conversions.end as usize)?
        .iter()
        .find(|c| c.from == from && c.to == to)
}
