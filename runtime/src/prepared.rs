//! Prepared weights: a weight whose address or leading dimension TMA cannot take (an odd
//! vocabulary: 50257 columns) copied once, bits unchanged, into an allocation whose rows start
//! on 16 bytes, so every call with it runs the route's TMA kernel without a per-call copy.

use crate::buffer::{DeviceBuffer, Mat};
use crate::context::Context;
use crate::conversion::Conversion;
use crate::element::Element;
use crate::emit::RequestFacts;
use crate::error::{GemmError, Operand};
use crate::observer::{LaunchKind, NoObserver};
use crate::request::{check_operand, dim, Placed};
use crate::table::{Op, Policy};

/// A weight laid out for the TMA kernels: one padded copy (rows x [`ld`](Self::ld), the
/// columns rounded up to 16 bytes), the padding never read. Pass [`mat`](Self::mat) as the
/// operand; the bits of every product are those of the original weight.
pub struct PreparedWeight<T: Element> {
    buffer: DeviceBuffer<T>,
    rows: usize,
    cols: usize,
    ld: usize,
}

impl<T: Element> PreparedWeight<T> {
    /// The weight as an operand, with its padded leading dimension.
    pub fn mat(&self) -> Mat<'_, T> {
        self.buffer.mat(self.ld)
    }
    /// Rows as stored.
    pub fn rows(&self) -> usize {
        self.rows
    }
    /// Columns as stored.
    pub fn cols(&self) -> usize {
        self.cols
    }
    /// The padded leading dimension, in elements.
    pub fn ld(&self) -> usize {
        self.ld
    }
    /// Device bytes the copy holds.
    pub fn bytes(&self) -> u64 {
        (self.buffer.len() * std::mem::size_of::<T>()) as u64
    }
}

impl Context {
    /// Copies a `rows x cols` weight stored with leading dimension `w.ld()` into a
    /// [`PreparedWeight`] (enqueued on this stream; the copy is ready for the stream's later
    /// work). Costs one padded copy of the weight, once. Refuses bad views as a GEMM would,
    /// before allocating.
    pub fn prepare_weight<T: Element>(
        &self,
        w: Mat<'_, T>,
        rows: usize,
        cols: usize,
    ) -> Result<PreparedWeight<T>, GemmError> {
        let (r, c) = (dim("rows", rows)?, dim("cols", cols)?);
        let elem = std::mem::size_of::<T>() as u64;
        let extent = check_operand(self, Operand::B, (&w.span, w.offset, w.ld), r, c, elem)?;
        let ld = gemm_core::aligned_ld(c, T::DTYPE) as usize;
        let info = self.conversion(T::DTYPE, T::DTYPE)?;
        let mut buffer = self.alloc::<T>(rows.max(1) * ld)?;
        let Some(extent) = extent else {
            return Ok(PreparedWeight {
                buffer,
                rows,
                cols,
                ld,
            });
        };
        let step = Conversion {
            kind: LaunchKind::OperandRepack,
            info,
            rows: r,
            cols: c,
            ld_src: w.ld as u64,
            ld_dst: ld as u64,
            operand: Placed {
                address: extent.start,
                span: w.span,
                offset: w.offset as u64 * elem,
            },
            region: 0,
        };
        let dst = Placed {
            address: buffer.span().base,
            span: buffer.span(),
            offset: 0,
        };
        // Only an observer reads the facts; this launch has none.
        let facts = RequestFacts {
            op: Op::Nn,
            logical: (T::DTYPE, T::DTYPE),
            shape: (r, c, 0),
            leading_dims: (w.ld as u64, ld as u64, 0),
            policy: Policy::Exact,
            policy_from_context: false,
        };
        self.emit_conversion(&mut NoObserver, facts, &step, Some(step.operand), Some(dst))?;
        let _ = &mut buffer;
        Ok(PreparedWeight {
            buffer,
            rows,
            cols,
            ld,
        })
    }
}
