//! For tuning only: one request run on a kernel the caller names instead of the one its route
//! picks, so `gemm-aot tune` can time every candidate kernel of a region (docs/tuning.md).
//!
//! The request is validated as [`Context::gemm`] validates it (dimensions, the tier's `max_n`,
//! every operand against the registry, no output overlapping an input), and the kernel must
//! belong to this context's tier and serve the request's op and dtypes (and its policy, when
//! the request names one). The kernel runs itself or nothing: operands off 16 bytes are copied
//! for a TMA kernel as a routed call copies them (the repack, within the stream's bound);
//! where it still cannot take them, the call is refused instead of falling back to an
//! unaligned kernel, so a time measured is always the named kernel's. A cp.async kernel given operands
//! off 16 bytes copies them element by element, as it does under its routes.
//!
//! Batch invariance is the routes' promise, not this call's: the kernel keeps its contract,
//! but nothing here checks that the kernels a caller picks for one (n, k) share one. Serve
//! requests through [`Context::gemm`]; write what tuning finds as routes, which validation
//! proves.

use crate::context::Context;
use crate::element::Element;
use crate::emit::RequestFacts;
use crate::error::GemmError;
use crate::observer::NoObserver;
use crate::request::{checked_operands, dim, GemmRequest, Launch};
use crate::stream::Mode;
use crate::table::{Dtype, DtypeTriple, KernelId, KernelInfo, Op, Policy, RouteHit};
use gemm_core::Routed;
use thiserror::Error;

/// Why [`Context::gemm_on_kernel`] refused a request (nothing was enqueued).
#[derive(Debug, Error)]
#[non_exhaustive]
pub enum TuningError {
    /// The id is not in this context's kernel set.
    #[error("{0:?} is not a GEMM kernel of this context's kernel set")]
    UnknownKernel(KernelId),
    /// The kernel belongs to another tier than the context runs.
    #[error("kernel {kernel} is not of tier {tier}, which this context runs")]
    OtherTier {
        /// The kernel's name.
        kernel: &'static str,
        /// The context's tier.
        tier: &'static str,
    },
    /// The kernel does not serve the request's op, dtypes or policy.
    #[error("kernel {kernel} runs {policy} {op} {dtype}, but the request is {req_policy} {req_op} {req_dtype}")]
    Mismatch {
        /// The kernel's name.
        kernel: &'static str,
        /// The kernel's policy.
        policy: Policy,
        /// The kernel's op.
        op: Op,
        /// The kernel's dtypes.
        dtype: DtypeTriple,
        /// The request's policy (the kernel's when the request names none).
        req_policy: Policy,
        /// The request's op.
        req_op: Op,
        /// The request's dtypes.
        req_dtype: DtypeTriple,
    },
    /// The kernel takes a bounded K (a K split keeps each chunk's partial sums in shared
    /// memory) and the request's is larger; its routes never send such a K to it.
    #[error("kernel {kernel} takes k up to {max_k}, but the request has k = {k}")]
    KTooLarge {
        /// The kernel's name.
        kernel: &'static str,
        /// Its largest K.
        max_k: u64,
        /// The request's K.
        k: u64,
    },
    /// The request runs in a cuBLAS mode, which launches no kernel of the set.
    #[error("the request runs in mode {0:?}, which launches cuBLAS instead of a kernel of the set: run it in Mode::Deterministic")]
    VendorMode(Mode),
    /// The request or its launch was refused as [`Context::gemm`] refuses it; a kernel that
    /// cannot take the operands is refused with [`GemmError::Tma`].
    #[error(transparent)]
    Gemm(#[from] GemmError),
}

impl Context {
    /// The GEMM kernel of this context's tier whose entry point is `name` (the pattern
    /// `gemm_<tier>_<family>_<op>_<ab>_<c>_<acc>_<tile>_m<M>n<N>k<K>`).
    pub fn tier_kernel_named(&self, name: &str) -> Option<KernelId> {
        self.kernels()
            .tier_kernels(self.tier().id)
            .iter()
            .find(|k| k.name == name)
            .map(|k| k.id)
    }

    /// Runs `req` on `kernel` instead of the kernel its route picks: for tuning only (the
    /// [module docs](crate::tuning) say what is checked). The returned launch's `rule` is 0:
    /// no route chose it.
    pub fn gemm_on_kernel<A: Element, C: Element>(
        &self,
        req: GemmRequest<'_, A, C>,
        kernel: KernelId,
    ) -> Result<Launch, TuningError> {
        let info = self.named_kernel::<A, C>(&req, kernel)?;
        let mode = req.mode.unwrap_or_else(|| self.mode());
        if mode != Mode::Deterministic {
            return Err(TuningError::VendorMode(mode));
        }
        let (m, n, k) = (dim("m", req.m)?, dim("n", req.n)?, dim("k", req.k)?);
        if let Some(max_k) = info.max_k.filter(|&max_k| k > max_k) {
            return Err(TuningError::KTooLarge {
                kernel: info.name,
                max_k,
                k,
            });
        }
        let tier = self.tier();
        let max = self.kernels().max_n(tier.id);
        if n > max {
            return Err(GemmError::ColumnsTooMany {
                tier: tier.name,
                n,
                max,
            }
            .into());
        }
        let (operands, stored) = checked_operands(self, &req, (m, n, k))?;
        if m == 0 || n == 0 {
            return Ok(Launch::none(info.policy, mode));
        }
        // No unaligned kernel: the named kernel runs, or the call is refused.
        let routed = Routed {
            hit: RouteHit {
                kernel,
                rule: 0,
                unaligned: None,
                wave_fit: &[],
            },
            half_fallback: false,
            kernel: info,
            unaligned: None,
        };
        let facts = RequestFacts {
            op: req.op,
            logical: (A::DTYPE, C::DTYPE),
            shape: (m, n, k),
            leading_dims: (req.a.ld as u64, req.b.ld as u64, req.c.ld as u64),
            policy: info.policy,
            policy_from_context: false,
        };
        // Operands TMA cannot take for their address or ld alone are copied for the kernel,
        // as `Context::gemm` copies them, so the time is what a routed call would take.
        let (summary, repacked) =
            self.launch_routed(&mut NoObserver, &routed, facts, &operands, stored, req.beta)?;
        Ok(Launch {
            kernel: Some(summary.kernel),
            rule: 0,
            grid: summary.geometry.grid,
            block: summary.geometry.block,
            shared_bytes: summary.geometry.shared_bytes,
            cluster: summary.geometry.cluster,
            unaligned: summary.unaligned,
            repacked,
            ..Launch::none(info.policy, mode)
        })
    }

    /// `kernel`, checked to be of this tier and to serve the request.
    fn named_kernel<A: Element, C: Element>(
        &self,
        req: &GemmRequest<'_, A, C>,
        kernel: KernelId,
    ) -> Result<&'static KernelInfo, TuningError> {
        let info = self
            .kernels()
            .kernel(kernel)
            .ok_or(TuningError::UnknownKernel(kernel))?;
        let tier = self.tier();
        if info.tier != tier.id {
            return Err(TuningError::OtherTier {
                kernel: info.name,
                tier: tier.name,
            });
        }
        let dtype = DtypeTriple::new(A::DTYPE, C::DTYPE, Dtype::F32);
        let policy = req.policy.unwrap_or(info.policy);
        if info.op != req.op || info.dtype != dtype || info.policy != policy {
            return Err(TuningError::Mismatch {
                kernel: info.name,
                policy: info.policy,
                op: info.op,
                dtype: info.dtype,
                req_policy: policy,
                req_op: req.op,
                req_dtype: dtype,
            });
        }
        Ok(info)
    }
}
