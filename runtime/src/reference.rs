//! CPU models of the numeric contracts, bit for bit: what the GPU must reproduce exactly.
//! Also a float64 reference for tolerance checks.

use crate::element::Element;
use crate::table::Op;

/// Shapes and strides of one GEMM in the GEMM view (see [`GemmRequest`](crate::GemmRequest)).
#[derive(Clone, Copy, Debug)]
pub struct HostGemm {
    /// Operand layout.
    pub op: Op,
    /// Rows of C.
    pub m: usize,
    /// Columns of C.
    pub n: usize,
    /// Reduction length.
    pub k: usize,
    /// Leading dimension of A as stored.
    pub lda: usize,
    /// Leading dimension of B as stored.
    pub ldb: usize,
    /// Leading dimension of C.
    pub ldc: usize,
    /// 0 overwrites C; otherwise C = fma(beta, C, result).
    pub beta: f32,
}

impl HostGemm {
    fn a_at(&self, i: usize, p: usize) -> usize {
        if self.op == Op::Tn {
            p * self.lda + i
        } else {
            i * self.lda + p
        }
    }
    fn b_at(&self, p: usize, j: usize) -> usize {
        if self.op == Op::Nt {
            j * self.ldb + p
        } else {
            p * self.ldb + j
        }
    }
}

/// The chunk length of contract `fma-k256`.
pub const FMA_CHUNK: usize = 256;

/// Contract `fma-k256`: K cut into chunks of 256; each chunk one f32 FMA chain from 0 over
/// ascending k; chunk results added left to right (`acc = p0; acc = acc + p1; ...`, 0 when
/// K = 0); then `+ bias`, then `fma(beta, c, ·)`; one rounding to C's type. Writes C in place.
pub fn fma_k256<A: Element, C: Element>(
    g: &HostGemm,
    a: &[A],
    b: &[A],
    bias: Option<&[C]>,
    c: &mut [C],
) {
    for i in 0..g.m {
        for j in 0..g.n {
            let mut acc = 0.0f32;
            for (chunk, start) in (0..g.k).step_by(FMA_CHUNK).enumerate() {
                let mut part = 0.0f32;
                for p in start..(start + FMA_CHUNK).min(g.k) {
                    part = a[g.a_at(i, p)]
                        .to_f32()
                        .mul_add(b[g.b_at(p, j)].to_f32(), part);
                }
                acc = if chunk == 0 { part } else { acc + part };
            }
            let mut v = acc;
            if let Some(bias) = bias {
                v += bias[j].to_f32();
            }
            let out = &mut c[i * g.ldc + j];
            if g.beta != 0.0 {
                v = g.beta.mul_add(out.to_f32(), v);
            }
            *out = C::from_f32(v);
        }
    }
}

/// The same GEMM in float64 (inputs widened exactly), for tolerance checks.
pub fn f64_reference<A: Element, C: Element>(
    g: &HostGemm,
    a: &[A],
    b: &[A],
    bias: Option<&[C]>,
    c_before: &[C],
) -> Vec<f64> {
    let mut out = vec![0.0f64; g.m * g.n];
    for i in 0..g.m {
        for j in 0..g.n {
            let mut acc = 0.0f64;
            for p in 0..g.k {
                acc += a[g.a_at(i, p)].to_f32() as f64 * b[g.b_at(p, j)].to_f32() as f64;
            }
            if let Some(bias) = bias {
                acc += bias[j].to_f32() as f64;
            }
            if g.beta != 0.0 {
                acc += g.beta as f64 * c_before[i * g.ldc + j].to_f32() as f64;
            }
            out[i * g.n + j] = acc;
        }
    }
    out
}

/// `|out - ref| / |ref|` over all elements (Frobenius norms); `out` is `m x n` at `ldc`.
pub fn relative_error<C: Element>(
    out: &[C],
    ldc: usize,
    reference: &[f64],
    m: usize,
    n: usize,
) -> f64 {
    let (mut num, mut den) = (0.0f64, 0.0f64);
    for i in 0..m {
        for j in 0..n {
            let r = reference[i * n + j];
            let d = out[i * ldc + j].to_f32() as f64 - r;
            num += d * d;
            den += r * r;
        }
    }
    if den == 0.0 {
        num.sqrt()
    } else {
        (num / den).sqrt()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn chunks_are_chains_added_in_order() {
        // k = 600: chunks [0, 256), [256, 512), [512, 600).
        let k = 600;
        let g = HostGemm {
            op: Op::Nn,
            m: 1,
            n: 1,
            k,
            lda: k,
            ldb: 1,
            ldc: 1,
            beta: 0.0,
        };
        let a: Vec<f32> = (0..k).map(|i| (i as f32 * 0.37).sin() * 3.1).collect();
        let b: Vec<f32> = (0..k).map(|i| (i as f32 * 1.13).cos() * 0.7).collect();
        let chain = |r: std::ops::Range<usize>| r.fold(0.0f32, |acc, p| a[p].mul_add(b[p], acc));
        let want = (chain(0..256) + chain(256..512)) + chain(512..600);
        let mut c = [0.0f32];
        fma_k256(&g, &a, &b, None, &mut c);
        assert_eq!(c[0].to_bits(), want.to_bits());
        assert_ne!(
            want.to_bits(),
            chain(0..600).to_bits(),
            "the test must tell chunked from one chain"
        );
    }

    #[test]
    fn fma_k256_rounds_once_at_the_store_and_orders_bias_then_beta() {
        // 1 x 1 x 2: acc = fma(a1, b1, fma(a0, b0, 0)).
        let g = HostGemm {
            op: Op::Nn,
            m: 1,
            n: 1,
            k: 2,
            lda: 2,
            ldb: 1,
            ldc: 1,
            beta: 1.0,
        };
        let a = [1.0f32 + f32::EPSILON, 1.0];
        let b = [1.0f32 - f32::EPSILON, -1.0];
        let mut c = [0.5f32];
        fma_k256(&g, &a, &b, Some(&[0.25f32]), &mut c);
        let acc = 1.0f32.mul_add(-1.0, (1.0f32 + f32::EPSILON) * (1.0 - f32::EPSILON));
        assert_eq!(c[0], 1.0f32.mul_add(0.5, acc + 0.25));
        // Half output rounds the f32 value once.
        let mut h = [half::bf16::ZERO];
        let g0 = HostGemm { beta: 0.0, ..g };
        fma_k256(
            &g0,
            &[3.0f32, 0.0],
            &[1.0f32 / 3.0, 0.0],
            None::<&[half::bf16]>,
            &mut h,
        );
        assert_eq!(h[0], half::bf16::from_f32(3.0f32 * (1.0 / 3.0)));
    }

    #[test]
    fn layouts_follow_the_op() {
        // A = [[1, 2], [3, 4]] as [m, k]; for tn store it transposed.
        let nn = HostGemm {
            op: Op::Nn,
            m: 2,
            n: 1,
            k: 2,
            lda: 2,
            ldb: 1,
            ldc: 1,
            beta: 0.0,
        };
        let mut c = [0.0f32; 2];
        fma_k256(&nn, &[1.0f32, 2.0, 3.0, 4.0], &[1.0, 10.0], None, &mut c);
        assert_eq!(c, [21.0, 43.0]);
        let tn = HostGemm { op: Op::Tn, ..nn };
        fma_k256(&tn, &[1.0f32, 3.0, 2.0, 4.0], &[1.0, 10.0], None, &mut c);
        assert_eq!(c, [21.0, 43.0]);
        let nt = HostGemm {
            op: Op::Nt,
            ldb: 2,
            ..nn
        };
        fma_k256(&nt, &[1.0f32, 2.0, 3.0, 4.0], &[1.0, 10.0], None, &mut c);
        assert_eq!(c, [21.0, 43.0]);
    }
}

/// The row-t<threads> tree (docs/fronts.md) over `f(x[c])`: thread t sums c = t, t + threads,
/// ... ascending from +0; each warp of 32 folds by xor distances 16, 8, 4, 2, 1; the warps'
/// totals are added in ascending order. `combine` is `+` for sums, `max` for the maximum
/// (whose start is -inf).
pub fn row_tree(
    values: impl Fn(usize) -> f32,
    cols: usize,
    threads: usize,
    start: f32,
    combine: impl Fn(f32, f32) -> f32,
) -> f32 {
    let mut lanes: Vec<f32> = (0..threads)
        .map(|t| {
            let mut s = start;
            let mut c = t;
            while c < cols {
                s = combine(s, values(c));
                c += threads;
            }
            s
        })
        .collect();
    for warp in lanes.chunks_mut(32) {
        for d in [16, 8, 4, 2, 1] {
            let before: Vec<f32> = warp.to_vec();
            for (lane, v) in warp.iter_mut().enumerate() {
                *v = combine(before[lane], before[lane ^ d]);
            }
        }
    }
    let mut total = lanes[0];
    for w in 1..threads / 32 {
        total = combine(total, lanes[w * 32]);
    }
    total
}

/// The mean of a row under contract row-t<threads>, bit for bit: the tree's sum over f32(x),
/// divided by cols in f32.
pub fn row_mean<T: Element>(row: &[T], threads: usize) -> f32 {
    let sum = row_tree(|c| row[c].to_f32(), row.len(), threads, 0.0, |a, b| a + b);
    sum / row.len() as f32
}

#[cfg(test)]
mod row_tests {
    use super::*;

    #[test]
    fn the_row_tree_is_the_stated_order() {
        // 1e8 and -1e8 in different warps, ones elsewhere: a sequential sum and the tree
        // round differently, and the model must be the tree.
        let cols = 64;
        let x: Vec<f32> = (0..cols)
            .map(|c| match c {
                0 => 1e8,
                32 => -1e8,
                _ => 1.0,
            })
            .collect();
        let tree = row_tree(|c| x[c], cols, 64, 0.0, |a, b| a + b);
        let sequential: f32 = x.iter().sum();
        assert_ne!(tree.to_bits(), sequential.to_bits());
        assert_eq!(row_tree(|c| x[c], cols, 64, 0.0, |a, b| a + b), tree);
        let max = row_tree(|c| x[c], cols, 64, f32::NEG_INFINITY, f32::max);
        assert_eq!(max, 1e8);
        assert_eq!(row_mean(&[2.0f32, 4.0, 6.0], 256), 4.0);
    }
}
