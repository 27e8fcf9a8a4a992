//! The tensor map of a caller's view: what a TMA kernel of the GEMM path would be given,
//! validated like a GEMM operand, checked against TMA's rules and encoded (or taken from the
//! device's cache). For callers that launch their own TMA kernels on registered memory, and
//! for tests of TMA's rules on the GPU.

use crate::buffer::Mat;
use crate::context::Context;
use crate::element::Element;
use crate::error::{GemmError, Operand};
use crate::request::check_operand;
use crate::tensor_map_cache::TensorMapBytes;
use gemm_core::{TensorMapKey, TmaProblem};

impl Context {
    /// The tensor map of `view`, stored `rows x cols` (row-major, the view's leading
    /// dimension), for a box of `box_inner x box_outer` elements and a swizzle of
    /// `swizzle_bytes` (0, 32, 64 or 128): validated like a GEMM operand (live allocation of
    /// this context, in bounds), then checked against TMA's rules ([`GemmError::Tma`] says
    /// what TMA refuses), encoded or taken from the device's cache.
    pub fn tensor_map<T: Element>(
        &self,
        operand: Operand,
        view: &Mat<'_, T>,
        (rows, cols): (u64, u64),
        (box_inner, box_outer): (u32, u32),
        swizzle_bytes: u32,
    ) -> Result<(TensorMapKey, TensorMapBytes), GemmError> {
        let elem = std::mem::size_of::<T>() as u64;
        let checked = check_operand(
            self,
            operand,
            (&view.span, view.offset, view.ld),
            rows,
            cols,
            elem,
        )?;
        if checked.is_none() {
            return Err(GemmError::Tma {
                operand,
                problem: TmaProblem::Dimension { rows, cols },
            });
        }
        self.device.maps.map_for(
            self.registry(),
            operand,
            (view.span, view.offset as u64 * elem),
            (rows, cols, view.ld as u64, T::DTYPE),
            (box_inner, box_outer, swizzle_bytes),
            None,
        )
    }
}
