//! The cases compute-sanitizer runs (`tests/timing/run.sh`: memcheck, racecheck, synccheck),
//! on the shipped kernels. Each output is checked three ways, so a tool that changes timing
//! cannot change a result unseen:
//!
//! 1. against float64 of its inputs (tensor-core policy, within the f32 chain's bound) or bit for
//!    bit against the fma-k256 CPU model (exact policy);
//! 2. against a second run of the same case in the same process;
//! 3. with `GEMM_TIMING_DIGESTS=FILE`, against the plain run's bits: the first run with the file
//!    (plain) writes each case's digest, a run under the sanitizer compares (same
//!    `GEMM_TEST_SEED`, so the same data).
//!
//! Small ragged cases (every kernel of the routes, bias, beta, odd leading dimensions, k = 0) and
//! GPU-filling ones: the reported decode step (dec64 with 296 CTAs over 56 k-blocks, then dec32
//! over 296 k-blocks), wide, mid and TF32 grids over every SM, the TF32 mma.sync decode tiles
//! (plain and split), the exact staged decode, and its unaligned kernels on an odd vocabulary.
//! `GEMM_SANITIZED_CASES=small` keeps the small ones only (racecheck, whose cost grows with
//! every shared-memory access).

use gemm_runtime::{bf16, Context, Op, Policy};
use gemm_timing_tests::case::dtypes::{BF16, BF16_F32, F16, F16_F32, F32};
use gemm_timing_tests::case::{
    check_reference, first_difference, run, Case, Data, Output, Rng, Uploaded,
};
use gemm_timing_tests::digest::Digests;
use gemm_timing_tests::step::{kernel_names, StepBuffers, StepHost, STEP};

const TC: Policy = Policy::TensorCore;
const EX: Policy = Policy::Exact;

/// Elements checked against the reference in a large case (all of a small one).
const SAMPLES: usize = 3000;

fn context() -> Context {
    let ctx = Context::new(0).unwrap_or_else(|e| panic!("a CUDA device is needed: {e}"));
    eprintln!("context: {}", ctx.tier_selection());
    ctx
}

fn small_only() -> bool {
    std::env::var("GEMM_SANITIZED_CASES").is_ok_and(|v| v == "small")
}

fn small_cases() -> Vec<Case> {
    vec![
        Case::new(TC, Op::Nn, BF16, (3, 256, 256)).bias(),
        Case::new(TC, Op::Nn, BF16_F32, (5, 8192, 128)),
        Case::new(TC, Op::Nt, F16, (16, 264, 200)).beta(0.5),
        Case::new(TC, Op::Nt, F16, (100, 256, 192)).pad(8),
        Case::new(TC, Op::Nn, BF16_F32, (520, 520, 264)).bias(),
        Case::new(TC, Op::Tn, BF16_F32, (300, 256, 136)).beta(1.0),
        Case::new(TC, Op::Nn, F16_F32, (33, 65, 47))
            .bias()
            .beta(-0.5),
        Case::new(TC, Op::Tn, BF16_F32, (33, 65, 47))
            .pad(3)
            .beta(1.0),
        Case::new(TC, Op::Nt, BF16_F32, (7, 64, 0)).bias(),
        Case::new(TC, Op::Nn, F32, (33, 65, 47))
            .pad(3)
            .bias()
            .beta(-0.5),
        Case::new(TC, Op::Tn, F32, (300, 200, 72)).beta(1.0),
        // TF32 decode on mma.sync from a TMA ring: the plain tile and, in the chunked contract's
        // region, the split over a cluster.
        Case::new(TC, Op::Nn, F32, (7, 256, 1024)).bias(),
        Case::new(TC, Op::Nt, F32, (5, 200, 2100)).beta(0.5),
        // The decode tiles of 32 and 64 rows a CTA (two or four row tiles a warp), where the
        // tuned routes name them: bf16 at 512 x 3584, TF32 at 768 x 3072.
        Case::new(TC, Op::Nn, BF16, (40, 512, 3584)).bias(),
        Case::new(TC, Op::Nn, F32, (20, 768, 3072)).beta(0.5),
        // The chunked contract's regions (n <= 1024, k >= 2048 on sm90a): the decode and wgmma
        // K splits across a cluster, and the chunked wgmma kernel.
        Case::new(TC, Op::Nn, BF16, (3, 200, 2100)).bias(),
        Case::new(TC, Op::Nt, BF16_F32, (40, 128, 4100)).beta(0.5),
        Case::new(TC, Op::Nn, BF16_F32, (130, 192, 2600)),
        Case::new(EX, Op::Nn, BF16, (3, 300, 600)).bias(),
        Case::new(EX, Op::Nt, F32, (40, 130, 520)).beta(0.5),
        Case::new(EX, Op::Tn, BF16_F32, (130, 70, 300)).pad(1),
        // The exact decode's unaligned kernels, copying f32 operands off 16 bytes 4 bytes a
        // lane: B's ld odd (the last strip and K's tail element by element), A one element in.
        Case::new(EX, Op::Nn, F32, (5, 1001, 600)).bias(),
        Case::new(EX, Op::Nn, F32, (13, 264, 1000))
            .a_offset(1)
            .beta(0.5),
    ]
}

fn large_cases() -> Vec<Case> {
    vec![
        Case::new(TC, Op::Nn, BF16, (5, 18944, 3584)),
        Case::new(TC, Op::Nn, BF16, (5, 3584, 18944)),
        Case::new(TC, Op::Nt, BF16_F32, (16, 18944, 3584)),
        Case::new(TC, Op::Nn, BF16, (1000, 4096, 2048)),
        Case::new(TC, Op::Nn, BF16, (200, 8192, 1024)).bias(),
        Case::new(TC, Op::Nt, F32, (600, 2048, 512)),
        // K splits filling the GPU: decode (n = 1000, 8 CTAs a tile) and wgmma (4 a tile).
        Case::new(TC, Op::Nn, BF16, (5, 1000, 8200)),
        Case::new(TC, Op::Nn, BF16_F32, (64, 1000, 8200)).bias(),
        // TF32 decode filling the GPU: the plain tile over a wide n, the split over a deep k.
        Case::new(TC, Op::Nn, F32, (16, 4096, 4096)),
        Case::new(TC, Op::Nn, F32, (5, 1000, 8200)).bias(),
        // The row tiles filling the GPU: 32 rows split 8 (bf16), 64 rows split 4 (TF32).
        Case::new(TC, Op::Nn, BF16, (32, 1024, 8192)),
        Case::new(TC, Op::Nn, F32, (100, 1024, 8192)).bias(),
        Case::new(EX, Op::Nn, BF16, (4, 18944, 3584)),
        Case::new(EX, Op::Nn, F32, (512, 1024, 1024)),
        // An odd vocabulary at decode: 1571 column strips of B (ld 50257) copied 4 bytes a lane.
        Case::new(EX, Op::Nn, F32, (8, 50257, 768)),
    ]
}

#[test]
#[ignore = "needs a CUDA device"]
fn sanitized_cases_match_float64_a_second_run_and_the_plain_run() {
    let ctx = context();
    let digests = Digests::from_env();
    let mut cases = small_cases();
    if !small_only() {
        cases.extend(large_cases());
    }
    let mut failures = Vec::new();
    for case in &cases {
        let data = Data::new(case, &mut Rng::for_label(&case.label()));
        let up = Uploaded::new(&ctx, case, &data).unwrap();
        let first: Output =
            run(&ctx, case, &data, &up).unwrap_or_else(|e| panic!("{}: {e}", case.label()));
        let second = run(&ctx, case, &data, &up).unwrap();
        let mut notes = Vec::new();
        if let Err(e) = check_reference(case, &data, &first, SAMPLES) {
            notes.push(e);
        }
        if let Some(d) = first_difference(case, &first, &second) {
            notes.push(format!("second run: {d}"));
        }
        if let Some(dg) = &digests {
            if let Err(e) = dg.note(&case.label(), &first) {
                notes.push(e);
            }
        }
        eprintln!(
            "{:<48} {:<56} {}",
            case.label(),
            first.kernel,
            if notes.is_empty() { "ok" } else { "FAILED" }
        );
        failures.extend(notes);
    }
    if let Some(dg) = &digests {
        dg.finish();
        eprintln!(
            "digests: {} the plain run's",
            if dg.comparing() {
                "compared with"
            } else {
                "written as"
            }
        );
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// The decode step eager, then packaged, captured and replayed three times: every replay gives
/// the eager bits, the eager H is within the float64 bound, and (with digests) both GEMMs give
/// the plain run's bits.
#[test]
#[ignore = "needs a CUDA device"]
fn sanitized_decode_step_replays_the_eager_bits() {
    if small_only() {
        eprintln!("skipped: GEMM_SANITIZED_CASES=small");
        return;
    }
    let ctx = context();
    let digests = Digests::from_env();
    let (m, d, f) = STEP;
    let host = StepHost::new(&mut Rng::for_label("sanitized decode step"));
    let mut bufs = StepBuffers::new(&ctx, &host).unwrap();
    let manifest = ctx.record_manifest(&mut bufs.request(), 2).unwrap();
    let names = kernel_names(&ctx, &manifest);
    let (eager_h, eager_y) = bufs.bits(&ctx).unwrap();
    // H = X W1 as a case, for its float64 check.
    let case = Case::new(TC, Op::Nn, BF16, (m, f, d));
    let widen = |v: &[bf16]| -> Vec<f32> { v.iter().map(|x| x.to_f32()).collect() };
    let data = Data {
        a: widen(&host.x),
        b: widen(&host.w1),
        bias: vec![0.0; f],
        c0: vec![0.0; m * f],
        lda: d,
        ldb: f,
        ldc: f,
    };
    let output = |kernel: &'static str, bits: Vec<u32>| Output {
        launch: None,
        kernel,
        bits,
    };
    let mut failures = Vec::new();
    if let Err(e) = check_reference(&case, &data, &output(names[0], eager_h.clone()), SAMPLES) {
        failures.push(e);
    }
    let graph = ctx
        .prepare_package(&manifest, &mut bufs.request())
        .unwrap()
        .capture(&ctx)
        .unwrap();
    for r in 0..3 {
        bufs.poison(&ctx).unwrap();
        graph.replay(&ctx).unwrap();
        if bufs.bits(&ctx).unwrap() != (eager_h.clone(), eager_y.clone()) {
            failures.push(format!("replay {r} differs from the eager step"));
        }
    }
    if let Some(dg) = &digests {
        for (label, out) in [
            ("decode step H", output(names[0], eager_h)),
            ("decode step Y", output(names[1], eager_y)),
        ] {
            if let Err(e) = dg.note(label, &out) {
                failures.push(e);
            }
        }
        dg.finish();
    }
    eprintln!(
        "decode step: {names:?}; eager, 3 replays: {}",
        if failures.is_empty() { "ok" } else { "FAILED" }
    );
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
