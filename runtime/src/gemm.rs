//! One GEMM request: validated in full before enqueue, then routed through the generated
//! dispatch (deterministic mode) or handed to cuBLAS (vendor modes).

use crate::buffer::{Mat, MatMut};
use crate::context::{Context, Mode};
use crate::element::Element;
use crate::error::{GemmError, Operand};
use crate::registry::{Span, SpanProblem};
use crate::table::{self, DtypeTriple, KernelId, Op, Policy};
use crate::GemmArgs;
use cudarc::driver::{LaunchConfig, PushKernelArg};
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
}

impl Launch {
    fn none() -> Self {
        Launch {
            kernel: None,
            rule: 0,
            grid: (0, 0, 0),
            block: (0, 0, 0),
            shared_bytes: 0,
            vendor: false,
        }
    }
}

/// A checked operand: address range in bytes.
#[derive(Clone, Copy)]
struct Extent {
    start: u64,
    end: u64,
}

fn dim(what: &'static str, v: usize) -> Result<u64, GemmError> {
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
fn check_operand(
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
        let dtype = DtypeTriple::new(A::DTYPE, C::DTYPE, table::Dtype::F32);
        let policy = self.policy();
        let mode = self.mode();
        // Route first, so a combination without a route fails the same way in every mode.
        let hit = crate::dispatch(self.tier.id, policy, req.op, dtype, m, n, k).ok_or(
            GemmError::NoRoute {
                tier: self.tier.name,
                policy,
                op: req.op,
                dtype,
            },
        )?;
        if mode != Mode::Deterministic {
            if O::ENABLED {
                return Err(GemmError::VendorUnsupported(
                    "recording or packaging launches",
                ));
            }
            return self.vendor_gemm(&req, mode, m, n, k);
        }
        let kernel = table::kernel(hit.kernel).ok_or(GemmError::NoRoute {
            tier: self.tier.name,
            policy,
            op: req.op,
            dtype,
        })?;
        if m == 0 || n == 0 {
            return Ok(Launch::none());
        }
        let grid = kernel.grid_for(m, n).ok_or(GemmError::GridTooLarge {
            kernel: kernel.name,
            m,
            n,
        })?;
        let addr = |e: Option<Extent>| e.map_or(0, |e| e.start);
        let args = GemmArgs {
            a: addr(a),
            b: addr(b),
            bias: addr(bias),
            c: addr(c),
            m: m as i32,
            n: n as i32,
            k: k as i32,
            lda: req.a.ld as i32,
            ldb: req.b.ld as i32,
            ldc: req.c.ld as i32,
            beta: req.beta,
            flags: u32::from(bias.is_some()),
        };
        if O::ENABLED {
            observer.reserve(1)?;
        }
        let cfg = LaunchConfig {
            grid_dim: grid,
            block_dim: (kernel.block_threads, 1, 1),
            shared_mem_bytes: kernel.shared_bytes,
        };
        let launch_info = Launch {
            kernel: Some(kernel.id),
            rule: hit.rule,
            grid,
            block: cfg.block_dim,
            shared_bytes: kernel.shared_bytes,
            vendor: false,
        };
        if O::ENABLED {
            let identity = |name: &str| {
                let (view, elem) = match name {
                    "a" => (Some((&req.a.span, req.a.offset)), ea),
                    "b" => (Some((&req.b.span, req.b.offset)), ea),
                    "bias" => (req.bias.as_ref().map(|v| (&v.span, v.offset)), ec),
                    "c" => (Some((&req.c.span, req.c.offset)), ec),
                    _ => (None, 0),
                };
                view.map_or(Default::default(), |(span, offset)| {
                    crate::observer::PointerIdentity {
                        allocation: span.id,
                        generation: span.generation,
                        offset: offset as u64 * elem,
                    }
                })
            };
            let record = crate::observer::LaunchRecord {
                kind: crate::observer::LaunchKind::Gemm,
                kernel: kernel.id,
                tier: self.tier.id,
                op: req.op,
                logical: (A::DTYPE, C::DTYPE),
                execution: (kernel.dtype.ab, kernel.dtype.c),
                shape: (m, n, k),
                leading_dims: (req.a.ld as u64, req.b.ld as u64, req.c.ld as u64),
                grid,
                block: cfg.block_dim,
                shared_bytes: kernel.shared_bytes,
                args_digest: crate::observer::argument_digest(
                    &args.to_bytes(),
                    GemmArgs::POINTER_FIELDS,
                    identity,
                ),
            };
            if O::DEFERS {
                let mut spans = vec![req.a.span, req.b.span, req.c.span];
                spans.extend(req.bias.as_ref().map(|v| v.span));
                observer.defer(crate::package::PreparedLaunch {
                    record,
                    args,
                    spans,
                });
                return Ok(launch_info);
            }
            self.launch_args(kernel, cfg, &args)?;
            observer.record(record);
        } else {
            self.launch_args(kernel, cfg, &args)?;
        }
        Ok(launch_info)
    }

    /// Enqueues one kernel with its argument struct.
    pub(crate) fn launch_args(
        &self,
        kernel: &crate::table::KernelInfo,
        cfg: LaunchConfig,
        args: &GemmArgs,
    ) -> Result<(), GemmError> {
        let func = self.function(kernel)?;
        let mut builder = self.stream.launch_builder(&func);
        builder.arg(args);
        // SAFETY: every pointer in `args` was checked, when the call was validated, to lie
        // inside a live allocation of this context, long enough for the shape, with C
        // overlapping no input; packages re-check that the allocations are still live.
        unsafe { builder.launch(cfg) }?;
        Ok(())
    }

    fn vendor_gemm<A: Element, C: Element>(
        &self,
        req: &GemmRequest<'_, A, C>,
        mode: Mode,
        m: u64,
        n: u64,
        k: u64,
    ) -> Result<Launch, GemmError> {
        use cudarc::cublas::sys::{
            cublasComputeType_t as Ct, cublasOperation_t as Tr, cudaDataType_t as Dt,
        };
        if req.bias.is_some() {
            return Err(GemmError::VendorUnsupported("a bias"));
        }
        if m == 0 || n == 0 {
            return Ok(Launch::none());
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
        })
    }

    /// The route the generated dispatch picks on this context's tier.
    pub fn route(
        &self,
        policy: Policy,
        op: Op,
        dtype: DtypeTriple,
        m: u64,
        n: u64,
        k: u64,
    ) -> Option<crate::RouteHit> {
        crate::dispatch(self.tier.id, policy, op, dtype, m, n, k)
    }
}
