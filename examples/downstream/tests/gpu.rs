//! The downstream set on a device: a GEMM through `Context::with_kernels` gives the bits of the
//! runtime's shipped kernels of the same contract (fma-k256), and row 0 does not depend on the
//! batch. Needs a CUDA device of compute capability 9.0 and a build with both sets' cubins (the
//! workspace build turns the runtime's `shipped-kernels` feature on).

use gemm_downstream_example::mlp::values;
use gemm_downstream_example::KERNELS;
use gemm_runtime::{bf16, Context, Element};

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
    for m in [1, 5, 37, 300] {
        let (a, ka) = linear::<f32>(&own, (m, n, k), &bias_f32);
        let (b, kb) = linear::<f32>(&shipped, (m, n, k), &bias_f32);
        assert!(ka.starts_with("gemm_sm90a_fma_nn_bf16_f32_f32_mid"), "{ka}");
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
