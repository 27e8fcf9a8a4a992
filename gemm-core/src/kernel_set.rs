//! [`KernelSet`]: one build's generated tables (tiers with their cubins, contracts, kernels,
//! conversions, argument structs, routes, resources, PTX, the dispatch `match`) as one value.
//! The runtime serves a set on a device; without one, the planner and `explain` read it. The
//! runtime's own build is one set, a downstream crate's `gemm_codegen::Builder` build another,
//! and the generator's `explain` a third, made in memory.

use crate::args::AbiInfo;
use crate::dispatch_memo::{self, Question};
use crate::table::{
    ContractInfo, ConversionId, ConversionInfo, ConversionKind, KernelId, KernelInfo,
    KernelResources, RouteHit, RouteInfo, RowOp, TierId, TierInfo, TierPtx,
};
use crate::vocab::{Dtype, DtypeTriple, Op, Policy};
use std::sync::OnceLock;
use thiserror::Error;

/// The generated route tables of a set: `(tier, policy, op, dtype, m, n, k)` to the first
/// matching route's kernel.
pub type DispatchFn = fn(TierId, Policy, Op, DtypeTriple, u64, u64, u64) -> Option<RouteHit>;

/// Everything a [`KernelSet`] is made of. Filled by generated code (`gemm_codegen::Builder`,
/// which the runtime's own build script uses too); a hand-made one is checked the same way
/// ([`KernelSet::check`]) before a context uses it.
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
    /// Every argument struct the set's kernels take, with its generated `bind`.
    pub abis: &'static [AbiInfo],
    /// Every expanded route of every tier, in match order within a tier.
    pub routes: &'static [RouteInfo],
    /// ptxas's report per kernel (same length as `kernels`; zeros without cubins).
    pub resources: &'static [KernelResources],
    /// Whether the cubins were compiled and embedded.
    pub cubins_present: bool,
    /// Whether the kernels carry the timing-perturbation delays (a test build made with
    /// `Builder::timing_perturbation`; docs/timing.md). False for every shipped set.
    pub timing_perturbation: bool,
    /// The embedded PTX of every tier that has it, each with its units in the order of its
    /// tier's modules.
    pub ptx: &'static [TierPtx],
    /// The generated route `match` (what `routes` says, compiled); `None` for a set made in
    /// memory, which then matches `routes` in order.
    pub dispatch: Option<DispatchFn>,
}

/// One build's kernel tables. Kernel, tier and conversion ids are indices into one set's
/// tables: an id means nothing in another set.
#[derive(Debug)]
pub struct KernelSet {
    parts: KernelSetParts,
    /// Each tier's [`max_n`](Self::max_n), computed on first use: the planner asks for it on
    /// every call, and scanning a tier's kernels for it cost more than the route's match.
    pub(crate) max_n: OnceLock<Box<[u64]>>,
    /// The set's id in the threads' dispatch memos ([`crate::dispatch_memo`]), taken on the
    /// first lookup.
    memo_id: OnceLock<u64>,
}

/// Why a [`KernelSet`]'s tables are inconsistent.
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
    /// A tier's kernel or conversion range, a kernel's module, a route's kernel or a
    /// contract or argument struct a kernel names points outside its table.
    #[error("kernel set {set}: {what} is outside its table")]
    OutOfRange { set: &'static str, what: String },
    /// A tier's PTX is not the tier's: its index names another tier, or its units are not the
    /// tier's modules in their order.
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
    /// An argument struct's bind does not fill a field as the set's specs declare it.
    #[error("kernel set {set}: argument struct {abi}, field `{field}` ({location}): {problem}")]
    AbiField {
        set: &'static str,
        abi: &'static str,
        field: &'static str,
        location: &'static str,
        problem: String,
    },
}

impl KernelSet {
    /// A set of these parts; [`check`](Self::check) says whether its tables are consistent.
    pub const fn from_parts(parts: KernelSetParts) -> KernelSet {
        KernelSet {
            parts,
            max_n: OnceLock::new(),
            memo_id: OnceLock::new(),
        }
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

    /// Every argument struct of the set.
    pub fn abis(&self) -> &'static [AbiInfo] {
        self.parts.abis
    }

    /// The argument struct of this name.
    pub fn abi(&self, name: &str) -> Option<&'static AbiInfo> {
        self.parts.abis.iter().find(|a| a.name == name)
    }

    /// Every expanded route of the set.
    pub fn routes(&self) -> &'static [RouteInfo] {
        self.parts.routes
    }

    /// The routes of one (tier, policy, op, dtype), in match order.
    pub fn routes_for(
        &self,
        tier: TierId,
        policy: Policy,
        op: Op,
        dtype: DtypeTriple,
    ) -> impl Iterator<Item = &'static RouteInfo> {
        self.parts
            .routes
            .iter()
            .filter(move |r| r.tier == tier && r.policy == policy && r.op == op && r.dtype == dtype)
    }

    /// Whether the set's cubins were compiled and embedded.
    pub fn cubins_present(&self) -> bool {
        self.parts.cubins_present
    }

    /// Whether the set's kernels carry seeded timing-perturbation delays (a test build).
    pub fn timing_perturbation(&self) -> bool {
        self.parts.timing_perturbation
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
    /// conditions hold, in the GEMM view `C[m, n] = sum_k A(m, k) B(k, n)`. Recent answers
    /// are kept per thread ([`crate::dispatch_memo`]).
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
        let set = *self.memo_id.get_or_init(dispatch_memo::new_set_id);
        let question = Question::new(set, (tier, policy, op, dtype), (m, n, k));
        dispatch_memo::answer(question, || match self.parts.dispatch {
            Some(dispatch) => dispatch(tier, policy, op, dtype, m, n, k),
            None => self.dispatch_from_routes(tier, policy, op, dtype, m, n, k),
        })
    }

    /// [`dispatch`](Self::dispatch) from the route data alone (what the generated `match`
    /// compiles; tests check both agree).
    #[allow(clippy::too_many_arguments)]
    pub fn dispatch_from_routes(
        &self,
        tier: TierId,
        policy: Policy,
        op: Op,
        dtype: DtypeTriple,
        m: u64,
        n: u64,
        k: u64,
    ) -> Option<RouteHit> {
        self.routes_for(tier, policy, op, dtype)
            .find(|r| r.matches(m, n, k))
            .map(RouteInfo::hit)
    }

    /// The route a call takes, `(hit, false)`, or for a half call without a route of its own the
    /// half fallback's f32 route, `(hit, true)`: when that route's contract is defined for the
    /// half inputs (fma-k256 is, TF32's tc-tf32-k8 is not) and the tier has the conversions
    /// (half to f32 for A and B, f32 to C's type). `None` when neither serves it. Whether the
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
        if dtype == f32s || !self.can_convert(tier, dtype) {
            return None;
        }
        self.dispatch(tier, policy, op, f32s, m, n, k)
            .filter(|hit| self.contract_takes(hit.kernel, dtype.ab))
            .map(|hit| (hit, true))
    }

    /// Whether `tier` has the conversions the half fallback of `dtype` runs: A's and B's type
    /// to f32, and f32 to C's when C is not f32.
    fn can_convert(&self, tier: TierId, dtype: DtypeTriple) -> bool {
        let up =
            dtype.ab == Dtype::F32 || self.conversion_for(tier, dtype.ab, Dtype::F32).is_some();
        let down =
            dtype.c == Dtype::F32 || self.conversion_for(tier, Dtype::F32, dtype.c).is_some();
        up && down
    }

    /// The tier serving a device of compute capability `cc`: an arch-specific tier of exactly
    /// it, else the portable tier of its major version with the highest minor not above it.
    pub fn tier_for_capability(&self, cc: (u32, u32)) -> Option<&'static TierInfo> {
        let tiers = self.parts.tiers;
        tiers
            .iter()
            .find(|t| t.arch_specific && t.compute_capability == cc)
            .or_else(|| {
                tiers
                    .iter()
                    .filter(|t| {
                        !t.arch_specific
                            && t.compute_capability.0 == cc.0
                            && t.compute_capability.1 <= cc.1
                    })
                    .max_by_key(|t| t.compute_capability.1)
            })
    }

    /// The tier of this name.
    pub fn tier_by_name(&self, name: &str) -> Option<&'static TierInfo> {
        self.parts.tiers.iter().find(|t| t.name == name)
    }

    /// The tier with this id.
    pub fn tier(&self, id: TierId) -> Option<&'static TierInfo> {
        self.parts.tiers.get(id.0 as usize)
    }

    /// The kernel with this id.
    pub fn kernel(&self, id: KernelId) -> Option<&'static KernelInfo> {
        self.parts.kernels.get(id.0 as usize)
    }

    /// The kernels of a tier.
    pub fn tier_kernels(&self, tier: TierId) -> &'static [KernelInfo] {
        self.tier(tier)
            .and_then(|t| {
                self.parts
                    .kernels
                    .get(t.kernels.start as usize..t.kernels.end as usize)
            })
            .unwrap_or_default()
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

    /// The conversion and row kernels of `tier` (empty for an unknown tier).
    pub fn tier_conversions(&self, tier: TierId) -> &'static [ConversionInfo] {
        self.parts
            .tiers
            .get(tier.0 as usize)
            .and_then(|t| {
                self.parts
                    .conversions
                    .get(t.conversions.start as usize..t.conversions.end as usize)
            })
            .unwrap_or(&[])
    }

    /// The conversion kernel of `tier` from `from` to `to`, if the specs build one.
    pub fn conversion_for(
        &self,
        tier: TierId,
        from: Dtype,
        to: Dtype,
    ) -> Option<&'static ConversionInfo> {
        self.tier_conversions(tier).iter().find(|c| {
            c.from == from
                && c.to == to
                && !matches!(c.kind, ConversionKind::Row(_) | ConversionKind::Transpose)
        })
    }

    /// The transposing bit copy of `dtype` on `tier` ([`ConversionKind::Transpose`]), if the
    /// specs build one: what a [`Prepass::TransposeA`](crate::Prepass) kernel's launch runs.
    pub fn transpose_for(&self, tier: TierId, dtype: Dtype) -> Option<&'static ConversionInfo> {
        self.tier_conversions(tier)
            .iter()
            .find(|c| c.from == dtype && c.to == dtype && c.kind == ConversionKind::Transpose)
    }

    /// The row kernel of `tier` computing `op` from `from` rows of `cols` columns into `to`, if
    /// the specs build one: of the conversion's warp-path lengths, the shortest that holds
    /// such a row; for longer rows (the block path) the shortest of all, whose warp path asks
    /// the fewest registers. Every length computes the same tree, so this picks speed only.
    pub fn row_kernel(
        &self,
        tier: TierId,
        op: RowOp,
        from: Dtype,
        to: Dtype,
        cols: u64,
    ) -> Option<&'static ConversionInfo> {
        let mut built: Vec<&'static ConversionInfo> = self
            .tier_conversions(tier)
            .iter()
            .filter(|c| c.from == from && c.to == to && c.kind == ConversionKind::Row(op))
            .collect();
        built.sort_by_key(|c| c.warp_cols);
        built
            .iter()
            .find(|c| cols <= u64::from(c.warp_cols))
            .or(built.first())
            .copied()
    }

    /// `sm80 (8.0), sm90a (9.0), ...` for errors.
    pub fn tier_list(&self) -> String {
        self.tiers()
            .iter()
            .map(|t| {
                let (major, minor) = t.compute_capability;
                format!("{} ({major}.{minor})", t.name)
            })
            .collect::<Vec<_>>()
            .join(", ")
    }

    /// Whether the set's tables are consistent: every table's ids are its indices, every
    /// range, module, route, contract and argument struct a table names exists, there is one
    /// resource row a kernel, and every argument struct's bind fills each field as declared.
    /// Needs no device.
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
            if let Some(k) = p.kernels[kernels].iter().find(|k| k.tier != t.id) {
                return Err(out(format!(
                    "kernel {} in tier {}'s range, naming tier {},",
                    k.name, t.name, k.tier.0
                )));
            }
        }
        if let Some(k) = p
            .kernels
            .iter()
            .find(|k| !p.contracts.iter().any(|c| c.name == k.contract))
        {
            return Err(out(format!("kernel {}'s contract {}", k.name, k.contract)));
        }
        for r in p.routes {
            let kernel = self.kernel(r.kernel).filter(|k| k.tier == r.tier);
            let unaligned_ok = r
                .unaligned
                .is_none_or(|u| self.kernel(u).is_some_and(|k| k.tier == r.tier));
            if kernel.is_none() || !unaligned_ok {
                return Err(out(format!(
                    "route {} ({}) of tier {}'s kernel",
                    r.rule, r.location, r.tier.0
                )));
            }
        }
        // A batch kernel's launch sends entry z of a batch to grid z: it needs no K split along
        // z, no cluster (a peer would work on another entry) and the four strides in its
        // argument struct, or every z would compute entry 0. (Its tensor maps, if any, are
        // encoded 3-D, the entry their third coordinate.)
        for k in p.kernels.iter().filter(|k| k.batch) {
            let strides = self.abi(k.abi).is_some_and(|abi| {
                [
                    "a.batch_stride",
                    "b.batch_stride",
                    "c.batch_stride",
                    "bias.batch_stride",
                ]
                .iter()
                .all(|s| abi.fields.iter().any(|f| f.bind == *s && f.size == 8))
            });
            if k.cluster.0 > 1 || k.cluster.2 > 1 || !strides {
                return Err(out(format!(
                    "batch kernel {} (no K split or cluster, and an argument struct with the four batch strides)",
                    k.name
                )));
            }
        }
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
            if self.abi(abi).is_none() {
                return Err(out(format!("{kernel}'s argument struct {abi}")));
            }
        }
        for abi in p.abis {
            abi.check()
                .map_err(|(field, problem)| KernelSetError::AbiField {
                    set,
                    abi: abi.name,
                    field: field.name,
                    location: field.location,
                    problem,
                })?;
        }
        Ok(())
    }
}
