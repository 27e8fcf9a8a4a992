//! What a context serves, so a caller need not probe: every (policy, op, dtype) its tier
//! routes (natively, or through the half fallback), and the route a shape takes with its
//! kernel, contract and grid (what `gemm-aot explain` prints for the matching route).

use crate::context::Context;
use crate::error::GemmError;
use crate::gemm::dim;
use crate::kernel_set::KernelSet;
use crate::table::{self, ContractInfo, Dtype, DtypeTriple, KernelInfo, Op, Policy, TierInfo};

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
/// `tier` is a tier of the shipped set ([`KernelSet::shipped`]); [`Context::served`] lists
/// its own set's.
pub fn served(tier: &TierInfo) -> Vec<Served> {
    served_by(KernelSet::shipped(), tier)
}

/// [`served`] for a tier of `set`.
fn served_by(set: &KernelSet, tier: &TierInfo) -> Vec<Served> {
    let mut out = Vec::new();
    for policy in Policy::ALL {
        for op in Op::ALL {
            for ab in Dtype::ALL {
                for c in Dtype::ALL {
                    let dtype = DtypeTriple::new(ab, c, Dtype::F32);
                    // The decision `Context::gemm` makes; one probe a combination is exact
                    // (every routed combination has a catch-all route).
                    let Some((_, half_fallback)) =
                        set.route_or_fallback(tier.id, policy, op, dtype, 1, 1, 1)
                    else {
                        continue;
                    };
                    out.push(Served {
                        policy,
                        op,
                        dtype,
                        half_fallback,
                    });
                }
            }
        }
    }
    out
}

/// The route a GEMM shape takes on a context, and what it launches.
#[derive(Clone, Copy, Debug)]
pub struct RouteChoice {
    /// The tier serving the device.
    pub tier: &'static TierInfo,
    /// The policy routed under.
    pub policy: Policy,
    /// The operand layout.
    pub op: Op,
    /// The element types asked for.
    pub dtype: DtypeTriple,
    /// The GEMM view's (m, n, k).
    pub shape: (u64, u64, u64),
    /// The matching route, 1-based as in the tier's spec file.
    pub rule: u16,
    /// The kernel the route picks.
    pub kernel: &'static KernelInfo,
    /// Its numeric contract.
    pub contract: Option<&'static ContractInfo>,
    /// For a kernel that needs aligned operands (TMA or cp.async): the kernel of the same
    /// contract that runs instead when an operand's address or leading dimension does not
    /// suit it, or, for a TMA kernel, when k is 0.
    pub unaligned: Option<&'static KernelInfo>,
    /// Whether the call runs as the half fallback (the f32 route between conversions).
    pub half_fallback: bool,
    /// The launch grid; `None` when m or n is 0 (nothing is launched).
    pub grid: Option<(u32, u32, u32)>,
}

impl std::fmt::Display for RouteChoice {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let (m, n, k) = self.shape;
        let k_info = self.kernel;
        writeln!(
            f,
            "tier {} ({}), {} {} {}, m = {m}, n = {n}, k = {k}",
            self.tier.name, self.tier.spec_file, self.policy, self.op, self.dtype
        )?;
        if self.half_fallback {
            writeln!(
                f,
                "  no route of its own: the half fallback on the f32 route"
            )?;
        }
        writeln!(f, "  route {} matches", self.rule)?;
        writeln!(f, "kernel {} (id {})", k_info.name, k_info.id.0)?;
        write!(
            f,
            "  family {}, contract {}",
            k_info.family, k_info.contract
        )?;
        match self.contract {
            Some(c) => writeln!(f, ":\n    {}", c.doc)?,
            None => writeln!(f)?,
        }
        writeln!(f, "  tile {}", k_info.tile)?;
        match self.grid {
            Some(g) => writeln!(
                f,
                "  grid {g:?}, block {} threads, {} bytes of shared memory, cluster {:?}",
                k_info.block_threads, k_info.shared_bytes, k_info.cluster
            )?,
            None => writeln!(f, "  m or n is 0: nothing is launched")?,
        }
        if let Some(u) = self.unaligned {
            writeln!(
                f,
                "  unaligned kernel {} (id {}): runs when TMA cannot take an operand or k = 0 (TMA kernels), or A or B is not 16-byte aligned (cp.async kernels)",
                u.name, u.id.0
            )?;
        }
        Ok(())
    }
}

impl Context {
    /// Every (policy, op, dtype) this context's tier serves: [`served`].
    pub fn served(&self) -> Vec<Served> {
        served_by(self.kernels, self.tier)
    }

    /// The route a GEMM of `(m, n, k)` (the GEMM view) takes here, with its kernel, contract
    /// and grid; refused as the call would be for its shape alone (a dimension over `i32`,
    /// n above what the tier launches for every m, no route). Operands are not known here:
    /// the route's unaligned kernel runs instead when TMA (or cp.async) cannot take one. Its `Display` is
    /// the matching part of `gemm-aot explain`.
    pub fn explain(
        &self,
        policy: Policy,
        op: Op,
        dtype: DtypeTriple,
        (m, n, k): (usize, usize, usize),
    ) -> Result<RouteChoice, GemmError> {
        let (m, n, k) = (dim("m", m)?, dim("n", n)?, dim("k", k)?);
        let max_n = self.kernels.max_n(self.tier.id);
        if n > max_n {
            return Err(GemmError::ColumnsTooMany {
                tier: self.tier.name,
                n,
                max: max_n,
            });
        }
        let no_route = GemmError::NoRoute {
            tier: self.tier.name,
            policy,
            op,
            dtype,
        };
        let (hit, half_fallback) = self
            .kernels
            .route_or_fallback(self.tier.id, policy, op, dtype, m, n, k)
            .ok_or(no_route)?;
        let kernel = self
            .kernels
            .kernel(hit.kernel)
            .ok_or(GemmError::UnknownKernel(table::KernelRef::Gemm(hit.kernel)))?;
        let grid = if m == 0 || n == 0 {
            None
        } else {
            Some(self.launch_grid(kernel, m, n)?)
        };
        Ok(RouteChoice {
            tier: self.tier,
            policy,
            op,
            dtype,
            shape: (m, n, k),
            rule: hit.rule,
            kernel,
            contract: self.kernels.contract_of(kernel.id),
            unaligned: hit.unaligned.and_then(|id| self.kernels.kernel(id)),
            half_fallback,
            grid,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
