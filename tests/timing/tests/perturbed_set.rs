//! The perturbed kernel set is the shipped sm80 and sm90a tiers with the delays compiled in:
//! the same kernels, contracts and routes (so a test can compare it with the shipped set), the
//! wide tensor-core tile in clusters of 2, and the switch visible in its tables. No device.

use gemm_runtime::{DtypeTriple, KernelSet, Op, Policy};
use gemm_timing_tests::{perturbation_seeds, PERTURBED};

#[test]
fn the_perturbed_set_is_the_shipped_tiers_with_the_switch_on() {
    let shipped = gemm_runtime::shipped();
    PERTURBED.check().unwrap();
    assert!(PERTURBED.timing_perturbation());
    assert!(
        !shipped.timing_perturbation(),
        "the shipped set carries no delays"
    );
    let names: Vec<&str> = PERTURBED.tiers().iter().map(|t| t.name).collect();
    assert_eq!(names, ["sm80", "sm90a"]);
    for tier in PERTURBED.tiers() {
        let theirs = shipped
            .tiers()
            .iter()
            .find(|t| t.name == tier.name)
            .unwrap();
        let range = |r: &std::ops::Range<u16>| r.start as usize..r.end as usize;
        let ours: Vec<_> = PERTURBED.kernels()[range(&tier.kernels)].iter().collect();
        let ship: Vec<_> = shipped.kernels()[range(&theirs.kernels)].iter().collect();
        assert_eq!(ours.len(), ship.len(), "{}", tier.name);
        for (a, b) in ours.iter().zip(&ship) {
            assert_eq!(
                (a.name, a.contract, a.policy, a.op, a.dtype),
                (b.name, b.contract, b.policy, b.op, b.dtype)
            );
            let clustered = tier.name == "sm90a" && a.family == "tcwide" && a.tile.name == "wide";
            assert_eq!(
                a.cluster.0,
                if clustered { 2 } else { b.cluster.0 },
                "{}",
                a.name
            );
        }
        // The same routes: every (policy, op, dtype) at a few shapes picks the same kernel name.
        for policy in [Policy::Exact, Policy::TensorCore] {
            for op in [Op::Nn, Op::Nt, Op::Tn] {
                for dtype in [
                    "bf16.bf16.f32",
                    "bf16.f32.f32",
                    "f16.f16.f32",
                    "f32.f32.f32",
                ] {
                    let dtype: DtypeTriple = dtype.parse().unwrap();
                    for (m, n, k) in [
                        (1, 4096, 4096),
                        (17, 1000, 136),
                        (300, 8192, 512),
                        (5000, 4096, 4096),
                    ] {
                        let name = |set: &KernelSet, t| {
                            set.dispatch(t, policy, op, dtype, m, n, k)
                                .and_then(|h| set.kernel(h.kernel))
                                .map(|k| k.name)
                        };
                        assert_eq!(name(&PERTURBED, tier.id), name(shipped, theirs.id));
                    }
                }
            }
        }
    }
}

#[test]
fn the_default_seeds_are_several_and_never_zero() {
    let seeds = perturbation_seeds();
    assert!(seeds.len() >= 3 && !seeds.contains(&0), "{seeds:?}");
}
