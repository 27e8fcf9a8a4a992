//! The downstream set on a device: a GEMM through `Context::with_kernels` gives the bits of the
//! contract (fma-k256) whether it runs on the crate's own kind (`fma_row_gemm`, m <= 8, its own
//! argument struct and flag bit) or on the shipped template: the bits of the runtime's shipped
//! kernels and of the host model `reference::fma_k256`, and row 0 does not depend on the batch.
//! Needs a CUDA device of compute capability 9.0 and a build with both sets' cubins (the
//! workspace build turns the runtime's `shipped-kernels` feature on).

use gemm_downstream_example::mlp::values;
use gemm_downstream_example::KERNELS;
use gemm_runtime::reference::{fma_k256, HostGemm};
use gemm_runtime::{bf16, Context, Element, Op};

/// `Y[m, n] = X[m, k] · W[k, n] + bias` on `ctx`, C of type `C`; with the kernel's name.
fn linear<C: Element>(
    ctx: &Context,
    (m, n, k): (usize, usize, usize),
    bias: &[C],
) -> (Vec<C>, &'static str) {
    let x = ctx.upload(&values(7, m * k)).unwrap();
    let w = ctx.upload(&values(8, k * n)).unwrap();
    let b = ctx.upload(bias).unwrap();
    let mut y = ctx.alloc::<C>(m * n).unwrap();
    let launch = ctx
        .linear(x.mat(k), w.mat(n), Some(b.mat(n)), y.mat_mut(n), (m, n, k))
        .unwrap();
    let name = launch
        .kernel
        .and_then(|id| ctx.kernels().kernel(id))
        .map_or("-", |k| k.name);
    (ctx.download(&y).unwrap(), name)
}

/// The values' bits (a half widens to f32 exactly).
fn bits<T: Element>(v: &[T]) -> Vec<u32> {
    v.iter().map(|x| x.to_f32().to_bits()).collect()
}

#[test]
#[ignore = "needs a CUDA device"]
fn a_gemm_on_the_downstream_set_gives_the_shipped_bits() {
    let own = Context::with_kernels(0, &KERNELS).unwrap();
    let shipped = Context::new(0)
        .expect("the shipped set (build in the workspace, or with gemm-runtime/shipped-kernels)");
    // The shipped set's default runs bf16 on its tensor-core kernels (another contract); the
    // downstream set has only exact kernels, so its default resolves to exact.
    shipped.set_policy(gemm_runtime::Policy::Exact);
    assert_eq!(own.tier().name, "sm90a");
    assert!(std::ptr::eq(own.kernels(), &KERNELS));
    let (n, k) = (1024, 1000); // k not a multiple of the 256 chunk
    let bias_f32: Vec<f32> = values(9, n).iter().map(|x| x.to_f32()).collect();
    let bias_bf16 = values(9, n);
    let mut row0 = None;
    for m in [1, 5, 8, 9, 37, 300] {
        let (a, ka) = linear::<f32>(&own, (m, n, k), &bias_f32);
        let (b, kb) = linear::<f32>(&shipped, (m, n, k), &bias_f32);
        let want = if m <= 8 {
            "gemm_sm90a_row_nn_bf16_f32_f32_small"
        } else {
            "gemm_sm90a_fmann_nn_bf16_f32_f32_mid"
        };
        assert!(ka.starts_with(want), "{ka}");
        // The host model of the contract, from the same values.
        let mut host = vec![0f32; m * n];
        let g = HostGemm {
            op: Op::Nn,
            m,
            n,
            k,
            lda: k,
            ldb: n,
            ldc: n,
            beta: 0.0,
        };
        fma_k256::<bf16, f32>(
            &g,
            &values(7, m * k),
            &values(8, k * n),
            Some(&bias_f32),
            &mut host,
        );
        assert_eq!(
            bits(&a),
            bits(&host),
            "bf16 -> f32, m = {m}: {ka} vs the host model"
        );
        println!("m = {m}: own {ka}, shipped {kb}");
        assert_eq!(bits(&a), bits(&b), "bf16 -> f32, m = {m}: {ka} vs {kb}");
        let row = bits(&a[..n]);
        assert_eq!(
            *row0.get_or_insert_with(|| row.clone()),
            row,
            "row 0 moved at m = {m}"
        );
        let (a, ka) = linear::<bf16>(&own, (m, n, k), &bias_bf16);
        let (b, kb) = linear::<bf16>(&shipped, (m, n, k), &bias_bf16);
        assert_eq!(bits(&a), bits(&b), "bf16 -> bf16, m = {m}: {ka} vs {kb}");
    }
}
