//! The raw-pointer calls the fronts make, on the GPU: `Context::gemm_raw` gives the bits of
//! `Context::gemm` on the same memory, on the context's stream and on a borrowed one;
//! `gemm_raw_batch` of a strided batch gives each entry's bits; refusals enqueue nothing and
//! leave the registry as it was.

mod common;
use common::*;
use gemm_runtime::*;

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
        let got: Vec<f32> = ctx.download(&out).unwrap();
        assert!(
            got.iter()
                .zip(&want)
                .all(|(a, b)| a.to_bits() == b.to_bits()),
            "{op}: raw differs"
        );
        assert_eq!(
            ctx.live_allocations(),
            live,
            "a raw call left a registration behind"
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
        assert!(
            got2.iter()
                .zip(&want)
                .all(|(a, b)| a.to_bits() == b.to_bits()),
            "{op}: borrowed stream differs"
        );
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
