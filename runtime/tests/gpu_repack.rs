//! Odd leading dimensions on the GPU: the repack (A or B copied, bits unchanged, into aligned
//! scratch for the route's TMA kernel) and prepared weights give the bits of the unaligned
//! kernel of the same contract, rows stay independent of the batch, the copies are recorded,
//! and the scratch bound is kept. The exact kernels' vector path reads such copies, or the
//! route's unaligned kernel reads the operands as stored, with the bits of 16-byte rows, and a tn kernel that reads A's transposed copy gives
//! the routed tn kernel's bits.
//!
//! Skips, saying why, where the tier has no tensor-core route for bf16.

mod common;
use common::*;
use gemm_runtime::tuning::TuningError;
use gemm_runtime::*;

const TC: Policy = Policy::TensorCore;
const BF16: DtypeTriple = DtypeTriple::new(Dtype::Bf16, Dtype::Bf16, Dtype::F32);

struct Case {
    what: &'static str,
    n: usize,
    k: usize,
}

/// An odd vocabulary (B and C with ld = n odd) and an odd reduction (A with ld = k odd).
const CASES: [Case; 2] = [
    Case {
        what: "odd vocabulary",
        n: 1001,
        k: 768,
    },
    Case {
        what: "odd reduction",
        n: 264,
        k: 1003,
    },
];

/// C = X · W under the tensor-core policy with `W` given as (buffer, ld); bits and launch.
fn run(
    ctx: &Context,
    (m, n, k): (usize, usize, usize),
    x: &DeviceBuffer<bf16>,
    w: Mat<'_, bf16>,
) -> (Launch, Vec<u16>) {
    let mut c = ctx.upload(&vec![poison::<bf16>(); m * n]).unwrap();
    let launch = ctx
        .gemm(GemmRequest::linear(x.mat(k), w, None, c.mat_mut(n), (m, n, k)).with_policy(TC))
        .unwrap_or_else(|e| panic!("{m}x{n}x{k}: {e}"));
    let bits = ctx
        .download(&c)
        .unwrap()
        .iter()
        .map(|v| v.to_bits())
        .collect();
    (launch, bits)
}

#[test]
#[ignore = "needs a CUDA device"]
fn repacked_prepared_and_unaligned_give_the_same_bits_at_every_m() {
    let ctx = context();
    for case in CASES {
        let (n, k) = (case.n, case.k);
        const M_FULL: usize = 300;
        if ctx.route(TC, Op::Nn, BF16, 1, n as u64, k as u64).is_none() {
            eprintln!(
                "skipped: tier {} has no tensor-core bf16 route",
                ctx.tier().name
            );
            return;
        }
        let mut rng = Rng::fresh(case.what);
        let xh: Vec<bf16> = rng.vec(M_FULL * k);
        let wh: Vec<bf16> = rng.vec(k * n);
        let x = ctx.upload(&xh).unwrap();
        let w = ctx.upload(&wh).unwrap();
        let prepared = ctx.prepare_weight(w.mat(n), k, n).unwrap();
        assert_eq!(prepared.ld() % 8, 0);
        assert!(prepared.ld() >= n && prepared.ld() < n + 8);
        assert_eq!(prepared.bytes(), (k * prepared.ld() * 2) as u64);
        // The unaligned kernel's bits at the full batch: the reference of the contract.
        ctx.set_repack_limit(0);
        let (l0, reference) = run(&ctx, (M_FULL, n, k), &x, w.mat(n));
        assert!(
            l0.unaligned && l0.repacked.is_none(),
            "{}: {l0:?}",
            case.what
        );
        ctx.set_repack_limit(u64::MAX);
        // Loose float64 check of row 0, so the reference itself is not wrong.
        for j in (0..n).step_by(97) {
            let want: f64 = (0..k)
                .map(|t| xh[t].to_f32() as f64 * wh[t * n + j].to_f32() as f64)
                .sum();
            let got = bf16::from_bits(reference[j]).to_f32() as f64;
            assert!(
                (got - want).abs() <= 0.02 * (1.0 + want.abs()),
                "{}: row 0 col {j}: {got} vs {want}",
                case.what
            );
        }
        let mut kernels = std::collections::BTreeSet::new();
        for m in [1usize, 5, 16, 17, 64, 129, M_FULL] {
            let (repacked, got) = run(&ctx, (m, n, k), &x, w.mat(n));
            let route = ctx
                .route(TC, Op::Nn, BF16, m as u64, n as u64, k as u64)
                .unwrap();
            assert_eq!(repacked.kernel, Some(route.kernel), "{} m = {m}", case.what);
            let r = repacked
                .repacked
                .unwrap_or_else(|| panic!("{} m = {m}: no repack", case.what));
            // The odd vocabulary copies B (ld = n); the odd reduction copies A (ld = k).
            assert_eq!((r.a, r.b), (k % 8 != 0, n % 8 != 0), "{}", case.what);
            assert_eq!(
                got[..],
                reference[..m * n],
                "{} m = {m}: repacked",
                case.what
            );
            // The prepared weight: no copy of B per call.
            let (p, got) = run(&ctx, (m, n, k), &x, prepared.mat());
            assert_eq!(p.kernel, Some(route.kernel));
            assert_eq!(
                p.repacked.map(|r| r.b),
                if k % 8 != 0 { Some(false) } else { None }
            );
            assert_eq!(
                got[..],
                reference[..m * n],
                "{} m = {m}: prepared",
                case.what
            );
            kernels.insert(kernel(route.kernel).map_or("-", |k| k.name));
        }
        eprintln!(
            "{}: {n}x{k}: bit-equal at every m through {kernels:?}",
            case.what
        );
    }
}

#[test]
#[ignore = "needs a CUDA device"]
fn repack_copies_are_recorded_and_the_bound_is_kept() {
    let ctx = context();
    let (m, n, k) = (17usize, 1001usize, 768usize);
    if ctx
        .route(TC, Op::Nn, BF16, m as u64, n as u64, k as u64)
        .is_none()
    {
        eprintln!(
            "skipped: tier {} has no tensor-core bf16 route",
            ctx.tier().name
        );
        return;
    }
    let mut rng = Rng::fresh("repack recorded");
    let x = ctx.upload(&rng.vec::<bf16>(m * k)).unwrap();
    let w = ctx.upload(&rng.vec::<bf16>(k * n)).unwrap();
    let mut c = ctx.alloc::<bf16>(m * n).unwrap();
    let mut rec = Recorder::with_capacity(4);
    let l = ctx
        .gemm_observed(
            GemmRequest::linear(x.mat(k), w.mat(n), None, c.mat_mut(n), (m, n, k)).with_policy(TC),
            &mut rec,
        )
        .unwrap();
    let kinds: Vec<LaunchKind> = rec.records().iter().map(|r| r.kind).collect();
    assert_eq!(kinds, [LaunchKind::OperandRepack, LaunchKind::Gemm]);
    let bytes = l.repacked.unwrap().scratch_bytes;
    assert!(bytes >= (k * 1008 * 2) as u64);
    // A bound below the copy's size: the unaligned kernel, no copy.
    ctx.set_repack_limit(bytes - 1);
    let l = ctx
        .gemm(
            GemmRequest::linear(x.mat(k), w.mat(n), None, c.mat_mut(n), (m, n, k)).with_policy(TC),
        )
        .unwrap();
    assert!(l.unaligned && l.repacked.is_none(), "{l:?}");
    ctx.set_repack_limit(u64::MAX);
    // A prepared weight refuses a view past its buffer, before allocating.
    let err = ctx.prepare_weight(w.mat(n), k + 1, n).err().unwrap();
    assert!(matches!(err, GemmError::OutOfBounds { .. }), "{err}");
}

/// The routes a tuning wrote name one (n, k) each and switch kernels on m there: every m of
/// such a region gives the rows of the largest m (several tuned regions, the smallest first,
/// at m around every route boundary). The contract is one per (n, k), so this holds by
/// validation; this shows it on the GPU.
#[test]
#[ignore = "needs a CUDA device"]
fn tuned_regions_keep_rows_invariant_across_their_m_boundaries() {
    let ctx = context();
    let set = ctx.kernels();
    let tier = ctx.tier().id;
    let mut regions: Vec<(u64, u64, Vec<u64>)> = Vec::new();
    for r in set.routes_for(tier, TC, Op::Nn, BF16) {
        if r.n.max != Some(r.n.min) || r.k.max != Some(r.k.min) {
            continue;
        }
        let (n, k) = (r.n.min, r.k.min);
        let at = match regions.iter().position(|x| x.0 == n && x.1 == k) {
            Some(i) => i,
            None => {
                regions.push((n, k, Vec::new()));
                regions.len() - 1
            }
        };
        regions[at].2.push(r.m.min);
        if let Some(max) = r.m.max {
            regions[at].2.push(max);
            regions[at].2.push(max + 1);
        }
    }
    if regions.is_empty() {
        eprintln!(
            "skipped: tier {} has no tuned (single n, k) routes",
            ctx.tier().name
        );
        return;
    }
    regions.sort_by_key(|r| r.0 * r.1);
    let mut checked = 0;
    for (n, k, mut ms) in regions.into_iter().take(4) {
        ms.retain(|&m| (1..=1100).contains(&m));
        ms.extend([1, 1100]);
        ms.sort_unstable();
        ms.dedup();
        let (n, k) = (n as usize, k as usize);
        let m_full = *ms.last().unwrap() as usize;
        let mut rng = Rng::fresh(&format!("tuned {n}x{k}"));
        let x = ctx.upload(&rng.vec::<bf16>(m_full * k)).unwrap();
        let w = ctx.upload(&rng.vec::<bf16>(k * n)).unwrap();
        let (_, full) = run(&ctx, (m_full, n, k), &x, w.mat(n));
        let mut kernels = std::collections::BTreeSet::new();
        for &m in &ms {
            let m = m as usize;
            let (l, got) = run(&ctx, (m, n, k), &x, w.mat(n));
            kernels.insert(l.kernel.and_then(kernel).map_or("-", |k| k.name));
            assert_eq!(
                got[..],
                full[..m * n],
                "{n}x{k}: m = {m} differs from m = {m_full}"
            );
            checked += 1;
        }
        eprintln!("tuned {n}x{k}: m in {ms:?} bit-equal to m = {m_full} through {kernels:?}");
    }
    assert!(checked > 0);
}

/// A kernel whose family copies A transposed first (`prepass = "transpose-a"`, TF32 tn read as
/// nn) gives the routed tn kernel's bits (beta 1, a bias) from a view of A at any m, its rows
/// those of the whole batch; the launch reports A's copy; and with no scratch allowed, naming
/// it is refused with `CopyNotMade`, C untouched.
#[test]
#[ignore = "needs a CUDA device"]
fn prepass_kernels_read_a_transposed_copy_with_the_routed_bits() {
    let ctx = context();
    let f32s = DtypeTriple::new(Dtype::F32, Dtype::F32, Dtype::F32);
    let prepass: Vec<&KernelInfo> = ctx
        .kernels()
        .tier_kernels(ctx.tier().id)
        .iter()
        .filter(|k| k.prepass == Prepass::TransposeA)
        .collect();
    if prepass.is_empty() {
        eprintln!(
            "skipped: tier {} has no kernel that copies A transposed",
            ctx.tier().name
        );
        return;
    }
    // An odd m (A's ld 1001 f32: rows off 16 bytes) and an odd k (the copy's rows padded from
    // 1003 to 1004 f32), then more tiles than SMs.
    for (m_full, n, k) in [(1001usize, 768usize, 1003usize), (2100, 1024, 512)] {
        let mut rng = Rng::fresh(&format!("prepass {m_full}x{n}x{k}"));
        let a = ctx.upload(&rng.vec::<f32>(k * m_full)).unwrap();
        let b = ctx.upload(&rng.vec::<f32>(k * n)).unwrap();
        let bias = ctx.upload(&rng.vec::<f32>(n)).unwrap();
        let c0: Vec<f32> = rng.vec(m_full * n);
        // C's first m rows, from the first m columns of A ([k, m_full] as stored).
        let run = |m: usize, on: Option<KernelId>| -> Result<(Launch, Vec<u32>), TuningError> {
            let mut c = ctx.upload(&c0[..m * n]).unwrap();
            let req = GemmRequest::new(Op::Tn, (m, n, k), a.mat(m_full), b.mat(n), c.mat_mut(n))
                .with_bias(Some(bias.mat(n)))
                .with_beta(1.0)
                .with_policy(TC);
            let launch = match on {
                None => ctx.gemm(req)?,
                Some(id) => ctx.gemm_on_kernel(req, id)?,
            };
            let bits = ctx.download(&c).unwrap().into_iter().map(bits).collect();
            Ok((launch, bits))
        };
        let Some(route) = ctx.route(TC, Op::Tn, f32s, m_full as u64, n as u64, k as u64) else {
            eprintln!("skipped {m_full}x{n}x{k}: no tensor-core tn f32 route");
            continue;
        };
        let (_, want) = run(m_full, None).unwrap();
        for kernel in &prepass {
            if !kernel.can_stand_in_for(ctx.kernels().kernel(route.kernel).unwrap(), k as u64) {
                eprintln!(
                    "{} skipped at {m_full}x{n}x{k}: not of the routed kernel's contract",
                    kernel.name
                );
                continue;
            }
            for m in [1, 77, m_full] {
                let (launch, got) = run(m, Some(kernel.id)).unwrap();
                let copied = launch.repacked.expect("A's copy is reported");
                assert!(copied.a && copied.scratch_bytes > 0, "{launch:?}");
                let diff = got.iter().zip(&want).position(|(g, w)| g != w);
                assert!(
                    diff.is_none(),
                    "{} at {m}x{n}x{k}: element {} differs from the routed tn kernel at {m_full} rows",
                    kernel.name,
                    diff.unwrap_or(0)
                );
            }
            // No scratch: refused before anything is enqueued, C untouched.
            ctx.set_repack_limit(0);
            let mut c = ctx.upload(&c0[..n]).unwrap();
            let err = ctx
                .gemm_on_kernel(
                    GemmRequest::new(Op::Tn, (1, n, k), a.mat(m_full), b.mat(n), c.mat_mut(n))
                        .with_policy(TC),
                    kernel.id,
                )
                .err();
            ctx.set_repack_limit(u64::MAX);
            assert!(
                matches!(err, Some(TuningError::Gemm(GemmError::CopyNotMade { .. }))),
                "{}: {err:?}",
                kernel.name
            );
            let after: Vec<u32> = ctx.download(&c).unwrap().into_iter().map(bits).collect();
            let before: Vec<u32> = c0[..n].iter().copied().map(bits).collect();
            assert_eq!(
                after, before,
                "{}: C written by a refused call",
                kernel.name
            );
            eprintln!(
                "{} at {m_full}x{n}x{k}: the routed bits at m = 1, 77, {m_full}",
                kernel.name
            );
        }
    }
}

/// The exact policy's kernels with a vector path (`vector_bytes`: fmadecs, fmaw, fmaws) take an
/// operand off it one of two ways: the route's unaligned kernel, where its own vector path
/// takes the operands as they are (f32 decode copying 4 bytes a lane: nothing copied, one
/// launch), or an aligned copy read by the route's kernel (the launch reports the copy, the
/// copies are recorded before the GEMM). Either way, and with the repack off, the bits are
/// those of the route's kernel on the same values stored with 16-byte rows.
#[test]
#[ignore = "needs a CUDA device"]
fn exact_vector_kernels_read_aligned_copies_with_the_same_bits() {
    let ctx = context();
    let tier = ctx.tier();
    if !ctx
        .kernels()
        .tier_kernels(tier.id)
        .iter()
        .any(|k| k.vector_bytes > 0)
    {
        eprintln!(
            "skipped: tier {} has no kernel with a vector path",
            tier.name
        );
        return;
    }
    let (mut copied_seen, mut unaligned_seen) = (0, 0);
    // An odd vocabulary (B's ld 1001) and an odd reduction (A's ld 1003), at decode, mid and
    // large m (the decode, split and warp-tiled kernels).
    for (n, k) in [(1001usize, 768usize), (264, 1003)] {
        for m in [1usize, 16, 64, 300] {
            let mut rng = Rng::fresh(&format!("exact vector {m}x{n}x{k}"));
            let xv = rng.vec::<f32>(m * k);
            let wv = rng.vec::<f32>(k * n);
            // The same values with rows of a multiple of 4 f32 (16 bytes).
            let (lda, ldb) = (k.next_multiple_of(4), n.next_multiple_of(4));
            let pad = |v: &[f32], rows: usize, cols: usize, ld: usize| {
                let mut out = vec![poison::<f32>(); rows * ld];
                for r in 0..rows {
                    out[r * ld..r * ld + cols].copy_from_slice(&v[r * cols..(r + 1) * cols]);
                }
                out
            };
            let x = ctx.upload(&xv).unwrap();
            let w = ctx.upload(&wv).unwrap();
            let x16 = ctx.upload(&pad(&xv, m, k, lda)).unwrap();
            let w16 = ctx.upload(&pad(&wv, k, n, ldb)).unwrap();
            let run = |limit: u64,
                       rec: Option<&mut Recorder>,
                       (x, w): (Mat<'_, f32>, Mat<'_, f32>)|
             -> (Launch, Vec<u32>) {
                ctx.set_repack_limit(limit);
                let mut c = ctx.upload(&vec![poison::<f32>(); m * n]).unwrap();
                let req = GemmRequest::linear(x, w, None, c.mat_mut(n), (m, n, k))
                    .with_policy(Policy::Exact);
                let launch = match rec {
                    Some(r) => ctx.gemm_observed(req, r),
                    None => ctx.gemm(req),
                }
                .unwrap_or_else(|e| panic!("{m}x{n}x{k}: {e}"));
                ctx.set_repack_limit(u64::MAX);
                let bits = ctx.download(&c).unwrap().into_iter().map(bits).collect();
                (launch, bits)
            };
            let (aligned, want) = run(u64::MAX, None, (x16.mat(lda), w16.mat(ldb)));
            let info = aligned.kernel.and_then(kernel).unwrap();
            if info.vector_bytes == 0 {
                eprintln!("{m}x{n}x{k}: {} has no vector path", info.name);
                continue;
            }
            assert!(
                aligned.repacked.is_none() && !aligned.unaligned,
                "{aligned:?}"
            );
            let same = |got: &[u32], how: &str, on: &str| {
                let diff = got.iter().zip(&want).position(|(g, w)| g != w);
                assert!(
                    diff.is_none(),
                    "{m}x{n}x{k}: element {} differs between {how} on {on} and 16-byte rows on {}",
                    diff.unwrap_or(0),
                    info.name
                );
            };
            let (plain, got) = run(0, None, (x.mat(k), w.mat(n)));
            assert!(plain.repacked.is_none(), "{plain:?}");
            let plain_info = plain.kernel.and_then(kernel).unwrap();
            same(&got, "the repack off", plain_info.name);
            let mut rec = Recorder::with_capacity(4);
            let (copied, got) = run(u64::MAX, Some(&mut rec), (x.mat(k), w.mat(n)));
            let kinds: Vec<LaunchKind> = rec.records().iter().map(|r| r.kind).collect();
            assert_eq!(kinds.last(), Some(&LaunchKind::Gemm));
            let ran = copied.kernel.and_then(kernel).unwrap();
            if copied.unaligned {
                // The route's unaligned kernel read the operands as stored: nothing copied.
                assert!(copied.repacked.is_none(), "{copied:?}");
                assert_eq!(kinds.len(), 1);
                assert!(ran.vector_bytes > 0 && ran.vector_bytes < info.vector_bytes);
                assert_eq!(copied.kernel, plain.kernel);
                same(&got, "the operands as stored", ran.name);
                eprintln!("{m}x{n}x{k} on {}: no copy, the bits", ran.name);
                unaligned_seen += 1;
            } else {
                assert_eq!(copied.kernel, aligned.kernel);
                let r = copied
                    .repacked
                    .expect("an operand off the vector path is copied");
                assert_eq!((r.a, r.b), (k % 4 != 0, n % 4 != 0), "{m}x{n}x{k}");
                assert_eq!(kinds.len(), 1 + usize::from(r.a) + usize::from(r.b));
                same(&got, "the copy", ran.name);
                eprintln!("{m}x{n}x{k} on {}: copies give the bits", info.name);
                copied_seen += 1;
            }
        }
    }
    assert!(
        copied_seen + unaligned_seen > 0,
        "no exact route reached a kernel with a vector path"
    );
    eprintln!("{copied_seen} calls read copies, {unaligned_seen} ran the unaligned kernel");
}
