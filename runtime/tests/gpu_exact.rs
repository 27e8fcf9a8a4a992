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
    run_case_on::<A, C>(ctx, rng, case, None)
}

/// [`run_case`] on its route's kernel, or on `on` (`Context::gemm_on_kernel`).
fn run_case_on<A: Element, C: Element>(
    ctx: &Context,
    rng: &mut Rng,
    case: &Case,
    on: Option<KernelId>,
) -> Launch {
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
    let req = GemmRequest::new(op, (m, n, k), da.mat(lda), db.mat(ldb), dc.mat_mut(ldc))
        .with_bias(bias.then(|| dbias.mat(n)))
        .with_beta(beta);
    let launch = match on {
        None => ctx
            .gemm(req)
            .unwrap_or_else(|e| panic!("{op} {m}x{n}x{k}: {e}")),
        Some(id) => ctx
            .gemm_on_kernel(req, id)
            .unwrap_or_else(|e| panic!("{op} {m}x{n}x{k} on {id:?}: {e}")),
    };
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
        // A result in C's subnormal range is stored to a fixed spacing, not a relative one:
        // half of it (f16: 2^-25, 3e-8) is the store's rounding there.
        let subnormal_half = match C::DTYPE {
            Dtype::F16 => (2.0f64).powi(-25),
            Dtype::Bf16 => (2.0f64).powi(-134),
            _ => (2.0f64).powi(-150),
        };
        for i in 0..m {
            for j in 0..n {
                let (r, mag) = (reference[i * n + j], magnitude[i * n + j]);
                let bound =
                    (k as f64 + 2.0) * unit * mag + tolerance::<C>() * r.abs() + subnormal_half;
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

/// Runs every exact kernel of the tier, routed or a tuning candidate (`fmaw`'s tiles among
/// them), by name (`Context::gemm_on_kernel`, as the tuner runs them) for its op with f32 and
/// bf16 operands at each of `shapes` (m, n, k, pad, bias, beta), each against the CPU model.
/// `f32_only`: only the kernels of f32 inputs and output (the CPU model of a GPU-filling shape
/// takes seconds a kernel; the small shapes cover every dtype).
fn every_exact_kernel(
    label: &str,
    shapes: &[(usize, usize, usize, usize, bool, f32)],
    f32_only: bool,
) {
    let ctx = context();
    let mut rng = Rng::fresh(label);
    let mut ran = Vec::new();
    for info in ctx.kernels().tier_kernels(ctx.tier().id) {
        if info.policy != Policy::Exact || info.batch {
            continue;
        }
        if f32_only && (info.dtype.ab, info.dtype.c) != (Dtype::F32, Dtype::F32) {
            continue;
        }
        for &(m, n, k, pad, bias, beta) in shapes {
            let case = Case {
                op: info.op,
                m,
                n,
                k,
                pad,
                bias,
                beta,
            };
            let on = Some(info.id);
            let launch = match (info.dtype.ab, info.dtype.c) {
                (Dtype::F32, Dtype::F32) => run_case_on::<f32, f32>(&ctx, &mut rng, &case, on),
                (Dtype::Bf16, Dtype::Bf16) => run_case_on::<bf16, bf16>(&ctx, &mut rng, &case, on),
                (Dtype::Bf16, Dtype::F32) => run_case_on::<bf16, f32>(&ctx, &mut rng, &case, on),
                _ => continue,
            };
            assert_eq!(launch.kernel, Some(info.id), "{} did not run", info.name);
        }
        ran.push(info.name);
    }
    assert!(ran.len() > 1, "only {ran:?} ran");
    eprintln!(
        "{label}: {} exact kernels give fma-k256's bits: {ran:?}",
        ran.len()
    );
}

/// Partial tiles, several chunks, odd leading dimensions (the elementwise loads), bias, beta;
/// eleven chunks, so a K split over a cluster (fmaws) runs several rounds, the last one partial;
/// eighteen, so a decode split of 16 chunks a round (fmadecsplit) runs two, with a partial
/// column strip and a short last slice.
#[test]
#[ignore = "needs a CUDA device"]
fn every_exact_kernel_gives_the_models_bits() {
    every_exact_kernel(
        "every exact kernel",
        &[
            (257, 129, 300, 0, true, 0.0),
            (131, 67, 517, 3, false, 0.5),
            (33, 65, 2600, 1, true, 0.5),
            (5, 40, 4500, 0, true, 0.5),
        ],
        false,
    );
}

/// A shape whose 128 x 128 tiles fill the H200's 132 SMs about once, K two chunks; f32 only.
#[test]
#[ignore = "needs a CUDA device"]
fn every_exact_kernel_gives_the_models_bits_filling_the_gpu() {
    every_exact_kernel(
        "every exact kernel, GPU-filling",
        &[(2048, 1024, 264, 0, true, 0.0)],
        true,
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
    ctx.weight_grad(dx_.mat(k), dy_.mat(n), dw.mat_mut(n), (m, n, k))
        .unwrap();
    ctx.weight_grad(dx_.mat(k), dy_.mat(n), dw.mat_mut(n), (m, n, k))
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

// ---------------------------------------------------------------------------------------------
// The tensor-core policy (contract tc-k16). The contract has no CPU model (how the 16 products
// of one k16 step are summed is the hardware's), so its kernels are compared with each other
// (gpu_tensor_core.rs) and with the full batch (gpu_invariance.rs); here every element is held
// to a float64 reference within the contract's forward-error bound, every element of C is
// written and its padding is not. The `tc_*` tests skip, saying why, when the context's tier
// has no tensor-core route.

const TC: Policy = Policy::TensorCore;

/// Unit roundoff of the output type: the store's one rounding.
fn unit_out<C: Element>() -> f64 {
    match C::DTYPE {
        Dtype::F32 => (2.0f64).powi(-24),
        Dtype::Bf16 => (2.0f64).powi(-8),
        Dtype::F16 => (2.0f64).powi(-11),
    }
}

/// Half the spacing of the output type's subnormals: the store's absolute error below its
/// normal range (f16 results under 2^-14 are stored as subnormals; bf16 and f32 share f32's
/// range, which the accumulator never leaves here).
fn subnormal_out<C: Element>() -> f64 {
    match C::DTYPE {
        Dtype::F32 => (2.0f64).powi(-150),
        Dtype::Bf16 => (2.0f64).powi(-134),
        Dtype::F16 => (2.0f64).powi(-25),
    }
}

/// The float64 result of the GEMM (inputs widened exactly) and its magnitude
/// `sum_k |a b| + |bias| + |beta c|`, both `m x n`; the operands as stored in the GEMM view of
/// `g.op`. Loops run along contiguous rows, so 1024^3 takes well under a second.
fn f64_with_magnitude<A: Element, C: Element>(
    g: &HostGemm,
    a: &[A],
    b: &[A],
    bias: Option<&[C]>,
    c_before: &[C],
) -> (Vec<f64>, Vec<f64>) {
    let (m, n, k) = (g.m, g.n, g.k);
    // A as [m][k] and B as [k][n], in f64.
    let mut aa = vec![0.0f64; m * k];
    let mut bb = vec![0.0f64; k * n];
    for i in 0..m {
        for p in 0..k {
            let at = if g.op == Op::Tn {
                p * g.lda + i
            } else {
                i * g.lda + p
            };
            aa[i * k + p] = a[at].to_f32() as f64;
        }
    }
    for p in 0..k {
        for j in 0..n {
            let at = if g.op == Op::Nt {
                j * g.ldb + p
            } else {
                p * g.ldb + j
            };
            bb[p * n + j] = b[at].to_f32() as f64;
        }
    }
    let mut reference = vec![0.0f64; m * n];
    let mut magnitude = vec![0.0f64; m * n];
    for i in 0..m {
        let (r, s) = (
            &mut reference[i * n..(i + 1) * n],
            &mut magnitude[i * n..(i + 1) * n],
        );
        for p in 0..k {
            let x = aa[i * k + p];
            let row = &bb[p * n..(p + 1) * n];
            for j in 0..n {
                r[j] += x * row[j];
                s[j] += (x * row[j]).abs();
            }
        }
        for j in 0..n {
            if let Some(bias) = bias {
                let v = bias[j].to_f32() as f64;
                r[j] += v;
                s[j] += v.abs();
            }
            if g.beta != 0.0 {
                let v = g.beta as f64 * c_before[i * g.ldc + j].to_f32() as f64;
                r[j] += v;
                s[j] += v.abs();
            }
        }
    }
    (reference, magnitude)
}

/// One GEMM under the tensor-core policy on fresh random data, C poisoned (or random when
/// beta != 0) including its padding; checks every element written, padding untouched, and
///
///   |out - ref| <= u_out |ref| + (4 ceil(k / 16) + e) 2^-24 (sum_k |a b| + |bias| + |beta c|)
///                  + s_out
///
/// with u_out = 2^-8 (bf16), 2^-11 (f16), 2^-24 (f32), e the f32 roundings of the epilogue
/// (one for the bias, one for beta's fma) and s_out half the output type's subnormal spacing
/// (2^-25 for f16; negligible otherwise): the contract's ceil(k / 16) k16 steps each round at
/// most a few units of the f32 accumulator, the store rounds once. `None` when the tier has no
/// tensor-core route for it (printed).
fn run_tc_case<A: Element, C: Element>(
    ctx: &Context,
    rng: &mut Rng,
    case: &Case,
) -> Option<Launch> {
    let Case {
        op,
        m,
        n,
        k,
        pad,
        bias,
        beta,
    } = *case;
    let dtype = DtypeTriple::new(A::DTYPE, C::DTYPE, Dtype::F32);
    if ctx
        .route(TC, op, dtype, m as u64, n as u64, k as u64)
        .is_none()
    {
        eprintln!(
            "skipped: tier {} has no tensor-core route for {op} {dtype} at {m}x{n}x{k}",
            ctx.tier().name
        );
        return None;
    }
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
                .with_beta(beta)
                .with_policy(TC),
        )
        .unwrap_or_else(|e| panic!("tc {op} {m}x{n}x{k}: {e}"));
    let got = ctx.download(&dc).unwrap();
    let label = format!(
        "tc {op} {}->{} m={m} n={n} k={k} pad={pad} bias={bias} beta={beta} kernel={}{}",
        A::DTYPE,
        C::DTYPE,
        launch.kernel.and_then(kernel).map_or("-", |k| k.name),
        if launch.unaligned { " (unaligned)" } else { "" }
    );
    assert_eq!(launch.policy, TC, "{label}");
    // f32 inputs run as TF32 (tc-tf32-k8: inputs truncated, k8 steps); half inputs as tc-k16;
    // in the narrow-deep regions each as its chunked form (tc-tf32-k8-c512, tc-k16-c512: the
    // steps in chunks of 512 folded in order; the bound below covers the folds).
    let tf32 = A::DTYPE == Dtype::F32;
    if let Some(info) = launch.kernel.and_then(kernel) {
        if tf32 {
            assert!(
                info.contract == "tc-tf32-k8" || info.contract == "tc-tf32-k8-c512",
                "{label}: contract {}",
                info.contract
            );
        } else {
            assert!(
                info.contract == "tc-k16" || info.contract == "tc-k16-c512",
                "{label}: contract {}",
                info.contract
            );
        }
    }
    for i in 0..m {
        for j in n..ldc {
            assert_eq!(
                bits(got[i * ldc + j]),
                bits(c_before[i * ldc + j]),
                "{label}: padding ({i}, {j}) was written"
            );
        }
    }
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
    // The contract's TF32 truncation (low 13 bits cleared) is part of the reference, so a
    // kernel that rounded instead would miss the bound at these k.
    let truncate = |v: &[A]| -> Vec<A> {
        v.iter()
            .map(|&x| A::from_f32(f32::from_bits(x.to_f32().to_bits() & 0xffff_e000)))
            .collect()
    };
    let (a_ref, b_ref) = if tf32 {
        (truncate(&a), truncate(&b))
    } else {
        (a.clone(), b.clone())
    };
    let (reference, magnitude) = f64_with_magnitude(
        &g,
        &a_ref,
        &b_ref,
        bias.then_some(bias_host.as_slice()),
        &c_before,
    );
    let steps = (k.div_ceil(if tf32 { 8 } else { 16 }) + k.div_ceil(512)) as f64;
    let epilogue = bias as u32 as f64 + (beta != 0.0) as u32 as f64;
    let unit = (2.0f64).powi(-24);
    let mut worst = 0.0f64;
    for i in 0..m {
        for j in 0..n {
            let v = got[i * ldc + j].to_f32();
            assert!(!v.is_nan(), "{label}: ({i}, {j}) not written (or NaN)");
            let (r, mag) = (reference[i * n + j], magnitude[i * n + j]);
            let bound = unit_out::<C>() * r.abs()
                + (4.0 * steps + epilogue) * unit * mag
                + subnormal_out::<C>();
            let err = (v as f64 - r).abs();
            assert!(
                err <= bound,
                "{label}: ({i}, {j}) = {v} vs f64 {r}: error {err:e} > bound {bound:e}"
            );
            if bound > 0.0 {
                worst = worst.max(err / bound);
            }
        }
    }
    if m * n >= 4096 {
        eprintln!("{label}: largest error {worst:.3} of the bound");
    }
    Some(launch)
}

/// Shapes of the tensor-core sweeps: the exact sweep's shapes (m = 1, n = 1, k = 0, k = 1,
/// odd sizes) and the tensor-core routes' own: tcdec.dec64 (n >= 8192), tcwide.mid, and
/// tcwide.wide with ragged tiles and a zero-padded last k16 step.
const TC_SHAPES: &[(usize, usize, usize)] = &[(16, 8192, 256), (300, 1000, 136), (200, 512, 520)];

/// Every shape at pad 0 (aligned where the sizes allow), pad 3 (no leading dimension a
/// multiple of 8 elements: TMA refuses, the unaligned kernel runs) and pad 8 (aligned, padded);
/// NN with bias, a beta of -0.5 at pad 8; NT with beta 0.5 at pad 8; TN accumulates (beta 1).
fn tc_sweep<A: Element, C: Element>(ops: &[Op]) {
    let ctx = context();
    let mut rng = Rng::fresh(&format!("tc bound {}->{}", A::DTYPE, C::DTYPE));
    let mut cases = 0;
    let mut kernels = std::collections::BTreeSet::new();
    for &op in ops {
        for &(m, n, k) in SHAPES.iter().chain(TC_SHAPES) {
            for pad in [0, 3, 8] {
                let (bias, beta) = match op {
                    Op::Nn => (pad != 3, if pad == 8 { -0.5 } else { 0.0 }),
                    Op::Nt => (false, if pad == 8 { 0.5 } else { 0.0 }),
                    Op::Tn => (false, 1.0),
                };
                let case = Case {
                    op,
                    m,
                    n,
                    k,
                    pad,
                    bias,
                    beta,
                };
                let Some(launch) = run_tc_case::<A, C>(&ctx, &mut rng, &case) else {
                    return;
                };
                kernels.insert((
                    launch.kernel.and_then(kernel).map_or("-", |k| k.name),
                    launch.unaligned,
                ));
                cases += 1;
            }
        }
    }
    eprintln!(
        "tc {}->{}: {cases} cases within the float64 bound; kernels (name, unaligned): {kernels:?}",
        A::DTYPE,
        C::DTYPE
    );
}

#[test]
#[ignore = "needs a CUDA device"]
fn tc_bound_bf16_to_bf16_nn_nt() {
    tc_sweep::<bf16, bf16>(&[Op::Nn, Op::Nt]);
}

#[test]
#[ignore = "needs a CUDA device"]
fn tc_bound_f16_to_f16_nn_nt() {
    tc_sweep::<f16, f16>(&[Op::Nn, Op::Nt]);
}

#[test]
#[ignore = "needs a CUDA device"]
fn tc_bound_bf16_to_f32_nn_nt_tn() {
    tc_sweep::<bf16, f32>(&[Op::Nn, Op::Nt, Op::Tn]);
}

#[test]
#[ignore = "needs a CUDA device"]
fn tc_bound_f16_to_f32_nn_nt_tn() {
    tc_sweep::<f16, f32>(&[Op::Nn, Op::Nt, Op::Tn]);
}

#[test]
#[ignore = "needs a CUDA device"]
fn tc_bound_tf32_nn_nt_tn() {
    tc_sweep::<f32, f32>(&[Op::Nn, Op::Nt, Op::Tn]);
}

#[test]
#[ignore = "needs a CUDA device"]
fn tc_bound_large_shapes() {
    let ctx = context();
    let mut rng = Rng::fresh("tc large");
    let cases = [
        (Op::Nn, (1024, 1024, 1024), 0, true, 0.0),
        (Op::Nn, (2048, 4096, 256), 0, false, 0.0),
        (Op::Nt, (513, 2048, 1536), 8, false, 0.0),
        (Op::Tn, (768, 1024, 2048), 0, false, 1.0),
    ];
    for (op, (m, n, k), pad, bias, beta) in cases {
        let case = Case {
            op,
            m,
            n,
            k,
            pad,
            bias,
            beta,
        };
        let launched = if op == Op::Nn && bias {
            run_tc_case::<bf16, bf16>(&ctx, &mut rng, &case)
        } else if op == Op::Nn {
            run_tc_case::<f16, f16>(&ctx, &mut rng, &case)
        } else {
            run_tc_case::<bf16, f32>(&ctx, &mut rng, &case)
        };
        if launched.is_none() {
            return;
        }
    }
}

/// A few small tensor-core cases, one for each kernel of the routes (dec32, dec64, mid, wide
/// with its cluster and persistent grid, the unaligned kernel, k = 0, both TF32 tiles), with
/// bias and beta: what
/// bench/gpu-run.sh hands compute-sanitizer (memcheck, racecheck). Also checked against the
/// bound.
#[test]
#[ignore = "needs a CUDA device"]
fn tc_sanitizer_small_cases() {
    let ctx = context();
    let mut rng = Rng::fresh("tc sanitizer");
    let case = |op, (m, n, k), pad, bias, beta| Case {
        op,
        m,
        n,
        k,
        pad,
        bias,
        beta,
    };
    let runs = [
        run_tc_case::<bf16, bf16>(&ctx, &mut rng, &case(Op::Nn, (3, 256, 256), 0, true, 0.0)),
        run_tc_case::<bf16, f32>(&ctx, &mut rng, &case(Op::Nn, (5, 8192, 128), 0, false, 0.0)),
        run_tc_case::<f16, f16>(&ctx, &mut rng, &case(Op::Nt, (16, 264, 200), 0, false, 0.5)),
        run_tc_case::<f16, f16>(
            &ctx,
            &mut rng,
            &case(Op::Nt, (100, 256, 192), 8, false, 0.0),
        ),
        run_tc_case::<bf16, f32>(&ctx, &mut rng, &case(Op::Nn, (520, 520, 264), 0, true, 0.0)),
        run_tc_case::<bf16, f32>(
            &ctx,
            &mut rng,
            &case(Op::Tn, (300, 256, 136), 0, false, 1.0),
        ),
        run_tc_case::<f16, f32>(&ctx, &mut rng, &case(Op::Nn, (33, 65, 47), 0, true, -0.5)),
        run_tc_case::<bf16, f32>(&ctx, &mut rng, &case(Op::Tn, (33, 65, 47), 3, false, 1.0)),
        run_tc_case::<bf16, f32>(&ctx, &mut rng, &case(Op::Nt, (7, 64, 0), 0, true, 0.0)),
        // TF32 (tc-tf32-k8): both tiles, ragged edges, bias, beta, an odd leading dimension.
        run_tc_case::<f32, f32>(&ctx, &mut rng, &case(Op::Nn, (33, 65, 47), 3, true, -0.5)),
        run_tc_case::<f32, f32>(&ctx, &mut rng, &case(Op::Tn, (300, 200, 72), 0, false, 1.0)),
        run_tc_case::<f32, f32>(&ctx, &mut rng, &case(Op::Nt, (5, 130, 0), 0, true, 0.0)),
    ];
    let ran: Vec<String> = runs
        .iter()
        .flatten()
        .map(|l| {
            format!(
                "{}{}",
                l.kernel.and_then(kernel).map_or("-", |k| k.name),
                if l.unaligned { " (unaligned)" } else { "" }
            )
        })
        .collect();
    eprintln!("tc sanitizer cases ran: {ran:#?}");
}
