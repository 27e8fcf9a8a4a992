//! The kernels of a timing-perturbation build ([`PERTURBED`]: seeded delays at every pipeline
//! step) give the shipped build's bits, under every seed of [`perturbation_seeds`]: every kernel
//! kind of sm90a (TMA decode, persistent wgmma, ping-pong wgmma, the wgmma kernel in clusters of 2, the K splits
//! and chunked kernels of tc-k16-c512, cp.async TF32,
//! the plain-load unaligned kernels, the exact cp.async decode and tiled kernels), the sm80 tier
//! from its PTX (cp.async tensor-core kernels), an invariance sweep, the strided-batch kernels
//! (one launch a bmm), and a packaged decode step replayed from a CUDA graph. A kernel whose result depends on one side of its pipeline being
//! faster differs here.

use gemm_runtime::{
    bf16, Context, Dtype, GemmError, KernelInfo, Op, Policy, RawGemm, RawMatrix, TierChoice,
};
use gemm_timing_tests::case::dtypes::{BF16, BF16_F32, F16_F32, F32};
use gemm_timing_tests::case::{first_difference, run, Case, Data, Output, Rng, Uploaded};
use gemm_timing_tests::every_kind::{kind_of, sm90a_cases, unreached};
use gemm_timing_tests::step::{kernel_names, StepBuffers, StepHost};
use gemm_timing_tests::{perturbation_seeds, PERTURBED};
use std::collections::{BTreeMap, BTreeSet};

const TC: Policy = Policy::TensorCore;
const EX: Policy = Policy::Exact;

/// The shipped kernels and the perturbed ones on the same device and tier choice.
fn contexts(choice: TierChoice) -> (Context, Context) {
    let plain = Context::open(0, gemm_runtime::shipped(), choice.clone())
        .unwrap_or_else(|e| panic!("a CUDA device is needed: {e}"));
    let perturbed =
        Context::open(0, &PERTURBED, choice).unwrap_or_else(|e| panic!("the perturbed set: {e}"));
    assert!(PERTURBED.timing_perturbation() && !plain.kernels().timing_perturbation());
    assert!(matches!(
        plain.set_timing_perturbation_seed(1),
        Err(GemmError::NotPerturbed { .. })
    ));
    eprintln!(
        "plain: {}; perturbed: {}",
        plain.tier_selection(),
        perturbed.tier_selection()
    );
    (plain, perturbed)
}

/// The kernel a run launched, if one ran.
fn launched(ctx: &Context, out: &Output) -> Option<&'static KernelInfo> {
    out.launch
        .as_ref()
        .and_then(|l| l.kernel)
        .and_then(|id| ctx.kernels().kernel(id))
}

/// `family.tile` of the kernel a run launched, with its cluster when it has one.
fn kind(ctx: &Context, out: &Output) -> String {
    let (Some(launch), Some(k)) = (&out.launch, launched(ctx, out)) else {
        return "-".into();
    };
    let mut s = format!("{}.{}", k.family, k.tile.name);
    if k.cluster.0 > 1 {
        s += &format!(" (cluster {})", k.cluster.0);
    }
    if k.cluster.2 > 1 {
        s += &format!(" (K split {})", k.cluster.2);
    }
    if launch.unaligned {
        s += " (unaligned)";
    }
    s
}

/// What [`compare`] found: the outputs that differ, per kernel the perturbed context ran how
/// many outputs were compared, and the kinds of those kernels ([`kind_of`]).
struct Compared {
    failures: Vec<String>,
    per_kernel: BTreeMap<String, usize>,
    kinds: BTreeSet<String>,
}

/// Runs every case on both contexts and every seed on the perturbed one.
fn compare(plain: &Context, perturbed: &Context, cases: &[Case], seeds: &[u32]) -> Compared {
    let mut failures = Vec::new();
    let mut compared: BTreeMap<String, usize> = BTreeMap::new();
    let mut kinds = BTreeSet::new();
    for case in cases {
        let data = Data::new(case, &mut Rng::for_label(&case.label()));
        let up_plain = Uploaded::new(plain, case, &data).unwrap();
        let up_pert = Uploaded::new(perturbed, case, &data).unwrap();
        let want =
            run(plain, case, &data, &up_plain).unwrap_or_else(|e| panic!("{}: {e}", case.label()));
        for &seed in seeds {
            perturbed.set_timing_perturbation_seed(seed).unwrap();
            let got = run(perturbed, case, &data, &up_pert)
                .unwrap_or_else(|e| panic!("{}: {e}", case.label()));
            *compared.entry(kind(perturbed, &got)).or_default() += 1;
            if let Some(k) = launched(perturbed, &got) {
                kinds.insert(kind_of(k));
            }
            if let Some(d) = first_difference(case, &want, &got) {
                failures.push(format!("seed {seed:#x}: {d}"));
            }
        }
    }
    perturbed.set_timing_perturbation_seed(0).unwrap();
    Compared {
        failures,
        per_kernel: compared,
        kinds,
    }
}

fn report(what: &str, seeds: &[u32], failures: &[String], compared: &BTreeMap<String, usize>) {
    eprintln!("{what}: seeds {seeds:x?}; outputs compared per perturbed kernel:");
    for (k, n) in compared {
        eprintln!("  {k:<40} {n}");
    }
    assert!(
        failures.is_empty(),
        "{what}: {} outputs differ:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

/// Every kernel kind of sm90a, at shapes that fill the GPU and at ragged ones.
#[test]
#[ignore = "needs a CUDA device"]
fn perturbed_kernels_give_the_shipped_bits_for_every_kind() {
    let (plain, perturbed) = contexts(TierChoice::Auto);
    if perturbed.tier().name != "sm90a" {
        eprintln!(
            "skipped: the device runs tier {}, this test is sm90a's",
            perturbed.tier().name
        );
        return;
    }
    let cases = sm90a_cases();
    let seeds = perturbation_seeds();
    let found = compare(&plain, &perturbed, &cases, &seeds);
    report(
        "sm90a, every kind",
        &seeds,
        &found.failures,
        &found.per_kernel,
    );
    // Every kind a route of the tier launches ran under perturbation (every_kind_cover checks
    // on the CPU that the cases are routed to each), and the plain-load kernels, which only
    // k = 0 and the cases' odd layouts reach.
    let missing = unreached(perturbed.kernels(), perturbed.tier().id, &found.kinds);
    assert!(
        missing.is_empty(),
        "no case ran these kinds (a route naming each): {missing:?}; ran: {:?}",
        found.kinds
    );
    for want in ["tcmma.any (unaligned)", "tcmma32.any (unaligned)"] {
        assert!(
            found.per_kernel.contains_key(want),
            "no case ran {want:?}: {:?}",
            found.per_kernel.keys()
        );
    }
}

/// Every kernel of sm90a that a route of the contract could name (the tuning candidates among
/// them, routed or not), forced with `gemm_on_kernel` under perturbation, gives the plain
/// routed kernel's bits: the tuner may route any of them, so none is left untested when a
/// retune moves a region.
#[test]
#[ignore = "needs a CUDA device"]
fn perturbed_candidates_give_the_routed_bits() {
    let (plain, perturbed) = contexts(TierChoice::Auto);
    if perturbed.tier().name != "sm90a" {
        eprintln!(
            "skipped: the device runs tier {}, this test is sm90a's",
            perturbed.tier().name
        );
        return;
    }
    // A decode m (the TMA decode kernels take 16 rows a CTA), a mid and a large m; k off the
    // stage size at one of them; both contracts (k = 8200 at n = 1000 is a chunked region).
    let routed = [
        Case::new(TC, Op::Nn, BF16, (13, 3072, 1024)),
        Case::new(TC, Op::Nt, BF16_F32, (200, 2304, 776)).bias(),
        Case::new(TC, Op::Tn, BF16_F32, (1030, 1000, 520)).beta(1.0),
        Case::new(TC, Op::Nn, BF16, (300, 1000, 8200)),
        // TF32, both contracts: the wgmma and mma.sync kernels, the chunked splits.
        Case::new(TC, Op::Nn, F32, (13, 3072, 1024)),
        Case::new(TC, Op::Nt, F32, (300, 1000, 8200)).bias(),
        // More tiles than SMs for every candidate (the 192 x 192 and clustered 128 x 256 tiles
        // among them), so every CTA of a persistent grid walks several tiles; old C read back
        // through the C-load barriers, 16-bit C and f32 C.
        Case::new(TC, Op::Nn, BF16, (2100, 4096, 1024)).beta(1.0),
        // NT (a linear layer's forward, where most tuned routes are), B K-major in one box.
        Case::new(TC, Op::Nt, BF16, (2100, 4096, 1024)).beta(1.0),
        Case::new(TC, Op::Tn, BF16_F32, (2100, 4096, 1024)).beta(1.0),
        // The chunked contract with more tiles than SMs and an odd number of chunks (9).
        Case::new(TC, Op::Nt, BF16, (2100, 1000, 4600)).beta(1.0),
    ];
    let seeds: Vec<u32> = perturbation_seeds().into_iter().take(2).collect();
    let mut failures = Vec::new();
    let mut compared: BTreeMap<String, usize> = BTreeMap::new();
    for case in &routed {
        let data = Data::new(case, &mut Rng::for_label(&case.label()));
        let want = run(
            &plain,
            case,
            &data,
            &Uploaded::new(&plain, case, &data).unwrap(),
        )
        .unwrap_or_else(|e| panic!("{}: {e}", case.label()));
        let routed_kernel = want
            .launch
            .as_ref()
            .and_then(|l| l.kernel)
            .and_then(|id| plain.kernels().kernel(id))
            .unwrap_or_else(|| panic!("{}: no kernel ran", case.label()));
        let up = Uploaded::new(&perturbed, case, &data).unwrap();
        let mut ran = 0;
        for k in perturbed.kernels().tier_kernels(perturbed.tier().id) {
            if !k.can_stand_in_for(routed_kernel, case.k as u64) {
                if k.can_stand_in_for(routed_kernel, 0) {
                    eprintln!(
                        "{}: {} skipped: takes k up to {}",
                        case.label(),
                        k.name,
                        k.max_k.unwrap_or_default()
                    );
                }
                continue;
            }
            let on = case.clone().on_kernel(k.name);
            for &seed in &seeds {
                perturbed.set_timing_perturbation_seed(seed).unwrap();
                let got = match run(&perturbed, &on, &data, &up) {
                    Ok(got) => got,
                    // A kernel that cannot take this shape (a decode tile past its rows).
                    Err(e) => {
                        eprintln!("  {} skipped: {e}", on.label());
                        break;
                    }
                };
                *compared.entry(kind(&perturbed, &got)).or_default() += 1;
                ran += 1;
                if let Some(d) = first_difference(case, &want, &got) {
                    failures.push(format!("seed {seed:#x} {}: {d}", k.name));
                }
            }
        }
        assert!(
            ran > seeds.len(),
            "{}: only the routed kernel could run",
            case.label()
        );
    }
    perturbed.set_timing_perturbation_seed(0).unwrap();
    report("sm90a, every candidate", &seeds, &failures, &compared);
}

/// The sm80 tier from its PTX (the cp.async tensor-core kernels and the exact ones) on this
/// device, perturbed against plain.
#[test]
#[ignore = "needs a CUDA device"]
fn perturbed_sm80_ptx_gives_the_plain_sm80_bits() {
    let (plain, perturbed) = contexts(TierChoice::named("sm80"));
    let cases = [
        Case::new(TC, Op::Nn, BF16, (5, 8192, 1024)),
        Case::new(TC, Op::Nn, BF16_F32, (40, 1000, 8200)),
        Case::new(TC, Op::Nt, BF16_F32, (64, 2048, 512)).bias(),
        Case::new(TC, Op::Tn, F16_F32, (300, 1024, 264)).beta(1.0),
        Case::new(TC, Op::Nn, BF16, (700, 1024, 1024)),
        Case::new(TC, Op::Nn, BF16_F32, (33, 65, 47)).pad(3),
        Case::new(TC, Op::Nn, F32, (100, 512, 256)),
        Case::new(EX, Op::Nn, BF16, (4, 8192, 2048)),
        Case::new(EX, Op::Nn, F32, (200, 512, 512)),
    ];
    let seeds: Vec<u32> = perturbation_seeds().into_iter().take(2).collect();
    let found = compare(&plain, &perturbed, &cases, &seeds);
    report("sm80 from PTX", &seeds, &found.failures, &found.per_kernel);
}

/// Rows of `X[:m] W` under perturbation equal the plain kernels' rows of `X W` at m = 300, for
/// m over a subset of 1..=300 (every route boundary and its neighbours) and four (op, n, k).
#[test]
#[ignore = "needs a CUDA device"]
fn perturbed_invariance_sweep_matches_the_plain_full_batch() {
    let (plain, perturbed) = contexts(TierChoice::Auto);
    const FULL: usize = 300;
    let ms = [
        1usize, 2, 3, 5, 8, 13, 15, 16, 17, 31, 32, 33, 63, 64, 65, 100, 127, 128, 129, 200, 255,
        256, 257, 299,
    ];
    let shapes = [
        Case::new(TC, Op::Nn, BF16_F32, (FULL, 4096, 4096)),
        Case::new(TC, Op::Nt, BF16, (FULL, 1000, 136)),
        Case::new(TC, Op::Tn, BF16_F32, (FULL, 264, 1000)),
        Case::new(TC, Op::Nn, F32, (FULL, 1000, 136)),
    ];
    let seeds: Vec<u32> = perturbation_seeds().into_iter().take(2).collect();
    let mut failures = Vec::new();
    let mut runs = 0;
    for full in &shapes {
        let data = Data::new(full, &mut Rng::for_label(&full.label()));
        let want = run(
            &plain,
            full,
            &data,
            &Uploaded::new(&plain, full, &data).unwrap(),
        )
        .unwrap();
        let up = Uploaded::new(&perturbed, full, &data).unwrap();
        for &seed in &seeds {
            perturbed.set_timing_perturbation_seed(seed).unwrap();
            for &m in &ms {
                let case = full.at_m(m);
                let got = run(&perturbed, &case, &data, &up).unwrap();
                runs += 1;
                if got.bits[..] != want.bits[..m * full.n] {
                    let idx = got
                        .bits
                        .iter()
                        .zip(&want.bits)
                        .position(|(a, b)| a != b)
                        .unwrap_or(0);
                    failures.push(format!(
                        "seed {seed:#x}: {} ({}) row {} differs from m = {FULL}",
                        case.label(),
                        got.kernel,
                        idx / full.n
                    ));
                }
            }
        }
    }
    perturbed.set_timing_perturbation_seed(0).unwrap();
    eprintln!(
        "invariance under perturbation: {runs} runs ({} shapes x {} seeds x {} m)",
        shapes.len(),
        seeds.len(),
        ms.len()
    );
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// The decode step recorded, packaged, captured into a CUDA graph and replayed on the perturbed
/// kernels, under a different seed each replay (the seed is read when a kernel runs), gives
/// the plain eager step's bits every time.
#[test]
#[ignore = "needs a CUDA device"]
fn perturbed_decode_step_replays_the_plain_bits() {
    let (plain, perturbed) = contexts(TierChoice::Auto);
    let host = StepHost::new(&mut Rng::for_label("perturbed decode step"));
    let want = StepBuffers::new(&plain, &host)
        .unwrap()
        .eager(&plain)
        .unwrap();
    let seeds = perturbation_seeds();
    let mut bufs = StepBuffers::new(&perturbed, &host).unwrap();
    perturbed.set_timing_perturbation_seed(seeds[0]).unwrap();
    assert!(
        bufs.eager(&perturbed).unwrap() == want,
        "eager step under seed {:#x} differs",
        seeds[0]
    );
    let manifest = perturbed.record_manifest(&mut bufs.request(), 2).unwrap();
    eprintln!(
        "decode step kernels: {:?}",
        kernel_names(&perturbed, &manifest)
    );
    let graph = perturbed
        .prepare_package(&manifest, &mut bufs.request())
        .unwrap()
        .capture(&perturbed)
        .unwrap();
    for (i, &seed) in seeds.iter().enumerate() {
        perturbed.set_timing_perturbation_seed(seed).unwrap();
        bufs.poison(&perturbed).unwrap();
        graph.replay(&perturbed).unwrap();
        assert!(
            bufs.bits(&perturbed).unwrap() == want,
            "replay {i} under seed {seed:#x} differs from the plain eager step"
        );
    }
    perturbed.set_timing_perturbation_seed(0).unwrap();
    eprintln!(
        "decode step: eager and {} replays under seeds {seeds:x?} equal the plain eager bits",
        seeds.len()
    );
}

/// One strided batch on `ctx` (bf16 inputs, f32 C, C starting as NaN): the output's bits and the
/// launched kernel's name.
fn strided_batch(
    ctx: &Context,
    (op, (m, n, k), count): (Op, (usize, usize, usize), usize),
    rng_label: &str,
) -> (Vec<u32>, String) {
    let mut rng = Rng::for_label(rng_label);
    let mut vals =
        |len: usize| -> Vec<bf16> { (0..len).map(|_| bf16::from_f32(rng.value())).collect() };
    let (a_rows, a_cols) = if op == Op::Tn { (k, m) } else { (m, k) };
    let ldb = if op == Op::Nt { k } else { n };
    let (sa, sb, sc) = (a_rows * a_cols, n * k, m * n);
    let a = ctx.upload(&vals(count * sa)).unwrap();
    let b = ctx.upload(&vals(count * sb)).unwrap();
    let c = ctx.upload(&vec![f32::NAN; count * sc]).unwrap();
    let call = RawGemm {
        op,
        m,
        n,
        k,
        ab: Dtype::Bf16,
        c_dtype: Dtype::F32,
        a: RawMatrix {
            ptr: a.span().base(),
            ld: a_cols,
        },
        b: RawMatrix {
            ptr: b.span().base(),
            ld: ldb,
        },
        c: RawMatrix {
            ptr: c.span().base(),
            ld: n,
        },
        bias: None,
        beta: 0.0,
        policy: Some(TC),
        mode: None,
    };
    let calls = call
        .strided(count, (sa as u64, sb as u64, sc as u64))
        .unwrap();
    let launch = ctx.gemm_raw_batch(&calls).unwrap().unwrap();
    let kernel = launch
        .kernel
        .and_then(|id| ctx.kernels().kernel(id))
        .unwrap();
    assert!(
        kernel.batch,
        "{op} {m}x{n}x{k} x{count}: {} is no batch kernel",
        kernel.name
    );
    let bits = ctx
        .download(&c)
        .unwrap()
        .iter()
        .map(|v| v.to_bits())
        .collect();
    (bits, kernel.name.to_string())
}

/// The batch kernels (attention's products as a bmm: a grid z over the entries) under
/// perturbation give the plain batch kernels' bits, every entry.
#[test]
#[ignore = "needs a CUDA device"]
fn perturbed_batch_kernels_give_the_plain_bits() {
    let (plain, perturbed) = contexts(TierChoice::Auto);
    if perturbed.tier().name != "sm90a" {
        eprintln!(
            "skipped: the device runs tier {}, this test is sm90a's (its batch_kernels)",
            perturbed.tier().name
        );
        return;
    }
    let cases = [
        (Op::Nt, (1, 37, 128), 64),
        (Op::Nn, (1, 128, 37), 64),
        (Op::Nt, (128, 128, 128), 32),
        // More entries than SMs (264 CTAs: two waves on 132): the GPU full.
        (Op::Nt, (128, 128, 128), 264),
        (Op::Nn, (16, 128, 4096), 8),
        (Op::Tn, (24, 64, 80), 7),
    ];
    let seeds = perturbation_seeds();
    let mut failures = Vec::new();
    for case in cases {
        let label = format!("batch {case:?}");
        let (want, kernel) = strided_batch(&plain, case, &label);
        for &seed in &seeds {
            perturbed.set_timing_perturbation_seed(seed).unwrap();
            let (got, pk) = strided_batch(&perturbed, case, &label);
            assert_eq!(
                pk, kernel,
                "{label}: the perturbed build launched another kernel"
            );
            if let Some(i) = got.iter().zip(&want).position(|(g, w)| g != w) {
                failures.push(format!(
                    "seed {seed:#x}: {label} ({kernel}): element {i} differs"
                ));
            }
        }
        eprintln!(
            "{label}: {kernel}, {} seeds, {} elements each",
            seeds.len(),
            want.len()
        );
    }
    perturbed.set_timing_perturbation_seed(0).unwrap();
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
