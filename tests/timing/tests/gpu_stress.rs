//! The shipped decode and wide kernels run many times while other work keeps the SMs busy, and
//! give their quiet bits every time: beside the hostile co-runner (`corunner.cu`: one CTA an SM
//! hammering shared memory, streaming global memory and sleeping at random), and beside seven
//! other streams running GEMMs of their own (the report's eight threads on eight streams).
//! `GEMM_STRESS_RUNS` sets how many times each case runs (default 25).

use gemm_runtime::{Context, Op, Policy};
use gemm_timing_tests::case::dtypes::{BF16, BF16_F32, F32};
use gemm_timing_tests::case::{first_difference, run, Case, Data, Output, Rng, Uploaded};
use gemm_timing_tests::corunner::Corunner;

const TC: Policy = Policy::TensorCore;

fn runs() -> usize {
    std::env::var("GEMM_STRESS_RUNS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(25)
}

fn context() -> Context {
    let ctx = Context::new(0).unwrap_or_else(|e| panic!("a CUDA device is needed: {e}"));
    eprintln!("context: {}", ctx.tier_selection());
    ctx
}

/// The decode kernels at the report's shapes (dec64 and dec32, NN and NT), the persistent
/// wide and mid kernels, TF32 and the exact staged decode.
fn cases() -> Vec<Case> {
    vec![
        Case::new(TC, Op::Nn, BF16, (5, 18944, 3584)),
        Case::new(TC, Op::Nn, BF16, (5, 3584, 18944)),
        Case::new(TC, Op::Nt, BF16, (16, 18944, 3584)),
        Case::new(TC, Op::Nt, BF16_F32, (1, 3584, 18944)),
        Case::new(TC, Op::Nn, BF16, (1000, 4096, 2048)),
        Case::new(TC, Op::Nn, BF16, (200, 8192, 1024)),
        Case::new(TC, Op::Nn, BF16_F32, (64, 4096, 1024)).bias(),
        Case::new(TC, Op::Nn, F32, (200, 512, 256)),
        Case::new(Policy::Exact, Op::Nn, BF16, (4, 18944, 3584)),
    ]
}

struct Prepared {
    case: Case,
    data: Data,
    up: Uploaded,
    quiet: Output,
}

/// Each case's data, uploaded once (streams of one device share its buffers), and its bits
/// run alone.
fn prepare(ctx: &Context) -> Vec<Prepared> {
    cases()
        .into_iter()
        .map(|case| {
            let data = Data::new(&case, &mut Rng::for_label(&case.label()));
            let up = Uploaded::new(ctx, &case, &data).unwrap();
            let quiet =
                run(ctx, &case, &data, &up).unwrap_or_else(|e| panic!("{}: {e}", case.label()));
            Prepared {
                case,
                data,
                up,
                quiet,
            }
        })
        .collect()
}

fn summary(what: &str, counts: &[(String, usize, usize)]) {
    eprintln!("{what}:");
    eprintln!("  {:<52} {:>5} {:>8}", "case (kernel)", "runs", "differ");
    for (label, n, bad) in counts {
        eprintln!("  {label:<52} {n:>5} {bad:>8}");
    }
}

#[test]
#[ignore = "needs a CUDA device"]
fn stress_beside_a_hostile_corunner() {
    let ctx = context();
    let prepared = prepare(&ctx);
    let mut corunner = Corunner::new(&ctx).unwrap();
    let n = runs();
    let mut failures = Vec::new();
    let mut counts = Vec::new();
    for p in &prepared {
        let mut bad = 0;
        for r in 0..n {
            // A wave of about 2 ms, started just before the GEMM on another stream.
            corunner.launch(4_000_000, r as u32 + 1).unwrap();
            let got = run(&ctx, &p.case, &p.data, &p.up).unwrap();
            if let Some(d) = first_difference(&p.case, &p.quiet, &got) {
                bad += 1;
                failures.push(format!("run {r}: {d}"));
            }
        }
        corunner.synchronize().unwrap();
        counts.push((format!("{} ({})", p.case.label(), p.quiet.kernel), n, bad));
    }
    summary(
        "beside the hostile co-runner (one CTA an SM, 64 KiB, 256 threads, ~2 ms a wave)",
        &counts,
    );
    assert!(
        failures.is_empty(),
        "{} runs differ:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

#[test]
#[ignore = "needs a CUDA device"]
fn stress_beside_seven_other_gemm_streams() {
    let ctx = context();
    let prepared = prepare(&ctx);
    let n = runs();
    // Eight workers on eight streams: worker w runs case (w + i) mod cases, n times each, so
    // decode, wide and exact kernels share the SMs in every mix.
    let results: Vec<Vec<(usize, Option<String>)>> = std::thread::scope(|s| {
        let handles: Vec<_> = (0..8)
            .map(|w| {
                let stream = ctx.new_stream().unwrap();
                let prepared = &prepared;
                s.spawn(move || {
                    let mut out = Vec::new();
                    for i in 0..n * prepared.len() / 8 + 1 {
                        let c = (w + i) % prepared.len();
                        let p = &prepared[c];
                        let got = run(&stream, &p.case, &p.data, &p.up).unwrap();
                        out.push((
                            c,
                            first_difference(&p.case, &p.quiet, &got)
                                .map(|d| format!("worker {w}: {d}")),
                        ));
                    }
                    out
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    });
    let mut counts: Vec<(String, usize, usize)> = prepared
        .iter()
        .map(|p| (format!("{} ({})", p.case.label(), p.quiet.kernel), 0, 0))
        .collect();
    let mut failures = Vec::new();
    for (c, d) in results.into_iter().flatten() {
        counts[c].1 += 1;
        if let Some(d) = d {
            counts[c].2 += 1;
            failures.push(d);
        }
    }
    summary("eight streams, each its own mix of the cases", &counts);
    assert!(
        failures.is_empty(),
        "{} runs differ:\n{}",
        failures.len(),
        failures.join("\n")
    );
}
