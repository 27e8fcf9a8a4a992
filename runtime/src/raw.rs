//! One GEMM over raw device addresses, its element types chosen at run time: the call the
//! C library and the Python package make for memory another allocator owns (a torch tensor,
//! a `cuMemAlloc`). Each operand's extent is computed from the shape and leading dimension
//! and checked without the device first ([`RawGemm::check`]: dimensions, leading
//! dimensions, null pointers, alignment, the output overlapping an input), so every such
//! refusal comes before a driver is needed. Then the extents are registered for the call,
//! run through [`Context::gemm`], and unregistered whatever happened.

use crate::buffer::ExternalSpan;
use crate::context::Context;
use crate::element::Element;
use crate::error::{GemmError, Operand};
use crate::request::{check_rows, dim, GemmRequest, Launch};
use crate::stream::Mode;
use crate::table::{Dtype, Op, Policy};
use half::{bf16, f16};

/// One operand of a [`RawGemm`]: the device address of element (0, 0) and the row stride
/// in elements (row-major storage, the inner stride is 1).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RawMatrix {
    /// Device address of element (0, 0).
    pub ptr: u64,
    /// Leading dimension (row stride) in elements.
    pub ld: usize,
}

/// A GEMM over raw device addresses: `C[m, n] = A · B (+ bias) (+ beta C)` in the GEMM view
/// of `op`, as [`GemmRequest`] describes it, with the element types as values.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct RawGemm {
    /// Operand layout.
    pub op: Op,
    /// Rows of C.
    pub m: usize,
    /// Columns of C.
    pub n: usize,
    /// Reduction length.
    pub k: usize,
    /// Element type of A and B.
    pub ab: Dtype,
    /// Element type of C and the bias.
    pub c_dtype: Dtype,
    /// A, stored `[m, k]` (`nn`, `nt`) or `[k, m]` (`tn`).
    pub a: RawMatrix,
    /// B, stored `[k, n]` (`nn`, `tn`) or `[n, k]` (`nt`).
    pub b: RawMatrix,
    /// The output `[m, n]`.
    pub c: RawMatrix,
    /// Device address of n contiguous bias elements, if any.
    pub bias: Option<u64>,
    /// 0 overwrites C; otherwise `C = fma(beta, C, result)`.
    pub beta: f32,
    /// The policy to route under (`None`: the context's default for the call's op and dtype).
    pub policy: Option<Policy>,
    /// Where the call runs (`None`: the context's default).
    pub mode: Option<Mode>,
}

/// Byte extents `[start, end)` of the operands of a checked [`RawGemm`] (`None`: nothing is
/// read or written there).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RawExtents {
    /// A's bytes.
    pub a: Option<(u64, u64)>,
    /// B's bytes.
    pub b: Option<(u64, u64)>,
    /// The bias's bytes.
    pub bias: Option<(u64, u64)>,
    /// C's bytes.
    pub c: Option<(u64, u64)>,
}

/// The byte extent of `rows x cols` elements of `elem` bytes at `ptr` with leading
/// dimension `ld`, checked as [`Context::gemm`] checks a registered operand.
pub(crate) fn extent(
    operand: Operand,
    m: RawMatrix,
    (rows, cols): (u64, u64),
    elem: u64,
) -> Result<Option<(u64, u64)>, GemmError> {
    let Some(ld) = check_rows(operand, m.ld, rows, cols)? else {
        return Ok(None);
    };
    if m.ptr == 0 {
        return Err(GemmError::NullPointer { operand });
    }
    if !m.ptr.is_multiple_of(elem) {
        return Err(GemmError::Misaligned {
            operand,
            address: m.ptr,
            align: elem,
        });
    }
    // rows, cols and ld are each below 2^31, so this fits in u64.
    let bytes = ((rows - 1) * ld + cols) * elem;
    let end = m
        .ptr
        .checked_add(bytes)
        .ok_or(GemmError::DimensionOverflow {
            what: "operand end address",
            value: m.ptr,
            max: u64::MAX - bytes,
        })?;
    Ok(Some((m.ptr, end)))
}

impl RawGemm {
    /// Checks the call without the device: every dimension and leading dimension fits the
    /// kernels, no leading dimension is shorter than its row, no operand with elements is
    /// null or misaligned to its element, and C overlaps no input. Returns the extents.
    pub fn check(&self) -> Result<RawExtents, GemmError> {
        let (m, n, k) = (dim("m", self.m)?, dim("n", self.n)?, dim("k", self.k)?);
        let ea = self.ab.size_bytes();
        let ec = self.c_dtype.size_bytes();
        let a_shape = if self.op == Op::Tn { (k, m) } else { (m, k) };
        let b_shape = if self.op == Op::Nt { (n, k) } else { (k, n) };
        let c = extent(Operand::C, self.c, (m, n), ec)?;
        let a = extent(Operand::A, self.a, a_shape, ea)?;
        let b = extent(Operand::B, self.b, b_shape, ea)?;
        let bias = match self.bias {
            Some(ptr) => extent(Operand::Bias, RawMatrix { ptr, ld: self.n }, (1, n), ec)?,
            None => None,
        };
        if let Some((c_start, c_end)) = c {
            for (operand, e) in [(Operand::A, a), (Operand::B, b), (Operand::Bias, bias)] {
                if let Some((start, end)) = e.filter(|&(s, e)| s < c_end && c_start < e) {
                    return Err(GemmError::Overlap {
                        operand,
                        c_start,
                        c_end,
                        start,
                        end,
                    });
                }
            }
        }
        Ok(RawExtents { a, b, bias, c })
    }
}

/// Most entries a strided batch may have (each is checked and launched on its own).
pub const MAX_BATCH: u64 = 1 << 20;

impl RawGemm {
    /// `count` calls of this one's shape, entry i's A, B and C `i` times `strides` (elements
    /// of A and B, of C) past this one's (the bias is shared): a strided batched GEMM.
    pub fn strided(
        &self,
        count: usize,
        (stride_a, stride_b, stride_c): (u64, u64, u64),
    ) -> Result<Vec<RawGemm>, GemmError> {
        if count as u64 > MAX_BATCH {
            return Err(GemmError::DimensionOverflow {
                what: "batch count",
                value: count as u64,
                max: MAX_BATCH,
            });
        }
        let (ea, ec) = (self.ab.size_bytes(), self.c_dtype.size_bytes());
        (0..count as u64)
            .map(|i| {
                let at = |base: u64, stride: u64, elem: u64| {
                    i.checked_mul(stride)
                        .and_then(|e| e.checked_mul(elem))
                        .and_then(|b| base.checked_add(b))
                        .ok_or(GemmError::DimensionOverflow {
                            what: "batch entry address",
                            value: i,
                            max: u64::MAX,
                        })
                };
                let mut call = *self;
                call.a.ptr = at(self.a.ptr, stride_a, ea)?;
                call.b.ptr = at(self.b.ptr, stride_b, ea)?;
                call.c.ptr = at(self.c.ptr, stride_c, ec)?;
                Ok(call)
            })
            .collect()
    }
}

/// A batch entry's failure: which entry, and why.
#[derive(Debug, thiserror::Error)]
#[error("batch entry {entry}: {error}")]
pub struct BatchFailure {
    /// The entry's index.
    pub entry: usize,
    /// Why it failed.
    pub error: GemmError,
}

/// Refuses a batch where one entry's output overlaps another's output, or any entry's
/// input (sorted sweeps: O(n log n) in the entries).
pub(crate) fn check_batch_overlaps(extents: &[RawExtents]) -> Result<(), BatchFailure> {
    let mut outputs: Vec<(u64, u64, usize)> = extents
        .iter()
        .enumerate()
        .filter_map(|(i, e)| e.c.map(|(s, t)| (s, t, i)))
        .collect();
    outputs.sort_unstable();
    for w in outputs.windows(2) {
        let ((s0, e0, i0), (s1, e1, i1)) = (w[0], w[1]);
        if s1 < e0 {
            return Err(BatchFailure {
                entry: i0.max(i1),
                error: GemmError::Overlap {
                    operand: Operand::C,
                    c_start: s1,
                    c_end: e1,
                    start: s0,
                    end: e0,
                },
            });
        }
    }
    let mut inputs: Vec<(u64, u64, Operand)> = extents
        .iter()
        .flat_map(|e| {
            [
                (e.a, Operand::A),
                (e.b, Operand::B),
                (e.bias, Operand::Bias),
            ]
            .into_iter()
            .filter_map(|(x, o)| x.map(|(s, t)| (s, t, o)))
        })
        .collect();
    inputs.sort_unstable_by_key(|&(s, t, _)| (s, t));
    // The inputs' running maximum end, so one look back finds any input reaching a start.
    let mut reach: Vec<u64> = Vec::with_capacity(inputs.len());
    for &(_, t, _) in &inputs {
        reach.push(reach.last().map_or(t, |&r: &u64| r.max(t)));
    }
    for &(c_start, c_end, entry) in &outputs {
        // Inputs starting before C ends; the one reaching furthest among them decides.
        let before = inputs.partition_point(|&(s, _, _)| s < c_end);
        if before > 0 && reach[before - 1] > c_start {
            let (start, end, operand) = inputs[..before]
                .iter()
                .copied()
                .find(|&(s, t, _)| s < c_end && c_start < t)
                .unwrap_or(inputs[before - 1]);
            return Err(BatchFailure {
                entry,
                error: GemmError::Overlap {
                    operand,
                    c_start,
                    c_end,
                    start,
                    end,
                },
            });
        }
    }
    Ok(())
}

/// Where a raw call's operand bounds come from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Bounds {
    /// The driver's allocation of each operand (`cuMemGetAddressRange`), where it knows one.
    Queried,
    /// The caller's word ([`Context::gemm_raw_in_bounds`]).
    Vouched,
}

/// Most spans one raw call registers (A, B, C and the bias).
const MAX_REGISTERED: usize = 4;

/// Registrations that end when dropped, so every exit of a raw call unregisters its spans.
/// Held inline: a call registers at most [`MAX_REGISTERED`] spans, and allocates nothing for
/// them.
pub(crate) struct Registered<'c> {
    pub ctx: &'c Context,
    spans: [Option<crate::registry::Span>; MAX_REGISTERED],
    /// Whether each span is checked against the driver's allocation first.
    bounds: Bounds,
}

impl Drop for Registered<'_> {
    fn drop(&mut self) {
        for span in self.spans.iter().flatten() {
            self.ctx.registry().release(span);
        }
    }
}

impl<'c> Registered<'c> {
    /// No registrations yet, with `ctx` bound to the thread: the driver's allocation queries
    /// that registering makes are answered for its device.
    pub fn bound(ctx: &'c Context) -> Result<Self, GemmError> {
        ctx.cuda().bind_to_thread()?;
        Ok(Registered {
            ctx,
            spans: [None; MAX_REGISTERED],
            bounds: Bounds::Queried,
        })
    }

    /// [`bound`](Self::bound), its spans' bounds from `bounds`.
    fn bound_with(ctx: &'c Context, bounds: Bounds) -> Result<Self, GemmError> {
        let mut reg = Self::bound(ctx)?;
        reg.bounds = bounds;
        Ok(reg)
    }

    /// Registers `extent` (or an empty span at `ptr`) as external memory of `T`, the context
    /// bound to the thread by the caller ([`bound`](Self::bound)).
    pub fn add<T: Element>(
        &mut self,
        ptr: u64,
        extent: Option<(u64, u64)>,
    ) -> Result<ExternalSpan<T>, GemmError> {
        let Some(free) = self.spans.iter_mut().find(|s| s.is_none()) else {
            return Err(GemmError::DimensionOverflow {
                what: "spans registered by one call",
                value: MAX_REGISTERED as u64 + 1,
                max: MAX_REGISTERED as u64,
            });
        };
        let elem = std::mem::size_of::<T>() as u64;
        let (start, bytes) = match extent {
            // Whole elements, as register_external counts them.
            Some((s, e)) => (s, (e - s) / elem * elem),
            None => (ptr, 0),
        };
        let span = match self.bounds {
            Bounds::Queried => self.ctx.register_bound::<T>(start, bytes)?,
            Bounds::Vouched => self.ctx.register_vouched::<T>(start, bytes),
        };
        *free = Some(span.span);
        Ok(span)
    }
}

/// `$ctx.$f::<A, C>(args)` for the storage types of the element types `$ab` (A and B) and
/// `$c` (C): the one place raw calls turn types as values into types.
macro_rules! by_element_types {
    ($ab:expr, $c:expr, $ctx:ident . $f:ident ( $($arg:expr),* )) => {
        match ($ab, $c) {
            (Dtype::Bf16, Dtype::F32) => $ctx.$f::<bf16, f32>($($arg),*),
            (Dtype::Bf16, Dtype::Bf16) => $ctx.$f::<bf16, bf16>($($arg),*),
            (Dtype::Bf16, Dtype::F16) => $ctx.$f::<bf16, f16>($($arg),*),
            (Dtype::F16, Dtype::F32) => $ctx.$f::<f16, f32>($($arg),*),
            (Dtype::F16, Dtype::F16) => $ctx.$f::<f16, f16>($($arg),*),
            (Dtype::F16, Dtype::Bf16) => $ctx.$f::<f16, bf16>($($arg),*),
            (Dtype::F32, Dtype::F32) => $ctx.$f::<f32, f32>($($arg),*),
            (Dtype::F32, Dtype::Bf16) => $ctx.$f::<f32, bf16>($($arg),*),
            (Dtype::F32, Dtype::F16) => $ctx.$f::<f32, f16>($($arg),*),
        }
    };
}
pub(crate) use by_element_types;

impl Context {
    /// Runs a [`RawGemm`]: checked without the device first ([`RawGemm::check`]), then its
    /// extents are registered as external spans for the duration of the call (the driver's
    /// allocation bounds checked, as [`register_external`](Self::register_external) does),
    /// validated and launched as [`gemm`](Self::gemm) does, and unregistered. A pair of
    /// element types no kernel serves is refused as [`GemmError::NoRoute`] by the routes.
    pub fn gemm_raw(&self, call: &RawGemm) -> Result<Launch, GemmError> {
        let extents = call.check()?;
        by_element_types!(
            call.ab,
            call.c_dtype,
            self.gemm_raw_typed(call, extents, Bounds::Queried)
        )
    }

    /// [`gemm_raw`](Self::gemm_raw) without asking the driver for each operand's allocation
    /// (`cuMemGetAddressRange`, about 0.1 us an operand): for callers that know their operands
    /// lie inside their memory, such as torch's own tensors, which lie within their storage as
    /// torch itself assumes (it checks a view against its storage when it makes the view; and
    /// its caching allocator's blocks share the driver's allocations, so the driver's bound is
    /// a segment's, not the tensor's). Every other check is made.
    ///
    /// # Safety
    ///
    /// Each operand's extent ([`RawGemm::check`]) lies inside one live device allocation of
    /// this context's device, readable (and for C writable) by the call.
    pub unsafe fn gemm_raw_in_bounds(&self, call: &RawGemm) -> Result<Launch, GemmError> {
        let extents = call.check()?;
        by_element_types!(
            call.ab,
            call.c_dtype,
            self.gemm_raw_typed(call, extents, Bounds::Vouched)
        )
    }

    pub(crate) fn gemm_raw_typed<A: Element, C: Element>(
        &self,
        call: &RawGemm,
        extents: RawExtents,
        bounds: Bounds,
    ) -> Result<Launch, GemmError> {
        let mut reg = Registered::bound_with(self, bounds)?;
        let a = reg.add::<A>(call.a.ptr, extents.a)?;
        let b = reg.add::<A>(call.b.ptr, extents.b)?;
        let c = reg.add::<C>(call.c.ptr, extents.c)?;
        let bias = match call.bias {
            Some(ptr) => Some(reg.add::<C>(ptr, extents.bias)?.mat_at(0, call.n)),
            None => None,
        };
        let mut req = GemmRequest::new(
            call.op,
            (call.m, call.n, call.k),
            a.mat_at(0, call.a.ld),
            b.mat_at(0, call.b.ld),
            c.mat_mut_at(0, call.c.ld),
        )
        .with_bias(bias)
        .with_beta(call.beta);
        req.policy = call.policy;
        req.mode = call.mode;
        self.gemm(req)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn call(op: Op, (m, n, k): (usize, usize, usize)) -> RawGemm {
        let mat = |ptr, ld| RawMatrix { ptr, ld };
        RawGemm {
            op,
            m,
            n,
            k,
            ab: Dtype::Bf16,
            c_dtype: Dtype::F32,
            a: mat(0x10_0000, k),
            b: mat(0x20_0000, n),
            c: mat(0x30_0000, n),
            bias: None,
            beta: 0.0,
            policy: None,
            mode: None,
        }
    }

    #[test]
    fn extents_follow_the_stored_shapes() {
        let e = call(Op::Nn, (3, 8, 16)).check().unwrap();
        assert_eq!(e.a, Some((0x10_0000, 0x10_0000 + (2 * 16 + 16) * 2)));
        assert_eq!(e.b, Some((0x20_0000, 0x20_0000 + (15 * 8 + 8) * 2)));
        assert_eq!(e.c, Some((0x30_0000, 0x30_0000 + (2 * 8 + 8) * 4)));
        // tn stores A as [k, m]: k rows of ld elements.
        let mut tn = call(Op::Tn, (3, 8, 16));
        tn.a.ld = 3;
        let e = tn.check().unwrap();
        assert_eq!(e.a, Some((0x10_0000, 0x10_0000 + (15 * 3 + 3) * 2)));
        // An empty output touches nothing.
        assert_eq!(call(Op::Nn, (0, 8, 16)).check().unwrap().c, None);
    }

    #[test]
    fn bad_calls_are_refused_without_a_device() {
        let mut short = call(Op::Nn, (4, 8, 16));
        short.a.ld = 15;
        assert!(matches!(
            short.check(),
            Err(GemmError::LeadingDimension {
                operand: Operand::A,
                ld: 15,
                min: 16
            })
        ));
        let mut null = call(Op::Nn, (4, 8, 16));
        null.b.ptr = 0;
        assert!(matches!(
            null.check(),
            Err(GemmError::NullPointer {
                operand: Operand::B
            })
        ));
        let mut odd = call(Op::Nn, (4, 8, 16));
        odd.c.ptr += 2;
        assert!(matches!(
            odd.check(),
            Err(GemmError::Misaligned {
                operand: Operand::C,
                align: 4,
                ..
            })
        ));
        let mut overlap = call(Op::Nn, (4, 8, 16));
        overlap.c.ptr = overlap.a.ptr + 8;
        assert!(matches!(
            overlap.check(),
            Err(GemmError::Overlap {
                operand: Operand::A,
                ..
            })
        ));
        let mut bias = call(Op::Nn, (4, 8, 16));
        bias.bias = Some(bias.c.ptr + 4 * 8);
        assert!(matches!(
            bias.check(),
            Err(GemmError::Overlap {
                operand: Operand::Bias,
                ..
            })
        ));
        let strided = call(Op::Nn, (4, 8, 16)).strided(3, (64, 0, 32)).unwrap();
        assert_eq!(strided[2].a.ptr, 0x10_0000 + 2 * 64 * 2);
        assert_eq!(strided[2].b.ptr, 0x20_0000);
        assert_eq!(strided[2].c.ptr, 0x30_0000 + 2 * 32 * 4);
        // Entries whose outputs overlap each other, or another entry's inputs.
        let batch = |stride_c: u64| {
            call(Op::Nn, (4, 8, 16))
                .strided(3, (64, 0, stride_c))
                .unwrap()
                .iter()
                .map(|c| c.check().unwrap())
                .collect::<Vec<_>>()
        };
        assert!(check_batch_overlaps(&batch(32)).is_ok());
        match check_batch_overlaps(&batch(0)) {
            Err(BatchFailure {
                entry: 1,
                error:
                    GemmError::Overlap {
                        operand: Operand::C,
                        ..
                    },
            }) => {}
            other => panic!("outputs over each other: {other:?}"),
        }
        // Entry 1's C lands on entry 0's A (each entry's own operands are apart).
        let mut onto_a = call(Op::Nn, (4, 8, 16));
        onto_a.c.ptr = 0x10_0000 - 0x1000;
        let calls = onto_a.strided(2, (0x1000, 0, 0x1000 / 4)).unwrap();
        let ex: Vec<_> = calls.iter().map(|c| c.check().unwrap()).collect();
        match check_batch_overlaps(&ex) {
            Err(BatchFailure {
                entry: 1,
                error:
                    GemmError::Overlap {
                        operand: Operand::A,
                        ..
                    },
            }) => {}
            other => panic!("an output over another entry's input: {other:?}"),
        }
        let huge = call(Op::Nn, (1 << 31, 8, 16));
        assert!(matches!(
            huge.check(),
            Err(GemmError::DimensionOverflow { what: "m", .. })
        ));
    }
}
