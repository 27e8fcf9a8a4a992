//! The runtime's own kernel set, [`shipped`]: the shipped specs (or `GEMM_AOT_SPECS`) built by
//! the build script like any `gemm_codegen::Builder` set, and lookups over it that need no
//! context. A context's lookups go through its own set ([`Context::kernels`](crate::Context::kernels)),
//! which may be a downstream crate's (docs/downstream.md).

use crate::table::{
    ContractInfo, ConversionId, ConversionInfo, Dtype, KernelId, KernelInfo, KernelResources,
    TierId, TierInfo,
};
use gemm_core::KernelSet;

/// The runtime's own set: the shipped specs as its build script built them. With the
/// `shipped-kernels` feature off its tables are there but it carries no cubins, so a context
/// cannot launch from it.
///
/// ```
/// use gemm_runtime::{Dtype, DtypeTriple, Op, Policy};
/// let set = gemm_runtime::shipped();
/// set.check().expect("the runtime's own tables are consistent");
/// let tier = set.tier_for_capability((9, 0)).expect("an H100/H200 is served");
/// let bf16 = DtypeTriple::new(Dtype::Bf16, Dtype::Bf16, Dtype::F32);
/// let hit = set.dispatch(tier.id, Policy::Exact, Op::Nn, bf16, 1, 4096, 4096).unwrap();
/// assert_eq!(set.kernel(hit.kernel).unwrap().contract, "fma-k256");
/// ```
pub fn shipped() -> &'static KernelSet {
    &crate::SHIPPED
}

/// The tier of the shipped set that serves a device of compute capability `cc`.
pub fn tier_for_capability(cc: (u32, u32)) -> Option<&'static TierInfo> {
    shipped().tier_for_capability(cc)
}

/// The largest n every GEMM kernel of shipped `tier` can launch ([`KernelSet::max_n`]).
pub fn max_n(tier: TierId) -> u64 {
    shipped().max_n(tier)
}

/// The shipped tier of this name.
pub fn tier_by_name(name: &str) -> Option<&'static TierInfo> {
    shipped().tier_by_name(name)
}

/// The shipped kernel with this id.
pub fn kernel(id: KernelId) -> Option<&'static KernelInfo> {
    shipped().kernel(id)
}

/// The contract a shipped kernel implements.
pub fn contract_of(id: KernelId) -> Option<&'static ContractInfo> {
    shipped().contract_of(id)
}

/// Whether shipped kernel `id`'s contract is defined for `input` operands.
pub fn contract_takes(id: KernelId, input: Dtype) -> bool {
    shipped().contract_takes(id, input)
}

/// ptxas's report for a shipped kernel.
pub fn resources(id: KernelId) -> Option<&'static KernelResources> {
    shipped().resources(id)
}

/// The shipped conversion kernel with this id.
pub fn conversion(id: ConversionId) -> Option<&'static ConversionInfo> {
    shipped().conversion(id)
}

/// The shipped conversion kernel of `tier` from `from` to `to`, if the specs build one.
pub fn conversion_for(tier: TierId, from: Dtype, to: Dtype) -> Option<&'static ConversionInfo> {
    shipped().conversion_for(tier, from, to)
}

#[cfg(test)]
#[path = "shipped_tier_choice_tests.rs"]
mod tier_choice_tests;

#[cfg(test)]
#[path = "shipped_repack_tests.rs"]
mod repack_tests;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_shipped_set_passes_its_check_and_its_match_is_its_route_data() {
        let set = shipped();
        set.check().unwrap();
        for t in set.tiers() {
            assert!(std::ptr::eq(set.tier_by_name(t.name).unwrap(), t));
        }
        // The generated `dispatch` match and the ROUTES data decide alike, for every
        // combination a tier routes and shapes on both sides of every route bound.
        for r in set.routes() {
            let mut dims: Vec<(u64, u64, u64)> = Vec::new();
            for (range, which) in [(r.m, 0), (r.n, 1), (r.k, 2)] {
                let mut vs = vec![range.min, range.min.saturating_sub(1), range.min + 1];
                if let Some(max) = range.max {
                    vs.extend([max, max + 1, max.saturating_sub(1)]);
                }
                for v in vs {
                    let mut d = (7, 4096, 4096);
                    match which {
                        0 => d.0 = v,
                        1 => d.1 = v,
                        _ => d.2 = v,
                    }
                    dims.push(d);
                }
            }
            for (m, n, k) in dims {
                assert_eq!(
                    set.dispatch(r.tier, r.policy, r.op, r.dtype, m, n, k),
                    set.dispatch_from_routes(r.tier, r.policy, r.op, r.dtype, m, n, k),
                    "{} {} {} at {m}x{n}x{k}",
                    r.policy,
                    r.op,
                    r.dtype
                );
            }
        }
    }
}
