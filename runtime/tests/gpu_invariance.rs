//! Batch invariance, measured: for NN, NT and the tied LM head in every dtype, each row of
//! `op(X[:m])` equals the same row of `op(X)` bit for bit, for m in 1..=300 and 512, 1000,
//! 4096, at several (N, K) including odd ones. TN reduces over the batch, so its sweep checks
//! every result against the CPU model of its contract. Every op: 20 repeated runs give
//! identical bits.
//!
//! The tests named `tc_*` do the same under the tensor-core policy (contract tc-k16), which has
//! no CPU model: rows of `X[:m]·W` must equal the rows of `X·W` at m = 4096 bit for bit (NN with
//! and without bias, NT, the LM head, and TN's rows over in_features), and 20 runs must agree.
//! They skip, saying why, when the context's tier has no tensor-core route.

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

// (1000, 2600): narrow and deep, where the exact routes split K over a cluster at m 33-1024.
const NK: &[(usize, usize)] = &[(333, 1000), (1000, 129), (4096, 4096), (1000, 2600)];

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
        ctx.weight_grad(dx.mat(k_in), ddy.mat(n), dw.mat_mut(n), (batch, n, k_in))
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
    repeat_under::<A, C>(ctx, Policy::Exact, op, (m, n, k));
}

/// 20 runs of one GEMM (beta = 1 for TN, which accumulates) under `policy`: identical bits.
fn repeat_under<A: Element, C: Element>(
    ctx: &Context,
    policy: Policy,
    op: Op,
    (m, n, k): (usize, usize, usize),
) {
    let mut rng = Rng::fresh(&format!("repeat {policy:?} {op}"));
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
        let launch = ctx
            .gemm(
                GemmRequest::new(op, (m, n, k), da.mat(lda), db.mat(ldb), c.mat_mut(n))
                    .with_beta(beta)
                    .with_policy(policy),
            )
            .unwrap_or_else(|e| panic!("{policy:?} {op} {m}x{n}x{k}: {e}"));
        assert_eq!(launch.policy, policy);
        let got: Vec<u32> = ctx.download(&c).unwrap().into_iter().map(bits).collect();
        assert!(
            got.iter().all(|&b| !f32::from_bits(b).is_nan()),
            "{policy:?} {op} {m}x{n}x{k}: NaN in the output"
        );
        match &first {
            None => {
                if run == 0 && policy == Policy::TensorCore {
                    eprintln!(
                        "{op} {}->{} {m}x{n}x{k}: 20 runs of {}{}",
                        A::DTYPE,
                        C::DTYPE,
                        launch.kernel.and_then(kernel).map_or("-", |k| k.name),
                        if launch.unaligned { " (unaligned)" } else { "" }
                    );
                }
                first = Some(got)
            }
            Some(f) => assert!(
                f == &got,
                "{policy:?} {op} {m}x{n}x{k}: run {run} differs from run 0"
            ),
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

// ---------------------------------------------------------------------------------------------
// The tensor-core policy (contract tc-k16). There is no CPU model of the contract (how the 16
// products of one k16 step are summed is the hardware's), so batch invariance is measured
// against the full batch on the GPU: the m = 4096 result is computed once per (op, dtype, n, k)
// and every smaller batch's rows are compared with its first rows. X and W are uploaded once
// per operand type and every (n, k) takes views of them (row-major, leading dimension k or n,
// offset 0, so every base address is 16-byte aligned).

const TC: Policy = Policy::TensorCore;

/// Largest k of the tensor-core sweeps: X holds `M_FULL x TC_K_MAX` elements.
const TC_K_MAX: usize = 4096;

/// (n, k) of the tensor-core NN, NT and TN sweeps. TMA needs every leading dimension to be a
/// multiple of 16 bytes (8 half elements); an operand that is not runs the route's unaligned
/// kernel (`tcmma.any`, the same contract), decided by addresses and leading dimensions alone,
/// never by m.
const TC_NK: &[(usize, usize)] = &[
    // Aligned: tcdec.dec32 (m <= 16), tcwide.mid (m <= 256), tcwide.wide.
    (4096, 4096),
    // n >= 8192: tcdec.dec64 for m <= 16; aligned.
    (14336, 4096),
    // Odd k: nn and nt read A with lda = 129 (258 bytes), which TMA refuses: tcmma for every m.
    // tn (A stored [k, m] with lda = 4096, B with ldb = 1000) is aligned and ends in a partial
    // k16 step (129 = 8 * 16 + 1) filled with zeros by TMA.
    (1000, 129),
    // Odd n: nn reads B with ldb = 333 (666 bytes) and tn likewise: tcmma. nt (ldb = k = 1000)
    // is aligned and runs the TMA kernels on ragged edge tiles (333 columns).
    (333, 1000),
    // Aligned but odd-ish: 1000 columns are no multiple of the 128/256-column tiles, and
    // k = 136 = 8 * 17 ends in a zero-padded k16 step: the TMA kernels' edges.
    (1000, 136),
    // Off the tuned list: sm90a's routes from 129 rows let the wave model pick among the
    // tcwide tiles by m (`wave_fit`): 64 x 128 to 192 x 192 tiles at m = 129-4096 here.
    (3000, 1000),
];

/// (vocabulary, hidden) of the LM-head sweeps (nt, half in, f32 logits): Llama-2's 32000 x 4096
/// (tcdec.dec64 at m <= 16) in both half types, and GPT-2's odd 50257 x 768 (ragged columns;
/// ldb = 768 aligned) in bf16 only: each of these moves about 13-20 GB of logits between host and
/// device, and the kernels do not depend on which half type they read.
const TC_LM_HEAD: &[(usize, usize)] = &[(32000, 4096), (50257, 768)];
const TC_LM_HEAD_F16: &[(usize, usize)] = &[(32000, 4096)];

/// X and W of one operand type, uploaded once; every sweep takes views of them.
struct TcData<A: Element> {
    x: DeviceBuffer<A>,
    w: DeviceBuffer<A>,
}

impl<A: Element> TcData<A> {
    /// X of `M_FULL x TC_K_MAX` and W of `w_len` elements, random and never zero.
    fn new(ctx: &Context, w_len: usize) -> Self {
        let mut rng = Rng::fresh(&format!("tc invariance {}", A::DTYPE));
        let x = ctx.upload(&rng.vec::<A>(M_FULL * TC_K_MAX)).unwrap();
        let w = ctx.upload(&rng.vec::<A>(w_len)).unwrap();
        TcData { x, w }
    }
}

/// The bytes of a slice of elements (for a fast bitwise comparison).
fn as_bytes<T: Element>(v: &[T]) -> &[u8] {
    // SAFETY: f32, bf16 and f16 are plain data without padding; the slice covers exactly
    // `size_of_val(v)` initialized bytes, borrowed for the returned lifetime.
    unsafe { std::slice::from_raw_parts(v.as_ptr().cast::<u8>(), std::mem::size_of_val(v)) }
}

/// One tensor-core sweep: `op` at (n, k) for every batch size, rows compared with the m =
/// `M_FULL` rows. NN may add a bias; TN accumulates (`beta = 1`) into a random f32 start, A
/// stored `[k, M_FULL]` (a sub-batch of in_features is its first m columns, same lda). Returns
/// the number of rows compared (0 when skipped).
fn tc_rows_follow_the_batch<A: Element, C: Element>(
    ctx: &Context,
    data: &TcData<A>,
    op: Op,
    (n, k): (usize, usize),
    with_bias: bool,
) -> usize {
    let dtype = DtypeTriple::new(A::DTYPE, C::DTYPE, Dtype::F32);
    let label = format!(
        "tc {op} {}->{} n={n} k={k}{}",
        A::DTYPE,
        C::DTYPE,
        if with_bias { " bias" } else { "" }
    );
    if ctx
        .route(TC, op, dtype, M_FULL as u64, n as u64, k as u64)
        .is_none()
    {
        eprintln!(
            "{label}: skipped: tier {} has no tensor-core route for {op} {dtype}",
            ctx.tier().name
        );
        return 0;
    }
    let started = std::time::Instant::now();
    assert!(
        k <= TC_K_MAX && n * k <= data.w.len(),
        "{label}: W too small"
    );
    let (lda, ldb) = match op {
        Op::Nn => (k, n),
        Op::Nt => (k, k),
        Op::Tn => (M_FULL, n),
    };
    let mut rng = Rng::fresh(&label);
    let bias_host: Vec<C> = rng.vec(n);
    let bias = ctx.upload(&bias_host).unwrap();
    let beta = if op == Op::Tn { 1.0 } else { 0.0 };
    // What C holds before each run: poison (nothing read), or TN's random start.
    let init: Vec<C> = if op == Op::Tn {
        rng.vec(M_FULL * n)
    } else {
        vec![poison::<C>(); M_FULL * n]
    };
    // TMA takes an operand exactly when its leading dimension is a multiple of 16 bytes (the
    // views start at their allocations, which are 256-byte aligned, and k > 0). The route's
    // kernel runs when TMA takes every operand it maps as an input (A, B); otherwise the
    // route's unaligned kernel. (A map of C is optional: the kernel stores C directly without
    // it, so C's ldc never sends a call to the unaligned kernel.) A kernel that copies A and B
    // in 16-byte chunks without TMA (`operand_align`, cp.async) needs both leading dimensions
    // aligned alike.
    let ld_ok = |ld: usize| (ld * std::mem::size_of::<A>()).is_multiple_of(16);
    let tma_ok = ld_ok(lda) && ld_ok(ldb);
    let takes_all = |route: RouteHit| {
        kernel(route.kernel).is_some_and(|info| {
            let chunks = |ld: usize| {
                info.operands.alignment() == 0
                    || (ld * std::mem::size_of::<A>())
                        .is_multiple_of(info.operands.alignment() as usize)
            };
            chunks(lda)
                && chunks(ldb)
                && info.tensor_maps.iter().all(|plan| match plan.operand {
                    Operand::A => ld_ok(lda),
                    Operand::B => ld_ok(ldb),
                    _ => true,
                })
        })
    };
    let run = |m: usize| -> (Launch, Vec<C>) {
        let mut c = ctx.upload(&init[..m * n]).unwrap();
        let req = GemmRequest::new(
            op,
            (m, n, k),
            data.x.mat(lda),
            data.w.mat(ldb),
            c.mat_mut(n),
        )
        .with_bias(with_bias.then(|| bias.mat(n)))
        .with_beta(beta)
        .with_policy(TC);
        let launch = ctx
            .gemm(req)
            .unwrap_or_else(|e| panic!("{label}: m = {m}: {e}"));
        assert_eq!(launch.policy, TC, "{label}: m = {m}");
        let route = ctx
            .route(TC, op, dtype, m as u64, n as u64, k as u64)
            .unwrap();
        // A TMA kernel that cannot take A or B for its ld reads aligned copies of them (the
        // repack) and still runs; a cp.async kernel runs the unaligned kernel instead.
        let repacks = kernel(route.kernel).is_some_and(|k| k.operands == OperandPath::Tma)
            && k > 0
            && ctx
                .kernels()
                .conversion_for(ctx.tier().id, A::DTYPE, A::DTYPE)
                .is_some();
        // A transposing kernel (TF32 TN's `tcwide32tncopy`) has A copied, transposed, at
        // every ld: its launch always repacks.
        let transposes_a = kernel(route.kernel).is_some_and(|k| k.prepass == Prepass::TransposeA);
        if route.unaligned.is_some() {
            let (unaligned, repacked) = if transposes_a {
                (false, true)
            } else if repacks {
                (false, !takes_all(route))
            } else {
                (!takes_all(route), false)
            };
            assert_eq!(
                (launch.unaligned, launch.repacked.is_some()),
                (unaligned, repacked),
                "{label}: m = {m}: lda {lda}, ldb {ldb}: ran {} (unaligned: {}, repacked: {:?})",
                name(launch.kernel),
                launch.unaligned,
                launch.repacked
            );
        }
        (launch, ctx.download(&c).unwrap())
    };
    let (full_launch, full) = run(M_FULL);
    for (i, v) in full.iter().enumerate() {
        assert!(
            !v.to_f32().is_nan(),
            "{label}: m = {M_FULL}: ({}, {}) not written (or NaN)",
            i / n,
            i % n
        );
    }
    let mut kernels = std::collections::BTreeMap::new();
    *kernels.entry(name(full_launch.kernel)).or_insert(0usize) += 1;
    let mut rows = 0;
    for m in batch_sizes() {
        let (launch, got) = run(m);
        *kernels.entry(name(launch.kernel)).or_insert(0) += 1;
        if as_bytes(&got) != as_bytes(&full[..m * n]) {
            let at = (0..m * n)
                .find(|&i| bits(got[i]) != bits(full[i]))
                .unwrap_or(0);
            panic!(
                "{label}: row {} col {} at m = {m} ({}) is {} but {} at m = {M_FULL} ({})",
                at / n,
                at % n,
                name(launch.kernel),
                got[at].to_f32(),
                full[at].to_f32(),
                name(full_launch.kernel)
            );
        }
        rows += m;
    }
    eprintln!(
        "{label}: {rows} rows over {} batch sizes equal the m = {M_FULL} rows{}; launches by kernel {kernels:?}; {:.1} s",
        batch_sizes().len(),
        if tma_ok { "" } else { " (operands not 16-byte aligned: copied for TMA kernels, the unaligned kernel for cp.async ones)" },
        started.elapsed().as_secs_f64()
    );
    rows
}

fn name(id: Option<KernelId>) -> &'static str {
    id.and_then(kernel).map_or("-", |k| k.name)
}

/// NN for one operand type into both output types, with and without bias (bias at the pairs
/// with n <= 4096, which cover every kernel kind but dec64).
fn tc_nn_sweep<A: Element>(ctx: &Context) {
    let w_len = TC_NK.iter().map(|&(n, k)| n * k).max().unwrap();
    let data = TcData::<A>::new(ctx, w_len);
    for &nk in TC_NK {
        tc_rows_follow_the_batch::<A, A>(ctx, &data, Op::Nn, nk, false);
        tc_rows_follow_the_batch::<A, f32>(ctx, &data, Op::Nn, nk, false);
        if nk.0 <= 4096 {
            tc_rows_follow_the_batch::<A, A>(ctx, &data, Op::Nn, nk, true);
            tc_rows_follow_the_batch::<A, f32>(ctx, &data, Op::Nn, nk, true);
        }
    }
}

#[test]
#[ignore = "needs a CUDA device"]
fn tc_nn_rows_follow_the_batch() {
    let ctx = context();
    tc_nn_sweep::<bf16>(&ctx);
    tc_nn_sweep::<f16>(&ctx);
}

/// A route's `wave_fit` kernels against its own: the same call on a stream that lets the wave
/// model pick (the default) and on one that runs the route's kernel alone
/// (`Context::set_wave_fit(false)`) gives the same bits, at m where the two kernels differ.
#[test]
#[ignore = "needs a CUDA device"]
fn tc_wave_fit_kernels_give_the_routes_bits() {
    let own = device_context();
    let fitted = own.new_stream().unwrap();
    own.set_wave_fit(false);
    let (n, k) = (3000, 1000);
    let bf = DtypeTriple::new(Dtype::Bf16, Dtype::Bf16, Dtype::F32);
    let has_fit = |m: usize| {
        own.route(TC, Op::Nn, bf, m as u64, n as u64, k as u64)
            .is_some_and(|r| !r.wave_fit.is_empty())
    };
    if !has_fit(1000) {
        eprintln!(
            "skipped: tier {} routes no wave_fit kernels at {n} x {k}",
            own.tier().name
        );
        return;
    }
    let mut rng = Rng::fresh("wave fit");
    let x = own.upload(&rng.vec::<bf16>(4096 * k)).unwrap();
    let w = own.upload(&rng.vec::<bf16>(k * n)).unwrap();
    let bias = own.upload(&rng.vec::<bf16>(n)).unwrap();
    let mut differed = Vec::new();
    for m in [129, 300, 512, 700, 1000, 1500, 2048, 3000, 4096] {
        let run = |ctx: &Context| {
            let mut c = ctx.upload(&vec![poison::<bf16>(); m * n]).unwrap();
            let req = GemmRequest::new(Op::Nn, (m, n, k), x.mat(k), w.mat(n), c.mat_mut(n))
                .with_bias(Some(bias.mat(n)))
                .with_policy(TC);
            let launch = ctx.gemm(req).unwrap();
            (launch, ctx.download(&c).unwrap())
        };
        let (l_own, c_own) = run(&own);
        let (l_fit, c_fit) = run(&fitted);
        assert!(
            as_bytes(&c_own) == as_bytes(&c_fit),
            "m = {m}: {} and {} differ",
            name(l_own.kernel),
            name(l_fit.kernel)
        );
        assert!(
            c_fit.iter().all(|v| !v.to_f32().is_nan()),
            "m = {m}: unwritten"
        );
        if l_own.kernel != l_fit.kernel {
            differed.push(format!(
                "m = {m}: {} for {}",
                name(l_fit.kernel),
                name(l_own.kernel)
            ));
        }
    }
    eprintln!("wave fit at {n} x {k}: {differed:?}");
    assert!(
        !differed.is_empty(),
        "the wave model picked the route's own kernel at every m: nothing compared"
    );
}

fn tc_nt_sweep<A: Element>(ctx: &Context) {
    let w_len = TC_NK.iter().map(|&(n, k)| n * k).max().unwrap();
    let data = TcData::<A>::new(ctx, w_len);
    for &nk in TC_NK {
        tc_rows_follow_the_batch::<A, A>(ctx, &data, Op::Nt, nk, false);
        tc_rows_follow_the_batch::<A, f32>(ctx, &data, Op::Nt, nk, false);
    }
}

#[test]
#[ignore = "needs a CUDA device"]
fn tc_nt_rows_follow_the_batch() {
    let ctx = context();
    tc_nt_sweep::<bf16>(&ctx);
    tc_nt_sweep::<f16>(&ctx);
}

/// The tied LM head: nt, half in, f32 logits, at vocabulary sizes.
fn tc_lm_head_sweep<A: Element>(ctx: &Context, shapes: &[(usize, usize)]) {
    let w_len = shapes.iter().map(|&(n, k)| n * k).max().unwrap();
    let data = TcData::<A>::new(ctx, w_len);
    for &nk in shapes {
        tc_rows_follow_the_batch::<A, f32>(ctx, &data, Op::Nt, nk, false);
    }
}

#[test]
#[ignore = "needs a CUDA device"]
fn tc_lm_head_rows_follow_the_batch() {
    let ctx = context();
    tc_lm_head_sweep::<bf16>(&ctx, TC_LM_HEAD);
    tc_lm_head_sweep::<f16>(&ctx, TC_LM_HEAD_F16);
}

/// TN, `dW += X^T·dY` into an f32 gradient (beta = 1; K is the token count, the GEMM view's m
/// is in_features): the first m rows of the gradient at m in_features equal those at 4096.
fn tc_tn_sweep<A: Element>(ctx: &Context) {
    let w_len = TC_NK.iter().map(|&(n, k)| n * k).max().unwrap();
    let data = TcData::<A>::new(ctx, w_len);
    for &nk in TC_NK {
        tc_rows_follow_the_batch::<A, f32>(ctx, &data, Op::Tn, nk, false);
    }
}

#[test]
#[ignore = "needs a CUDA device"]
fn tc_tn_rows_follow_the_batch() {
    let ctx = context();
    tc_tn_sweep::<bf16>(&ctx);
    tc_tn_sweep::<f16>(&ctx);
}

/// f32 inputs under the tensor-core policy (TF32, contract tc-tf32-k8): NN with and without
/// bias, NT, and TN accumulating into f32, every batch size.
#[test]
#[ignore = "needs a CUDA device"]
fn tc_tf32_rows_follow_the_batch() {
    let ctx = context();
    let w_len = TC_NK.iter().map(|&(n, k)| n * k).max().unwrap();
    let data = TcData::<f32>::new(&ctx, w_len);
    for &nk in TC_NK {
        tc_rows_follow_the_batch::<f32, f32>(&ctx, &data, Op::Nn, nk, false);
        tc_rows_follow_the_batch::<f32, f32>(&ctx, &data, Op::Nn, nk, true);
        tc_rows_follow_the_batch::<f32, f32>(&ctx, &data, Op::Nt, nk, false);
        tc_rows_follow_the_batch::<f32, f32>(&ctx, &data, Op::Tn, nk, false);
    }
}

/// 20 runs identical under the tensor-core policy: every kernel kind (dec32, dec64, mid, wide,
/// the unaligned kernel) and every op; TN accumulating into f32 with beta = 1.
#[test]
#[ignore = "needs a CUDA device"]
fn tc_twenty_runs_give_identical_bits() {
    let ctx = context();
    let bf = DtypeTriple::new(Dtype::Bf16, Dtype::Bf16, Dtype::F32);
    if ctx.route(TC, Op::Nn, bf, 1, 4096, 4096).is_none() {
        eprintln!(
            "skipped: tier {} has no tensor-core route for nn {bf}",
            ctx.tier().name
        );
        return;
    }
    repeat_under::<bf16, bf16>(&ctx, TC, Op::Nn, (3, 4096, 4096));
    repeat_under::<bf16, bf16>(&ctx, TC, Op::Nn, (16, 14336, 4096));
    repeat_under::<f16, f32>(&ctx, TC, Op::Nn, (200, 4096, 1024));
    repeat_under::<bf16, f32>(&ctx, TC, Op::Nn, (2048, 4096, 4096));
    repeat_under::<f16, f16>(&ctx, TC, Op::Nn, (1000, 1000, 129));
    repeat_under::<bf16, bf16>(&ctx, TC, Op::Nt, (300, 1000, 512));
    repeat_under::<bf16, f32>(&ctx, TC, Op::Nt, (7, 32000, 4096));
    repeat_under::<f16, f32>(&ctx, TC, Op::Nt, (1024, 4096, 4096));
    repeat_under::<bf16, f32>(&ctx, TC, Op::Tn, (512, 256, 4096));
    repeat_under::<bf16, f32>(&ctx, TC, Op::Tn, (4096, 4096, 4096));
    repeat_under::<f16, f32>(&ctx, TC, Op::Tn, (64, 64, 10000));
    repeat_under::<bf16, f32>(&ctx, TC, Op::Tn, (333, 65, 1001));
    repeat_under::<f32, f32>(&ctx, TC, Op::Nn, (100, 4096, 4096));
    repeat_under::<f32, f32>(&ctx, TC, Op::Nn, (1000, 1000, 129));
    repeat_under::<f32, f32>(&ctx, TC, Op::Tn, (512, 256, 4096));
}
