//! [`KernelSet`]: one build's generated tables (tiers with their cubins, contracts, kernels,
//! conversions, resources, the route `match` and the tier selection) as one value, so a
//! context can serve the runtime's own build ([`KernelSet::shipped`]) or a set a downstream
//! crate built from its own specs with `gemm_codegen::Builder` (docs/downstream.md).

use crate::table::{
    ContractInfo, ConversionId, ConversionInfo, Dtype, DtypeTriple, GridKind, KernelId, KernelInfo,
    KernelResources, Op, Policy, RouteHit, TierId, TierInfo, TierPtx,
};
use thiserror::Error;

/// The generated route tables of a set: `(tier, policy, op, dtype, m, n, k)` to the first
/// matching route's kernel.
pub type DispatchFn = fn(TierId, Policy, Op, DtypeTriple, u64, u64, u64) -> Option<RouteHit>;

/// The generated tier selection of a set: `(major, minor)` to the tier serving it.
pub type TierSelectFn = fn(u32, u32) -> Option<TierId>;

/// Everything a [`KernelSet`] is made of. Filled by generated code (the runtime's build
/// script for [`KernelSet::shipped`], `gemm_codegen::Builder` for a downstream set); a
/// hand-made one is checked the same way ([`KernelSet::check`]) before a context uses it.
#[derive(Clone, Copy, Debug)]
pub struct KernelSetParts {
    /// Who built the set (the builder's provenance, e.g. `my-crate build.rs`).
    pub name: &'static str,
    /// Every tier, `tiers[i].id == TierId(i)`.
    pub tiers: &'static [TierInfo],
    /// Every numeric contract.
    pub contracts: &'static [ContractInfo],
    /// Every kernel, `kernels[i].id == KernelId(i)`.
    pub kernels: &'static [KernelInfo],
    /// Every conversion kernel, `conversions[i].id == ConversionId(i)`.
    pub conversions: &'static [ConversionInfo],
    /// ptxas's report per kernel (same length as `kernels`; zeros without cubins).
    pub resources: &'static [KernelResources],
    /// Whether the cubins were compiled and embedded.
    pub cubins_present: bool,
    /// Whether the kernels carry the timing-perturbation delays (a test build made with
    /// `Builder::timing_perturbation`; docs/timing.md). False for every shipped set.
    pub timing_perturbation: bool,
    /// (ABI struct name, layout) of every argument struct of the set's specs, as
    /// `gemm_codegen::builder::abi_layouts` writes them: launches bind through the runtime's
    /// own structs, so each one a kernel names must have the runtime's layout.
    pub abi_layouts: &'static [(&'static str, &'static str)],
    /// The embedded PTX of every tier that has it (`rust/ptx.rs`'s `TIER_PTX`), each with its
    /// units in the order of its tier's modules: what a device newer than every tier, or a
    /// context opened on a tier whose cubin the device cannot load, JIT-compiles.
    pub ptx: &'static [TierPtx],
    /// The route tables.
    pub dispatch: DispatchFn,
    /// The tier selection.
    pub tier_for_capability: TierSelectFn,
}

/// One build's kernel tables: what a [`Context`](crate::Context) dispatches through and loads
/// cubins from. Kernel, tier and conversion ids are indices into one set's tables: an id means
/// nothing in another set.
///
/// The runtime's own build is [`KernelSet::shipped`] (the shipped specs, every tier; what
/// [`Context::new`](crate::Context::new) and the free lookups such as
/// [`kernel`](crate::kernel) use). A downstream crate builds its own from its build script
/// with `gemm_codegen::Builder`, includes the generated file and opens a context on it:
///
/// ```ignore
/// // build.rs: gemm_codegen::Builder::new().specs("specs").tiers(["sm90a"]).build()?;
/// include!(concat!(env!("OUT_DIR"), "/gemm_kernels.rs")); // pub static KERNELS: KernelSet
///
/// let ctx = gemm_runtime::Context::with_kernels(0, &KERNELS)?;
/// ```
///
/// Lookups without a device:
///
/// ```
/// use gemm_runtime::{Dtype, DtypeTriple, KernelSet, Op, Policy};
/// let set = KernelSet::shipped();
/// set.check().expect("the runtime's own tables are consistent");
/// let tier = set.tier_for_capability((9, 0)).expect("an H100/H200 is served");
/// let bf16 = DtypeTriple::new(Dtype::Bf16, Dtype::Bf16, Dtype::F32);
/// let hit = set.dispatch(tier.id, Policy::Exact, Op::Nn, bf16, 1, 4096, 4096).unwrap();
/// assert_eq!(set.kernel(hit.kernel).unwrap().contract, "fma-k256");
/// ```
#[derive(Debug)]
pub struct KernelSet {
    parts: KernelSetParts,
}

/// Why a [`KernelSet`] cannot be served by this runtime.
#[derive(Clone, Debug, PartialEq, Eq, Error)]
#[non_exhaustive]
#[allow(missing_docs)] // the fields are the values the variant's message names
pub enum KernelSetError {
    /// A table entry's id is not its index (the tables were not generated together).
    #[error("kernel set {set}: {table}[{index}] carries id {id}")]
    IdMismatch {
        set: &'static str,
        table: &'static str,
        index: usize,
        id: usize,
    },
    /// A tier's kernel or conversion range, or a kernel's module, points outside the tables.
    #[error("kernel set {set}: {what} is outside its table")]
    OutOfRange { set: &'static str, what: String },
    /// A tier's PTX is not the tier's: its index names another tier, or its units are not the
    /// tier's modules in their order (the PTX table was not generated with the tiers).
    #[error("kernel set {set}: the PTX of tier {tier} {what}")]
    Ptx {
        set: &'static str,
        tier: &'static str,
        what: &'static str,
    },
    /// The resource table does not have one row a kernel.
    #[error("kernel set {set}: {resources} resource rows for {kernels} kernels")]
    Resources {
        set: &'static str,
        resources: usize,
        kernels: usize,
    },
    /// A kernel or conversion takes an argument struct this runtime does not bind, or binds
    /// with another layout (the set's specs declare it differently from the runtime's).
    #[error("kernel set {set}: {kernel} takes {abi}, whose layout {layout} differs from this runtime's ({runtime}): build the set from specs whose [abi.{abi}] is the runtime's")]
    Abi {
        set: &'static str,
        kernel: &'static str,
        abi: &'static str,
        layout: String,
        runtime: String,
    },
}

impl KernelSet {
    /// A set of these parts; [`check`](Self::check) says whether this runtime can serve it
    /// ([`Context::with_kernels`](crate::Context::with_kernels) checks before opening).
    pub const fn from_parts(parts: KernelSetParts) -> KernelSet {
        KernelSet { parts }
    }

    /// The runtime's own set: the shipped specs (or `GEMM_AOT_SPECS`) as its build script
    /// built them. With the `shipped-kernels` feature off its tables are there but it
    /// carries no cubins, so a context cannot launch from it.
    pub fn shipped() -> &'static KernelSet {
        &crate::generated::SHIPPED
    }

    /// The parts the set was made of (to derive another set from it).
    pub fn parts(&self) -> KernelSetParts {
        self.parts
    }

    /// Who built the set.
    pub fn name(&self) -> &'static str {
        self.parts.name
    }

    /// Every tier of the set.
    pub fn tiers(&self) -> &'static [TierInfo] {
        self.parts.tiers
    }

    /// Every numeric contract of the set.
    pub fn contracts(&self) -> &'static [ContractInfo] {
        self.parts.contracts
    }

    /// Every kernel of the set.
    pub fn kernels(&self) -> &'static [KernelInfo] {
        self.parts.kernels
    }

    /// Every conversion kernel of the set.
    pub fn conversions(&self) -> &'static [ConversionInfo] {
        self.parts.conversions
    }

    /// Whether the set's cubins were compiled and embedded.
    pub fn cubins_present(&self) -> bool {
        self.parts.cubins_present
    }

    /// Whether the set's kernels carry seeded timing-perturbation delays (a test build;
    /// [`Context::set_timing_perturbation_seed`](crate::Context::set_timing_perturbation_seed)).
    pub fn timing_perturbation(&self) -> bool {
        self.parts.timing_perturbation
    }

    /// (ABI struct name, layout) of every argument struct the set was built with.
    pub fn abi_layouts(&self) -> &'static [(&'static str, &'static str)] {
        self.parts.abi_layouts
    }

    /// The embedded PTX of `tier`, when the set carries PTX for it (none for a tier built on an
    /// arch-specific instruction, such as sm90a's wgmma).
    pub fn ptx(&self, tier: TierId) -> Option<&'static TierPtx> {
        self.parts
            .ptx
            .iter()
            .find(|p| p.tier_index == tier.0 as usize)
    }

    /// The route tables: the first route of (tier, policy, op, dtype) whose m, n and k
    /// conditions hold, in the GEMM view `C[m, n] = sum_k A(m, k) B(k, n)`.
    #[allow(clippy::too_many_arguments)]
    pub fn dispatch(
        &self,
        tier: TierId,
        policy: Policy,
        op: Op,
        dtype: DtypeTriple,
        m: u64,
        n: u64,
        k: u64,
    ) -> Option<RouteHit> {
        (self.parts.dispatch)(tier, policy, op, dtype, m, n, k)
    }

    /// The route a call takes, `(hit, false)`, or for a half call without a route of its own the
    /// half fallback's f32 route, `(hit, true)`, when that route's contract is defined for the
    /// half inputs (fma-k256 is, TF32's tc-tf32-k8 is not); `None` when neither serves it. The
    /// one decision `Context::gemm`, `Context::explain` and `Context::served` share. Whether the
    /// fallback applies reads (tier, policy, op, dtype) and the route's contract, which one
    /// (policy, op, dtype, n, k) fixes for every m.
    #[allow(clippy::too_many_arguments)]
    pub fn route_or_fallback(
        &self,
        tier: TierId,
        policy: Policy,
        op: Op,
        dtype: DtypeTriple,
        m: u64,
        n: u64,
        k: u64,
    ) -> Option<(RouteHit, bool)> {
        if let Some(hit) = self.dispatch(tier, policy, op, dtype, m, n, k) {
            return Some((hit, false));
        }
        let f32s = DtypeTriple::new(Dtype::F32, Dtype::F32, Dtype::F32);
        if dtype == f32s {
            return None;
        }
        self.dispatch(tier, policy, op, f32s, m, n, k)
            .filter(|hit| self.contract_takes(hit.kernel, dtype.ab))
            .map(|hit| (hit, true))
    }

    /// The tier serving a device of compute capability `cc`: an arch-specific tier of exactly
    /// it, else the portable tier of its major version with the highest minor not above it.
    pub fn tier_for_capability(&self, cc: (u32, u32)) -> Option<&'static TierInfo> {
        let id = (self.parts.tier_for_capability)(cc.0, cc.1)?;
        self.parts.tiers.get(id.0 as usize)
    }

    /// The tier of this name.
    pub fn tier_by_name(&self, name: &str) -> Option<&'static TierInfo> {
        self.parts.tiers.iter().find(|t| t.name == name)
    }

    /// The kernel with this id.
    pub fn kernel(&self, id: KernelId) -> Option<&'static KernelInfo> {
        self.parts.kernels.get(id.0 as usize)
    }

    /// The contract a kernel implements.
    pub fn contract_of(&self, id: KernelId) -> Option<&'static ContractInfo> {
        let name = self.kernel(id)?.contract;
        self.parts.contracts.iter().find(|c| c.name == name)
    }

    /// Whether kernel `id`'s contract is defined for `input` operands (see
    /// [`ContractInfo::inputs`]).
    pub fn contract_takes(&self, id: KernelId, input: Dtype) -> bool {
        self.contract_of(id)
            .is_some_and(|c| c.inputs.contains(&input))
    }

    /// ptxas's report for a kernel.
    pub fn resources(&self, id: KernelId) -> Option<&'static KernelResources> {
        self.parts.resources.get(id.0 as usize)
    }

    /// The conversion kernel with this id.
    pub fn conversion(&self, id: ConversionId) -> Option<&'static ConversionInfo> {
        self.parts.conversions.get(id.0 as usize)
    }

    /// The conversion kernel of `tier` from `from` to `to`, if the specs build one.
    pub fn conversion_for(
        &self,
        tier: TierId,
        from: Dtype,
        to: Dtype,
    ) -> Option<&'static ConversionInfo> {
        let t = self.parts.tiers.get(tier.0 as usize)?;
        self.parts
            .conversions
            .get(t.conversions.start as usize..t.conversions.end as usize)?
            .iter()
            .find(|c| c.from == from && c.to == to)
    }

    /// The largest n every GEMM kernel of `tier` can launch: `65535 * tile.n` of its narrowest
    /// one-block-a-tile kernel (grid.y carries the n tiles and is limited to 65535); persistent
    /// kernels put every tile on grid.x and take any n. The runtime refuses an n above this for
    /// every m alike, so whether a shape is refused never depends on the batch.
    pub fn max_n(&self, tier: TierId) -> u64 {
        let Some(t) = self.parts.tiers.get(tier.0 as usize) else {
            return 0;
        };
        self.parts
            .kernels
            .get(t.kernels.start as usize..t.kernels.end as usize)
            .unwrap_or_default()
            .iter()
            .filter(|k| k.grid == GridKind::Tiles)
            .map(|k| 65535 * k.tile.n as u64)
            .min()
            .unwrap_or(u64::MAX)
    }

    /// Whether this runtime can serve the set: every table's ids are its indices, every
    /// range and module index points inside its tables, there is one resource row a kernel,
    /// and every argument struct a kernel or conversion takes has this runtime's layout
    /// (launches bind through the runtime's structs). Needs no device.
    pub fn check(&self) -> Result<(), KernelSetError> {
        let p = &self.parts;
        let set = p.name;
        let ids = p
            .tiers
            .iter()
            .enumerate()
            .map(|(i, t)| ("tiers", i, t.id.0 as usize))
            .chain(
                p.kernels
                    .iter()
                    .enumerate()
                    .map(|(i, k)| ("kernels", i, k.id.0 as usize)),
            )
            .chain(
                p.conversions
                    .iter()
                    .enumerate()
                    .map(|(i, c)| ("conversions", i, c.id.0 as usize)),
            );
        for (table, index, id) in ids {
            if index != id {
                return Err(KernelSetError::IdMismatch {
                    set,
                    table,
                    index,
                    id,
                });
            }
        }
        if p.resources.len() != p.kernels.len() {
            return Err(KernelSetError::Resources {
                set,
                resources: p.resources.len(),
                kernels: p.kernels.len(),
            });
        }
        let out = |what: String| KernelSetError::OutOfRange { set, what };
        for t in p.tiers {
            let kernels = t.kernels.start as usize..t.kernels.end as usize;
            let conversions = t.conversions.start as usize..t.conversions.end as usize;
            if p.kernels.get(kernels.clone()).is_none() {
                return Err(out(format!("tier {}'s kernels {kernels:?}", t.name)));
            }
            if p.conversions.get(conversions.clone()).is_none() {
                return Err(out(format!(
                    "tier {}'s conversions {conversions:?}",
                    t.name
                )));
            }
            // A kernel's tier field is the tier whose range holds it (its module index is
            // read against that tier's modules).
            if let Some(k) = p.kernels[kernels].iter().find(|k| k.tier != t.id) {
                return Err(out(format!(
                    "kernel {} in tier {}'s range, naming tier {},",
                    k.name, t.name, k.tier.0
                )));
            }
        }
        // Every kernel's contract is in the table (the half fallback reads its inputs there).
        if let Some(k) = p
            .kernels
            .iter()
            .find(|k| !p.contracts.iter().any(|c| c.name == k.contract))
        {
            return Err(out(format!("kernel {}'s contract {}", k.name, k.contract)));
        }
        // A tier's PTX units are loaded by the index of its modules: same count, same order;
        // one entry a tier.
        for (i, x) in p.ptx.iter().enumerate() {
            if p.ptx[..i].iter().any(|y| y.tier_index == x.tier_index) {
                return Err(KernelSetError::Ptx {
                    set,
                    tier: x.tier,
                    what: "is listed twice",
                });
            }
            let ptx = |what| KernelSetError::Ptx {
                set,
                tier: x.tier,
                what,
            };
            let Some(t) = p.tiers.get(x.tier_index).filter(|t| t.name == x.tier) else {
                return Err(ptx("names another tier's index"));
            };
            let same = t.modules.len() == x.modules.len()
                && t.modules
                    .iter()
                    .zip(x.modules)
                    .all(|(m, u)| m.name == u.name);
            if !same {
                return Err(ptx("does not list the tier's modules in their order"));
            }
        }
        let in_tier = |tier: TierId, module: u16| {
            p.tiers
                .get(tier.0 as usize)
                .is_some_and(|t| (module as usize) < t.modules.len())
        };
        let runtime: &[(&str, &str)] = &crate::generated::ABI_LAYOUTS;
        let layout_of = |layouts: &[(&'static str, &'static str)], abi: &str| {
            layouts.iter().find(|(n, _)| *n == abi).map(|(_, l)| *l)
        };
        let takes = p
            .kernels
            .iter()
            .map(|k| (k.name, k.abi, k.tier, k.module))
            .chain(
                p.conversions
                    .iter()
                    .map(|c| (c.name, c.abi, c.tier, c.module)),
            );
        for (kernel, abi, tier, module) in takes {
            if !in_tier(tier, module) {
                return Err(out(format!(
                    "{kernel}'s module {module} of tier {}",
                    tier.0
                )));
            }
            let ours = layout_of(runtime, abi);
            let theirs = layout_of(p.abi_layouts, abi);
            if ours.is_none() || ours != theirs {
                return Err(KernelSetError::Abi {
                    set,
                    kernel,
                    abi,
                    layout: theirs.unwrap_or("(not declared by the set)").to_string(),
                    runtime: ours
                        .unwrap_or("not an argument struct it binds")
                        .to_string(),
                });
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_shipped_set_is_the_generated_tables_and_passes_its_check() {
        let set = KernelSet::shipped();
        set.check().unwrap();
        assert_eq!(set.tiers().len(), crate::TIERS.len());
        assert_eq!(set.kernels().len(), crate::KERNELS.len());
        assert_eq!(set.cubins_present(), crate::CUBINS_PRESENT);
        for t in set.tiers() {
            assert!(std::ptr::eq(set.tier_by_name(t.name).unwrap(), t));
        }
    }

    fn no_route(
        _: TierId,
        _: Policy,
        _: Op,
        _: DtypeTriple,
        _: u64,
        _: u64,
        _: u64,
    ) -> Option<RouteHit> {
        None
    }

    fn no_tier(_: u32, _: u32) -> Option<TierId> {
        None
    }

    fn shipped_parts() -> KernelSetParts {
        KernelSet::shipped().parts()
    }

    #[test]
    fn a_set_whose_abi_differs_from_the_runtime_s_is_refused() {
        static OTHER: [(&str, &str); 1] = [(
            "GemmArgs",
            "GemmArgs: size 8, align 8; a ConstPtr @0 <- APtr",
        )];
        let mut parts = shipped_parts();
        parts.abi_layouts = &OTHER;
        let err = KernelSet::from_parts(parts).check().unwrap_err();
        assert!(
            matches!(
                err,
                KernelSetError::Abi {
                    abi: "GemmArgs",
                    ..
                }
            ),
            "{err}"
        );
        // Missing from the set's own list: refused too.
        parts.abi_layouts = &[];
        assert!(matches!(
            KernelSet::from_parts(parts).check(),
            Err(KernelSetError::Abi { .. })
        ));
    }

    #[test]
    fn inconsistent_tables_are_refused() {
        let mut parts = shipped_parts();
        parts.resources = &[];
        assert!(matches!(
            KernelSet::from_parts(parts).check(),
            Err(KernelSetError::Resources { .. })
        ));
        let mut parts = shipped_parts();
        parts.kernels = &parts.kernels[1..];
        parts.resources = &parts.resources[1..];
        assert!(matches!(
            KernelSet::from_parts(parts).check(),
            Err(KernelSetError::IdMismatch {
                table: "kernels",
                ..
            })
        ));
        // PTX whose units are not its tier's modules, or whose index names another tier.
        let mut parts = shipped_parts();
        if let Some(first) = parts.ptx.first() {
            static WRONG: [crate::table::TierPtx; 1] = [crate::table::TierPtx {
                tier: "no-such-tier",
                tier_index: 0,
                target: "compute_80",
                modules: &[],
            }];
            parts.ptx = &WRONG;
            assert!(matches!(
                KernelSet::from_parts(parts).check(),
                Err(KernelSetError::Ptx { .. })
            ));
            let real = &shipped_parts().tiers[first.tier_index];
            static NO_UNITS: std::sync::OnceLock<[crate::table::TierPtx; 1]> =
                std::sync::OnceLock::new();
            let no_units = NO_UNITS.get_or_init(|| {
                [crate::table::TierPtx {
                    tier: real.name,
                    tier_index: first.tier_index,
                    target: first.target,
                    modules: &[],
                }]
            });
            parts.ptx = no_units;
            assert!(matches!(
                KernelSet::from_parts(parts).check(),
                Err(KernelSetError::Ptx { what, .. }) if what.contains("modules")
            ));
        }
        // PTX listed twice for one tier.
        let mut parts = shipped_parts();
        if let Some(first) = parts.ptx.first() {
            static TWICE: std::sync::OnceLock<[crate::table::TierPtx; 2]> =
                std::sync::OnceLock::new();
            let copy = || crate::table::TierPtx {
                tier: first.tier,
                tier_index: first.tier_index,
                target: first.target,
                modules: first.modules,
            };
            parts.ptx = TWICE.get_or_init(|| [copy(), copy()]);
            assert!(matches!(
                KernelSet::from_parts(parts).check(),
                Err(KernelSetError::Ptx { what, .. }) if what.contains("twice")
            ));
        }
        // Kernels without their contract in the table: the half fallback could not read its
        // inputs.
        let mut parts = shipped_parts();
        parts.contracts = &[];
        assert!(matches!(
            KernelSet::from_parts(parts).check(),
            Err(KernelSetError::OutOfRange { what, .. }) if what.contains("contract")
        ));
        // An empty set is consistent, and serves nothing.
        let empty = KernelSet::from_parts(KernelSetParts {
            name: "empty",
            tiers: &[],
            contracts: &[],
            kernels: &[],
            conversions: &[],
            resources: &[],
            cubins_present: false,
            timing_perturbation: false,
            abi_layouts: &[],
            ptx: &[],
            dispatch: no_route,
            tier_for_capability: no_tier,
        });
        empty.check().unwrap();
        assert!(empty.tier_for_capability((9, 0)).is_none());
        assert_eq!(empty.max_n(TierId(0)), 0);
    }
}
