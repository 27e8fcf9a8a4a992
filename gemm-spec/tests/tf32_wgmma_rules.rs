//! TF32 on wgmma (kind `wgmma_tf32_gemm`, families `tcwide32`, `tcwide32tn` and `tcwide32chunk`):
//! the shipped tiles derive what the template asserts (a cluster along z from `split_k`, any K,
//! the shared memory of the ring, tn's third barrier a stage and a split's slot; `tcwide32tncopy`'s
//! tn kernels, which read A's transposed copy, derive nn's); tiles outside
//! the kind's rules (tn's among them), a K split under the unchunked contract, and a tier without
//! wgmma are refused before nvcc, naming the rule.

mod support;

use gemm_spec::Op;

#[test]
fn shipped_tf32_wgmma_tiles_derive_what_the_template_asserts() {
    let v = support::load_dir(&support::root().join("specs")).unwrap();
    let (mut plain, mut splits, mut tn) = (0, 0, 0);
    for tier in &v.specs.tiers {
        for tile in &tier.tiles {
            let family = &v.specs.families[&tile.family];
            if family.kind.template != "wgmma_tf32_gemm" {
                continue;
            }
            let contract = &v.specs.contracts[&family.contract];
            for &(op, dtype) in &family.variants {
                let d = v.specs.derive(tier, tile, op, dtype).unwrap().unwrap();
                // A tn variant whose A is copied transposed first reads it as nn does.
                let layout = family.layout(op);
                let (m, n, k) = (tile.m as u64, tile.n as u64, tile.k as u64);
                let stages = tile.param("stages").unwrap() as u64;
                // A stage is one 128-byte row of f32 k; a split's slot holds the tile in f32
                // and its two mbarriers; two mbarriers a stage (tn: three, its loads landing
                // before the transposition); 1024 bytes of alignment slack.
                assert_eq!(k * 4, 128, "{}.{}", tile.family, tile.name);
                let slot = if d.split_k > 1 { m * n * 4 + 16 } else { 0 };
                let barriers = if layout == Op::Tn { 24 } else { 16 };
                assert_eq!(
                    d.shared_bytes,
                    stages * (m + n) * k * 4 + slot + stages * barriers + 1024,
                    "{}.{}",
                    tile.family,
                    tile.name
                );
                assert_eq!(d.max_k, None, "{}.{} bounds K", tile.family, tile.name);
                if d.split_k > 1 {
                    assert!(
                        contract.chunk > 0,
                        "{}.{}: a split under an unchunked contract",
                        tile.family,
                        tile.name
                    );
                    splits += 1;
                } else {
                    plain += 1;
                }
                if layout == Op::Tn {
                    assert!(
                        tile.m % 32 == 0 && stages >= 3 && contract.chunk == 0,
                        "{}.{}: tn transposes whole [32 k x 32 m] boxes, stages - 2 ahead, one chain",
                        tile.family,
                        tile.name
                    );
                    tn += 1;
                }
            }
        }
    }
    assert!(
        plain > 0 && splits > 0 && tn > 0,
        "shipped wgmma_tf32_gemm kernels: {plain} unsplit, {splits} split, {tn} tn"
    );
}

#[test]
fn a_tf32_tile_outside_the_kinds_rules_is_refused_naming_the_rule() {
    for (family, key, line, rule) in [
        // wgmma's N is the tile's rows: 48 is not one of the wrapped widths.
        (
            "tcwide32",
            "m",
            "m = 48",
            "m in [16, 32, 64, 128, 192, 256]",
        ),
        // Each consumer warpgroup owns 64 columns (the 128-column tile with one consumer).
        (
            "tcwide32",
            "consumers",
            "consumers = 1",
            "n == 64 * consumers",
        ),
        // A stage is one 128-byte row of f32: 32 k.
        ("tcwide32", "k", "k = 64", "k * ab_bytes == 128"),
        // A K split needs the chunked contract (tc-tf32-k8 is one chain over K).
        (
            "tcwide32",
            "split_k",
            "split_k = 2",
            "split_k in [1, 2, 4, 8]",
        ),
        // tn's A arrives in boxes of 32 m, transposed whole.
        ("tcwide32tn", "m", "m = 16", "a_k_major || m % 32 == 0"),
        // tn loads stages - 2 ahead of the stage it transposes.
        (
            "tcwide32tn",
            "stages",
            "stages = 2",
            "a_k_major || stages >= 3",
        ),
        // The portable cluster size is 8.
        (
            "tcwide32chunk",
            "split_k",
            "split_k = 16",
            "split_k in [1, 2, 4, 8]",
        ),
    ] {
        let errors = support::errors_with_sm90a_tile_line(family, key, line);
        assert!(
            errors.iter().any(|e| e.contains(rule)),
            "{family} with {line}: {errors:?}"
        );
    }
}

#[test]
fn a_tier_without_wgmma_cannot_take_the_tf32_kind() {
    // sm80 lists tcwide32: its instruction is sm_90a's alone.
    let errors = support::errors_with_family_on("sm80.toml", "tcwide32");
    assert!(
        errors
            .iter()
            .any(|e| e.contains("tcwide32") && e.contains("9.0")),
        "{errors:?}"
    );
}
