//! The raw-pointer calls the fronts make, on the GPU: `Context::gemm_raw` (and
//! `gemm_raw_in_bounds`, without the driver's bounds queries) gives the bits of
//! `Context::gemm` on the same memory, on the context's stream and on a borrowed one;
//! `gemm_raw_batch` of a strided batch gives each entry's bits; refusals enqueue nothing and
//! leave the registry as it was.

mod common;
use common::*;
use gemm_runtime::*;

/// Whether two outputs are bit for bit the same.
fn same_bits(got: &[f32], want: &[f32]) -> bool {
    got.len() == want.len()
        && got
            .iter()
            .zip(want)
            .all(|(a, b)| a.to_bits() == b.to_bits())
}

fn raw(op: Op, (m, n, k): (usize, usize, usize), a: u64, b: u64, c: u64) -> RawGemm {
    RawGemm {
        op,
        m,
        n,
        k,
        ab: Dtype::Bf16,
        c_dtype: Dtype::F32,
        a: RawMatrix { ptr: a, ld: k },
        b: RawMatrix {
            ptr: b,
            ld: if op == Op::Nt { k } else { n },
        },
        c: RawMatrix { ptr: c, ld: n },
        bias: None,
        beta: 0.0,
        policy: Some(Policy::TensorCore),
        mode: None,
    }
}

#[test]
#[ignore = "needs a CUDA device"]
fn raw_calls_give_the_bits_of_registered_calls_on_any_stream() {
    let ctx = device_context();
    let mut rng = Rng::fresh("gpu_raw");
    for (op, (m, n, k)) in [(Op::Nn, (33, 1000, 4096)), (Op::Nt, (7, 1536, 1024))] {
        let x = ctx.upload(&rng.vec::<bf16>(m * k)).unwrap();
        let w = ctx.upload(&rng.vec::<bf16>(n * k)).unwrap();
        let mut want = ctx.upload(&vec![poison::<f32>(); m * n]).unwrap();
        let ldb = if op == Op::Nt { k } else { n };
        ctx.gemm(
            GemmRequest::new(op, (m, n, k), x.mat(k), w.mat(ldb), want.mat_mut(n))
                .with_policy(Policy::TensorCore),
        )
        .unwrap();
        let want: Vec<f32> = ctx.download(&want).unwrap();
        // The context's own stream.
        let out = ctx.upload(&vec![poison::<f32>(); m * n]).unwrap();
        let live = ctx.live_allocations(); // `out` included: only the call's own spans must go
        let call = raw(
            op,
            (m, n, k),
            x.span().base(),
            w.span().base(),
            out.span().base(),
        );
        ctx.gemm_raw(&call).unwrap();
        // Registered afresh on every call, the raw pointers still find the maps their first
        // call encoded (cached by address and geometry).
        let maps = ctx.cached_tensor_maps();
        ctx.gemm_raw(&call).unwrap();
        assert_eq!(
            ctx.cached_tensor_maps(),
            maps,
            "{op}: a repeated raw call encoded its tensor maps again"
        );
        let got: Vec<f32> = ctx.download(&out).unwrap();
        assert!(same_bits(&got, &want), "{op}: raw differs");
        assert_eq!(
            ctx.live_allocations(),
            live,
            "a raw call left a registration behind"
        );
        // Without the driver's bounds queries (the torch fast path's call): the same bits.
        let vouched = ctx.upload(&vec![poison::<f32>(); m * n]).unwrap();
        let live = ctx.live_allocations();
        let call3 = RawGemm {
            c: RawMatrix {
                ptr: vouched.span().base(),
                ld: n,
            },
            ..call
        };
        // SAFETY: every operand is a live buffer of this context, as long as the call reads.
        unsafe { ctx.gemm_raw_in_bounds(&call3) }.unwrap();
        let got3: Vec<f32> = ctx.download(&vouched).unwrap();
        assert!(same_bits(&got3, &want), "{op}: gemm_raw_in_bounds differs");
        assert_eq!(
            ctx.live_allocations(),
            live,
            "gemm_raw_in_bounds left a registration"
        );
        // Another stream, borrowed by handle as a foreign library's would be.
        let owner = ctx.new_stream().unwrap();
        // SAFETY: `owner` keeps the stream alive for the borrowed context's life.
        let borrowed = unsafe { ctx.on_borrowed_stream(owner.raw_stream()) };
        let out2 = ctx.upload(&vec![poison::<f32>(); m * n]).unwrap();
        let call2 = RawGemm {
            c: RawMatrix {
                ptr: out2.span().base(),
                ld: n,
            },
            ..call
        };
        ctx.synchronize().unwrap(); // the uploads ran on ctx's stream
        borrowed.gemm_raw(&call2).unwrap();
        owner.synchronize().unwrap();
        let got2: Vec<f32> = ctx.download(&out2).unwrap();
        assert!(same_bits(&got2, &want), "{op}: borrowed stream differs");
        assert_eq!(borrowed.raw_stream(), owner.raw_stream());
        eprintln!(
            "{op} {m}x{n}x{k}: raw and borrowed-stream calls give the registered call's bits"
        );
    }
}

#[test]
#[ignore = "needs a CUDA device"]
fn a_strided_batch_gives_each_entry_its_bits_and_refusals_enqueue_nothing() {
    let ctx = device_context();
    let mut rng = Rng::fresh("gpu_raw_batch");
    let (count, m, n, k) = (5, 24, 256, 512);
    let x = ctx.upload(&rng.vec::<bf16>(count * m * k)).unwrap();
    let w = ctx.upload(&rng.vec::<bf16>(k * n)).unwrap(); // shared by every entry
    let out = ctx.upload(&vec![poison::<f32>(); count * m * n]).unwrap();
    let first = raw(
        Op::Nn,
        (m, n, k),
        x.span().base(),
        w.span().base(),
        out.span().base(),
    );
    let calls = first
        .strided(count, ((m * k) as u64, 0, (m * n) as u64))
        .unwrap();
    ctx.gemm_raw_batch(&calls).unwrap();
    let all: Vec<f32> = ctx.download(&out).unwrap();
    for (i, call) in calls.iter().enumerate() {
        let one = ctx.upload(&vec![poison::<f32>(); m * n]).unwrap();
        ctx.gemm_raw(&RawGemm {
            c: RawMatrix {
                ptr: one.span().base(),
                ld: n,
            },
            ..*call
        })
        .unwrap();
        let one: Vec<f32> = ctx.download(&one).unwrap();
        let entry = &all[i * m * n..(i + 1) * m * n];
        assert!(
            one.iter()
                .zip(entry)
                .all(|(a, b)| a.to_bits() == b.to_bits()),
            "entry {i}"
        );
    }
    // Entries writing over each other: refused before anything runs.
    let sentinel = ctx.upload(&vec![poison::<f32>(); count * m * n]).unwrap();
    let over = RawGemm {
        c: RawMatrix {
            ptr: sentinel.span().base(),
            ld: n,
        },
        ..first
    }
    .strided(count, ((m * k) as u64, 0, 0))
    .unwrap();
    match ctx.gemm_raw_batch(&over) {
        Err(BatchFailure {
            entry: 1,
            error: GemmError::Overlap { .. },
        }) => {}
        other => panic!("expected entry 1's overlap, got {other:?}"),
    }
    let untouched: Vec<f32> = ctx.download(&sentinel).unwrap();
    assert!(
        untouched.iter().all(|v| v.is_nan()),
        "a refused batch wrote its output"
    );
    eprintln!("strided batch of {count}: each entry's bits; overlapping outputs refused before any launch");
}

/// One strided batch case: the layout, each entry's shape, entries, bias and beta, the output
/// type (bf16 or f32), and A's leading dimension beyond k (an odd one exercises any alignment).
struct BatchCase {
    op: Op,
    shape: (usize, usize, usize),
    count: usize,
    bias: bool,
    beta: f32,
    lda_pad: usize,
}

fn batched_case<C: Element>(ctx: &Context, rng: &mut Rng, case: &BatchCase) {
    let BatchCase {
        op,
        shape: (m, n, k),
        count,
        ..
    } = *case;
    // A as stored: [m, k] (nn, nt) or [k, m] (tn), rows lda_pad elements longer.
    let (a_rows, a_cols) = if op == Op::Tn { (k, m) } else { (m, k) };
    let lda = a_cols + case.lda_pad;
    let ldb = if op == Op::Nt { k } else { n };
    let (sa, sb, sc) = (a_rows * lda, n * k, m * n);
    let x = ctx.upload(&rng.vec::<bf16>(count * sa)).unwrap();
    let w = ctx.upload(&rng.vec::<bf16>(count * sb)).unwrap();
    let bias = ctx.upload(&rng.vec::<C>(n)).unwrap();
    let start = rng.vec::<C>(count * sc);
    let out = ctx.upload(&start).unwrap();
    let call = RawGemm {
        op,
        m,
        n,
        k,
        ab: Dtype::Bf16,
        c_dtype: C::DTYPE,
        a: RawMatrix {
            ptr: x.span().base(),
            ld: lda,
        },
        b: RawMatrix {
            ptr: w.span().base(),
            ld: ldb,
        },
        c: RawMatrix {
            ptr: out.span().base(),
            ld: n,
        },
        bias: case.bias.then(|| bias.span().base()),
        beta: case.beta,
        policy: Some(Policy::TensorCore),
        mode: None,
    };
    let calls = call
        .strided(count, (sa as u64, sb as u64, sc as u64))
        .unwrap();
    let launch = ctx.gemm_raw_batch(&calls).unwrap().unwrap();
    let kernel = ctx.kernels().kernel(launch.kernel.unwrap()).unwrap();
    assert!(kernel.batch, "{} is no batch kernel", kernel.name);
    // Where the tier has a batch kernel reading tensor maps for this contract, op and dtype
    // and TMA takes every entry's A and B (their rows and batch strides whole 16 bytes), the
    // batch runs on it (3-D maps; C through its map too where TMA takes it, else stored
    // directly); otherwise on one reading its operands as stored.
    let whole = |elems: usize| (elems * 2).is_multiple_of(16);
    let tma_takes = whole(lda) && whole(ldb) && whole(sa) && whole(sb);
    let tma_kernel = ctx.kernels().kernels().iter().any(|k| {
        k.batch
            && !k.tensor_maps.is_empty()
            && k.tier == kernel.tier
            && (k.contract, k.op, k.dtype) == (kernel.contract, kernel.op, kernel.dtype)
    });
    assert_eq!(
        !kernel.tensor_maps.is_empty(),
        tma_kernel && tma_takes,
        "{op} {m}x{n}x{k} lda {lda}: ran {}",
        kernel.name
    );
    assert_eq!(
        launch.grid.2 as usize,
        count.min(65_535),
        "one launch (or one a 65535 entries) for the batch"
    );
    let all: Vec<C> = ctx.download(&out).unwrap();
    // A TMA batch kernel also runs one GEMM (as the tuner or a route would run it: 3-D maps
    // of one entry): entry 0 alone on it gives the batch's entry 0.
    if !kernel.tensor_maps.is_empty() {
        let mut one = ctx.upload(&start[..sc]).unwrap();
        let req = GemmRequest::new(op, (m, n, k), x.mat(lda), w.mat(ldb), one.mat_mut(n))
            .with_bias(case.bias.then(|| bias.mat(n)))
            .with_beta(case.beta)
            .with_policy(Policy::TensorCore);
        ctx.gemm_on_kernel(req, kernel.id)
            .unwrap_or_else(|e| panic!("{} on one GEMM: {e}", kernel.name));
        let one: Vec<C> = ctx.download(&one).unwrap();
        assert!(
            one.iter()
                .zip(&all[..sc])
                .all(|(a, b)| bits(*a) == bits(*b)),
            "{op} {m}x{n}x{k}: {} on entry 0 alone differs from the batch's entry 0",
            kernel.name
        );
    }
    // Each entry against its own call (the route's own kernel): first, last, and where a
    // second launch starts.
    let mut entries = vec![0, count / 2, count - 1];
    if count > 65_535 {
        entries.extend([65_534, 65_535]);
    }
    for i in entries {
        let one = ctx.upload(&start[i * sc..(i + 1) * sc]).unwrap();
        let l = ctx
            .gemm_raw(&RawGemm {
                c: RawMatrix {
                    ptr: one.span().base(),
                    ld: n,
                },
                ..calls[i]
            })
            .unwrap();
        let one: Vec<C> = ctx.download(&one).unwrap();
        let entry = &all[i * sc..(i + 1) * sc];
        let same = one
            .iter()
            .zip(entry)
            .filter(|(a, b)| bits(**a) == bits(**b))
            .count();
        assert_eq!(
            same,
            sc,
            "{op} {m}x{n}x{k} x{count}: entry {i} differs from its own call (kernel {} vs {})",
            kernel.name,
            l.kernel
                .and_then(|id| ctx.kernels().kernel(id))
                .map_or("-", |k| k.name)
        );
    }
    eprintln!(
        "{op} {m}x{n}x{k} x{count} bias {} beta {} lda {lda} -> {}: one launch, grid {:?}, every checked entry its own call's bits",
        case.bias, case.beta, kernel.name, launch.grid
    );
}

#[test]
#[ignore = "needs a CUDA device"]
fn a_strided_batch_is_one_launch_with_each_entrys_own_bits() {
    let ctx = device_context();
    let mut rng = Rng::fresh("gpu_raw_batched");
    let case = |op, shape, count, bias, beta, lda_pad| BatchCase {
        op,
        shape,
        count,
        bias,
        beta,
        lda_pad,
    };
    // Attention's products (decode and prefill), a K split's region (narrow n, deep k: the
    // chunked contract), an odd leading dimension, bias and beta, and more entries than one
    // grid's z. Entries whose m, n and k end inside a tile (the TMA kernel's 3-D maps must
    // zero-fill and clip at each entry's own edges, not the next entry's rows), with bias and
    // beta (the old C through the map).
    for c in [
        case(Op::Nt, (1, 37, 128), 64, false, 0.0, 0),
        case(Op::Nn, (1, 128, 37), 64, false, 0.0, 0),
        case(Op::Nt, (128, 128, 128), 48, false, 0.0, 0),
        case(Op::Nt, (512, 512, 128), 40, false, 0.0, 0),
        case(Op::Nn, (512, 128, 512), 40, false, 0.0, 0),
        case(Op::Nt, (100, 200, 72), 5, true, 0.5, 0),
        case(Op::Nn, (40, 96, 200), 9, true, 0.5, 0),
        case(Op::Nn, (16, 128, 4096), 8, false, 0.0, 0),
        case(Op::Nn, (40, 96, 200), 9, true, 0.5, 3),
        case(Op::Tn, (24, 64, 80), 7, false, 0.0, 0),
        case(Op::Nn, (1, 8, 16), 70_000, false, 0.0, 0),
    ] {
        // The tensor-core routes write a 16-bit C for nn and nt; tn writes f32.
        if c.op != Op::Tn {
            batched_case::<bf16>(&ctx, &mut rng, &c);
        }
        batched_case::<f32>(&ctx, &mut rng, &c);
    }
}
