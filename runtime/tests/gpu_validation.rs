//! Validation before enqueue: every bad call returns its typed error with the offending value,
//! and the outputs, filled with a sentinel first, are untouched afterwards. Also: the
//! deterministic mode never crosses into cuBLAS; the vendor modes do, and are counted.

mod common;
use common::*;
use gemm_runtime::*;

const SENTINEL: f32 = 12345.0;

#[test]
#[ignore = "needs a CUDA device"]
fn bad_calls_are_refused_and_write_nothing() {
    let ctx = context();
    let mut rng = Rng::fresh("validation");
    let (m, n, k) = (16, 32, 24);
    let a = ctx.upload(&rng.vec::<f32>(m * k)).unwrap();
    let b = ctx.upload(&rng.vec::<f32>(k * n)).unwrap();
    let mut c = ctx.upload(&vec![SENTINEL; m * n]).unwrap();
    let mut c_half = ctx.upload(&vec![bf16::from_f32(SENTINEL); m * n]).unwrap();
    let a_half = ctx.upload(&rng.vec::<bf16>(m * k)).unwrap();
    let b_half = ctx.upload(&rng.vec::<bf16>(k * n)).unwrap();
    let nn =
        |a: Mat<'_, f32>, b: Mat<'_, f32>, c: MatMut<'_, f32>, (m, n, k): (usize, usize, usize)| {
            ctx.gemm(GemmRequest::new(Op::Nn, (m, n, k), a, b, c))
        };
    let mut seen = Vec::new();
    let mut expect = |what: &str, r: Result<Launch, GemmError>, ok: fn(&GemmError) -> bool| match r
    {
        Err(e) if ok(&e) => seen.push(format!("{what}: {e}")),
        other => panic!("{what}: expected a specific error, got {other:?}"),
    };

    // Null pointer (an external span at address 0).
    let null = ctx.register_external::<f32>(0, m * k).unwrap();
    expect(
        "null A",
        nn(null.mat_at(0, k), b.mat(n), c.mat_mut(n), (m, n, k)),
        |e| {
            matches!(
                e,
                GemmError::NullPointer {
                    operand: Operand::A
                }
            )
        },
    );
    // Misaligned pointer (one byte into an f32 allocation).
    let mis = ctx
        .register_external::<f32>(b.span().base() + 1, k * n - 1)
        .unwrap();
    expect(
        "misaligned B",
        nn(a.mat(k), mis.mat_at(0, n), c.mat_mut(n), (m, n - 1, k)),
        |e| {
            matches!(
                e,
                GemmError::Misaligned {
                    operand: Operand::B,
                    align: 4,
                    ..
                }
            )
        },
    );
    // Too short for the shape: k + 1 rows of B do not fit.
    expect(
        "B too short",
        nn(a.mat(k + 1), b.mat(n), c.mat_mut(n), (m / 2, n, k + 1)),
        |e| {
            matches!(
                e,
                GemmError::OutOfBounds {
                    operand: Operand::B,
                    ..
                }
            )
        },
    );
    // Offset past the end.
    expect(
        "A offset",
        nn(a.mat_at(1, k), b.mat(n), c.mat_mut(n), (m, n, k)),
        |e| {
            matches!(
                e,
                GemmError::OutOfBounds {
                    operand: Operand::A,
                    offset: 4,
                    ..
                }
            )
        },
    );
    // Leading dimension shorter than a row.
    expect(
        "ld too small",
        nn(a.mat(k - 1), b.mat(n), c.mat_mut(n), (m, n, k)),
        |e| {
            matches!(
                e,
                GemmError::LeadingDimension {
                    operand: Operand::A,
                    ld: 23,
                    min: 24
                }
            )
        },
    );
    // Output overlapping an input: C inside A's allocation (12 rows of C fill A's m * k).
    let alias = ctx
        .register_external::<f32>(a.span().base(), m * k)
        .unwrap();
    let m_alias = m * k / n;
    expect(
        "overlap",
        nn(a.mat(k), b.mat(n), alias.mat_mut_at(0, n), (m_alias, n, k)),
        |e| {
            matches!(
                e,
                GemmError::Overlap {
                    operand: Operand::A,
                    ..
                }
            )
        },
    );
    // Dimensions overflowing i32.
    expect(
        "m overflow",
        nn(a.mat(k), b.mat(n), c.mat_mut(n), (1 << 31, n, k)),
        |e| {
            matches!(
                e,
                GemmError::DimensionOverflow {
                    what: "m",
                    value: 2147483648,
                    ..
                }
            )
        },
    );
    // A freed allocation (external span unregistered), and one replaced at the same address.
    let ext = ctx
        .register_external::<f32>(a.span().base(), m * k)
        .unwrap();
    let stale = ext;
    ctx.unregister(ext);
    expect(
        "freed",
        nn(stale.mat_at(0, k), b.mat(n), c.mat_mut(n), (m, n, k)),
        |e| {
            matches!(
                e,
                GemmError::StaleAllocation {
                    operand: Operand::A,
                    ..
                }
            )
        },
    );
    let again = ctx
        .register_external::<f32>(a.span().base(), m * k)
        .unwrap();
    assert_eq!(again.span().base(), stale.span().base());
    assert!(again.span().generation() > stale.span().generation());
    expect(
        "replaced",
        nn(stale.mat_at(0, k), b.mat(n), c.mat_mut(n), (m, n, k)),
        |e| {
            matches!(
                e,
                GemmError::StaleAllocation {
                    operand: Operand::A,
                    ..
                }
            )
        },
    );
    // A buffer of another context.
    let other = context();
    let foreign = other.upload(&rng.vec::<f32>(m * k)).unwrap();
    expect(
        "foreign",
        nn(foreign.mat(k), b.mat(n), c.mat_mut(n), (m, n, k)),
        |e| {
            matches!(
                e,
                GemmError::ForeignAllocation {
                    operand: Operand::A
                }
            )
        },
    );
    // A (policy, op, dtype) without a route: TN writing bf16 under the tensor-core policy. Its
    // f32 route is TF32 (contract tc-tf32-k8, defined for f32 inputs only), so the half
    // fallback may not widen into it.
    ctx.set_policy(Policy::TensorCore);
    let r = ctx.gemm(
        GemmRequest::new(
            Op::Tn,
            (m, n, k),
            a_half.mat(m),
            b_half.mat(n),
            c_half.mat_mut(n),
        )
        .with_beta(1.0),
    );
    ctx.set_policy(Policy::Exact);
    expect("no route", r, |e| {
        matches!(
            e,
            GemmError::NoRoute {
                policy: Policy::TensorCore,
                ..
            }
        )
    });
    // The half fallback (TN writing bf16) validates like any call: A one row short.
    expect(
        "half fallback out of bounds",
        ctx.gemm(
            GemmRequest::new(
                Op::Tn,
                (m, n, k + 1),
                a_half.mat(m),
                b_half.mat(n),
                c_half.mat_mut(n),
            )
            .with_beta(1.0),
        ),
        |e| {
            matches!(
                e,
                GemmError::OutOfBounds {
                    operand: Operand::A,
                    ..
                }
            )
        },
    );
    // Unsupported in a vendor mode: a bias.
    ctx.set_mode(Mode::CublasFast);
    let bias = ctx.upload(&rng.vec::<f32>(n)).unwrap();
    expect(
        "vendor bias",
        ctx.linear(
            a.mat(k),
            b.mat(n),
            Some(bias.mat(n)),
            c.mat_mut(n),
            (m, n, k),
        ),
        |e| matches!(e, GemmError::VendorUnsupported(_)),
    );
    ctx.set_mode(Mode::Deterministic);

    ctx.synchronize().unwrap();
    assert!(
        ctx.download(&c).unwrap().iter().all(|&v| v == SENTINEL),
        "C was written"
    );
    // The bf16 sentinel is SENTINEL rounded to bf16.
    let half_sentinel = bf16::from_f32(SENTINEL);
    assert!(
        ctx.download(&c_half)
            .unwrap()
            .iter()
            .all(|&v| v == half_sentinel),
        "bf16 C was written"
    );
    for line in &seen {
        eprintln!("refused: {line}");
    }
    assert_eq!(seen.len(), 13);
    // A correct call still works afterwards, on the same stream.
    nn(a.mat(k), b.mat(n), c.mat_mut(n), (m, n, k)).unwrap();
    assert!(ctx.download(&c).unwrap().iter().all(|&v| v != SENTINEL));
}

#[test]
#[ignore = "needs a CUDA device"]
fn only_the_vendor_modes_call_cublas() {
    let ctx = context();
    let mut rng = Rng::fresh("vendor");
    let (m, n, k) = (64, 96, 128);
    let a_host: Vec<f32> = rng.vec(m * k);
    let b_host: Vec<f32> = rng.vec(k * n);
    let (a, b) = (ctx.upload(&a_host).unwrap(), ctx.upload(&b_host).unwrap());
    let mut c = ctx.alloc::<f32>(m * n).unwrap();
    let before = vendor_calls();
    for op in [Op::Nn, Op::Nt, Op::Tn] {
        let (lda, ldb) = match op {
            Op::Nn => (k, n),
            Op::Nt => (k, k),
            Op::Tn => (m, n),
        };
        let (mm, nn, kk) = if op == Op::Nt {
            (m, n.min(k), k)
        } else {
            (m, n, k)
        };
        let r = ctx
            .gemm(GemmRequest::new(
                op,
                (mm, nn, kk),
                a.mat(lda),
                b.mat(ldb),
                c.mat_mut(n),
            ))
            .unwrap();
        assert!(!r.vendor && r.kernel.is_some());
    }
    assert_eq!(vendor_calls(), before, "Deterministic mode called cuBLAS");

    // Pedantic cuBLAS agrees with the exact kernel to f32 rounding, and is counted.
    ctx.set_mode(Mode::CublasPedantic);
    let r = ctx
        .linear(
            a.mat(k),
            b.mat(n),
            None::<Mat<'_, f32>>,
            c.mat_mut(n),
            (m, n, k),
        )
        .unwrap();
    assert!(r.vendor);
    assert_eq!(vendor_calls(), before + 1);
    let vendor = ctx.download(&c).unwrap();
    ctx.set_mode(Mode::Deterministic);
    ctx.linear(
        a.mat(k),
        b.mat(n),
        None::<Mat<'_, f32>>,
        c.mat_mut(n),
        (m, n, k),
    )
    .unwrap();
    let exact = ctx.download(&c).unwrap();
    let worst = vendor
        .iter()
        .zip(&exact)
        .map(|(v, e)| (v - e).abs())
        .fold(0.0f32, f32::max);
    assert!(worst < 1e-4, "cuBLAS pedantic and exact differ by {worst}");
    eprintln!(
        "vendor calls counted: {}; worst |cublas - exact| = {worst:e}",
        vendor_calls() - before
    );
}
