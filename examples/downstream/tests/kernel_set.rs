//! The downstream set's tables, without a device: what the builder made from specs/ is what
//! the runtime serves (one tier, its routes, the runtime's argument structs), and the kernels
//! are the shipped sm90a kernels of the same names, entry for entry.

use gemm_downstream_example::KERNELS;
use gemm_runtime::{
    Context, Dtype, DtypeTriple, GemmError, KernelSet, KernelSetError, Op, Policy, TierId,
};

const BF16: DtypeTriple = DtypeTriple::new(Dtype::Bf16, Dtype::Bf16, Dtype::F32);

#[test]
fn the_set_has_its_own_tier_kernels_and_routes() {
    KERNELS.check().unwrap();
    let names: Vec<&str> = KERNELS.tiers().iter().map(|t| t.name).collect();
    assert_eq!(names, ["sm90a"]);
    // One family, one tile: nn f32, bf16 -> bf16 and bf16 -> f32; four conversions.
    assert_eq!(KERNELS.kernels().len(), 3);
    assert_eq!(KERNELS.conversions().len(), 4);
    let tier = KERNELS.tier_for_capability((9, 0)).unwrap();
    assert_eq!(tier.id, TierId(0));
    assert!(KERNELS.tier_for_capability((8, 0)).is_none());
    assert!(KERNELS.tier_for_capability((10, 0)).is_none());
    for m in [1, 16, 37, 4096] {
        let hit = KERNELS
            .dispatch(tier.id, Policy::Exact, Op::Nn, BF16, m, 1024, 256)
            .unwrap();
        let k = KERNELS.kernel(hit.kernel).unwrap();
        assert_eq!(k.name, "gemm_sm90a_fma_nn_bf16_bf16_f32_mid_m64n64k8");
        assert_eq!(k.contract, "fma-k256");
        assert_eq!(hit.rule, 1);
    }
    // What the specs leave out is not routed.
    assert!(KERNELS
        .dispatch(tier.id, Policy::TensorCore, Op::Nn, BF16, 1, 1024, 256)
        .is_none());
    assert!(KERNELS
        .dispatch(tier.id, Policy::Exact, Op::Tn, BF16, 1, 1024, 256)
        .is_none());
    assert_eq!(KERNELS.max_n(tier.id), 65535 * 64);
}

#[test]
fn its_kernels_are_the_shipped_kernels_of_the_same_names() {
    let shipped = KernelSet::shipped();
    let Some(sm90a) = shipped.tier_by_name("sm90a") else {
        panic!("the shipped specs have no sm90a tier");
    };
    let shipped_kernels =
        &shipped.kernels()[sm90a.kernels.start as usize..sm90a.kernels.end as usize];
    for k in KERNELS.kernels() {
        let s = shipped_kernels
            .iter()
            .find(|s| s.name == k.name)
            .unwrap_or_else(|| panic!("{} is not a shipped sm90a kernel", k.name));
        assert_eq!(
            (
                k.contract,
                k.op,
                k.dtype,
                k.tile,
                k.block_threads,
                k.shared_bytes,
                k.abi
            ),
            (
                s.contract,
                s.op,
                s.dtype,
                s.tile,
                s.block_threads,
                s.shared_bytes,
                s.abi
            ),
            "{}",
            k.name
        );
    }
}

#[test]
fn its_cubins_are_embedded_when_built_with_them() {
    let tier = &KERNELS.tiers()[0];
    assert_eq!(tier.has_cubins(), KERNELS.cubins_present());
    if KERNELS.cubins_present() {
        for m in tier.modules {
            assert!(m.cubin.starts_with(b"\x7fELF"), "{} is not a cubin", m.name);
        }
    } else {
        // Built with GEMM_AOT_NO_CUBINS: the tables only.
        assert!(std::env::var_os("GEMM_AOT_NO_CUBINS").is_some());
    }
}

#[test]
fn a_context_refuses_the_set_with_another_abi_before_opening_a_device() {
    static OTHER: [(&str, &str); 2] = [
        ("ConvertArgs", "size 0, align 1; "),
        ("GemmArgs", "size 0, align 1; "),
    ];
    let mut parts = KERNELS.parts();
    parts.abi_layouts = &OTHER;
    let set: &'static KernelSet = Box::leak(Box::new(KernelSet::from_parts(parts)));
    let err = Context::with_kernels(0, set).unwrap_err();
    assert!(
        matches!(
            err,
            GemmError::KernelSet(KernelSetError::Abi {
                abi: "GemmArgs",
                ..
            })
        ),
        "{err}"
    );
    assert_eq!(err.kind(), "kernel_set");
}
