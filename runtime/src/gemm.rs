//! One GEMM request: validated in full before enqueue, then routed through the generated
//! dispatch (deterministic mode) or handed to cuBLAS (vendor modes).

use crate::buffer::{Mat, MatMut};
use crate::context::{Context, Mode};
use crate::element::Element;
use crate::error::{GemmError, Operand};
use crate::fallback::{FallbackShape, Operands, Placed};
use crate::launch::{describe, RequestFacts};
use crate::observer::LaunchKind;
use crate::plan::{GemmPlan, PlanSummary, Stored};
use crate::registry::{Span, SpanProblem};
use crate::table::{self, DtypeTriple, KernelId, KernelRef, Op, Policy};
use std::sync::atomic::{AtomicU64, Ordering};

/// Largest dimension or leading dimension the kernels accept (dimensions travel as `i32`); the
/// same limit the spec validation cuts route ranges at.
pub use gemm_spec::DIM_MAX;

static VENDOR_CALLS: AtomicU64 = AtomicU64::new(0);

/// How many calls this process has made across the vendor (cuBLAS) boundary.
pub fn vendor_calls() -> u64 {
    VENDOR_CALLS.load(Ordering::SeqCst)
}

/// A GEMM in the GEMM view `C[m, n] = sum_k A(m, k) B(k, n) (+ bias[n]) (+ beta C[m, n])`.
/// `A` is stored `[m, k]` for `nn`/`nt` and `[k, m]` for `tn`; `B` is stored `[k, n]` for
/// `nn`/`tn` and `[n, k]` for `nt`; `C` is `[m, n]`; every view is row-major with its own
/// leading dimension.
pub struct GemmRequest<'a, A: Element, C: Element> {
    /// Operand layout (`nn`, `tn`, `nt`).
    pub op: Op,
    /// Rows of C.
    pub m: usize,
    /// Columns of C.
    pub n: usize,
    /// Reduction length; 0 runs only the epilogue.
    pub k: usize,
    /// A, stored `[m, k]` (`nn`, `nt`) or `[k, m]` (`tn`).
    pub a: Mat<'a, A>,
    /// B, stored `[k, n]` (`nn`, `tn`) or `[n, k]` (`nt`).
    pub b: Mat<'a, A>,
    /// Optional bias of n elements in C's type, added after the reduction.
    pub bias: Option<Mat<'a, C>>,
    /// The output, `[m, n]`.
    pub c: MatMut<'a, C>,
    /// 0 overwrites C; otherwise `C = fma(beta, C, result)`.
    pub beta: f32,
    /// The policy to route under; `None` takes the context's default
    /// ([`Context::policy`]). Launch records carry the effective policy.
    pub policy: Option<Policy>,
    /// Where the call runs; `None` takes the context's default ([`Context::mode`]). Per
    /// call, a thread's choice cannot be changed by another thread's `set_mode`.
    pub mode: Option<Mode>,
}

impl<'a, A: Element, C: Element> GemmRequest<'a, A, C> {
    /// `C[m, n] = A · B` in the GEMM view of `op`: no bias, beta 0, the context's policy.
    /// Add the rest with [`with_bias`](Self::with_bias), [`with_beta`](Self::with_beta) and
    /// [`with_policy`](Self::with_policy).
    pub fn new(
        op: Op,
        (m, n, k): (usize, usize, usize),
        a: Mat<'a, A>,
        b: Mat<'a, A>,
        c: MatMut<'a, C>,
    ) -> Self {
        GemmRequest {
            op,
            m,
            n,
            k,
            a,
            b,
            bias: None,
            c,
            beta: 0.0,
            policy: None,
            mode: None,
        }
    }

    /// The same request with a bias (or none).
    pub fn with_bias(self, bias: Option<Mat<'a, C>>) -> Self {
        GemmRequest { bias, ..self }
    }

    /// The same request with `C = fma(beta, C, result)` (0 overwrites C).
    pub fn with_beta(self, beta: f32) -> Self {
        GemmRequest { beta, ..self }
    }

    /// The same request routed under `policy` instead of the context's default.
    pub fn with_policy(self, policy: Policy) -> Self {
        GemmRequest {
            policy: Some(policy),
            ..self
        }
    }

    /// The same request run in `mode` instead of the context's default. Recording and
    /// packaging still need `Mode::Deterministic`: a request naming a cuBLAS mode is refused
    /// by a recording or preparing call (`GemmError::VendorUnsupported`).
    pub fn with_mode(self, mode: Mode) -> Self {
        GemmRequest {
            mode: Some(mode),
            ..self
        }
    }
}

/// What a call launched.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Launch {
    /// The generated kernel, or `None` for a cuBLAS call or an empty output (m or n is 0).
    pub kernel: Option<KernelId>,
    /// The route (1-based, as in the tier's spec file) that chose the kernel.
    pub rule: u16,
    /// Launch grid (zeros when nothing was launched).
    pub grid: (u32, u32, u32),
    /// Threads a block.
    pub block: (u32, u32, u32),
    /// Dynamic shared memory a block, in bytes.
    pub shared_bytes: u32,
    /// Whether the call went to cuBLAS.
    pub vendor: bool,
    /// Whether the call ran as the half fallback (inputs upcast to f32 scratch, the f32
    /// kernel in `kernel`, the result downcast into C): the same bits, more launches.
    pub half_fallback: bool,
    /// The policy the call routed under (the request's, or the context's default).
    pub policy: Policy,
    /// The mode the call ran in (the request's, or the context's default).
    pub mode: Mode,
    /// Thread-block cluster of the launch; (1, 1, 1) without clusters.
    pub cluster: (u32, u32, u32),
    /// Whether `kernel` is the route's unaligned kernel, run because an operand failed TMA's
    /// rules (address, leading dimension) or k is 0 for a TMA kernel, or A or B is not 16-byte
    /// aligned (address or leading dimension) for a cp.async kernel: the same contract, the
    /// slow path.
    pub unaligned: bool,
}

impl Launch {
    fn none(policy: Policy, mode: Mode) -> Self {
        Launch {
            kernel: None,
            rule: 0,
            grid: (0, 0, 0),
            block: (0, 0, 0),
            shared_bytes: 0,
            vendor: false,
            half_fallback: false,
            policy,
            mode,
            cluster: crate::launch::NO_CLUSTER,
            unaligned: false,
        }
    }
}

/// A checked operand: address range in bytes.
#[derive(Clone, Copy)]
pub(crate) struct Extent {
    start: u64,
    end: u64,
}

pub(crate) fn dim(what: &'static str, v: usize) -> Result<u64, GemmError> {
    let v = v as u64;
    if v > DIM_MAX {
        return Err(GemmError::DimensionOverflow {
            what,
            value: v,
            max: DIM_MAX,
        });
    }
    Ok(v)
}

/// Checks one operand stored as `rows x cols` with leading dimension `ld`; `None` when it
/// has no elements (then it is never read or written).
pub(crate) fn check_operand(
    ctx: &Context,
    operand: Operand,
    (span, offset, ld): (&Span, usize, usize),
    rows: u64,
    cols: u64,
    elem: u64,
) -> Result<Option<Extent>, GemmError> {
    let ld = dim("leading dimension", ld)?;
    if rows == 0 || cols == 0 {
        return Ok(None);
    }
    if rows > 1 && ld < cols {
        return Err(GemmError::LeadingDimension {
            operand,
            ld,
            min: cols,
        });
    }
    match ctx.registry.check(span) {
        Ok(()) => {}
        Err(SpanProblem::Foreign) => return Err(GemmError::ForeignAllocation { operand }),
        Err(SpanProblem::Stale) => {
            return Err(GemmError::StaleAllocation {
                operand,
                id: span.id,
                generation: span.generation,
            })
        }
    }
    if span.base == 0 {
        return Err(GemmError::NullPointer { operand });
    }
    let offset_bytes = (offset as u64).saturating_mul(elem);
    let address = span.base.saturating_add(offset_bytes);
    if !address.is_multiple_of(elem) {
        return Err(GemmError::Misaligned {
            operand,
            address,
            align: elem,
        });
    }
    let needed = (rows - 1)
        .saturating_mul(ld.max(cols))
        .saturating_add(cols)
        .saturating_mul(elem);
    if offset_bytes.saturating_add(needed) > span.bytes {
        return Err(GemmError::OutOfBounds {
            operand,
            offset: offset_bytes,
            needed,
            available: span.bytes,
        });
    }
    Ok(Some(Extent {
        start: address,
        end: address + needed,
    }))
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
        let ea = std::mem::size_of::<A>() as u64;
        let ec = std::mem::size_of::<C>() as u64;
        let (a_rows, a_cols) = if req.op == Op::Tn { (k, m) } else { (m, k) };
        let (b_rows, b_cols) = if req.op == Op::Nt { (n, k) } else { (k, n) };
        let c = check_operand(
            self,
            Operand::C,
            (&req.c.span, req.c.offset, req.c.ld),
            m,
            n,
            ec,
        )?;
        let a = check_operand(
            self,
            Operand::A,
            (&req.a.span, req.a.offset, req.a.ld),
            a_rows,
            a_cols,
            ea,
        )?;
        let b = check_operand(
            self,
            Operand::B,
            (&req.b.span, req.b.offset, req.b.ld),
            b_rows,
            b_cols,
            ea,
        )?;
        let bias = match &req.bias {
            Some(v) => check_operand(
                self,
                Operand::Bias,
                (&v.span, v.offset, n as usize),
                1,
                n,
                ec,
            )?,
            None => None,
        };
        if let Some(c) = c {
            for (operand, e) in [(Operand::A, a), (Operand::B, b), (Operand::Bias, bias)] {
                if let Some(e) = e {
                    if e.start < c.end && c.start < e.end {
                        return Err(GemmError::Overlap {
                            operand,
                            c_start: c.start,
                            c_end: c.end,
                            start: e.start,
                            end: e.end,
                        });
                    }
                }
            }
        }
        let max_n = self.kernels.max_n(self.tier.id);
        if n > max_n {
            return Err(GemmError::ColumnsTooMany {
                tier: self.tier.name,
                n,
                max: max_n,
            });
        }
        let dtype = DtypeTriple::new(A::DTYPE, C::DTYPE, table::Dtype::F32);
        let policy_from_context = req.policy.is_none();
        let policy = req.policy.unwrap_or_else(|| self.policy_for(req.op, dtype));
        let mode = req.mode.unwrap_or_else(|| self.mode());
        let no_route = GemmError::NoRoute {
            tier: self.tier.name,
            policy,
            op: req.op,
            dtype,
        };
        // Route first, so a combination without a route fails the same way in every mode. A
        // half combination no route serves takes the f32 route through the half fallback when
        // that route's contract is defined for the half inputs (KernelSet::route_or_fallback;
        // decided by dtype, op and the route's contract, never by m).
        let (hit, fallback) = self
            .kernels
            .route_or_fallback(self.tier.id, policy, req.op, dtype, m, n, k)
            .ok_or(no_route)?;
        if mode != Mode::Deterministic {
            #[cfg(not(gemm_observer_stripped))]
            if O::ENABLED {
                return Err(GemmError::VendorUnsupported(
                    "recording or packaging launches",
                ));
            }
            return self.vendor_gemm(&req, mode, m, n, k, policy);
        }
        self.kernels
            .kernel(hit.kernel)
            .ok_or(GemmError::UnknownKernel(KernelRef::Gemm(hit.kernel)))?;
        if m == 0 || n == 0 {
            return Ok(Launch::none(policy, mode));
        }
        let at = |e: Option<Extent>, view: (Span, usize), elem: u64| {
            e.map(|e| Placed {
                address: e.start,
                span: view.0,
                offset: view.1 as u64 * elem,
            })
        };
        let operands = Operands {
            a: at(a, (req.a.span, req.a.offset), ea),
            b: at(b, (req.b.span, req.b.offset), ea),
            bias: match &req.bias {
                Some(v) => at(bias, (v.span, v.offset), ec),
                None => None,
            },
            c: at(c, (req.c.span, req.c.offset), ec),
        };
        let facts = RequestFacts {
            op: req.op,
            logical: (A::DTYPE, C::DTYPE),
            shape: (m, n, k),
            leading_dims: (req.a.ld as u64, req.b.ld as u64, req.c.ld as u64),
            policy,
            policy_from_context,
        };
        let launch_info = |p: PlanSummary| Launch {
            kernel: Some(p.kernel),
            rule: hit.rule,
            grid: p.grid,
            block: p.block,
            shared_bytes: p.shared_bytes,
            vendor: false,
            half_fallback: fallback,
            policy,
            mode,
            cluster: p.cluster,
            unaligned: p.unaligned,
        };
        if fallback {
            let shape = FallbackShape {
                a: (a_rows, a_cols, req.a.ld as u64),
                b: (b_rows, b_cols, req.b.ld as u64),
                ldc: req.c.ld as u64,
                beta: req.beta,
            };
            let summary = self.half_fallback(observer, hit, facts, &operands, shape)?;
            return Ok(launch_info(summary));
        }
        let stored = Stored {
            a: (a_rows, a_cols, req.a.ld as u64),
            b: (b_rows, b_cols, req.b.ld as u64),
            ldc: req.c.ld as u64,
            dtypes: (A::DTYPE, C::DTYPE),
        };
        let plan = self.plan_gemm(hit, (m, n, k), &operands, stored, req.beta)?;
        let summary = plan.summary();
        #[cfg(not(gemm_observer_stripped))]
        if O::ENABLED {
            observer.reserve(1)?;
        }
        self.emit_gemm(observer, plan, facts, &operands)?;
        Ok(launch_info(summary))
    }

    /// One planned GEMM launch with its record (operands say where each pointer points).
    #[inline(always)]
    pub(crate) fn emit_gemm<O: crate::observer::Observer>(
        &self,
        observer: &mut O,
        plan: GemmPlan,
        facts: RequestFacts,
        operands: &Operands,
    ) -> Result<(), GemmError> {
        let GemmPlan {
            kernel,
            geometry,
            args,
            maps,
            ..
        } = plan;
        let id = KernelRef::Gemm(kernel.id);
        self.emit(observer, id, geometry, args, |args| {
            let execution = (kernel.dtype.ab, kernel.dtype.c);
            let what = (LaunchKind::Gemm, id, execution);
            describe(
                self,
                facts,
                what,
                &geometry,
                args,
                &operands.targets(),
                &maps,
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
        let dt = |d: table::Dtype| match d {
            table::Dtype::F32 => Dt::CUDA_R_32F,
            table::Dtype::Bf16 => Dt::CUDA_R_16BF,
            table::Dtype::F16 => Dt::CUDA_R_16F,
        };
        let compute = match (mode, A::DTYPE) {
            (Mode::CublasPedantic, _) => Ct::CUBLAS_COMPUTE_32F_PEDANTIC,
            (_, table::Dtype::F32) => Ct::CUBLAS_COMPUTE_32F_FAST_TF32,
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
        let blas = match self.blas.get() {
            Some(b) => b,
            None => {
                let b = cudarc::cublas::CudaBlas::new(self.stream.clone())?;
                let _ = self.blas.set(b);
                self.blas
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
        self.kernels
            .dispatch(self.tier.id, policy, op, dtype, m, n, k)
    }
}
