//! Packages and CUDA graphs on the GPU: a manifest from an eager run, a package of exactly its
//! launches, a captured graph read back node for node, replay bitwise equal to the eager run;
//! and every refusal, each followed by a correct eager launch on the same stream.

mod common;
use common::*;
use gemm_runtime::reference::{fma_k256, HostGemm};
use gemm_runtime::*;

const M: usize = 37;
const K: usize = 300;
const H: usize = 129;
const N: usize = 65;

/// `y = x · w` (one launch).
struct Single<'a> {
    x: Mat<'a, f32>,
    w: Mat<'a, f32>,
    y: &'a mut DeviceBuffer<f32>,
}

impl Request for Single<'_> {
    fn run<O: Observer>(&mut self, ctx: &Context, obs: &mut O) -> Result<(), GemmError> {
        let req = GemmRequest::new(Op::Nn, (M, H, K), self.x, self.w, self.y.mat_mut(H));
        ctx.gemm_observed(req, obs).map(|_| ())
    }
}

/// `h = x · w1; y = h · w2` (two launches).
struct TwoLayer<'a> {
    x: Mat<'a, f32>,
    w1: Mat<'a, f32>,
    w2: Mat<'a, f32>,
    h: &'a mut DeviceBuffer<f32>,
    y: &'a mut DeviceBuffer<f32>,
}

impl<'a> TwoLayer<'a> {
    fn new(
        (x, w1, w2): (
            &'a DeviceBuffer<f32>,
            &'a DeviceBuffer<f32>,
            &'a DeviceBuffer<f32>,
        ),
        h: &'a mut DeviceBuffer<f32>,
        y: &'a mut DeviceBuffer<f32>,
    ) -> Self {
        TwoLayer {
            x: x.mat(K),
            w1: w1.mat(H),
            w2: w2.mat(N),
            h,
            y,
        }
    }
}

impl Request for TwoLayer<'_> {
    fn run<O: Observer>(&mut self, ctx: &Context, obs: &mut O) -> Result<(), GemmError> {
        let first = GemmRequest::new(Op::Nn, (M, H, K), self.x, self.w1, self.h.mat_mut(H));
        ctx.gemm_observed(first, obs)?;
        let h = self.h.mat(H);
        let second = GemmRequest::new(Op::Nn, (M, N, H), h, self.w2, self.y.mat_mut(N));
        ctx.gemm_observed(second, obs).map(|_| ())
    }
}

struct Data {
    x: Vec<f32>,
    w1: Vec<f32>,
    w2: Vec<f32>,
}

fn data() -> Data {
    let mut rng = Rng::fresh("graph");
    Data {
        x: rng.vec(M * K),
        w1: rng.vec(K * H),
        w2: rng.vec(H * N),
    }
}

/// A correct eager launch on `ctx`'s stream, checked against the CPU model.
fn eager_still_works(ctx: &Context, d: &Data) {
    let x = ctx.upload(&d.x).unwrap();
    let w = ctx.upload(&d.w1).unwrap();
    let mut y = ctx.upload(&vec![poison::<f32>(); M * H]).unwrap();
    ctx.gemm(GemmRequest::new(
        Op::Nn,
        (M, H, K),
        x.mat(K),
        w.mat(H),
        y.mat_mut(H),
    ))
    .unwrap();
    let mut want = vec![0.0f32; M * H];
    fma_k256(
        &HostGemm {
            op: Op::Nn,
            m: M,
            n: H,
            k: K,
            lda: K,
            ldb: H,
            ldc: H,
            beta: 0.0,
        },
        &d.x,
        &d.w1,
        None,
        &mut want,
    );
    assert_eq!(
        ctx.download(&y).unwrap(),
        want,
        "eager launch after a refusal"
    );
}

fn bits_of(v: &[f32]) -> Vec<u32> {
    v.iter().map(|x| x.to_bits()).collect()
}

#[test]
#[ignore = "needs a CUDA device"]
fn single_and_multi_launch_requests_capture_and_replay_bitwise() {
    let ctx = context();
    // One launch a GEMM: the odd leading dimensions (129, 65 f32) would add the exact kernels'
    // repacks (gpu_repack covers those launches).
    ctx.set_repack_limit(0);
    let d = data();
    let (x, w1, w2) = (
        ctx.upload(&d.x).unwrap(),
        ctx.upload(&d.w1).unwrap(),
        ctx.upload(&d.w2).unwrap(),
    );
    let mut h = ctx.alloc::<f32>(M * H).unwrap();
    let mut y = ctx.alloc::<f32>(M * N).unwrap();

    // Single launch.
    let mut single = Single {
        x: x.mat(K),
        w: w1.mat(H),
        y: &mut h,
    };
    let manifest = ctx.record_manifest(&mut single, 4).unwrap();
    assert_eq!(manifest.records().len(), 1);
    let package = ctx.prepare_package(&manifest, &mut single).unwrap();
    assert_eq!(package.launches().len(), 1);
    let eager = ctx.download(single.y).unwrap();
    ctx.write(single.y, &vec![poison::<f32>(); M * H]).unwrap();
    let graph = package.capture(&ctx).unwrap();
    ctx.synchronize().unwrap();
    assert!(
        ctx.download(single.y).unwrap().iter().all(|v| v.is_nan()),
        "capture must not run kernels"
    );
    graph.replay(&ctx).unwrap();
    assert_eq!(bits_of(&ctx.download(single.y).unwrap()), bits_of(&eager));

    // Two launches.
    let mut two = TwoLayer::new((&x, &w1, &w2), &mut h, &mut y);
    let manifest = ctx.record_manifest(&mut two, 4).unwrap();
    assert_eq!(manifest.records().len(), 2);
    assert_ne!(
        manifest.records()[0].args_digest,
        manifest.records()[1].args_digest
    );
    let eager = ctx.download(two.y).unwrap();
    let package = ctx.prepare_package(&manifest, &mut two).unwrap();
    let graph = package.capture(&ctx).unwrap();
    ctx.write(two.y, &vec![poison::<f32>(); M * N]).unwrap();
    for _ in 0..3 {
        graph.replay(&ctx).unwrap();
    }
    assert_eq!(bits_of(&ctx.download(two.y).unwrap()), bits_of(&eager));
}

#[test]
#[ignore = "needs a CUDA device"]
fn every_refusal_is_its_own_error_and_the_stream_stays_usable() {
    let ctx = context();
    // Counts of one launch a GEMM, as above.
    ctx.set_repack_limit(0);
    let d = data();
    let (x, w1, w2) = (
        ctx.upload(&d.x).unwrap(),
        ctx.upload(&d.w1).unwrap(),
        ctx.upload(&d.w2).unwrap(),
    );
    let mut h = ctx.alloc::<f32>(M * H).unwrap();
    let mut y = ctx.alloc::<f32>(M * N).unwrap();
    let mut seen = Vec::new();
    let mut refused = |what: &str, r: Result<(), PackageError>, ok: fn(&PackageError) -> bool| {
        match r {
            Err(e) if ok(&e) => seen.push(format!("{what}: {e}")),
            other => panic!("{what}: expected a specific refusal, got {other:?}"),
        }
        eager_still_works(&ctx, &d);
    };

    // Another context, another stream.
    let mut single = Single {
        x: x.mat(K),
        w: w1.mat(H),
        y: &mut h,
    };
    let manifest = ctx.record_manifest(&mut single, 1).unwrap();
    let package = ctx.prepare_package(&manifest, &mut single).unwrap();
    let other = context();
    refused(
        "another context",
        package.capture(&other).map(|_| ()),
        |e| matches!(e, PackageError::WrongContext),
    );
    let side = ctx.new_stream().unwrap();
    refused("another stream", package.capture(&side).map(|_| ()), |e| {
        matches!(e, PackageError::WrongStream)
    });

    // Mode and policy changed after capture: replay refused.
    let graph = package.capture(&ctx).unwrap();
    ctx.set_mode(Mode::CublasFast);
    let r = graph.replay(&ctx);
    ctx.set_mode(Mode::Deterministic);
    refused("mode changed", r, |e| {
        matches!(e, PackageError::ModeChanged { .. })
    });
    ctx.set_policy(Policy::TensorCore);
    let r = graph.replay(&ctx);
    ctx.set_policy(Policy::Exact);
    refused("policy changed", r, |e| {
        matches!(e, PackageError::PolicyChanged { .. })
    });

    // Capacity not exact, both ways.
    let mut two = TwoLayer::new((&x, &w1, &w2), &mut h, &mut y);
    let manifest_two = ctx.record_manifest(&mut two, 2).unwrap();
    let mut single = Single {
        x: x.mat(K),
        w: w1.mat(H),
        y: &mut h,
    };
    refused(
        "fewer launches",
        ctx.prepare_package(&manifest_two, &mut single).map(|_| ()),
        |e| {
            matches!(
                e,
                PackageError::CountMismatch {
                    recorded: 2,
                    prepared: 1
                }
            )
        },
    );
    let mut two = TwoLayer::new((&x, &w1, &w2), &mut h, &mut y);
    refused(
        "more launches",
        ctx.prepare_package(&manifest, &mut two).map(|_| ()),
        |e| {
            matches!(
                e,
                PackageError::CountMismatch {
                    recorded: 1,
                    prepared: 2
                }
            )
        },
    );
    // A recorder that is too small refuses before launching.
    let mut two = TwoLayer::new((&x, &w1, &w2), &mut h, &mut y);
    refused(
        "recorder full",
        ctx.record_manifest(&mut two, 1).map(|_| ()),
        |e| {
            matches!(
                e,
                PackageError::Gemm(GemmError::ObserverFull {
                    capacity: 1,
                    needed: 2
                })
            )
        },
    );

    // A graph holding a node the package did not prepare.
    let mut two = TwoLayer::new((&x, &w1, &w2), &mut h, &mut y);
    let package_two = ctx.prepare_package(&manifest_two, &mut two).unwrap();
    let graph_two = package_two.capture(&ctx).unwrap();
    refused(
        "extra node",
        package.verify_graph(&ctx, graph_two.graph()),
        |e| matches!(e, PackageError::GraphMismatch { node: 1, .. }),
    );
    refused(
        "missing node",
        package_two.verify_graph(&ctx, graph.graph()),
        |e| matches!(e, PackageError::GraphMismatch { node: 1, .. }),
    );

    // Argument bytes changed between manifest and package (another offset into x; x is
    // uploaded with one element to spare so both views are in bounds).
    let mut padded_x = d.x.clone();
    padded_x.push(1.0);
    let padded_x = ctx.upload(&padded_x).unwrap();
    let mut at_zero = Single {
        x: padded_x.mat_at(0, K),
        w: w1.mat(H),
        y: &mut h,
    };
    let manifest_padded = ctx.record_manifest(&mut at_zero, 1).unwrap();
    let mut shifted = Single {
        x: padded_x.mat_at(1, K),
        w: w1.mat(H),
        y: &mut h,
    };
    let r = ctx
        .prepare_package(&manifest_padded, &mut shifted)
        .map(|_| ());
    refused("argument bytes", r, |e| {
        matches!(
            e,
            PackageError::RecordMismatch {
                what: "the argument bytes",
                ..
            }
        )
    });

    // An allocation freed, and one freed and registered again at the same address.
    let ext = ctx
        .register_external::<f32>(x.span().base(), M * K)
        .unwrap();
    let mut via_ext = Single {
        x: ext.mat_at(0, K),
        w: w1.mat(H),
        y: &mut h,
    };
    let manifest_ext = ctx.record_manifest(&mut via_ext, 1).unwrap();
    let package_ext = ctx.prepare_package(&manifest_ext, &mut via_ext).unwrap();
    let graph_ext = package_ext.capture(&ctx).unwrap();
    graph_ext.replay(&ctx).unwrap();
    ctx.unregister(ext);
    refused("freed", graph_ext.replay(&ctx), |e| {
        matches!(e, PackageError::AllocationChanged { .. })
    });
    let again = ctx
        .register_external::<f32>(x.span().base(), M * K)
        .unwrap();
    assert_eq!(again.span().base(), ext.span().base());
    refused(
        "replaced at the same address",
        graph_ext.replay(&ctx),
        |e| matches!(e, PackageError::AllocationChanged { .. }),
    );
    // A runtime-owned output buffer dropped (freed) after capture.
    let mut out = ctx.alloc::<f32>(M * H).unwrap();
    let mut into_out = Single {
        x: x.mat(K),
        w: w1.mat(H),
        y: &mut out,
    };
    let manifest_out = ctx.record_manifest(&mut into_out, 1).unwrap();
    let graph_out = ctx
        .prepare_package(&manifest_out, &mut into_out)
        .unwrap()
        .capture(&ctx)
        .unwrap();
    drop(out);
    refused("buffer dropped", graph_out.replay(&ctx), |e| {
        matches!(e, PackageError::AllocationChanged { .. })
    });

    for line in &seen {
        eprintln!("refused: {line}");
    }
    assert_eq!(seen.len(), 13);
}

const HK: usize = 300;
const HN: usize = 65;
const HM_MAX: usize = 96;

/// TN in bf16 writing bf16 with a bias and beta = 1: no route serves it, so it runs as the half
/// fallback: four upcasts (A, B, bias, C), the f32 GEMM, one downcast.
struct HalfTn<'a> {
    m: usize,
    a: Mat<'a, bf16>,
    b: Mat<'a, bf16>,
    bias: Mat<'a, bf16>,
    c: &'a mut DeviceBuffer<bf16>,
}

impl Request for HalfTn<'_> {
    fn run<O: Observer>(&mut self, ctx: &Context, obs: &mut O) -> Result<(), GemmError> {
        let req = GemmRequest::new(Op::Tn, (self.m, HN, HK), self.a, self.b, self.c.mat_mut(HN))
            .with_bias(Some(self.bias))
            .with_beta(1.0);
        ctx.gemm_observed(req, obs).map(|_| ())
    }
}

fn bits16(v: &[bf16]) -> Vec<u16> {
    v.iter().map(|x| x.to_bits()).collect()
}

#[test]
#[ignore = "needs a CUDA device"]
fn half_fallback_packages_as_upcast_gemm_downcast_and_freezes_its_scratch() {
    let ctx = context();
    let d = data();
    let mut rng = Rng::fresh("graph half fallback");
    let a_host: Vec<bf16> = rng.vec(HK * HM_MAX);
    let b_host: Vec<bf16> = rng.vec(HK * HN);
    let bias_host: Vec<bf16> = rng.vec(HN);
    let c0: Vec<bf16> = rng.vec(HM_MAX * HN);
    let (a, b, bias) = (
        ctx.upload(&a_host).unwrap(),
        ctx.upload(&b_host).unwrap(),
        ctx.upload(&bias_host).unwrap(),
    );
    let mut c = ctx.upload(&c0).unwrap();
    let small = 40;

    // Eager run recorded: the six launches in order, with their kinds.
    let mut req = HalfTn {
        m: small,
        a: a.mat(HM_MAX),
        b: b.mat(HN),
        bias: bias.mat(HN),
        c: &mut c,
    };
    let manifest = ctx.record_manifest(&mut req, 6).unwrap();
    let kinds: Vec<LaunchKind> = manifest.records().iter().map(|r| r.kind).collect();
    use LaunchKind::*;
    assert_eq!(
        kinds,
        [
            InputUpcast,
            InputUpcast,
            InputUpcast,
            InputUpcast,
            Gemm,
            OutputDowncast
        ]
    );
    for r in manifest.records() {
        assert_eq!(r.logical, (Dtype::Bf16, Dtype::Bf16));
        assert_eq!(r.shape, (small as u64, HN as u64, HK as u64));
    }
    assert_eq!(manifest.records()[0].execution, (Dtype::Bf16, Dtype::F32));
    assert_eq!(manifest.records()[4].execution, (Dtype::F32, Dtype::F32));
    assert_eq!(manifest.records()[5].execution, (Dtype::F32, Dtype::Bf16));
    let eager = ctx.download(req.c).unwrap();

    // The eager bits are the CPU model's.
    let mut want = c0[..small * HN].to_vec();
    fma_k256(
        &HostGemm {
            op: Op::Tn,
            m: small,
            n: HN,
            k: HK,
            lda: HM_MAX,
            ldb: HN,
            ldc: HN,
            beta: 1.0,
        },
        &a_host,
        &b_host,
        Some(&bias_host),
        &mut want,
    );
    assert_eq!(
        bits16(&eager[..small * HN]),
        bits16(&want),
        "eager fallback"
    );

    // Package, capture (node for node), replay from the same C: the same bits.
    let package = ctx.prepare_package(&manifest, &mut req).unwrap();
    assert_eq!(package.launches().len(), 6);
    let graph = package.capture(&ctx).unwrap();
    ctx.write(req.c, &c0).unwrap();
    graph.replay(&ctx).unwrap();
    assert_eq!(
        bits16(&ctx.download(req.c).unwrap()),
        bits16(&eager),
        "replay"
    );

    // A graph of the same fallback with A one column further on differs in its first node, the
    // upcast of A: same launch configuration, other argument bytes.
    let mut shifted = HalfTn {
        m: small,
        a: a.mat_at(1, HM_MAX),
        b: b.mat(HN),
        bias: bias.mat(HN),
        c: req.c,
    };
    let manifest_shifted = ctx.record_manifest(&mut shifted, 6).unwrap();
    let other = ctx
        .prepare_package(&manifest_shifted, &mut shifted)
        .unwrap()
        .capture(&ctx)
        .unwrap();
    match package.verify_graph(&ctx, other.graph()) {
        Err(PackageError::GraphMismatch { node: 0, what }) => {
            assert!(what.contains("argument bytes"), "{what}");
            eprintln!("refused: conversion node changed: graph node 0: {what}");
        }
        r => panic!("a changed conversion node: expected GraphMismatch at node 0, got {r:?}"),
    }
    drop(other);
    let req = HalfTn {
        m: small,
        a: a.mat(HM_MAX),
        b: b.mat(HN),
        bias: bias.mat(HN),
        c: shifted.c,
    };

    // A larger request would have to grow the scratch the graph points into: refused before
    // anything runs, eagerly and when packaging; C untouched.
    let before = ctx.download(req.c).unwrap();
    let mut large = HalfTn {
        m: HM_MAX,
        a: a.mat(HM_MAX),
        b: b.mat(HN),
        bias: bias.mat(HN),
        c: req.c,
    };
    match ctx.gemm(
        GemmRequest::new(
            Op::Tn,
            (HM_MAX, HN, HK),
            large.a,
            large.b,
            large.c.mat_mut(HN),
        )
        .with_bias(Some(large.bias))
        .with_beta(1.0),
    ) {
        Err(GemmError::ScratchFrozen { needed, frozen }) => {
            assert!(needed > frozen);
            eprintln!("refused: {}", GemmError::ScratchFrozen { needed, frozen });
        }
        other => panic!("growing frozen scratch: expected ScratchFrozen, got {other:?}"),
    }
    ctx.synchronize().unwrap();
    assert_eq!(bits16(&ctx.download(large.c).unwrap()), bits16(&before));
    eager_still_works(&ctx, &d);
    let manifest_large = Manifest::clone(&manifest);
    match ctx.prepare_package(&manifest_large, &mut large) {
        Err(PackageError::Gemm(GemmError::ScratchFrozen { .. })) => {}
        other => panic!("packaging with frozen scratch: expected ScratchFrozen, got {other:?}"),
    }
    eager_still_works(&ctx, &d);
    // The graph still replays correctly, and once it is dropped the scratch may grow; the
    // old package then points at a freed scratch generation and is refused.
    ctx.write(large.c, &c0).unwrap();
    graph.replay(&ctx).unwrap();
    assert_eq!(bits16(&ctx.download(large.c).unwrap()), bits16(&eager));
    drop(graph);
    ctx.record_manifest(&mut large, 6).unwrap();
    match package.capture(&ctx) {
        Err(PackageError::AllocationChanged { .. }) => {}
        other => panic!(
            "capture after the scratch moved: expected AllocationChanged, got {:?}",
            other.map(|_| ())
        ),
    }
    eager_still_works(&ctx, &d);
}
