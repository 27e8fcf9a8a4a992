//! `gpu_perturbed`'s every-kind cases reach, by the tier's own routes, every kind of kernel a
//! route of sm90a launches (`every_kind`): a retune or a new family that leaves a kind
//! untested under perturbation fails here, in CI, naming the route to take a shape from. No
//! device: the routes are the perturbed set's tables.

use gemm_timing_tests::every_kind::{routed_kind, routed_kinds, sm90a_cases, unreached};
use gemm_timing_tests::PERTURBED;
use std::collections::BTreeSet;

#[test]
fn the_every_kind_cases_reach_every_routed_kind_of_sm90a() {
    let tier = PERTURBED
        .tier_by_name("sm90a")
        .expect("the perturbed set builds sm90a");
    let reached: BTreeSet<String> = sm90a_cases()
        .iter()
        .filter_map(|c| routed_kind(&PERTURBED, tier.id, c))
        .collect();
    let routed = routed_kinds(&PERTURBED, tier.id);
    // The tier routes more than one kind of each policy; a table read as empty would pass.
    assert!(routed.len() > 10, "sm90a's routes name {routed:?}");
    let missing = unreached(&PERTURBED, tier.id, &reached);
    assert!(
        missing.is_empty(),
        "no case of every_kind::sm90a_cases is routed to these kinds (a route naming each): \
         {missing:?}; reached: {reached:?}"
    );
}

#[test]
fn a_kernels_kind_names_its_code_paths() {
    let tier = PERTURBED.tier_by_name("sm90a").unwrap();
    let kinds = routed_kinds(&PERTURBED, tier.id);
    // The perturbed set runs sm90a's wide tile in clusters of 2, and the chunked contract's
    // splits fold over clusters: both kinds are routed, apart from their unclustered family.
    for want in ["tcwide", "tcwide (cluster)", "tcdecsplit (K split)"] {
        assert!(kinds.contains_key(want), "{want} not among {kinds:?}");
    }
}
