//! Batch invariance, measured: for NN, NT and the tied LM head in every dtype, each row of
//! `op(X[:m])` equals the same row of `op(X)` bit for bit, for m in 1..=300 and 512, 1000,
//! 4096, at several (N, K) including odd ones. TN reduces over the batch, so its sweep checks
//! every result against the CPU model of its contract. Every op: 20 repeated runs give
//! identical bits.

mod common;
use common::*;
use gemm_runtime::reference::{fma_k256, HostGemm};
use gemm_runtime::*;

const M_FULL: usize = 4096;

fn batch_sizes() -> Vec<usize> {
    let mut v: Vec<usize> = (1..=300).collect();
    v.extend([512, 1000, 4096]);
    v
}

/// Runs the row-following op (`nn` or `nt`) for every batch size and compares rows with the
/// full batch. Returns the number of rows compared.
fn rows_follow_the_batch<A: Element, C: Element>(
    ctx: &Context,
    op: Op,
    n: usize,
    k: usize,
) -> usize {
    let mut rng = Rng::fresh(&format!(
        "invariance {op} {}->{} n={n} k={k}",
        A::DTYPE,
        C::DTYPE
    ));
    let x: Vec<A> = rng.vec(M_FULL * k);
    let w_len = n * k;
    let w: Vec<A> = rng.vec(w_len);
    let ldb = if op == Op::Nt { k } else { n };
    let dx = ctx.upload(&x).unwrap();
    let dw = ctx.upload(&w).unwrap();
    let mut full = ctx.upload(&vec![poison::<C>(); M_FULL * n]).unwrap();
    let run = |m: usize, c: MatMut<'_, C>| {
        ctx.gemm(GemmRequest::new(op, (m, n, k), dx.mat(k), dw.mat(ldb), c))
    };
    run(M_FULL, full.mat_mut(n)).unwrap();
    let full_host = ctx.download(&full).unwrap();
    let mut out = ctx.upload(&vec![poison::<C>(); M_FULL * n]).unwrap();
    let mut rows = 0;
    let mut kernels = std::collections::BTreeSet::new();
    for m in batch_sizes() {
        let launch = run(m, out.mat_mut(n)).unwrap();
        kernels.insert(
            launch
                .kernel
                .and_then(kernel)
                .map(|k| k.name)
                .unwrap_or("none"),
        );
        let got = ctx.download(&out).unwrap();
        for i in 0..m {
            for j in 0..n {
                let (g, f) = (got[i * n + j], full_host[i * n + j]);
                assert!(
                    bits(g) == bits(f) && !g.to_f32().is_nan(),
                    "{op} {}->{} n={n} k={k}: row {i} col {j} at m={m} is {} but {} at m={M_FULL}",
                    A::DTYPE,
                    C::DTYPE,
                    g.to_f32(),
                    f.to_f32()
                );
            }
        }
        rows += m;
    }
    eprintln!(
        "{op} {}->{} n={n} k={k}: {rows} rows over {} batch sizes equal the m={M_FULL} rows; kernels {kernels:?}",
        A::DTYPE,
        C::DTYPE,
        batch_sizes().len()
    );
    rows
}

const NK: &[(usize, usize)] = &[(333, 1000), (1000, 129), (4096, 4096)];

fn rows_sweep<A: Element, C: Element>(ops: &[Op]) {
    let ctx = context();
    for &op in ops {
        for &(n, k) in NK {
            rows_follow_the_batch::<A, C>(&ctx, op, n, k);
        }
    }
}

#[test]
#[ignore = "needs a CUDA device"]
fn nn_nt_f32() {
    rows_sweep::<f32, f32>(&[Op::Nn, Op::Nt]);
}

#[test]
#[ignore = "needs a CUDA device"]
fn nn_nt_bf16() {
    rows_sweep::<bf16, bf16>(&[Op::Nn, Op::Nt]);
}

#[test]
#[ignore = "needs a CUDA device"]
fn nn_nt_f16() {
    rows_sweep::<f16, f16>(&[Op::Nn, Op::Nt]);
}

#[test]
#[ignore = "needs a CUDA device"]
fn nn_half_to_f32_and_lm_head() {
    // The tied LM head is nt with half inputs and f32 logits.
    rows_sweep::<bf16, f32>(&[Op::Nn, Op::Nt]);
    rows_sweep::<f16, f32>(&[Op::Nn, Op::Nt]);
    let ctx = context();
    rows_follow_the_batch::<bf16, f32>(&ctx, Op::Nt, 32000, 512);
}

fn tn_sweep<A: Element>() {
    let ctx = context();
    let (k_in, n) = (33, 65);
    let mut rng = Rng::fresh(&format!("tn {}", A::DTYPE));
    let x: Vec<A> = rng.vec(M_FULL * k_in);
    let dy: Vec<A> = rng.vec(M_FULL * n);
    let (dx, ddy) = (ctx.upload(&x).unwrap(), ctx.upload(&dy).unwrap());
    let start: Vec<f32> = rng.vec(k_in * n);
    let mut dw = ctx.alloc::<f32>(k_in * n).unwrap();
    for batch in batch_sizes() {
        ctx.write(&mut dw, &start).unwrap();
        ctx.weight_grad(dx.mat(k_in), ddy.mat(n), dw.mat_mut(n), (batch, k_in, n))
            .unwrap();
        let got = ctx.download(&dw).unwrap();
        let mut want = start.clone();
        let g = HostGemm {
            op: Op::Tn,
            m: k_in,
            n,
            k: batch,
            lda: k_in,
            ldb: n,
            ldc: n,
            beta: 1.0,
        };
        fma_k256(&g, &x, &dy, None, &mut want);
        for (i, (g, w)) in got.iter().zip(&want).enumerate() {
            assert_eq!(
                g.to_bits(),
                w.to_bits(),
                "tn {} batch {batch}: element {i}",
                A::DTYPE
            );
        }
    }
    eprintln!(
        "tn {}->f32: {} batch sizes bit-equal to the CPU model",
        A::DTYPE,
        batch_sizes().len()
    );
}

#[test]
#[ignore = "needs a CUDA device"]
fn tn_matches_its_contract_for_every_batch() {
    tn_sweep::<f32>();
    tn_sweep::<bf16>();
    tn_sweep::<f16>();
}

fn repeat<A: Element, C: Element>(ctx: &Context, op: Op, (m, n, k): (usize, usize, usize)) {
    let mut rng = Rng::fresh(&format!("repeat {op}"));
    let (a_len, b_len) = (m * k, n * k);
    let a: Vec<A> = rng.vec(a_len);
    let b: Vec<A> = rng.vec(b_len);
    let (lda, ldb) = match op {
        Op::Nn => (k, n),
        Op::Nt => (k, k),
        Op::Tn => (m, n),
    };
    let (da, db) = (ctx.upload(&a).unwrap(), ctx.upload(&b).unwrap());
    let start: Vec<C> = rng.vec(m * n);
    let mut c = ctx.alloc::<C>(m * n).unwrap();
    let beta = if op == Op::Tn { 1.0 } else { 0.0 };
    let mut first: Option<Vec<u32>> = None;
    for run in 0..20 {
        ctx.write(&mut c, &start).unwrap();
        ctx.gemm(
            GemmRequest::new(op, (m, n, k), da.mat(lda), db.mat(ldb), c.mat_mut(n)).with_beta(beta),
        )
        .unwrap();
        let got: Vec<u32> = ctx.download(&c).unwrap().into_iter().map(bits).collect();
        match &first {
            None => first = Some(got),
            Some(f) => assert!(f == &got, "{op}: run {run} differs from run 0"),
        }
    }
}

#[test]
#[ignore = "needs a CUDA device"]
fn twenty_runs_give_identical_bits() {
    let ctx = context();
    repeat::<f32, f32>(&ctx, Op::Nn, (1000, 1024, 777));
    repeat::<bf16, bf16>(&ctx, Op::Nn, (3, 4096, 4096));
    repeat::<bf16, bf16>(&ctx, Op::Nt, (300, 1000, 513));
    repeat::<bf16, f32>(&ctx, Op::Nt, (7, 32000, 256));
    repeat::<bf16, f32>(&ctx, Op::Tn, (512, 256, 4096));
    repeat::<f32, f32>(&ctx, Op::Tn, (64, 64, 10000));
}
