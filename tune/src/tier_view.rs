//! The tier being tuned, as the tuner reads it: which route serves a shape now (with every
//! routes file) and without the file being rewritten (the baseline its routes are measured
//! against), the candidates of a region (the tier's kernels of the region's policy and
//! contract), which kernel actually runs a shape, and the dtypes a tuned route may cover.

use crate::error::TuneError;
use gemm_spec::{Dtype, DtypeTriple, Family, Op, Policy, Route, SpecSet, Tier};
use serde::Serialize;

/// A route's kernel and its unaligned kernel (`family.tile` each): what a tuned route names.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
pub struct Pick {
    pub kernel: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub unaligned: Option<String>,
}

impl Pick {
    pub fn of(route: &Route) -> Pick {
        Pick {
            kernel: route.kernel_ref(),
            unaligned: route.unaligned.as_ref().map(|u| u.to_string()),
        }
    }
}

/// A kernel that could serve a region, or why it cannot.
#[derive(Clone, Debug)]
pub struct Candidate {
    pub pick: Pick,
    /// Set when the kernel is not measured here.
    pub skipped: Option<String>,
}

/// The dtypes a tuned route covers: every triple its kernel's family has for the op, or a
/// list where some of those are routed under another contract or not at all.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Dtypes {
    Any,
    List(Vec<DtypeTriple>),
}

pub struct TierView<'a> {
    pub specs: &'a SpecSet,
    pub tier: &'a Tier,
    pub policy: Policy,
    /// The routes file being rewritten, as the tier's routes name their file.
    pub rewritten: Option<&'a str>,
}

impl<'a> TierView<'a> {
    pub fn new(
        specs: &'a SpecSet,
        tier: &str,
        policy: Policy,
        rewritten: Option<&'a str>,
    ) -> Result<TierView<'a>, TuneError> {
        let t = specs.tier(tier).ok_or_else(|| TuneError::UnknownTier {
            tier: tier.to_string(),
            known: specs
                .tiers
                .iter()
                .map(|t| t.name.clone())
                .collect::<Vec<_>>()
                .join(", "),
        })?;
        Ok(TierView {
            specs,
            tier: t,
            policy,
            rewritten,
        })
    }

    /// The route that serves the shape with every routes file the tier includes.
    pub fn current(&self, op: Op, dtype: DtypeTriple, m: u64, n: u64, k: u64) -> Option<&Route> {
        self.tier.select(self.policy, op, dtype, m, n, k)
    }

    /// The route that serves the shape without the routes file being rewritten.
    pub fn base(&self, op: Op, dtype: DtypeTriple, m: u64, n: u64, k: u64) -> Option<&Route> {
        self.tier
            .routes_for(self.policy, op, dtype)
            .into_iter()
            .filter(|r| Some(r.location.file.as_str()) != self.rewritten)
            .find(|r| r.matches(m, n, k))
    }

    fn family_of(&self, kernel: &str) -> Option<&Family> {
        let family = kernel.split_once('.').map_or(kernel, |(f, _)| f);
        self.specs.family(family)
    }

    pub fn contract_of(&self, kernel: &str) -> Option<&str> {
        self.family_of(kernel).map(|f| f.contract.as_str())
    }

    /// Whether the tier routes (policy, op, dtype) at all.
    pub fn serves(&self, op: Op, dtype: DtypeTriple) -> bool {
        !self.tier.routes_for(self.policy, op, dtype).is_empty()
    }

    /// The kernel that runs a shape when `pick` is routed: its kernel, or its unaligned one
    /// where the kernel reads through cp.async (or TMA without a repack conversion) and a
    /// leading dimension is off 16 bytes (the operands as the timer stores them: dense, `lda` = k for nn and nt, m for
    /// tn; `ldb` = n for nn and tn, k for nt), or k is 0.
    pub fn runs<'p>(
        &self,
        pick: &'p Pick,
        op: Op,
        dtype: DtypeTriple,
        m: u64,
        n: u64,
        k: u64,
    ) -> &'p str {
        let family = self.family_of(&pick.kernel);
        let needs_aligned = family.is_some_and(|f| f.kind.operands.needs_unaligned());
        // A TMA kernel whose operands are off 16 bytes reads aligned copies of them (the
        // runtime's repack) where the set has a repack conversion of the type; only k = 0 (or
        // no repack) leaves it to the unaligned kernel.
        let repacks = family.is_some_and(|f| f.kind.operands == gemm_spec::OperandPath::Tma)
            && self.specs.conversions.values().any(|c| {
                c.row_op.is_none() && !c.transpose && c.variants.contains(&(dtype.ab, dtype.ab))
            });
        match &pick.unaligned {
            Some(u) if needs_aligned && !aligned(op, dtype.ab, m, n, k) && !(repacks && k > 0) => u,
            _ => &pick.kernel,
        }
    }

    /// Every kernel of the tier of the view's policy and `contract` that builds (op, dtype),
    /// in the tier's tile order; the route `current` gives kernels that need aligned operands
    /// their unaligned kernel. A kernel whose K is bounded below `k` (a K split's `max_k`) is
    /// listed as skipped.
    pub fn candidates(
        &self,
        op: Op,
        dtype: DtypeTriple,
        contract: &str,
        current: &Route,
        k: u64,
    ) -> Vec<Candidate> {
        let current_plain = self
            .family_of(&current.kernel_ref())
            .is_some_and(|f| !f.kind.operands.needs_unaligned());
        let unaligned = current
            .unaligned
            .as_ref()
            .map(|u| u.to_string())
            .or_else(|| current_plain.then(|| current.kernel_ref()));
        let mut out = Vec::new();
        for tile in &self.tier.tiles {
            let Some(family) = self.specs.family(&tile.family) else {
                continue;
            };
            if family.policy != self.policy
                || family.contract != contract
                || !family.has_variant(op, dtype)
            {
                continue;
            }
            let kernel = format!("{}.{}", tile.family, tile.name);
            let needs = family.kind.operands.needs_unaligned();
            let max_k = self
                .specs
                .derive(self.tier, tile, op, dtype)
                .and_then(|d| d.ok())
                .and_then(|d| d.max_k);
            if let Some(max_k) = max_k.filter(|&max_k| k > max_k) {
                out.push(Candidate {
                    pick: Pick {
                        kernel,
                        unaligned: None,
                    },
                    skipped: Some(format!(
                        "takes k up to {max_k} (its K split's max_k), and this k is {k}"
                    )),
                });
                continue;
            }
            let (pick_unaligned, skipped) = match (&unaligned, needs) {
                (_, false) => (None, None),
                (Some(u), true) => (Some(u.clone()), None),
                (None, true) => (
                    None,
                    Some(format!(
                        "reads through {}, and the routed kernel {} has no plain-load kernel to pair it with as its unaligned kernel",
                        family.kind.operands.as_str(),
                        current.kernel_ref()
                    )),
                ),
            };
            out.push(Candidate {
                pick: Pick {
                    kernel,
                    unaligned: pick_unaligned,
                },
                skipped,
            });
        }
        out
    }

    /// The dtypes a route to `pick` at (n, k, m = `m_probe`) may cover: those of its family
    /// for `op` that the tier routes and routes there under `contract` (so the tuned route
    /// keeps every m of their (n, k) on one contract and adds no (op, dtype) the tier lacks),
    /// and that its unaligned kernel builds.
    pub fn dtypes(
        &self,
        pick: &Pick,
        op: Op,
        (m_probe, n, k): (u64, u64, u64),
        contract: &str,
    ) -> Dtypes {
        let Some(family) = self.family_of(&pick.kernel) else {
            return Dtypes::List(Vec::new());
        };
        let unaligned = pick.unaligned.as_deref().and_then(|u| self.family_of(u));
        let all: Vec<DtypeTriple> = family
            .variants
            .iter()
            .filter(|(o, _)| *o == op)
            .map(|(_, d)| *d)
            .collect();
        let kept: Vec<DtypeTriple> = all
            .iter()
            .copied()
            .filter(|&d| {
                let routed_here = self
                    .current(op, d, m_probe, n, k)
                    .and_then(|r| self.contract_of(&r.kernel_ref()))
                    == Some(contract);
                routed_here && unaligned.is_none_or(|u| u.has_variant(op, d))
            })
            .collect();
        if kept == all {
            Dtypes::Any
        } else {
            Dtypes::List(kept)
        }
    }
}

/// Whether TMA and cp.async take dense operands of this shape: k > 0 and both leading
/// dimensions a multiple of 16 bytes.
pub fn aligned(op: Op, ab: Dtype, m: u64, n: u64, k: u64) -> bool {
    let elem = ab.size_bytes();
    let lda = if op == Op::Tn { m } else { k };
    let ldb = if op == Op::Nt { k } else { n };
    k > 0 && (lda * elem).is_multiple_of(16) && (ldb * elem).is_multiple_of(16)
}

/// The triple measured for op with `input` operands: C in the input type for nn and nt, f32
/// for tn (a gradient accumulating), f32 accumulation.
pub fn measured_dtype(op: Op, input: Dtype) -> DtypeTriple {
    let c = if op == Op::Tn { Dtype::F32 } else { input };
    DtypeTriple::new(input, c, Dtype::F32)
}
