//! One GEMM request as a caller makes it ([`GemmRequest`]) and as validation leaves it: each
//! operand checked against the registry (live, in bounds, aligned to its element, no output
//! overlapping an input) and placed ([`Operands`]: address, span, offset), with its stored
//! shape ([`Stored`]). What a call launched is its [`Launch`].

use crate::buffer::{Mat, MatMut};
use crate::context::Context;
use crate::element::Element;
use crate::error::{GemmError, Operand};
use crate::registry::{Span, SpanProblem};
use crate::stream::Mode;
use crate::table::{Dtype, KernelId, Op, Policy};
use gemm_core::{StoredAb, StoredOperand, DIM_MAX};

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
    /// slow path; or, for a kernel with a vector path, an operand off it that the unaligned
    /// kernel's narrower vector path reads as stored (nothing copied).
    pub unaligned: bool,
    /// Whether A or B was copied (bits unchanged) into aligned scratch so `kernel`, the
    /// route's own TMA kernel, could read it, and how much scratch the copies took.
    pub repacked: Option<Repacked>,
}

/// The aligned copies a call made of its operands ([`Launch::repacked`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Repacked {
    /// A was copied.
    pub a: bool,
    /// B was copied.
    pub b: bool,
    /// Scratch bytes the copies took.
    pub scratch_bytes: u64,
}

impl Launch {
    pub(crate) fn none(policy: Policy, mode: Mode) -> Self {
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
            cluster: crate::launcher::NO_CLUSTER,
            unaligned: false,
            repacked: None,
        }
    }
}

/// A checked operand: address range in bytes.
#[derive(Clone, Copy)]
pub(crate) struct Extent {
    pub start: u64,
    pub end: u64,
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

/// The leading dimension of an operand stored as `rows x cols`, checked (it fits the kernels,
/// no row is longer than it); `None` when the operand has no elements.
pub(crate) fn check_rows(
    operand: Operand,
    ld: usize,
    rows: u64,
    cols: u64,
) -> Result<Option<u64>, GemmError> {
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
    Ok(Some(ld))
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
    let Some(ld) = check_rows(operand, ld, rows, cols)? else {
        return Ok(None);
    };
    match ctx.registry().check(span) {
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

/// Where a pointer source (`a.ptr`, `src`, ...) of a launch points: the registered span and
/// the byte offset into it (`None` for a null pointer).
pub(crate) type Target = (&'static str, Option<(Span, u64)>);

/// A checked operand: its device address, and where that lies in the registry.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Placed {
    pub address: u64,
    pub span: Span,
    /// Byte offset of `address` into `span`.
    pub offset: u64,
}

impl Placed {
    pub(crate) fn target(this: Option<Placed>) -> Option<(Span, u64)> {
        this.map(|p| (p.span, p.offset))
    }
}

/// The operands of a validated request (`None`: no elements, or no bias).
#[derive(Clone, Copy, Debug)]
pub(crate) struct Operands {
    pub a: Option<Placed>,
    pub b: Option<Placed>,
    pub bias: Option<Placed>,
    pub c: Option<Placed>,
}

impl Operands {
    /// Where each pointer source of a GEMM's argument struct points.
    pub fn targets(&self) -> [Target; 4] {
        [
            ("a.ptr", Placed::target(self.a)),
            ("b.ptr", Placed::target(self.b)),
            ("bias.ptr", Placed::target(self.bias)),
            ("c.ptr", Placed::target(self.c)),
        ]
    }
}

/// One operand as stored: rows, columns (the contiguous dimension) and leading dimension, in
/// elements.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct StoredMatrix {
    pub rows: u64,
    pub cols: u64,
    pub ld: u64,
}

/// A request's operands as stored, and the element types of A and B, and of C (and the bias).
#[derive(Clone, Copy, Debug)]
pub(crate) struct Stored {
    pub a: StoredMatrix,
    /// Whether `a` is A's transposed copy (`[m, k]`) for a kernel whose prepass reads one.
    pub a_transposed: bool,
    pub b: StoredMatrix,
    pub ldc: u64,
    pub dtypes: (Dtype, Dtype),
}

impl Stored {
    /// A and B as the planner's kernel choice reads them (`None` where there is nothing to read).
    pub fn ab(&self, ops: &Operands) -> StoredAb {
        let one = |p: Option<Placed>, s: StoredMatrix| {
            p.map(|p| StoredOperand {
                address: p.address,
                rows: s.rows,
                cols: s.cols,
                ld: s.ld,
            })
        };
        StoredAb {
            a: one(ops.a, self.a),
            b: one(ops.b, self.b),
            dtype: self.dtypes.0,
            a_transposed: self.a_transposed,
        }
    }
}

/// The request's operands checked as [`Context::gemm`] checks them (live, in bounds, aligned
/// to their element, C overlapping no input), placed, and their stored shapes.
pub(crate) fn checked_operands<A: Element, C: Element>(
    ctx: &Context,
    req: &GemmRequest<'_, A, C>,
    (m, n, k): (u64, u64, u64),
) -> Result<(Operands, Stored), GemmError> {
    let ea = std::mem::size_of::<A>() as u64;
    let ec = std::mem::size_of::<C>() as u64;
    let (a_rows, a_cols) = if req.op == Op::Tn { (k, m) } else { (m, k) };
    let (b_rows, b_cols) = if req.op == Op::Nt { (n, k) } else { (k, n) };
    let c = check_operand(
        ctx,
        Operand::C,
        (&req.c.span, req.c.offset, req.c.ld),
        m,
        n,
        ec,
    )?;
    let a = check_operand(
        ctx,
        Operand::A,
        (&req.a.span, req.a.offset, req.a.ld),
        a_rows,
        a_cols,
        ea,
    )?;
    let b = check_operand(
        ctx,
        Operand::B,
        (&req.b.span, req.b.offset, req.b.ld),
        b_rows,
        b_cols,
        ea,
    )?;
    let bias = match &req.bias {
        Some(v) => check_operand(
            ctx,
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
            if let Some(e) = e.filter(|e| e.start < c.end && c.start < e.end) {
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
    let at = |e: Option<Extent>, span, offset: usize, elem: u64| {
        e.map(|e| Placed {
            address: e.start,
            span,
            offset: offset as u64 * elem,
        })
    };
    let operands = Operands {
        a: at(a, req.a.span, req.a.offset, ea),
        b: at(b, req.b.span, req.b.offset, ea),
        bias: req
            .bias
            .as_ref()
            .and_then(|v| at(bias, v.span, v.offset, ec)),
        c: at(c, req.c.span, req.c.offset, ec),
    };
    let stored = Stored {
        a: StoredMatrix {
            rows: a_rows,
            cols: a_cols,
            ld: req.a.ld as u64,
        },
        a_transposed: false,
        b: StoredMatrix {
            rows: b_rows,
            cols: b_cols,
            ld: req.b.ld as u64,
        },
        ldc: req.c.ld as u64,
        dtypes: (A::DTYPE, C::DTYPE),
    };
    Ok((operands, stored))
}
