//! The tensor-core launch path on the GPU: tensor maps, per-call policy, clusters, persistent
//! grids, and their graph packaging.
//!
//! The tests of tensor-core kernels (contract equivalence of the wide, decode and unaligned
//! kernels; persistent grids at half the SMs; a packaged decode step) skip, saying why, when
//! the context's tier has no tensor-core route. The others run on any tier.

mod common;
use common::*;
use gemm_runtime::*;

const TC: Policy = Policy::TensorCore;

/// The tensor-core route of the tier for (op, dtype) at this shape, or a printed reason to
/// skip.
fn tc_route(
    ctx: &Context,
    op: Op,
    dtype: DtypeTriple,
    (m, n, k): (u64, u64, u64),
) -> Option<RouteHit> {
    let hit = ctx.route(TC, op, dtype, m, n, k);
    if hit.is_none() {
        eprintln!(
            "skipped: tier {} has no tensor-core route for {op} {dtype} at {m}x{n}x{k}",
            ctx.tier().name
        );
    }
    hit
}

fn name(id: Option<KernelId>) -> &'static str {
    id.and_then(kernel).map_or("-", |k| k.name)
}

/// C = A · B (+ bias) under the tensor-core policy for an NN or NT request whose A starts at
/// element `a_off` of `a` with leading dimension `lda` (and likewise B); C's bits and the
/// launch.
#[allow(clippy::too_many_arguments)]
fn run_tc<C: Element>(
    ctx: &Context,
    op: Op,
    (m, n, k): (usize, usize, usize),
    (a, a_off, lda): (&DeviceBuffer<bf16>, usize, usize),
    (b, b_off, ldb): (&DeviceBuffer<bf16>, usize, usize),
    bias: Option<&DeviceBuffer<C>>,
) -> (Launch, Vec<u32>) {
    let mut c = ctx.upload(&vec![poison::<C>(); m.max(1) * n]).unwrap();
    let req = GemmRequest::new(
        op,
        (m, n, k),
        a.mat_at(a_off, lda),
        b.mat_at(b_off, ldb),
        c.mat_mut(n),
    )
    .with_bias(bias.map(|v| v.mat(n)))
    .with_policy(TC);
    let launch = ctx
        .gemm(req)
        .unwrap_or_else(|e| panic!("{op} {m}x{n}x{k}: {e}"));
    let bits = ctx.download(&c).unwrap().into_iter().map(bits).collect();
    (launch, bits)
}

/// Copies a row-major `rows x cols` host matrix into a buffer at element `offset` with
/// leading dimension `ld` (the rest poisoned).
fn placed(
    ctx: &Context,
    host: &[bf16],
    (rows, cols): (usize, usize),
    offset: usize,
    ld: usize,
) -> DeviceBuffer<bf16> {
    let mut v = vec![poison::<bf16>(); offset + rows * ld + cols];
    for r in 0..rows {
        v[offset + r * ld..offset + r * ld + cols].copy_from_slice(&host[r * cols..(r + 1) * cols]);
    }
    ctx.upload(&v).unwrap()
}

/// Every kernel of the tensor-core contract gives the same bits: the wide kernel at a large m,
/// the decode kernel at small m (rows of the large result), and the unaligned kernel when an
/// operand's address or leading dimension keeps TMA out (and at k = 0).
fn contract_equivalence<C: Element>(op: Op) {
    let ctx = context();
    let dtype = DtypeTriple::new(Dtype::Bf16, C::DTYPE, Dtype::F32);
    const M_FULL: usize = 300;
    for (n, k) in [(4096usize, 4096usize), (1000, 136), (264, 1000)] {
        let Some(wide) = tc_route(&ctx, op, dtype, (M_FULL as u64, n as u64, k as u64)) else {
            continue; // tc_route printed the skip
        };
        let mut rng = Rng::fresh(&format!("tc {op} {dtype} {n}x{k}"));
        let x: Vec<bf16> = rng.vec(M_FULL * k);
        let w: Vec<bf16> = rng.vec(n * k);
        let bias_host: Vec<C> = rng.vec(n);
        let bias = ctx.upload(&bias_host).unwrap();
        let (b_rows, b_cols) = if op == Op::Nt { (n, k) } else { (k, n) };
        let xa = placed(&ctx, &x, (M_FULL, k), 0, k);
        let wb = placed(&ctx, &w, (b_rows, b_cols), 0, b_cols);
        let (full_launch, full) = run_tc(
            &ctx,
            op,
            (M_FULL, n, k),
            (&xa, 0, k),
            (&wb, 0, b_cols),
            Some(&bias),
        );
        assert_eq!(full_launch.kernel, Some(wide.kernel));
        assert!(!full_launch.unaligned);
        assert_eq!(full_launch.policy, TC);
        eprintln!(
            "{op} {n}x{k}: m = {M_FULL} ran {}",
            name(full_launch.kernel)
        );
        // Sanity: not every kernel equally wrong (f64 reference of one row, loose bound).
        let row0: Vec<f64> = (0..n)
            .map(|j| {
                let s: f64 = (0..k)
                    .map(|t| {
                        let wv = if op == Op::Nt {
                            w[j * k + t]
                        } else {
                            w[t * n + j]
                        };
                        x[t].to_f32() as f64 * wv.to_f32() as f64
                    })
                    .sum();
                s + bias_host[j].to_f32() as f64
            })
            .collect();
        for (j, want) in row0.iter().enumerate() {
            let got = f32::from_bits(full[j]) as f64;
            assert!(
                (got - want).abs() <= 0.02 * (1.0 + want.abs()),
                "row 0 col {j}: {got} vs {want}"
            );
        }
        let mut kernels = std::collections::BTreeSet::new();
        for m in [1usize, 2, 7, 16, 17, 64, 129, 299] {
            let (l, got) = run_tc(
                &ctx,
                op,
                (m, n, k),
                (&xa, 0, k),
                (&wb, 0, b_cols),
                Some(&bias),
            );
            kernels.insert(name(l.kernel));
            assert_eq!(
                got[..m * n],
                full[..m * n],
                "{op} {n}x{k}: m = {m} ({}) differs from m = {M_FULL}",
                name(l.kernel)
            );
        }
        // A misaligned A (one element in: not 16-byte aligned) and an odd leading dimension
        // of B: copied into aligned scratch for the route's own kernel (the repack), or, with
        // the repack off, the route's unaligned kernel; the same bits either way.
        let xa_off = placed(&ctx, &x, (M_FULL, k), 1, k);
        let wb_ld = placed(&ctx, &w, (b_rows, b_cols), 0, b_cols + 1);
        for (what, a_src, b_src, repack_limit) in [
            (
                "A one element in",
                (&xa_off, 1usize, k),
                (&wb, 0usize, b_cols),
                u64::MAX,
            ),
            ("B's ld odd", (&xa, 0, k), (&wb_ld, 0, b_cols + 1), u64::MAX),
            (
                "A one element in, repack off",
                (&xa_off, 1usize, k),
                (&wb, 0usize, b_cols),
                0,
            ),
            (
                "B's ld odd, repack off",
                (&xa, 0, k),
                (&wb_ld, 0, b_cols + 1),
                0,
            ),
        ] {
            ctx.set_repack_limit(repack_limit);
            for m in [1usize, 17, M_FULL] {
                let (l, got) = run_tc(&ctx, op, (m, n, k), a_src, b_src, Some(&bias));
                if let Some(route) = ctx.route(TC, op, dtype, m as u64, n as u64, k as u64) {
                    let tma = kernel(route.kernel).is_some_and(|k| k.operands == OperandPath::Tma);
                    if tma && repack_limit > 0 {
                        let r = l.repacked.unwrap_or_else(|| {
                            panic!(
                                "{what}: m = {m} should repack for {}",
                                name(Some(route.kernel))
                            )
                        });
                        assert_eq!((r.a, r.b), (what.starts_with('A'), what.starts_with('B')));
                        assert!(r.scratch_bytes > 0);
                        assert_eq!(l.kernel, Some(route.kernel), "{what}: m = {m}");
                        assert!(!l.unaligned);
                    } else if route.unaligned.is_some() {
                        assert!(
                            l.unaligned,
                            "{what}: m = {m} should run the unaligned kernel"
                        );
                        assert_eq!(l.kernel, route.unaligned);
                        assert_eq!(l.repacked, None);
                    }
                }
                kernels.insert(name(l.kernel));
                assert_eq!(
                    got[..m * n],
                    full[..m * n],
                    "{what}: m = {m} ({}) differs",
                    name(l.kernel)
                );
            }
        }
        ctx.set_repack_limit(u64::MAX);
        eprintln!("{op} {n}x{k}: kernels compared: {kernels:?}");
    }
    // k = 0 runs only the epilogue, on the unaligned kernel.
    let n = 264;
    if tc_route(&ctx, op, dtype, (5, n as u64, 0)).is_none() {
        return;
    }
    let mut rng = Rng::fresh("tc k0");
    let bias_host: Vec<C> = rng.vec(n);
    let bias = ctx.upload(&bias_host).unwrap();
    let a = ctx.upload(&[bf16::from_f32(1.0); 16]).unwrap();
    let (l, got) = run_tc(&ctx, op, (5, n, 0), (&a, 0, 8), (&a, 0, 8), Some(&bias));
    assert!(
        l.unaligned
            || l.kernel
                .is_some_and(|id| kernel(id).is_some_and(|k| k.tensor_maps.is_empty()))
    );
    for r in 0..5 {
        for j in 0..n {
            assert_eq!(got[r * n + j], bits(bias_host[j]), "k = 0: row {r} col {j}");
        }
    }
}

#[test]
#[ignore = "needs a CUDA device"]
fn tc_kernels_of_one_contract_agree_bitwise_nn_bf16_f32() {
    contract_equivalence::<f32>(Op::Nn);
}

#[test]
#[ignore = "needs a CUDA device"]
fn tc_kernels_of_one_contract_agree_bitwise_nn_bf16_bf16() {
    contract_equivalence::<bf16>(Op::Nn);
}

#[test]
#[ignore = "needs a CUDA device"]
fn tc_kernels_of_one_contract_agree_bitwise_nt_bf16_f32() {
    contract_equivalence::<f32>(Op::Nt);
}

/// A persistent kernel on half the SMs' worth of CTAs (and on one cluster) computes the same
/// bits; the recorded grid is the value launched.
#[test]
#[ignore = "needs a CUDA device"]
fn tc_persistent_grid_at_half_the_sms_gives_equal_bits() {
    let ctx = context();
    let dtype = DtypeTriple::new(Dtype::Bf16, Dtype::F32, Dtype::F32);
    let (m, n, k) = (2048usize, 4096usize, 1024usize);
    let Some(hit) = tc_route(&ctx, Op::Nn, dtype, (m as u64, n as u64, k as u64)) else {
        return;
    };
    let info = kernel(hit.kernel).unwrap();
    if info.grid != GridKind::Persistent {
        eprintln!("skipped: {} has no persistent grid", info.name);
        return;
    }
    let sms = ctx.sm_count().unwrap();
    let coresident = ctx.coresident_ctas(info.id).unwrap();
    assert!(
        coresident >= info.cluster.0,
        "{coresident} CTAs co-resident"
    );
    let mut rng = Rng::fresh("tc persistent");
    let x = ctx.upload(&rng.vec::<bf16>(m * k)).unwrap();
    let w = ctx.upload(&rng.vec::<bf16>(k * n)).unwrap();
    let (all, want) = run_tc::<f32>(&ctx, Op::Nn, (m, n, k), (&x, 0, k), (&w, 0, n), None);
    assert!(all.grid.0 <= coresident && all.grid.0 % info.cluster.0 == 0);
    for cap in [sms / 2, info.cluster.0, 1] {
        ctx.set_max_persistent_ctas(Some(cap));
        let (l, got) = run_tc::<f32>(&ctx, Op::Nn, (m, n, k), (&x, 0, k), (&w, 0, n), None);
        assert!(
            l.grid.0 <= cap.max(info.cluster.0),
            "cap {cap}: grid {:?}",
            l.grid
        );
        assert_eq!(l.grid.0 % info.cluster.0, 0);
        assert_eq!(
            got, want,
            "cap {cap}: {:?} CTAs against {:?}",
            l.grid, all.grid
        );
        // The record holds the grid launched.
        let mut rec = Recorder::with_capacity(1);
        let mut c = ctx.alloc::<f32>(m * n).unwrap();
        let req =
            GemmRequest::new(Op::Nn, (m, n, k), x.mat(k), w.mat(n), c.mat_mut(n)).with_policy(TC);
        ctx.gemm_observed(req, &mut rec).unwrap();
        assert_eq!(rec.records()[0].grid, l.grid);
        assert_eq!(rec.records()[0].cluster, info.cluster);
    }
    ctx.set_max_persistent_ctas(None);
}

/// One decode step (m = 1) under the tensor-core policy named by the request.
struct Decode<'a> {
    x: Mat<'a, bf16>,
    w: Mat<'a, bf16>,
    y: &'a mut DeviceBuffer<f32>,
    n: usize,
    k: usize,
    policy: Option<Policy>,
}

impl Request for Decode<'_> {
    fn run<O: Observer>(&mut self, ctx: &Context, obs: &mut O) -> Result<(), GemmError> {
        let mut req = GemmRequest::linear(
            self.x,
            self.w,
            None,
            self.y.mat_mut(self.n),
            (1, self.n, self.k),
        );
        req.policy = self.policy;
        ctx.gemm_observed(req, obs).map(|_| ())
    }
}

/// A tensor-core decode step packages into a graph verified node for node (cluster included)
/// and replays bitwise; a replaced weight allocation is refused (its tensor map would be
/// stale), a changed default policy is refused only for a request that takes the default,
/// and a changed persistent cap makes the package differ from its manifest.
#[test]
#[ignore = "needs a CUDA device"]
fn tc_decode_step_packages_and_refuses_a_replaced_allocation() {
    let ctx = context();
    let dtype = DtypeTriple::new(Dtype::Bf16, Dtype::F32, Dtype::F32);
    let (n, k) = (4096usize, 4096usize);
    let Some(hit) = tc_route(&ctx, Op::Nn, dtype, (1, n as u64, k as u64)) else {
        return;
    };
    let info = kernel(hit.kernel).unwrap();
    let mut rng = Rng::fresh("tc decode package");
    let x = ctx.upload(&rng.vec::<bf16>(k)).unwrap();
    let w_host: Vec<bf16> = rng.vec(k * n);
    let w = ctx.upload(&w_host).unwrap();
    let mut y = ctx.alloc::<f32>(n).unwrap();
    let mut step = Decode {
        x: x.mat(k),
        w: w.mat(n),
        y: &mut y,
        n,
        k,
        policy: Some(TC),
    };
    let manifest = ctx.record_manifest(&mut step, 1).unwrap();
    let rec = &manifest.records()[0];
    assert_eq!(rec.policy, TC);
    assert_eq!(rec.kernel, KernelRef::Gemm(info.id));
    assert_eq!(rec.cluster, info.cluster);
    let eager = ctx.download(step.y).unwrap();
    let maps_before = ctx.cached_tensor_maps();
    let package = ctx.prepare_package(&manifest, &mut step).unwrap();
    assert_eq!(
        ctx.cached_tensor_maps(),
        maps_before,
        "the same maps, from the cache"
    );
    let graph = package.capture(&ctx).unwrap();
    ctx.write(step.y, &vec![f32::NAN; n]).unwrap();
    graph.replay(&ctx).unwrap();
    let replayed = ctx.download(step.y).unwrap();
    assert!(eager
        .iter()
        .zip(&replayed)
        .all(|(a, b)| a.to_bits() == b.to_bits()));

    // The request names its policy: the context's default does not matter.
    ctx.set_policy(Policy::Exact);
    graph.replay(&ctx).unwrap();
    ctx.set_policy(TC);
    // A request that takes the default is refused once the default changes.
    let mut default_step = Decode {
        x: x.mat(k),
        w: w.mat(n),
        y: &mut y,
        n,
        k,
        policy: None,
    };
    let m2 = ctx.record_manifest(&mut default_step, 1).unwrap();
    let p2 = ctx.prepare_package(&m2, &mut default_step).unwrap();
    let g2 = p2.capture(&ctx).unwrap();
    ctx.set_policy(Policy::Exact);
    assert!(matches!(
        g2.replay(&ctx),
        Err(PackageError::PolicyChanged { .. })
    ));
    ctx.set_policy(Policy::Exact);

    // A persistent cap changed after the manifest: the package differs from it.
    if info.grid == GridKind::Persistent {
        ctx.set_max_persistent_ctas(Some(info.cluster.0));
        let mut again = Decode {
            x: x.mat(k),
            w: w.mat(n),
            y: &mut y,
            n,
            k,
            policy: Some(TC),
        };
        let r = ctx.prepare_package(&manifest, &mut again);
        ctx.set_max_persistent_ctas(None);
        if rec.grid.0 > info.cluster.0 {
            assert!(
                matches!(r, Err(PackageError::RecordMismatch { .. })),
                "{r:?}"
            );
        }
    }

    // The weight replaced (freed, allocated again, maybe at the same address): the graph's
    // tensor map would be stale, so replay is refused.
    drop(w);
    let w2 = ctx.upload(&w_host).unwrap();
    match graph.replay(&ctx) {
        Err(PackageError::AllocationChanged { .. }) => {}
        other => panic!("expected AllocationChanged, got {other:?}"),
    }
    // A fresh package of the new allocation encodes a new map and replays correctly.
    let mut fresh = Decode {
        x: x.mat(k),
        w: w2.mat(n),
        y: &mut y,
        n,
        k,
        policy: Some(TC),
    };
    let m3 = ctx.record_manifest(&mut fresh, 1).unwrap();
    let g3 = ctx
        .prepare_package(&m3, &mut fresh)
        .unwrap()
        .capture(&ctx)
        .unwrap();
    ctx.write(fresh.y, &vec![f32::NAN; n]).unwrap();
    g3.replay(&ctx).unwrap();
    let again = ctx.download(fresh.y).unwrap();
    assert!(eager
        .iter()
        .zip(&again)
        .all(|(a, b)| a.to_bits() == b.to_bits()));
}

/// Tensor maps encode through the driver, come from the cache the second time, and name what
/// TMA refuses; a replaced allocation gets a new key (never the old map).
#[test]
#[ignore = "needs a CUDA device"]
fn tensor_maps_encode_cache_and_refuse() {
    let ctx = context();
    let buf = ctx.upload(&vec![bf16::from_f32(1.0); 256 * 264]).unwrap();
    let before = ctx.cached_tensor_maps();
    let (key, map) = ctx
        .tensor_map(Operand::B, &buf.mat(264), (256, 264), (64, 64), 128)
        .unwrap();
    assert_ne!(map.0, [0u8; 128]);
    assert_eq!(key.allocation, buf.span().id());
    assert_eq!(ctx.cached_tensor_maps(), before + 1);
    let (key2, map2) = ctx
        .tensor_map(Operand::B, &buf.mat(264), (256, 264), (64, 64), 128)
        .unwrap();
    assert_eq!((key, map), (key2, map2));
    assert_eq!(ctx.cached_tensor_maps(), before + 1);
    // Another box is another map.
    let (key3, _) = ctx
        .tensor_map(Operand::B, &buf.mat(264), (256, 264), (32, 64), 64)
        .unwrap();
    assert_ne!(key3, key);
    let refused = |r: Result<(TensorMapKey, TensorMapBytes), GemmError>| match r {
        Err(GemmError::Tma { problem, .. }) => problem,
        other => panic!("expected a TMA refusal, got {other:?}"),
    };
    assert!(matches!(
        refused(ctx.tensor_map(Operand::A, &buf.mat_at(1, 264), (16, 264), (64, 64), 128)),
        TmaProblem::BaseMisaligned { .. }
    ));
    assert!(matches!(
        refused(ctx.tensor_map(Operand::A, &buf.mat(263), (16, 263), (64, 64), 128)),
        TmaProblem::StrideMisaligned { ld: 263, .. }
    ));
    assert!(matches!(
        refused(ctx.tensor_map(Operand::A, &buf.mat(264), (16, 264), (64, 300), 128)),
        TmaProblem::Box { .. }
    ));
    // A view outside the allocation is refused like a GEMM operand.
    assert!(matches!(
        ctx.tensor_map(Operand::A, &buf.mat(264), (257, 264), (64, 64), 128),
        Err(GemmError::OutOfBounds { .. })
    ));
    let old = buf.span();
    drop(buf);
    let again = ctx.upload(&vec![bf16::from_f32(1.0); 256 * 264]).unwrap();
    let (key4, _) = ctx
        .tensor_map(Operand::B, &again.mat(264), (256, 264), (64, 64), 128)
        .unwrap();
    assert_ne!(
        (key4.allocation, key4.generation),
        (old.id(), old.generation())
    );
}

/// A request's own policy routes it, whatever the context's default; the record carries it;
/// a package refuses a changed default only for launches that take the default.
#[test]
#[ignore = "needs a CUDA device"]
fn per_call_policy_routes_records_and_packages() {
    let ctx = context();
    let (m, n, k) = (3usize, 64usize, 40usize);
    let mut rng = Rng::fresh("per-call policy");
    let x = ctx.upload(&rng.vec::<f32>(m * k)).unwrap();
    let w = ctx.upload(&rng.vec::<f32>(k * n)).unwrap();
    let mut y = ctx.alloc::<f32>(m * n).unwrap();
    // Default Exact, request Exact explicitly: runs; default TensorCore, request Exact: runs.
    let exact = ctx
        .gemm(
            GemmRequest::linear(x.mat(k), w.mat(n), None, y.mat_mut(n), (m, n, k))
                .with_policy(Policy::Exact),
        )
        .unwrap();
    assert_eq!(exact.policy, Policy::Exact);
    let want = ctx.download(&y).unwrap();
    ctx.set_policy(TC);
    let l = ctx
        .gemm(
            GemmRequest::linear(x.mat(k), w.mat(n), None, y.mat_mut(n), (m, n, k))
                .with_policy(Policy::Exact),
        )
        .unwrap();
    assert_eq!((l.policy, l.kernel), (Policy::Exact, exact.kernel));
    assert_eq!(ctx.download(&y).unwrap(), want);
    ctx.set_policy(Policy::Exact);
    // A request naming a policy the tier has no route for is refused with that policy.
    let f32s = DtypeTriple::new(Dtype::F32, Dtype::F32, Dtype::F32);
    if ctx
        .route(TC, Op::Nn, f32s, m as u64, n as u64, k as u64)
        .is_none()
    {
        match ctx.gemm(
            GemmRequest::linear(x.mat(k), w.mat(n), None, y.mat_mut(n), (m, n, k)).with_policy(TC),
        ) {
            Err(GemmError::NoRoute { policy: TC, .. }) => {}
            other => panic!("expected NoRoute under tensor-core, got {other:?}"),
        }
    }

    struct Step<'a> {
        x: Mat<'a, f32>,
        w: Mat<'a, f32>,
        y: &'a mut DeviceBuffer<f32>,
        dims: (usize, usize, usize),
        policy: Option<Policy>,
    }
    impl Request for Step<'_> {
        fn run<O: Observer>(&mut self, ctx: &Context, obs: &mut O) -> Result<(), GemmError> {
            let mut req =
                GemmRequest::linear(self.x, self.w, None, self.y.mat_mut(self.dims.1), self.dims);
            req.policy = self.policy;
            ctx.gemm_observed(req, obs).map(|_| ())
        }
    }
    // Own policy: a changed default does not refuse it.
    let mut own = Step {
        x: x.mat(k),
        w: w.mat(n),
        y: &mut y,
        dims: (m, n, k),
        policy: Some(Policy::Exact),
    };
    let manifest = ctx.record_manifest(&mut own, 1).unwrap();
    assert_eq!(manifest.records()[0].policy, Policy::Exact);
    let graph = ctx
        .prepare_package(&manifest, &mut own)
        .unwrap()
        .capture(&ctx)
        .unwrap();
    ctx.set_policy(TC);
    graph.replay(&ctx).unwrap();
    // Packaging it again under the other default still matches its manifest.
    ctx.prepare_package(&manifest, &mut own).unwrap();
    ctx.set_policy(Policy::Exact);
    ctx.synchronize().unwrap();
    assert_eq!(ctx.download(&y).unwrap(), want);
    // The default: refused after it changes.
    let mut dflt = Step {
        x: x.mat(k),
        w: w.mat(n),
        y: &mut y,
        dims: (m, n, k),
        policy: None,
    };
    let manifest = ctx.record_manifest(&mut dflt, 1).unwrap();
    let graph = ctx
        .prepare_package(&manifest, &mut dflt)
        .unwrap()
        .capture(&ctx)
        .unwrap();
    ctx.set_policy(TC);
    assert!(matches!(
        graph.replay(&ctx),
        Err(PackageError::PolicyChanged {
            then: Policy::Exact,
            now: TC
        })
    ));
    ctx.set_policy(Policy::Exact);
    graph.replay(&ctx).unwrap();
}

/// Occupancy of a shipped kernel: co-resident CTAs are a whole multiple of the SM count for a
/// kernel without clusters; the cap is kept per context and copied to a new stream.
#[test]
#[ignore = "needs a CUDA device"]
fn coresident_ctas_and_the_persistent_cap() {
    let ctx = context();
    let sms = ctx.sm_count().unwrap();
    assert!(sms > 0);
    let f32s = DtypeTriple::new(Dtype::F32, Dtype::F32, Dtype::F32);
    let hit = ctx
        .route(Policy::Exact, Op::Nn, f32s, 256, 256, 256)
        .unwrap();
    let n = ctx.coresident_ctas(hit.kernel).unwrap();
    assert!(n >= sms && n.is_multiple_of(sms), "{n} CTAs on {sms} SMs");
    assert_eq!(ctx.coresident_ctas(hit.kernel).unwrap(), n, "cached");
    assert_eq!(ctx.max_persistent_ctas(), None);
    ctx.set_max_persistent_ctas(Some(sms / 2));
    assert_eq!(
        ctx.new_stream().unwrap().max_persistent_ctas(),
        Some(sms / 2)
    );
    ctx.set_max_persistent_ctas(None);
}

/// The initial default (`DefaultPolicy::ByDtype`): bf16 and f16 calls that name no policy run
/// the tensor-core kernels where the tier routes their (op, dtype), f32 calls stay exact (TF32
/// only when asked for), and a half combination the tensor-core policy does not route (TN
/// writing bf16) stays exact, through the half fallback. A package recorded under the default
/// is refused once the default changes, and replays again when it is restored.
#[test]
#[ignore = "needs a CUDA device"]
fn the_default_policy_is_tensor_core_for_half_inputs_only() {
    let ctx = device_context();
    assert_eq!(ctx.policy(), DefaultPolicy::ByDtype);
    let (m, n, k) = (3usize, 64usize, 40usize);
    let mut rng = Rng::fresh("default policy");
    let bf = DtypeTriple::new(Dtype::Bf16, Dtype::Bf16, Dtype::F32);
    let f32s = DtypeTriple::new(Dtype::F32, Dtype::F32, Dtype::F32);
    let tc_routes_bf16 = ctx.route(TC, Op::Nn, bf, 1, 1, 1).is_some();
    let want_half = if tc_routes_bf16 { TC } else { Policy::Exact };
    assert_eq!(ctx.policy_for(Op::Nn, bf), want_half);
    assert_eq!(ctx.policy_for(Op::Nn, f32s), Policy::Exact);

    let xh = ctx.upload(&rng.vec::<bf16>(m * k)).unwrap();
    let wh = ctx.upload(&rng.vec::<bf16>(k * n)).unwrap();
    let mut yh = ctx.alloc::<bf16>(m * n).unwrap();
    let l = ctx
        .gemm(GemmRequest::new(
            Op::Nn,
            (m, n, k),
            xh.mat(k),
            wh.mat(n),
            yh.mat_mut(n),
        ))
        .unwrap();
    assert_eq!(l.policy, want_half);
    if let Some(info) = l.kernel.and_then(kernel) {
        let contract = if tc_routes_bf16 { "tc-k16" } else { "fma-k256" };
        assert_eq!(info.contract, contract, "{}", info.name);
    }
    let by_default = ctx.download(&yh).unwrap();
    // The same call naming the resolved policy gives the same bits.
    ctx.gemm(
        GemmRequest::new(Op::Nn, (m, n, k), xh.mat(k), wh.mat(n), yh.mat_mut(n))
            .with_policy(want_half),
    )
    .unwrap();
    assert_eq!(
        ctx.download(&yh)
            .unwrap()
            .iter()
            .map(|v| bits(*v))
            .collect::<Vec<_>>(),
        by_default.iter().map(|v| bits(*v)).collect::<Vec<_>>()
    );

    let xf = ctx.upload(&rng.vec::<f32>(m * k)).unwrap();
    let wf = ctx.upload(&rng.vec::<f32>(k * n)).unwrap();
    let mut yf = ctx.alloc::<f32>(m * n).unwrap();
    let l = ctx
        .gemm(GemmRequest::new(
            Op::Nn,
            (m, n, k),
            xf.mat(k),
            wf.mat(n),
            yf.mat_mut(n),
        ))
        .unwrap();
    assert_eq!(l.policy, Policy::Exact, "f32 never runs as TF32 by default");

    // TN writing bf16: no tensor-core route of its own, and TF32 may not take half inputs.
    let mut dw = ctx.alloc::<bf16>(m * n).unwrap();
    let l = ctx
        .gemm(
            GemmRequest::new(Op::Tn, (m, n, k), xh.mat(m), wh.mat(n), dw.mat_mut(n)).with_beta(1.0),
        )
        .unwrap();
    assert_eq!(l.policy, Policy::Exact);
    assert!(l.half_fallback);

    // A fixed default for every dtype, and back.
    ctx.set_policy(Policy::Exact);
    assert_eq!(ctx.policy_for(Op::Nn, bf), Policy::Exact);
    ctx.set_policy(DefaultPolicy::ByDtype);
    assert_eq!(ctx.policy_for(Op::Nn, bf), want_half);

    // A package of a call that took the default.
    struct Step<'a> {
        x: Mat<'a, bf16>,
        w: Mat<'a, bf16>,
        y: &'a mut DeviceBuffer<bf16>,
        dims: (usize, usize, usize),
    }
    impl Request for Step<'_> {
        fn run<O: Observer>(&mut self, ctx: &Context, obs: &mut O) -> Result<(), GemmError> {
            let req = GemmRequest::new(
                Op::Nn,
                self.dims,
                self.x,
                self.w,
                self.y.mat_mut(self.dims.1),
            );
            ctx.gemm_observed(req, obs).map(|_| ())
        }
    }
    let mut step = Step {
        x: xh.mat(k),
        w: wh.mat(n),
        y: &mut yh,
        dims: (m, n, k),
    };
    let manifest = ctx.record_manifest(&mut step, 4).unwrap();
    assert_eq!(manifest.records()[0].policy, want_half);
    let graph = ctx
        .prepare_package(&manifest, &mut step)
        .unwrap()
        .capture(&ctx)
        .unwrap();
    graph.replay(&ctx).unwrap();
    if tc_routes_bf16 {
        ctx.set_policy(Policy::Exact);
        assert!(matches!(
            graph.replay(&ctx),
            Err(PackageError::PolicyChanged {
                then: TC,
                now: Policy::Exact
            })
        ));
        ctx.set_policy(DefaultPolicy::ByDtype);
    }
    graph.replay(&ctx).unwrap();
    ctx.synchronize().unwrap();
    assert_eq!(
        ctx.download(&yh)
            .unwrap()
            .iter()
            .map(|v| bits(*v))
            .collect::<Vec<_>>(),
        by_default.iter().map(|v| bits(*v)).collect::<Vec<_>>()
    );
}

/// Every kernel of the tier that a route of the contract could name at these shapes (what
/// `gemm-aot tune` chooses among: the wgmma tiles, ping-pong among them, the decode and
/// cp.async kernels, clusters and K splits of the chunked contract) gives the routed kernel's
/// bits, with bias, and with beta for tn. The candidates are `KernelInfo::can_stand_in_for`'s;
/// one the shape does not fit (a K split's bounded K, a cluster the grid cannot take) is
/// skipped and printed, as the tuner skips it.
/// The plain-load kernels (a route's `unaligned` one) are compared by `contract_equivalence`.
/// With f32 operands (TF32, contracts tc-tf32-k8 and, at 520 x 768 x 8192 and 13 x 1000 x
/// 50000, tc-tf32-k8-c512) the wgmma kernels, which compute C^T = B^T A^T with B^T from
/// registers, are compared with the mma.sync ones; every route's plain-load `unaligned` kernel
/// too.
fn every_candidate_gives_the_routed_bits<A: Element, C: Element>(op: Op) {
    let ctx = context();
    let dtype = DtypeTriple::new(A::DTYPE, C::DTYPE, Dtype::F32);
    let beta = if op == Op::Tn { 1.0 } else { 0.0 };
    for (m, n, k) in [
        (1000usize, 2304usize, 768usize),
        (300, 4096, 1024),
        (77, 1000, 136),
        (520, 768, 8192),
        // Decode: the TMA decode kernels (16 rows a CTA) and the wgmma ones at a small m.
        (13, 3072, 1024),
        // A narrow output over a deep reduction 512 does not divide (98 chunks, the last partial):
        // the K splits' rounds, a last round some ranks sit out.
        (13, 1000, 50000),
        // More tiles than SMs for every candidate (288 of the largest, 256 x 128), m off the
        // tiles: every CTA of a persistent grid walks several tiles.
        (2100, 4096, 1024),
        // The chunked contract with more tiles than SMs (136 of 128 x 128) and an odd number
        // of chunks (9, the last partial): the overlapped fold's last chunk in its first set.
        (2100, 1000, 4600),
    ] {
        let Some(route) = tc_route(&ctx, op, dtype, (m as u64, n as u64, k as u64)) else {
            continue;
        };
        let routed_kernel = kernel(route.kernel).unwrap();
        let contract = routed_kernel.contract;
        let mut rng = Rng::fresh(&format!("candidates {op} {dtype} {m}x{n}x{k}"));
        let (a_len, lda) = (m * k, if op == Op::Tn { m } else { k });
        let (b_len, ldb) = (k * n, if op == Op::Nt { k } else { n });
        let a = ctx.upload(&rng.vec::<A>(a_len)).unwrap();
        let b = ctx.upload(&rng.vec::<A>(b_len)).unwrap();
        let bias = ctx.upload(&rng.vec::<C>(n)).unwrap();
        let c0: Vec<C> = rng.vec(m * n);
        let run = |on: Option<KernelId>| -> Option<(Vec<u32>, &'static str)> {
            let mut c = ctx.upload(&c0).unwrap();
            let req = GemmRequest::new(op, (m, n, k), a.mat(lda), b.mat(ldb), c.mat_mut(n))
                .with_bias(Some(bias.mat(n)))
                .with_beta(beta)
                .with_policy(TC);
            let launch = match on {
                None => ctx.gemm(req).unwrap(),
                Some(id) => match ctx.gemm_on_kernel(req, id) {
                    Ok(l) => l,
                    Err(e) => {
                        eprintln!("  {} skipped: {e}", name(Some(id)));
                        return None;
                    }
                },
            };
            let bits = ctx.download(&c).unwrap().into_iter().map(bits).collect();
            Some((bits, name(launch.kernel)))
        };
        let (want, routed) = run(None).unwrap();
        let mut compared = Vec::new();
        for k_info in ctx.kernels().tier_kernels(ctx.tier().id) {
            if !k_info.can_stand_in_for(routed_kernel, k as u64) {
                if k_info.can_stand_in_for(routed_kernel, 0) {
                    eprintln!(
                        "  {} skipped: takes k up to {}, this k is {k}",
                        k_info.name,
                        k_info.max_k.unwrap_or_default()
                    );
                }
                continue;
            }
            if let Some((got, ran)) = run(Some(k_info.id)) {
                let diff = got.iter().zip(&want).position(|(g, w)| g != w);
                assert!(
                    diff.is_none(),
                    "{op} {m}x{n}x{k}: {ran} differs from the routed {routed} at element {}",
                    diff.unwrap_or(0)
                );
                compared.push(ran);
            }
        }
        // The route's plain-load kernel: an implementation of the contract that shares no code
        // with the TMA kernels.
        if let Some(id) = route.unaligned {
            if let Some((got, ran)) = run(Some(id)) {
                let diff = got.iter().zip(&want).position(|(g, w)| g != w);
                assert!(
                    diff.is_none(),
                    "{op} {m}x{n}x{k}: the unaligned {ran} differs from the routed {routed} at element {}",
                    diff.unwrap_or(0)
                );
                compared.push(ran);
            }
        }
        assert!(
            compared.len() > 1,
            "{op} {m}x{n}x{k}: only {compared:?} ran"
        );
        eprintln!(
            "{op} {dtype} {m}x{n}x{k} ({contract}, routed {routed}): {} candidates give its bits: {compared:?}",
            compared.len()
        );
    }
}

#[test]
#[ignore = "needs a CUDA device"]
fn tc_every_candidate_gives_the_routed_bits_nn_bf16() {
    every_candidate_gives_the_routed_bits::<bf16, bf16>(Op::Nn);
}

#[test]
#[ignore = "needs a CUDA device"]
fn tc_every_candidate_gives_the_routed_bits_nt_bf16() {
    every_candidate_gives_the_routed_bits::<bf16, bf16>(Op::Nt);
}

#[test]
#[ignore = "needs a CUDA device"]
fn tc_every_candidate_gives_the_routed_bits_nn_tf32() {
    every_candidate_gives_the_routed_bits::<f32, f32>(Op::Nn);
}

#[test]
#[ignore = "needs a CUDA device"]
fn tc_every_candidate_gives_the_routed_bits_nt_tf32() {
    every_candidate_gives_the_routed_bits::<f32, f32>(Op::Nt);
}

#[test]
#[ignore = "needs a CUDA device"]
fn tc_every_candidate_gives_the_routed_bits_tn_tf32() {
    every_candidate_gives_the_routed_bits::<f32, f32>(Op::Tn);
}

#[test]
#[ignore = "needs a CUDA device"]
fn tc_every_candidate_gives_the_routed_bits_tn_f32() {
    every_candidate_gives_the_routed_bits::<bf16, f32>(Op::Tn);
}
