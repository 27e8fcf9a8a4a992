//! The operations of a linear layer, in the shapes their users think in, mapped onto the
//! GEMM view. All are batch-invariant in `Mode::Deterministic`. Each is a `GemmRequest`
//! constructor (for `Context::gemm_observed`, e.g. inside a `Request`) and a `Context` method.
//!
//! One convention for every op's shape tuple: **`(batch, out_features, in_features)`** of the
//! layer `Y = X · W`, `W` stored `[in_features, out_features]`:
//!
//! | op | computes | tuple | GEMM view (m, n, k) |
//! | --- | --- | --- | --- |
//! | [`linear`](Context::linear) | `Y[batch, out] = X[batch, in] · W[in, out] (+ bias[out])` | `(batch, out, in)` | `(batch, out, in)` |
//! | [`input_grad`](Context::input_grad) | `dX[batch, in] = dY[batch, out] · W[in, out]^T` | `(batch, out, in)` | `(batch, in, out)` |
//! | [`weight_grad`](Context::weight_grad) | `dW[in, out] += X[batch, in]^T · dY[batch, out]` | `(batch, out, in)` | `(in, out, batch)` |
//! | [`lm_head`](Context::lm_head) | `logits[batch, vocab] = X[batch, hidden] · E[vocab, hidden]^T` | `(batch, vocab, hidden)` | `(batch, vocab, hidden)` |
//!
//! The LM head is a linear layer whose out_features are the vocabulary and whose weight is
//! the embedding `E[vocab, hidden]` (tied). The output type `C` is generic in every op: a
//! half output or a half gradient runs through a route of that type, or the half fallback
//! (f32 kernel, the same contract) where no route serves it.

use crate::buffer::{Mat, MatMut};
use crate::context::Context;
use crate::element::Element;
use crate::error::GemmError;
use crate::request::{GemmRequest, Launch};
use crate::table::Op;

impl<'a, A: Element, C: Element> GemmRequest<'a, A, C> {
    /// Forward: `Y[batch, out] = X[batch, in] · W[in, out] (+ bias[out])`.
    ///
    /// The tuple is `(batch, out_features, in_features)`. Each view carries its own leading
    /// dimension (at least in_features for `X`, out_features for `W` and `Y`).
    pub fn linear(
        x: Mat<'a, A>,
        w: Mat<'a, A>,
        bias: Option<Mat<'a, C>>,
        y: MatMut<'a, C>,
        (batch, out_features, in_features): (usize, usize, usize),
    ) -> Self {
        GemmRequest::new(Op::Nn, (batch, out_features, in_features), x, w, y).with_bias(bias)
    }

    /// Input gradient: `dX[batch, in] = dY[batch, out] · W[in, out]^T`, with the same `W`
    /// view as the forward call.
    ///
    /// The tuple is `(batch, out_features, in_features)`, as for [`GemmRequest::linear`].
    pub fn input_grad(
        dy: Mat<'a, A>,
        w: Mat<'a, A>,
        dx: MatMut<'a, C>,
        (batch, out_features, in_features): (usize, usize, usize),
    ) -> Self {
        GemmRequest::new(Op::Nt, (batch, in_features, out_features), dy, w, dx)
    }

    /// Weight gradient, accumulated: `dW[in, out] += X[batch, in]^T · dY[batch, out]`
    /// (beta = 1; an f32 master gradient, or a half one through the half fallback).
    ///
    /// The tuple is `(batch, out_features, in_features)`, as for [`GemmRequest::linear`].
    pub fn weight_grad(
        x: Mat<'a, A>,
        dy: Mat<'a, A>,
        dw: MatMut<'a, C>,
        (batch, out_features, in_features): (usize, usize, usize),
    ) -> Self {
        GemmRequest::new(Op::Tn, (in_features, out_features, batch), x, dy, dw).with_beta(1.0)
    }

    /// Tied LM head: `logits[batch, vocab] = X[batch, hidden] · E[vocab, hidden]^T`.
    ///
    /// The tuple is `(batch, vocab, hidden)`: a linear layer's `(batch, out_features,
    /// in_features)` with the vocabulary as out_features.
    pub fn lm_head(
        x: Mat<'a, A>,
        embedding: Mat<'a, A>,
        logits: MatMut<'a, C>,
        (batch, vocab, hidden): (usize, usize, usize),
    ) -> Self {
        GemmRequest::new(Op::Nt, (batch, vocab, hidden), x, embedding, logits)
    }
}

impl Context {
    /// [`GemmRequest::linear`], run: `Y[batch, out] = X[batch, in] · W[in, out] (+ bias)`.
    ///
    /// `dims` is `(batch, out_features, in_features)`.
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

    /// [`GemmRequest::weight_grad`], run: `dW[in, out] += X^T · dY`.
    ///
    /// `dims` is `(batch, out_features, in_features)`.
    pub fn weight_grad<A: Element, C: Element>(
        &self,
        x: Mat<'_, A>,
        dy: Mat<'_, A>,
        dw: MatMut<'_, C>,
        dims: (usize, usize, usize),
    ) -> Result<Launch, GemmError> {
        self.gemm(GemmRequest::weight_grad(x, dy, dw, dims))
    }

    /// [`GemmRequest::input_grad`], run: `dX[batch, in] = dY · W^T`.
    ///
    /// `dims` is `(batch, out_features, in_features)`.
    pub fn input_grad<A: Element, C: Element>(
        &self,
        dy: Mat<'_, A>,
        w: Mat<'_, A>,
        dx: MatMut<'_, C>,
        dims: (usize, usize, usize),
    ) -> Result<Launch, GemmError> {
        self.gemm(GemmRequest::input_grad(dy, w, dx, dims))
    }

    /// [`GemmRequest::lm_head`], run: `logits[batch, vocab] = X · E^T`.
    ///
    /// `dims` is `(batch, vocab, hidden)`.
    pub fn lm_head<A: Element, C: Element>(
        &self,
        x: Mat<'_, A>,
        embedding: Mat<'_, A>,
        logits: MatMut<'_, C>,
        dims: (usize, usize, usize),
    ) -> Result<Launch, GemmError> {
        self.gemm(GemmRequest::lm_head(x, embedding, logits, dims))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::registry::Registry;

    /// Views of one registered span, only to build requests (nothing runs).
    fn views(r: &Registry) -> (Mat<'static, f32>, MatMut<'static, f32>) {
        let span = r.register(0x1000, 1 << 20);
        let mat = Mat {
            span,
            offset: 0,
            ld: 1,
            _p: std::marker::PhantomData,
        };
        let out = MatMut {
            span,
            offset: 0,
            ld: 1,
            _p: std::marker::PhantomData,
        };
        (mat, out)
    }

    /// Every op takes (batch, out_features, in_features) and maps it onto the GEMM view its
    /// layout needs.
    #[test]
    fn every_op_takes_batch_out_in_and_maps_it_onto_its_gemm_view() {
        let r = Registry::new();
        let (batch, out, inp) = (3, 5, 7);
        let gemm_view = |req: GemmRequest<'_, f32, f32>| (req.op, req.m, req.n, req.k, req.beta);
        let (a, c) = views(&r);
        let linear = GemmRequest::linear(a, a, None, c, (batch, out, inp));
        assert_eq!(gemm_view(linear), (Op::Nn, batch, out, inp, 0.0));
        let (a, c) = views(&r);
        let input_grad = GemmRequest::input_grad(a, a, c, (batch, out, inp));
        assert_eq!(gemm_view(input_grad), (Op::Nt, batch, inp, out, 0.0));
        let (a, c) = views(&r);
        let weight_grad = GemmRequest::weight_grad(a, a, c, (batch, out, inp));
        assert_eq!(gemm_view(weight_grad), (Op::Tn, inp, out, batch, 1.0));
        let (a, c) = views(&r);
        let lm_head = GemmRequest::lm_head(a, a, c, (batch, out, inp));
        assert_eq!(gemm_view(lm_head), (Op::Nt, batch, out, inp, 0.0));
    }
}
