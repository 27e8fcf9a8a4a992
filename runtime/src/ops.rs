//! The operations of a linear layer, in the shapes their users think in, mapped onto the
//! GEMM view. All are batch-invariant in `Mode::Deterministic`. Each is a `GemmRequest`
//! constructor (for `Context::gemm_observed`, e.g. inside a `Request`) and a `Context` method.

use crate::buffer::{Mat, MatMut};
use crate::context::Context;
use crate::element::Element;
use crate::error::GemmError;
use crate::gemm::{GemmRequest, Launch};
use crate::table::Op;

impl<'a, A: Element, C: Element> GemmRequest<'a, A, C> {
    /// Forward: `Y[m, n] = X[m, k] · W[k, n] (+ bias[n])`, half to half, half to f32, or f32.
    ///
    /// The tuple is `(m, n, k)`: `m` = batch rows (rows of `X` and `Y`), `n` = out_features
    /// (columns of `W`, `Y` and the bias), `k` = in_features (columns of `X`, rows of `W`).
    /// Each view carries its own leading dimension (at least `k` for `X`, `n` for `W` and `Y`).
    pub fn linear(
        x: Mat<'a, A>,
        w: Mat<'a, A>,
        bias: Option<Mat<'a, C>>,
        y: MatMut<'a, C>,
        (m, n, k): (usize, usize, usize),
    ) -> Self {
        GemmRequest {
            op: Op::Nn,
            m,
            n,
            k,
            a: x,
            b: w,
            bias,
            c: y,
            beta: 0.0,
            policy: None,
        }
    }

    /// Input gradient: `dX[m, k] = dY[m, n] · W[k, n]^T`.
    ///
    /// The tuple is `(m, n, k)` as for [`GemmRequest::linear`]: `m` = batch rows,
    /// `n` = out_features, `k` = in_features.
    pub fn input_grad(
        dy: Mat<'a, A>,
        w: Mat<'a, A>,
        dx: MatMut<'a, C>,
        (m, n, k): (usize, usize, usize),
    ) -> Self {
        GemmRequest {
            op: Op::Nt,
            m,
            n: k,
            k: n,
            a: dy,
            b: w,
            bias: None,
            c: dx,
            beta: 0.0,
            policy: None,
        }
    }
}

impl<'a, A: Element> GemmRequest<'a, A, f32> {
    /// Weight gradient into an f32 master gradient: `dW[k, n] += X[batch, k]^T · dY[batch, n]`.
    ///
    /// The tuple is `(batch, k, n)`: batch rows, in_features, out_features.
    pub fn weight_grad(
        x: Mat<'a, A>,
        dy: Mat<'a, A>,
        dw: MatMut<'a, f32>,
        (batch, k, n): (usize, usize, usize),
    ) -> Self {
        GemmRequest {
            op: Op::Tn,
            m: k,
            n,
            k: batch,
            a: x,
            b: dy,
            bias: None,
            c: dw,
            beta: 1.0,
            policy: None,
        }
    }

    /// Tied LM head: `logits[m, vocab] = X[m, k] · E[vocab, k]^T`, half inputs, f32 logits.
    ///
    /// The tuple is `(m, vocab, k)`: batch rows, vocabulary size, hidden size.
    pub fn lm_head(
        x: Mat<'a, A>,
        embedding: Mat<'a, A>,
        logits: MatMut<'a, f32>,
        (m, vocab, k): (usize, usize, usize),
    ) -> Self {
        GemmRequest {
            op: Op::Nt,
            m,
            n: vocab,
            k,
            a: x,
            b: embedding,
            bias: None,
            c: logits,
            beta: 0.0,
            policy: None,
        }
    }
}

impl Context {
    /// [`GemmRequest::linear`], run: `Y[m, n] = X[m, k] · W[k, n] (+ bias[n])`.
    ///
    /// `dims` is `(m, n, k)`: `m` = batch rows, `n` = out_features, `k` = in_features.
    pub fn linear<A: Element, C: Element>(
        &self,
        x: Mat<'_, A>,
        w: Mat<'_, A>,
        bias: Option<Mat<'_, C>>,
        y: MatMut<'_, C>,
        dims: (usize, usize, usize),
    ) -> Result<Launch, GemmError> {
        self.gemm(GemmRequest::linear(x, w, bias, y, dims))
    }

    /// [`GemmRequest::weight_grad`], run.
    pub fn weight_grad<A: Element>(
        &self,
        x: Mat<'_, A>,
        dy: Mat<'_, A>,
        dw: MatMut<'_, f32>,
        dims: (usize, usize, usize),
    ) -> Result<Launch, GemmError> {
        self.gemm(GemmRequest::weight_grad(x, dy, dw, dims))
    }

    /// [`GemmRequest::input_grad`], run.
    pub fn input_grad<A: Element, C: Element>(
        &self,
        dy: Mat<'_, A>,
        w: Mat<'_, A>,
        dx: MatMut<'_, C>,
        dims: (usize, usize, usize),
    ) -> Result<Launch, GemmError> {
        self.gemm(GemmRequest::input_grad(dy, w, dx, dims))
    }

    /// [`GemmRequest::lm_head`], run.
    pub fn lm_head<A: Element>(
        &self,
        x: Mat<'_, A>,
        embedding: Mat<'_, A>,
        logits: MatMut<'_, f32>,
        dims: (usize, usize, usize),
    ) -> Result<Launch, GemmError> {
        self.gemm(GemmRequest::lm_head(x, embedding, logits, dims))
    }
}
