//! Narrow n, deep k on the GPU (contracts tc-k16-c512 and, for f32 as TF32, tc-tf32-k8-c512;
//! docs/tensor-core.md §8, §10): every kernel of the chunked contract (the K-split decode and
//! wgmma kernels, the wgmma kernels with a second accumulator set, the plain-load kernel) gives
//! the same bits at shapes of its regions, rows are independent of the batch through the routes
//! (repacked odd K included), results agree with float64, and the chunked contract really is
//! another order than the one-chain contract (tc-k16, tc-tf32-k8).
//!
//! The shapes tested are those of the list below that the context's tier routes to the chunked
//! contract, and the kernels every kernel of the tier with that contract; the test skips,
//! saying why, where the tier has none.

mod common;
use common::*;
use gemm_runtime::*;

const TC: Policy = Policy::TensorCore;
const M_FULL: usize = 1100;

/// (n, k): whole chunks, a short last chunk, n off the tiles, an odd K (A repacked), few chunks.
const SHAPES: [(usize, usize); 6] = [
    (1024, 4096),
    (1000, 8200),
    (1600, 6400),
    (768, 50257),
    (512, 2100),
    (96, 3000),
];

/// The chunked contract of operands of type A, and the one-chain contract it refines.
fn contracts<A: Element>() -> (&'static str, &'static str) {
    if A::DTYPE == Dtype::F32 {
        ("tc-tf32-k8-c512", "tc-tf32-k8")
    } else {
        ("tc-k16-c512", "tc-k16")
    }
}

struct Operands<A: Element> {
    a: DeviceBuffer<A>,
    b: DeviceBuffer<A>,
    lda: usize,
    ldb: usize,
    a_host: Vec<A>,
    b_host: Vec<A>,
}

impl<A: Element> Operands<A> {
    /// A as stored: [M_FULL, k] for nn / nt, [k, M_FULL] for tn; B: [k, n] for nn / tn, [n, k]
    /// for nt. A sub-batch of m rows reads the first m rows (columns for tn) of the same A.
    fn new(ctx: &Context, op: Op, n: usize, k: usize, rng: &mut Rng) -> Operands<A> {
        let a_host: Vec<A> = rng.vec(M_FULL * k);
        let b_host: Vec<A> = rng.vec(n * k);
        Operands {
            a: ctx.upload(&a_host).unwrap(),
            b: ctx.upload(&b_host).unwrap(),
            lda: if op == Op::Tn { M_FULL } else { k },
            ldb: if op == Op::Nt { k } else { n },
            a_host,
            b_host,
        }
    }

    fn a(&self, op: Op, k: usize, i: usize, t: usize) -> f64 {
        let v = if op == Op::Tn {
            self.a_host[t * M_FULL + i]
        } else {
            self.a_host[i * k + t]
        };
        v.to_f32() as f64
    }

    fn b(&self, op: Op, n: usize, k: usize, t: usize, j: usize) -> f64 {
        let v = if op == Op::Nt {
            self.b_host[j * k + t]
        } else {
            self.b_host[t * n + j]
        };
        v.to_f32() as f64
    }

    fn request<'a, C: Element>(
        &'a self,
        op: Op,
        (m, n, k): (usize, usize, usize),
        c: &'a mut DeviceBuffer<C>,
    ) -> GemmRequest<'a, A, C> {
        GemmRequest::new(
            op,
            (m, n, k),
            self.a.mat(self.lda),
            self.b.mat(self.ldb),
            c.mat_mut(n),
        )
        .with_policy(TC)
    }
}

fn bits_of<C: Element>(ctx: &Context, c: &DeviceBuffer<C>) -> Vec<u32> {
    ctx.download(c).unwrap().into_iter().map(bits).collect()
}

/// C through the routes, its bits and launch.
fn routed<A: Element, C: Element>(
    ctx: &Context,
    ops: &Operands<A>,
    op: Op,
    shape: (usize, usize, usize),
) -> (Launch, Vec<u32>) {
    let mut c = ctx.upload(&vec![poison::<C>(); shape.0 * shape.1]).unwrap();
    let l = ctx
        .gemm(ops.request(op, shape, &mut c))
        .unwrap_or_else(|e| panic!("{op} {shape:?}: {e}"));
    (l, bits_of(ctx, &c))
}

/// C on a named kernel, its bits.
fn on_kernel<A: Element, C: Element>(
    ctx: &Context,
    ops: &Operands<A>,
    op: Op,
    shape: (usize, usize, usize),
    kernel: &KernelInfo,
) -> Vec<u32> {
    let mut c = ctx.upload(&vec![poison::<C>(); shape.0 * shape.1]).unwrap();
    ctx.gemm_on_kernel(ops.request(op, shape, &mut c), kernel.id)
        .unwrap_or_else(|e| panic!("{} at {shape:?}: {e}", kernel.name));
    bits_of(ctx, &c)
}

fn chunked_kernels_agree<A: Element, C: Element>(op: Op) {
    let ctx = context();
    let dtype = DtypeTriple::new(A::DTYPE, C::DTYPE, Dtype::F32);
    let (chunked, one_chain) = contracts::<A>();
    let tier = ctx.tier();
    let kernels: Vec<&KernelInfo> = ctx
        .kernels()
        .tier_kernels(tier.id)
        .iter()
        .filter(|k| k.contract == chunked && k.op == op && k.dtype == dtype)
        .collect();
    let mut tested = 0;
    for (n, k) in SHAPES {
        let chunked_route = ctx
            .route(TC, op, dtype, 1, n as u64, k as u64)
            .and_then(|h| kernel(h.kernel))
            .is_some_and(|kinfo| kinfo.contract == chunked);
        if !chunked_route {
            eprintln!(
                "{op} {dtype} {n}x{k}: tier {} does not route it to {chunked}",
                tier.name
            );
            continue;
        }
        tested += 1;
        let mut rng = Rng::fresh(&format!("split-k {op} {dtype} {n}x{k}"));
        let ops = Operands::<A>::new(&ctx, op, n, k, &mut rng);
        let (full_launch, full) = routed::<A, C>(&ctx, &ops, op, (M_FULL, n, k));
        // float64 on the first and last rows: the chunked sums are sums of the products.
        for i in [0, M_FULL - 1] {
            for j in (0..n).step_by(7) {
                let (want, mag) = (0..k)
                    .map(|t| ops.a(op, k, i, t) * ops.b(op, n, k, t, j))
                    .fold((0.0f64, 0.0f64), |(s, g), p| (s + p, g + p.abs()));
                let got = f32::from_bits(full[i * n + j]) as f64;
                // f32 out of half inputs: 2e-3; a half C: 1e-2 (relative to 1 + |want|). TF32
                // truncates each input by less than 2^-10 of it, so a product moves by less than
                // 2^-9 of itself: that much of the sum of |products| more.
                let tol = if C::DTYPE == Dtype::F32 && A::DTYPE != Dtype::F32 {
                    2e-3
                } else {
                    1e-2
                };
                let truncation = if A::DTYPE == Dtype::F32 {
                    mag / 512.0
                } else {
                    0.0
                };
                assert!(
                    (got - want).abs() <= tol * (1.0 + want.abs()) + truncation,
                    "{op} {n}x{k} row {i} col {j}: {got} against float64 {want}"
                );
            }
        }
        // Rows of every routed m equal the full batch's rows.
        let mut ran = std::collections::BTreeSet::new();
        ran.insert(full_launch.kernel.and_then(kernel).map_or("-", |k| k.name));
        for m in [1usize, 2, 7, 16, 17, 63, 64, 65, 200, 256, 257, 1024, 1025] {
            let (l, got) = routed::<A, C>(&ctx, &ops, op, (m, n, k));
            let name = l.kernel.and_then(kernel).map_or("-", |k| k.name);
            assert_eq!(
                kernel(l.kernel.unwrap()).map(|k| k.contract),
                Some(chunked),
                "{op} {n}x{k}: m = {m} ran {name}, not a {chunked} kernel"
            );
            assert_eq!(
                got[..],
                full[..m * n],
                "{op} {n}x{k}: m = {m} ({name}) differs from m = {M_FULL}"
            );
            ran.insert(name);
        }
        // Every kernel of the contract, routed or not, at small and full m.
        for kinfo in &kernels {
            if kinfo.max_k.is_some_and(|mk| (k as u64) > mk) {
                continue;
            }
            for m in [1usize, 13, 64, M_FULL] {
                let got = on_kernel::<A, C>(&ctx, &ops, op, (m, n, k), kinfo);
                assert_eq!(
                    got[..],
                    full[..m * n],
                    "{op} {n}x{k}: {} at m = {m} differs from the routed m = {M_FULL}",
                    kinfo.name
                );
            }
            ran.insert(kinfo.name);
        }
        // The contract is another order than the one chain once K has two chunks: a kernel of
        // the one-chain contract gives other bits somewhere (else the fold would not be there).
        if k >= 1024 {
            let one = ctx
                .kernels()
                .tier_kernels(tier.id)
                .iter()
                .find(|x| x.contract == one_chain && x.op == op && x.dtype == dtype);
            if let Some(tc) = one {
                let other = on_kernel::<A, C>(&ctx, &ops, op, (M_FULL, n, k), tc);
                let differ = other.iter().zip(&full).filter(|(a, b)| a != b).count();
                eprintln!(
                    "{op} {n}x{k}: {differ} of {} elements differ from {one_chain} ({})",
                    full.len(),
                    tc.name
                );
                assert!(
                    differ > 0,
                    "{op} {n}x{k}: the chunked fold gave {one_chain}'s bits everywhere"
                );
            }
        }
        eprintln!("{op} {dtype} {n}x{k}: equal bits from {ran:?}");
    }
    if tested == 0 {
        eprintln!(
            "skipped: tier {} routes none of the shapes to {chunked}",
            tier.name
        );
    }
}

#[test]
#[ignore = "needs a CUDA device"]
fn chunked_kernels_agree_bitwise_nn_bf16_f32() {
    chunked_kernels_agree::<bf16, f32>(Op::Nn);
}

#[test]
#[ignore = "needs a CUDA device"]
fn chunked_kernels_agree_bitwise_nn_bf16_bf16() {
    chunked_kernels_agree::<bf16, bf16>(Op::Nn);
}

#[test]
#[ignore = "needs a CUDA device"]
fn chunked_kernels_agree_bitwise_nt_bf16_f32() {
    chunked_kernels_agree::<bf16, f32>(Op::Nt);
}

#[test]
#[ignore = "needs a CUDA device"]
fn chunked_kernels_agree_bitwise_tn_bf16_f32() {
    chunked_kernels_agree::<bf16, f32>(Op::Tn);
}

#[test]
#[ignore = "needs a CUDA device"]
fn chunked_kernels_agree_bitwise_nn_tf32() {
    chunked_kernels_agree::<f32, f32>(Op::Nn);
}

#[test]
#[ignore = "needs a CUDA device"]
fn chunked_kernels_agree_bitwise_nt_tf32() {
    chunked_kernels_agree::<f32, f32>(Op::Nt);
}
