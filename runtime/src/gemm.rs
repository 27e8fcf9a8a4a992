//! One GEMM call: validated in full before enqueue, planned by gemm-core's planner (the route
//! or the half fallback's, then the kernel and the grid), launched through the observer
//! (deterministic mode), or handed to cuBLAS (vendor modes).

use crate::context::Context;
use crate::element::Element;
use crate::emit::{describe, RequestFacts};
use crate::error::GemmError;
use crate::launch_plan::{map_fields, GemmPlan, PlanSummary};
use crate::observer::LaunchKind;
use crate::request::{checked_operands, dim, GemmRequest, Launch, Operands};
use crate::stream::Mode;
use crate::table::{Dtype, DtypeTriple, KernelRef, Op, Policy};
use std::sync::atomic::{AtomicU64, Ordering};

/// Largest dimension or leading dimension the kernels accept (dimensions travel as `i32`); the
/// same limit the spec validation cuts route ranges at.
pub use gemm_core::DIM_MAX;

static VENDOR_CALLS: AtomicU64 = AtomicU64::new(0);

/// How many calls this process has made across the vendor (cuBLAS) boundary.
pub fn vendor_calls() -> u64 {
    VENDOR_CALLS.load(Ordering::SeqCst)
}

impl Context {
    /// Validates and runs one GEMM. Nothing is enqueued when it returns an error.
    pub fn gemm<A: Element, C: Element>(
        &self,
        req: GemmRequest<'_, A, C>,
    ) -> Result<Launch, GemmError> {
        self.gemm_observed(req, &mut crate::observer::NoObserver)
    }

    /// [`gemm`](Self::gemm) with an observer that sees the launch (and can refuse it first).
    pub fn gemm_observed<A: Element, C: Element, O: crate::observer::Observer>(
        &self,
        req: GemmRequest<'_, A, C>,
        observer: &mut O,
    ) -> Result<Launch, GemmError> {
        let (m, n, k) = (dim("m", req.m)?, dim("n", req.n)?, dim("k", req.k)?);
        // Every operand checked (live, in bounds, aligned to its element, C overlapping no
        // input) before routing, so a bad call fails the same way in every mode.
        let (operands, stored) = checked_operands(self, &req, (m, n, k))?;
        let dtype = DtypeTriple::new(A::DTYPE, C::DTYPE, Dtype::F32);
        let policy_from_context = req.policy.is_none();
        let policy = req.policy.unwrap_or_else(|| self.policy_for(req.op, dtype));
        let mode = req.mode.unwrap_or_else(|| self.mode());
        // Route first (the planner: the tier's max_n, then the route or the half fallback's),
        // so a combination without a route fails the same way in every mode. Decided by
        // (policy, op, dtype, n, k) and the route's contract, never by m.
        let tier = self.tier();
        let routed = self
            .kernels()
            .route(tier.id, policy, req.op, dtype, m, n, k)
            .map_err(|r| GemmError::refused(r, tier.name, policy, req.op, dtype))?;
        if mode != Mode::Deterministic {
            #[cfg(not(gemm_observer_stripped))]
            if O::ENABLED {
                return Err(GemmError::VendorUnsupported(
                    "recording or packaging launches",
                ));
            }
            return self.vendor_gemm(&req, mode, m, n, k, policy);
        }
        if m == 0 || n == 0 {
            return Ok(Launch::none(policy, mode));
        }
        // Among the route's kernel and its `wave_fit` kernels, the one the wave model says
        // finishes first on this device: the same contract, so the same bits whichever runs.
        let routed = if self.wave_fit() {
            routed.fit_waves(self.kernels(), m, n, k, |info| {
                crate::launch_plan::concurrent_ctas(self, info)
            })
        } else {
            routed
        };
        let facts = RequestFacts::of(&req, (m, n, k), policy, policy_from_context);
        let launch_info = |p: PlanSummary| Launch {
            kernel: Some(p.kernel),
            rule: routed.hit.rule,
            grid: p.geometry.grid,
            block: p.geometry.block,
            shared_bytes: p.geometry.shared_bytes,
            vendor: false,
            half_fallback: routed.half_fallback,
            policy,
            mode,
            cluster: p.geometry.cluster,
            unaligned: p.unaligned,
            repacked: None,
        };
        if routed.half_fallback {
            let summary =
                self.half_fallback(observer, &routed, facts, &operands, stored, req.beta)?;
            return Ok(launch_info(summary));
        }
        let (summary, repacked) =
            self.launch_routed(observer, &routed, facts, &operands, stored, req.beta)?;
        Ok(Launch {
            repacked,
            ..launch_info(summary)
        })
    }

    /// One planned GEMM launch with its record (operands say where each pointer points).
    #[inline(always)]
    pub(crate) fn emit_gemm<O: crate::observer::Observer>(
        &self,
        observer: &mut O,
        plan: &GemmPlan,
        facts: RequestFacts,
        operands: &Operands,
    ) -> Result<(), GemmError> {
        let GemmPlan {
            kernel,
            geometry,
            ref args,
            abi,
            maps,
            ..
        } = *plan;
        let id = KernelRef::Gemm(kernel.id);
        self.emit(observer, id, geometry, args, |args| {
            let execution = (kernel.dtype.ab, kernel.dtype.c);
            let what = (LaunchKind::Gemm, id, execution);
            describe(
                self,
                facts,
                what,
                &geometry,
                (abi, args),
                &operands.targets(),
                &map_fields(abi, &maps),
            )
        })
    }

    fn vendor_gemm<A: Element, C: Element>(
        &self,
        req: &GemmRequest<'_, A, C>,
        mode: Mode,
        m: u64,
        n: u64,
        k: u64,
        policy: Policy,
    ) -> Result<Launch, GemmError> {
        use cudarc::cublas::sys::{
            cublasComputeType_t as Ct, cublasOperation_t as Tr, cudaDataType_t as Dt,
        };
        if req.bias.is_some() {
            return Err(GemmError::VendorUnsupported("a bias"));
        }
        if m == 0 || n == 0 {
            return Ok(Launch::none(policy, mode));
        }
        let dt = |d: Dtype| match d {
            Dtype::F32 => Dt::CUDA_R_32F,
            Dtype::Bf16 => Dt::CUDA_R_16BF,
            Dtype::F16 => Dt::CUDA_R_16F,
        };
        let compute = match (mode, A::DTYPE) {
            (Mode::CublasPedantic, _) => Ct::CUBLAS_COMPUTE_32F_PEDANTIC,
            (_, Dtype::F32) => Ct::CUBLAS_COMPUTE_32F_FAST_TF32,
            _ => Ct::CUBLAS_COMPUTE_32F,
        };
        // Row-major C[m, n] is column-major C^T[n, m] = B^T A^T: pass B first.
        let tb = if req.op == Op::Nt {
            Tr::CUBLAS_OP_T
        } else {
            Tr::CUBLAS_OP_N
        };
        let ta = if req.op == Op::Tn {
            Tr::CUBLAS_OP_T
        } else {
            Tr::CUBLAS_OP_N
        };
        let ea = std::mem::size_of::<A>() as u64;
        let ec = std::mem::size_of::<C>() as u64;
        let a = req.a.span.base + req.a.offset as u64 * ea;
        let b = req.b.span.base + req.b.offset as u64 * ea;
        let c = req.c.span.base + req.c.offset as u64 * ec;
        let alpha = 1.0f32;
        let beta = req.beta;
        let blas = match self.own.blas.get() {
            Some(b) => b,
            None => {
                let b = cudarc::cublas::CudaBlas::new(self.stream().clone())?;
                let _ = self.own.blas.set(b);
                self.own
                    .blas
                    .get()
                    .ok_or(GemmError::VendorUnsupported("a cuBLAS handle"))?
            }
        };
        VENDOR_CALLS.fetch_add(1, Ordering::SeqCst);
        // SAFETY: pointers validated by `gemm` against live allocations and the shape.
        unsafe {
            cudarc::cublas::result::gemm_ex(
                *blas.handle(),
                tb,
                ta,
                n as i32,
                m as i32,
                k as i32,
                (&alpha) as *const f32 as *const _,
                b as *const _,
                dt(A::DTYPE),
                req.b
                    .ld
                    .max(if req.op == Op::Nt { k } else { n } as usize)
                    .max(1) as i32,
                a as *const _,
                dt(A::DTYPE),
                req.a
                    .ld
                    .max(if req.op == Op::Tn { m } else { k } as usize)
                    .max(1) as i32,
                (&beta) as *const f32 as *const _,
                c as *mut _,
                dt(C::DTYPE),
                req.c.ld.max(n as usize).max(1) as i32,
                compute,
                cudarc::cublas::sys::cublasGemmAlgo_t::CUBLAS_GEMM_DEFAULT,
            )?;
        }
        Ok(Launch {
            kernel: None,
            rule: 0,
            grid: (0, 0, 0),
            block: (0, 0, 0),
            shared_bytes: 0,
            vendor: true,
            ..Launch::none(policy, mode)
        })
    }

    /// The route the generated dispatch of this context's [`KernelSet`](crate::KernelSet)
    /// picks on its tier.
    pub fn route(
        &self,
        policy: Policy,
        op: Op,
        dtype: DtypeTriple,
        m: u64,
        n: u64,
        k: u64,
    ) -> Option<crate::RouteHit> {
        self.kernels()
            .dispatch(self.tier().id, policy, op, dtype, m, n, k)
    }
}
