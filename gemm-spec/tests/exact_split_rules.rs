//! The exact policy's K split over a cluster (kind `fma_warp_split`, family `fmaws`): the
//! shipped tiles derive their cluster along z from `split_k` and take any K (the fold runs in
//! rounds, nothing holds every chunk at once); a split outside the kind's limits, or on a tier
//! without clusters, is refused before nvcc, naming the rule.

mod support;

#[test]
fn shipped_exact_splits_take_a_cluster_along_z_and_any_k() {
    let v = support::load_dir(&support::root().join("specs")).unwrap();
    let mut splits = 0;
    for tier in &v.specs.tiers {
        for tile in &tier.tiles {
            let family = &v.specs.families[&tile.family];
            if family.kind.template != "fma_warp_split" {
                continue;
            }
            for &(op, dtype) in &family.variants {
                let d = v.specs.derive(tier, tile, op, dtype).unwrap().unwrap();
                assert!(
                    d.split_k > 1,
                    "{}.{}: split_k {}",
                    tile.family,
                    tile.name,
                    d.split_k
                );
                assert_eq!(d.max_k, None, "{}.{} bounds K", tile.family, tile.name);
                // Two stages of A and B, the slot and the rank's share of the totals, all f32:
                // what the template's static_assert checks.
                let (m, n, k) = (tile.m as u64, tile.n as u64, tile.k as u64);
                let want = (2 * k * (m + n) + m * n + m * n / d.split_k as u64) * 4;
                assert_eq!(d.shared_bytes, want, "{}.{}", tile.family, tile.name);
                splits += 1;
            }
        }
    }
    assert!(splits > 0, "no shipped tier has an fma_warp_split tile");
}

#[test]
fn a_split_outside_the_kinds_rules_is_refused_naming_the_rule() {
    for (key, line, rule) in [
        ("split_k", "split_k = 16", "split_k in [2, 4, 8]"),
        ("n", "n = 96", "n % 64 == 0"),
    ] {
        let errors = support::errors_with_sm90a_tile_line("fmaws", key, line);
        assert!(
            errors.iter().any(|e| e.contains(rule)),
            "{line}: {errors:?}"
        );
    }
}

#[test]
fn a_tier_without_clusters_cannot_take_the_split() {
    // sm80 lists fmaws: its instruction needs compute capability 9.0.
    let errors = support::errors_with_family_on("sm80.toml", "fmaws");
    assert!(
        errors
            .iter()
            .any(|e| e.contains("fmaws") && e.contains("9.0")),
        "{errors:?}"
    );
}
