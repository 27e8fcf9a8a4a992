//! What a context serves, so a caller need not probe: every (policy, op, dtype) its tier
//! routes (natively, or through the half fallback), and the route a shape takes with its
//! kernel, contract and grid (gemm-core's `explain`, what `gemm-aot explain` prints).

use crate::context::Context;
use crate::error::GemmError;
use crate::launch_plan::launch_grid;
use crate::table::{DtypeTriple, GridKind, Op, Policy, TierInfo};
use gemm_core::{Explanation, KernelSet, Query};

/// One combination a tier serves.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Served {
    /// The policy.
    pub policy: Policy,
    /// The operand layout.
    pub op: Op,
    /// Element types (A and B, C, accumulator).
    pub dtype: DtypeTriple,
    /// Whether it runs as the half fallback (no route of its own: f32 kernels between
    /// conversions, the same bits a native kernel of the contract gives).
    pub half_fallback: bool,
}

/// Every (policy, op, dtype) tier `tier` serves, natively or through the half fallback. Each
/// routed combination has a catch-all route (the specs refuse one without), so one probe a
/// combination is exact.
///
/// `tier` is a tier of the shipped set ([`shipped`](crate::shipped)); [`Context::served`] lists
/// its own set's.
pub fn served(tier: &TierInfo) -> Vec<Served> {
    served_by(crate::shipped(), tier)
}

/// [`served`] for a tier of `set`.
fn served_by(set: &KernelSet, tier: &TierInfo) -> Vec<Served> {
    set.served(tier.id)
        .into_iter()
        .map(|(policy, op, dtype, half_fallback)| Served {
            policy,
            op,
            dtype,
            half_fallback,
        })
        .collect()
}

impl Context {
    /// Every (policy, op, dtype) this context's tier serves: [`served`].
    pub fn served(&self) -> Vec<Served> {
        served_by(self.kernels(), self.tier())
    }

    /// The route a GEMM of `(m, n, k)` (the GEMM view) takes here, in words and as data:
    /// gemm-core's [`KernelSet::explain`] on this context's set and tier, which prints exactly
    /// what `gemm-aot explain --sms S` prints for the same specs, S this device's SMs: where the
    /// route names `wave_fit` kernels it names the one the wave model picks here (one CTA of
    /// each an SM, as every shipped `wave_fit` tile runs). A shape the call would refuse (a
    /// dimension over `i32`, n above what the tier launches for every m) is explained with its
    /// refusal ([`Explanation::refusal`]). Operands are not known here: the text names the
    /// route's unaligned kernel and when it runs instead. For a persistent kernel the
    /// explanation's `grid` is the one this device would launch (the text, device-free, gives
    /// its formula). A (policy, op, dtype) the tier does not serve is [`GemmError::NoRoute`].
    pub fn explain(
        &self,
        policy: Policy,
        op: Op,
        dtype: DtypeTriple,
        (m, n, k): (usize, usize, usize),
    ) -> Result<Explanation, GemmError> {
        let tier = self.tier();
        let q = Query {
            policy,
            op,
            dtype,
            m: m as u64,
            n: n as u64,
            k: k as u64,
            sms: self.sm_count().ok(),
        };
        let mut e = self
            .kernels()
            .explain(tier.id, &q)
            .map_err(|_| GemmError::NoRoute {
                tier: tier.name,
                policy,
                op,
                dtype,
            })?;
        if let Some(kernel) = e.kernel.filter(|k| k.grid == GridKind::Persistent) {
            if q.m > 0 && q.n > 0 && e.refusal.is_none() {
                e.grid = Some(launch_grid(self, kernel, q.m, q.n)?);
            }
        }
        Ok(e)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::table::Dtype;

    const F32_TRIPLE: DtypeTriple = DtypeTriple::new(Dtype::F32, Dtype::F32, Dtype::F32);

    /// Every tier serves each combination it routes, and a half combination without a route
    /// exactly when the f32 route's contract (read from the tables, not through
    /// `route_or_fallback`) lists the half input: so never a bf16 call into TF32; what is
    /// listed routes.
    #[test]
    fn served_lists_what_dispatch_routes_and_nothing_else() {
        for tier in crate::TIERS.iter() {
            let list = served(tier);
            assert!(!list.is_empty(), "tier {} serves nothing", tier.name);
            for s in &list {
                let triple = if s.half_fallback { F32_TRIPLE } else { s.dtype };
                for (m, n, k) in [(1, 1, 1), (300, 4096, 4096), (4096, 64, 0)] {
                    assert!(
                        crate::dispatch(tier.id, s.policy, s.op, triple, m, n, k).is_some(),
                        "{s:?} listed but not routed at {m}x{n}x{k} on {}",
                        tier.name
                    );
                }
                assert_eq!(s.dtype.acc, Dtype::F32);
            }
            // The half fallback is listed exactly where the f32 route's contract takes the input.
            for policy in Policy::ALL {
                for op in Op::ALL {
                    for ab in [Dtype::Bf16, Dtype::F16] {
                        for c in Dtype::ALL {
                            let dtype = DtypeTriple::new(ab, c, Dtype::F32);
                            if crate::dispatch(tier.id, policy, op, dtype, 1, 1, 1).is_some() {
                                continue;
                            }
                            let want = crate::dispatch(tier.id, policy, op, F32_TRIPLE, 1, 1, 1)
                                .and_then(|hit| crate::kernel(hit.kernel))
                                .and_then(|k| {
                                    crate::CONTRACTS.iter().find(|x| x.name == k.contract)
                                })
                                .is_some_and(|contract| contract.inputs.contains(&ab));
                            let listed = list.iter().any(|s| {
                                (s.policy, s.op, s.dtype) == (policy, op, dtype) && s.half_fallback
                            });
                            assert_eq!(listed, want, "{policy} {op} {dtype} on {}", tier.name);
                        }
                    }
                }
            }
            // Nothing routed is missing.
            for policy in Policy::ALL {
                for op in Op::ALL {
                    for ab in Dtype::ALL {
                        for c in Dtype::ALL {
                            let dtype = DtypeTriple::new(ab, c, Dtype::F32);
                            if crate::dispatch(tier.id, policy, op, dtype, 7, 64, 64).is_some() {
                                assert!(list
                                    .iter()
                                    .any(|s| (s.policy, s.op, s.dtype) == (policy, op, dtype)
                                        && !s.half_fallback));
                            }
                        }
                    }
                }
            }
        }
    }
}
