//! The types the generated tables are made of, and lookups over them. The tables themselves
//! (tiers, contracts, kernels, dispatch, resources) come from the specs at build time.

pub use gemm_spec::vocab::{Dtype, DtypeTriple, Op, Policy};
use std::ops::Range;

/// Index into [`TIERS`](crate::TIERS).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct TierId(pub u16);

/// Index into [`KERNELS`](crate::KERNELS).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct KernelId(pub u16);

/// One SM tier: its compile target and its embedded cubin.
#[derive(Debug)]
pub struct TierInfo {
    pub id: TierId,
    pub name: &'static str,
    /// The spec file the tier came from.
    pub spec_file: &'static str,
    pub gencode: &'static str,
    pub compute_capability: (u32, u32),
    /// Built for an `sm_XYa` target: loads only on exactly this compute capability.
    pub arch_specific: bool,
    pub max_shared_bytes: u32,
    /// The tier's kernels, as a range of kernel ids.
    pub kernels: Range<u16>,
    /// The cubin holding every kernel of the tier (empty when built without cubins).
    pub cubin: &'static [u8],
}

/// A numeric contract: the reduction order every kernel claiming it follows.
#[derive(Debug)]
pub struct ContractInfo {
    pub name: &'static str,
    pub doc: &'static str,
}

/// A tile as the spec gives it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TileShape {
    pub name: &'static str,
    pub m: u32,
    pub n: u32,
    pub k: u32,
    pub stages: u32,
    pub thread_m: u32,
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
    pub id: KernelId,
    pub tier: TierId,
    /// The entry point's name in the cubin (see the README for the pattern).
    pub name: &'static str,
    pub family: &'static str,
    pub contract: &'static str,
    pub policy: Policy,
    pub op: Op,
    pub dtype: DtypeTriple,
    pub tile: TileShape,
    pub grid: GridKind,
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

/// What ptxas reported for a kernel.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct KernelResources {
    pub registers: u32,
    pub static_shared_bytes: u32,
    pub stack_bytes: u32,
    pub spill_bytes: u32,
}

/// The kernel a route table picked, and which route (1-based, as in the tier's spec file).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RouteHit {
    pub kernel: KernelId,
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
