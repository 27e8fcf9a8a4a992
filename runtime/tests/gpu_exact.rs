//! The exact family on the GPU, for every op and dtype: bit for bit equal to the CPU model of
//! its contract, within tolerance of a float64 reference, every output element written and
//! nothing outside the output touched. Shapes include M = 1, N = 1, K = 0, K = 1, odd sizes,
//! padded leading dimensions and a large shape. Fresh random data each run; outputs poisoned.

mod common;
use common::*;
use gemm_runtime::reference::{f64_reference, fma_k256, relative_error, HostGemm};
use gemm_runtime::*;

const SHAPES: &[(usize, usize, usize)] = &[
    (1, 1, 1),
    (1, 1, 0),
    (3, 5, 0),
    (7, 13, 1),
    (1, 1, 4096),
    (1, 4096, 512),
    (64, 65, 63),
    (65, 64, 129),
    (37, 333, 1000),
    (1000, 1, 37),
    (257, 129, 300),
];

/// Tolerance of `|out - ref| / |ref|` by output type (rounding of the store dominates halves).
fn tolerance<C: Element>() -> f64 {
    match C::DTYPE {
        Dtype::F32 => 1e-4,
        Dtype::Bf16 => 1e-2,
        Dtype::F16 => 2e-3,
    }
}

struct Case {
    op: Op,
    m: usize,
    n: usize,
    k: usize,
    pad: usize,
    bias: bool,
    beta: f32,
}

fn run_case<A: Element, C: Element>(ctx: &Context, rng: &mut Rng, case: &Case) -> Launch {
    let Case {
        op,
        m,
        n,
        k,
        pad,
        bias,
        beta,
    } = *case;
    let (a_rows, a_cols) = if op == Op::Tn { (k, m) } else { (m, k) };
    let (b_rows, b_cols) = if op == Op::Nt { (n, k) } else { (k, n) };
    let (lda, ldb, ldc) = (a_cols + pad, b_cols + pad, n + pad);
    let a: Vec<A> = rng.vec(a_rows * lda);
    let b: Vec<A> = rng.vec(b_rows * ldb);
    let bias_host: Vec<C> = rng.vec(n);
    let c_before: Vec<C> = if beta != 0.0 {
        rng.vec(m * ldc)
    } else {
        vec![poison(); m * ldc]
    };
    let da = ctx.upload(&a).unwrap();
    let db = ctx.upload(&b).unwrap();
    let dbias = ctx.upload(&bias_host).unwrap();
    let mut dc = ctx.upload(&c_before).unwrap();
    let launch = ctx
        .gemm(
            GemmRequest::new(op, (m, n, k), da.mat(lda), db.mat(ldb), dc.mat_mut(ldc))
                .with_bias(bias.then(|| dbias.mat(n)))
                .with_beta(beta),
        )
        .unwrap_or_else(|e| panic!("{op} {m}x{n}x{k}: {e}"));
    let got = ctx.download(&dc).unwrap();

    let g = HostGemm {
        op,
        m,
        n,
        k,
        lda,
        ldb,
        ldc,
        beta,
    };
    let mut want = c_before.clone();
    fma_k256(&g, &a, &b, bias.then_some(bias_host.as_slice()), &mut want);
    let label = format!(
        "{op} {}->{} m={m} n={n} k={k} pad={pad} bias={bias} beta={beta} kernel={:?}",
        A::DTYPE,
        C::DTYPE,
        launch.kernel.and_then(kernel).map(|k| k.name)
    );
    for i in 0..m {
        for j in 0..ldc {
            let (g_, w_) = (bits(got[i * ldc + j]), bits(want[i * ldc + j]));
            if j < n {
                assert!(
                    !got[i * ldc + j].to_f32().is_nan(),
                    "{label}: ({i}, {j}) not written"
                );
                assert_eq!(g_, w_, "{label}: ({i}, {j}) differs from the CPU model");
            } else {
                assert_eq!(
                    g_,
                    bits(c_before[i * ldc + j]),
                    "{label}: padding ({i}, {j}) was written"
                );
            }
        }
    }
    if m * n > 0 {
        let bias_ref = bias.then_some(bias_host.as_slice());
        let reference = f64_reference(&g, &a, &b, bias_ref, &c_before);
        // Element-wise forward error bound of an f32 FMA chain: k * 2^-24 * sum |a||b| (plus
        // |bias| and |beta c|), plus one rounding of the store.
        let abs = |v: &[A]| {
            v.iter()
                .map(|x| A::from_f32(x.to_f32().abs()))
                .collect::<Vec<A>>()
        };
        let abs_bias: Vec<C> = bias_host
            .iter()
            .map(|x| C::from_f32(x.to_f32().abs()))
            .collect();
        let abs_c: Vec<C> = c_before
            .iter()
            .map(|x| C::from_f32(x.to_f32().abs()))
            .collect();
        let magnitude = f64_reference(
            &g,
            &abs(&a),
            &abs(&b),
            bias.then_some(abs_bias.as_slice()),
            &abs_c,
        );
        let unit = (2.0f64).powi(-24);
        for i in 0..m {
            for j in 0..n {
                let (r, mag) = (reference[i * n + j], magnitude[i * n + j]);
                let bound = (k as f64 + 2.0) * unit * mag + tolerance::<C>() * r.abs();
                let err = (got[i * ldc + j].to_f32() as f64 - r).abs();
                assert!(
                    err <= bound,
                    "{label}: ({i}, {j}) = {} vs f64 {r}: error {err:e} > bound {bound:e}",
                    got[i * ldc + j].to_f32()
                );
            }
        }
        if m * n >= 256 {
            let err = relative_error(&got, ldc, &reference, m, n);
            assert!(err <= tolerance::<C>(), "{label}: relative error {err:e}");
        }
    }
    launch
}

fn sweep<A: Element, C: Element>(ops: &[Op]) {
    let ctx = context();
    let mut rng = Rng::fresh(&format!("exact {}->{}", A::DTYPE, C::DTYPE));
    let mut cases = 0;
    for &op in ops {
        for &(m, n, k) in SHAPES {
            for pad in [0, 3] {
                let tn = op == Op::Tn;
                let bias = op == Op::Nn && pad == 0;
                let beta = if tn { 1.0 } else { 0.0 };
                run_case::<A, C>(
                    &ctx,
                    &mut rng,
                    &Case {
                        op,
                        m,
                        n,
                        k,
                        pad,
                        bias,
                        beta,
                    },
                );
                cases += 1;
            }
        }
    }
    eprintln!("{}->{}: {cases} cases bit-exact", A::DTYPE, C::DTYPE);
}

#[test]
#[ignore = "needs a CUDA device"]
fn f32_to_f32_all_ops() {
    sweep::<f32, f32>(&[Op::Nn, Op::Nt, Op::Tn]);
}

#[test]
#[ignore = "needs a CUDA device"]
fn bf16_to_bf16_nn_nt() {
    sweep::<bf16, bf16>(&[Op::Nn, Op::Nt]);
}

#[test]
#[ignore = "needs a CUDA device"]
fn f16_to_f16_nn_nt() {
    sweep::<f16, f16>(&[Op::Nn, Op::Nt]);
}

#[test]
#[ignore = "needs a CUDA device"]
fn bf16_to_f32_all_ops() {
    sweep::<bf16, f32>(&[Op::Nn, Op::Nt, Op::Tn]);
}

#[test]
#[ignore = "needs a CUDA device"]
fn f16_to_f32_all_ops() {
    sweep::<f16, f32>(&[Op::Nn, Op::Nt, Op::Tn]);
}

#[test]
#[ignore = "needs a CUDA device"]
fn large_shapes_bit_exact() {
    let ctx = context();
    let mut rng = Rng::fresh("large");
    run_case::<f32, f32>(
        &ctx,
        &mut rng,
        &Case {
            op: Op::Nn,
            m: 1024,
            n: 1024,
            k: 1024,
            pad: 0,
            bias: true,
            beta: 0.0,
        },
    );
    run_case::<bf16, bf16>(
        &ctx,
        &mut rng,
        &Case {
            op: Op::Nt,
            m: 513,
            n: 2048,
            k: 1536,
            pad: 8,
            bias: false,
            beta: 0.0,
        },
    );
    run_case::<bf16, f32>(
        &ctx,
        &mut rng,
        &Case {
            op: Op::Tn,
            m: 768,
            n: 1024,
            k: 2048,
            pad: 0,
            bias: false,
            beta: 1.0,
        },
    );
}

#[test]
#[ignore = "needs a CUDA device"]
fn convenience_ops_map_onto_the_gemm_view() {
    let ctx = context();
    let mut rng = Rng::fresh("ops");
    let (m, k, n) = (5, 70, 33);
    let x: Vec<bf16> = rng.vec(m * k);
    let w: Vec<bf16> = rng.vec(k * n);
    let dy: Vec<bf16> = rng.vec(m * n);
    let (dx_, dw_, dy_) = (
        ctx.upload(&x).unwrap(),
        ctx.upload(&w).unwrap(),
        ctx.upload(&dy).unwrap(),
    );
    // input_grad: dX[m, k] = dY[m, n] W[k, n]^T
    let mut dx = ctx.alloc::<bf16>(m * k).unwrap();
    ctx.input_grad(dy_.mat(n), dw_.mat(n), dx.mat_mut(k), (m, n, k))
        .unwrap();
    let mut want = vec![bf16::ZERO; m * k];
    fma_k256(
        &HostGemm {
            op: Op::Nt,
            m,
            n: k,
            k: n,
            lda: n,
            ldb: n,
            ldc: k,
            beta: 0.0,
        },
        &dy,
        &w,
        None,
        &mut want,
    );
    assert_eq!(ctx.download(&dx).unwrap(), want);
    // weight_grad accumulates: dW += X^T dY, twice.
    let mut dw = ctx.alloc::<f32>(k * n).unwrap();
    ctx.weight_grad(dx_.mat(k), dy_.mat(n), dw.mat_mut(n), (m, k, n))
        .unwrap();
    ctx.weight_grad(dx_.mat(k), dy_.mat(n), dw.mat_mut(n), (m, k, n))
        .unwrap();
    let mut want = vec![0.0f32; k * n];
    let g = HostGemm {
        op: Op::Tn,
        m: k,
        n,
        k: m,
        lda: k,
        ldb: n,
        ldc: n,
        beta: 1.0,
    };
    fma_k256(&g, &x, &dy, None, &mut want);
    fma_k256(&g, &x, &dy, None, &mut want);
    assert_eq!(ctx.download(&dw).unwrap(), want);
    // lm_head: logits[m, vocab] = X[m, k] E[vocab, k]^T, f32 logits.
    let vocab = 1000;
    let e: Vec<bf16> = rng.vec(vocab * k);
    let de = ctx.upload(&e).unwrap();
    let mut logits = ctx.alloc::<f32>(m * vocab).unwrap();
    ctx.lm_head(dx_.mat(k), de.mat(k), logits.mat_mut(vocab), (m, vocab, k))
        .unwrap();
    let mut want = vec![0.0f32; m * vocab];
    fma_k256(
        &HostGemm {
            op: Op::Nt,
            m,
            n: vocab,
            k,
            lda: k,
            ldb: k,
            ldc: vocab,
            beta: 0.0,
        },
        &x,
        &e,
        None,
        &mut want,
    );
    assert_eq!(ctx.download(&logits).unwrap(), want);
}

/// A half combination with no route runs as the half fallback (upcast, f32 GEMM, downcast)
/// and must give the CPU model's bits, with and without bias and beta.
fn fallback_sweep<A: Element, C: Element>(ops: &[Op]) {
    let ctx = context();
    let mut rng = Rng::fresh(&format!("fallback {}->{}", A::DTYPE, C::DTYPE));
    let mut cases = 0;
    let epilogues = [
        (0, false, 0.0),
        (3, true, 1.0),
        (0, true, 0.0),
        (3, false, -0.5),
    ];
    for &op in ops {
        for &(m, n, k) in SHAPES {
            for (pad, bias, beta) in epilogues {
                let case = Case {
                    op,
                    m,
                    n,
                    k,
                    pad,
                    bias,
                    beta,
                };
                let launch = run_case::<A, C>(&ctx, &mut rng, &case);
                assert!(
                    launch.half_fallback || m * n == 0,
                    "{op} {}->{} {m}x{n}x{k} should take the half fallback",
                    A::DTYPE,
                    C::DTYPE
                );
                cases += 1;
            }
        }
    }
    eprintln!(
        "{ops:?} {}->{} half fallback: {cases} cases bit-exact",
        A::DTYPE,
        C::DTYPE
    );
}

#[test]
#[ignore = "needs a CUDA device"]
fn bf16_to_bf16_tn_half_fallback() {
    fallback_sweep::<bf16, bf16>(&[Op::Tn]);
}

#[test]
#[ignore = "needs a CUDA device"]
fn f16_to_f16_tn_half_fallback() {
    fallback_sweep::<f16, f16>(&[Op::Tn]);
}

/// f32 inputs with a half output: only the output (and a half bias, and C) is converted; the
/// request's own A and B, with their leading dimensions, go straight to the f32 kernel.
#[test]
#[ignore = "needs a CUDA device"]
fn f32_to_bf16_all_ops_half_fallback() {
    fallback_sweep::<f32, bf16>(&[Op::Nn, Op::Nt, Op::Tn]);
}

/// bf16 inputs with an f16 output: both directions of conversion, two half types.
#[test]
#[ignore = "needs a CUDA device"]
fn bf16_to_f16_nn_tn_half_fallback() {
    fallback_sweep::<bf16, f16>(&[Op::Nn, Op::Tn]);
}

/// The fallback's rows do not depend on the batch: C[0..m] of a TN half GEMM equals the
/// first m rows of the full-batch result, bit for bit.
#[test]
#[ignore = "needs a CUDA device"]
fn half_fallback_is_batch_invariant() {
    let ctx = context();
    let mut rng = Rng::fresh("fallback invariance");
    let (full, n, k) = (300usize, 129usize, 700usize);
    // TN: A is stored [k, m]; a sub-batch is its first m columns (same lda).
    let a = ctx.upload(&rng.vec::<bf16>(k * full)).unwrap();
    let b = ctx.upload(&rng.vec::<bf16>(k * n)).unwrap();
    let run = |m: usize| {
        let mut c = ctx.upload(&vec![poison::<bf16>(); m * n]).unwrap();
        let launch = ctx
            .gemm(GemmRequest::new(
                Op::Tn,
                (m, n, k),
                a.mat(full),
                b.mat(n),
                c.mat_mut(n),
            ))
            .unwrap();
        assert!(launch.half_fallback);
        ctx.download(&c).unwrap()
    };
    let reference = run(full);
    for m in [1, 2, 3, 7, 8, 16, 17, 63, 64, 65, 255, 256, 257, 299] {
        let got = run(m);
        assert!(
            got.iter()
                .zip(&reference[..m * n])
                .all(|(x, y)| x.to_bits() == y.to_bits()),
            "m = {m}: rows differ from the m = {full} run"
        );
    }
    eprintln!("TN bf16->bf16 half fallback: 14 batch sizes bit-equal to m = {full}");
}
