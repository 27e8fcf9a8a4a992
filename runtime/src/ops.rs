//! The operations of a linear layer, in the shapes their users think in, mapped onto the
//! GEMM view. All are batch-invariant in `Mode::Deterministic`.

use crate::buffer::{Mat, MatMut};
use crate::context::Context;
use crate::element::Element;
use crate::error::GemmError;
use crate::gemm::{GemmRequest, Launch};
use crate::table::Op;

impl Context {
    /// Forward: `Y[m, n] = X[m, k] · W[k, n] (+ bias[n])`, half to half, half to f32, or f32.
    pub fn linear<A: Element, C: Element>(
        &self,
        x: Mat<'_, A>,
        w: Mat<'_, A>,
        bias: Option<Mat<'_, C>>,
        y: MatMut<'_, C>,
        (m, n, k): (usize, usize, usize),
    ) -> Result<Launch, GemmError> {
        self.gemm(GemmRequest {
            op: Op::Nn,
            m,
            n,
            k,
            a: x,
            b: w,
            bias,
            c: y,
            beta: 0.0,
        })
    }

    /// Weight gradient into an f32 master gradient: `dW[k, n] += X[batch, k]^T · dY[batch, n]`.
    pub fn weight_grad<A: Element>(
        &self,
        x: Mat<'_, A>,
        dy: Mat<'_, A>,
        dw: MatMut<'_, f32>,
        (batch, k, n): (usize, usize, usize),
    ) -> Result<Launch, GemmError> {
        self.gemm(GemmRequest {
            op: Op::Tn,
            m: k,
            n,
            k: batch,
            a: x,
            b: dy,
            bias: None,
            c: dw,
            beta: 1.0,
        })
    }

    /// Input gradient: `dX[m, k] = dY[m, n] · W[k, n]^T`.
    pub fn input_grad<A: Element, C: Element>(
        &self,
        dy: Mat<'_, A>,
        w: Mat<'_, A>,
        dx: MatMut<'_, C>,
        (m, n, k): (usize, usize, usize),
    ) -> Result<Launch, GemmError> {
        self.gemm(GemmRequest {
            op: Op::Nt,
            m,
            n: k,
            k: n,
            a: dy,
            b: w,
            bias: None,
            c: dx,
            beta: 0.0,
        })
    }

    /// Tied LM head: `logits[m, vocab] = X[m, k] · E[vocab, k]^T`, half inputs, f32 logits.
    pub fn lm_head<A: Element>(
        &self,
        x: Mat<'_, A>,
        embedding: Mat<'_, A>,
        logits: MatMut<'_, f32>,
        (m, vocab, k): (usize, usize, usize),
    ) -> Result<Launch, GemmError> {
        self.gemm(GemmRequest {
            op: Op::Nt,
            m,
            n: vocab,
            k,
            a: x,
            b: embedding,
            bias: None,
            c: logits,
            beta: 0.0,
        })
    }
}
