//! Snapshots of what the generator makes of the shipped specs. A change here is a change that
//! downstream code sees: review it with `cargo insta review` (or `INSTA_UPDATE=always` and the
//! diff).
//!
//! - The argument ABI (`abi.rs`, `gemm_abi.h`) is one snapshot each: it depends on
//!   `families.toml` alone, so adding or changing a tier leaves it as it is.
//! - The kernel table and the dispatch are snapshotted per tier (`<tier>/kernels.rs`,
//!   `<tier>/dispatch.rs`), each generated from that tier alone, so its ids do not move when
//!   another tier is added. A tier without an accepted snapshot (a new tier) is checked
//!   structurally and its snapshot is not required, so `cargo test` (and CI, where insta fails
//!   on a new snapshot) stays green; a tier author makes the snapshots with
//!   `INSTA_UPDATE=always cargo test -p gemm-aot-tests --test shipped_snapshots` (or
//!   `cargo insta test`) and commits them. The exact whole-table output across several tiers
//!   (id offsets, the device-to-tier `match`) is pinned by `fixtures/tiers` in `fixtures.rs`.

use gemm_codegen::pipeline::{generate, template_files};
use gemm_codegen::{Instrumentation, Provenance, Templates};
use std::path::{Path, PathBuf};

/// The generated files of the shipped specs, restricted to `tiers` (all when empty).
fn files(tiers: &[String]) -> Vec<(String, String)> {
    let tiers: Vec<&str> = tiers.iter().map(String::as_str).collect();
    let (plan, _) = gemm_aot_tests::catalog_tiers(&gemm_aot_tests::shipped_specs(), &tiers);
    let templates = template_files(&Templates::Shipped).unwrap();
    generate(
        &plan,
        &templates,
        &Provenance::new("gemm-aot build"),
        Instrumentation::NONE,
    )
    .files
    .into_iter()
    .map(|(p, text)| {
        let name = p.file_name().unwrap().to_string_lossy().into_owned();
        (name, text)
    })
    .collect()
}

fn file(tiers: &[String], name: &str) -> String {
    files(tiers)
        .into_iter()
        .find(|(n, _)| n == name)
        .map(|(_, text)| text)
        .unwrap_or_else(|| panic!("{name} not generated"))
}

fn shipped_tiers() -> Vec<gemm_spec::Tier> {
    gemm_aot_tests::load(&gemm_aot_tests::shipped_specs())
        .expect("shipped specs validate")
        .specs
        .tiers
}

/// insta's file for snapshot `name` of this test.
fn snapshot_file(name: &str) -> PathBuf {
    Path::new("snapshots").join(format!(
        "shipped_snapshots__{}.snap",
        name.replace('/', "__")
    ))
}

/// Whether insta was asked to write snapshots (`INSTA_UPDATE=always` or `new`, as
/// `cargo insta test` sets it).
fn updating() -> bool {
    std::env::var("INSTA_UPDATE").is_ok_and(|v| v == "always" || v == "new")
}

#[test]
fn abi_rust() {
    insta::assert_snapshot!("abi.rs", file(&[], "abi.rs"));
}

#[test]
fn abi_header() {
    insta::assert_snapshot!("gemm_abi.h", file(&[], "gemm_abi.h"));
}

#[test]
fn the_abi_does_not_depend_on_the_tiers() {
    let first = shipped_tiers()[0].name.clone();
    for name in ["abi.rs", "gemm_abi.h"] {
        assert_eq!(
            file(std::slice::from_ref(&first), name),
            file(&[], name),
            "{name} changes with the tier list: its snapshot would move when a tier is added"
        );
    }
}

/// Per tier: the snapshot when one is accepted (or being written), a structural check always.
fn per_tier(file_name: &str, structural: fn(&gemm_spec::Tier, &str)) {
    let tiers = shipped_tiers();
    let mut unsnapshotted = Vec::new();
    for tier in &tiers {
        let text = file(std::slice::from_ref(&tier.name), file_name);
        structural(tier, &text);
        let name = format!("{}/{file_name}", tier.name);
        if snapshot_file(&name).is_file() || updating() {
            let description = format!(
                "{file_name} generated from tier {} alone ({})",
                tier.name, tier.file
            );
            insta::with_settings!({ description => description }, {
                insta::assert_snapshot!(name, text);
            });
        } else {
            unsnapshotted.push(tier.name.clone());
        }
    }
    if !unsnapshotted.is_empty() {
        eprintln!(
            "NOTE: no accepted {file_name} snapshot for tier(s) {}: checked structurally only; \
             write it with INSTA_UPDATE=always cargo test -p gemm-aot-tests --test shipped_snapshots",
            unsnapshotted.join(", ")
        );
    }
    // A snapshot of a tier that is gone must go too.
    let suffix = format!("__{file_name}.snap");
    for entry in std::fs::read_dir("snapshots").unwrap() {
        let f = entry.unwrap().file_name().to_string_lossy().into_owned();
        if let Some(tier) = f
            .strip_prefix("shipped_snapshots__")
            .and_then(|s| s.strip_suffix(&suffix))
        {
            assert!(
                tiers.iter().any(|t| t.name == tier),
                "tests/snapshots/{f} is the snapshot of tier {tier}, which specs/ no longer has: delete it"
            );
        }
    }
}

/// What the catalog makes of one tier: its kernel names.
fn tier_kernels(tier: &gemm_spec::Tier) -> Vec<String> {
    let (plan, _) = gemm_aot_tests::catalog_tiers(&gemm_aot_tests::shipped_specs(), &[&tier.name]);
    plan.kernels.iter().map(|k| k.name.clone()).collect()
}

#[test]
fn kernel_table_per_tier() {
    per_tier("kernels.rs", |tier, text| {
        let kernels = tier_kernels(tier);
        assert!(!kernels.is_empty(), "tier {} has no kernels", tier.name);
        assert!(
            text.contains(&format!(
                "pub static KERNELS: [KernelInfo; {}]",
                kernels.len()
            )),
            "{}: kernel count",
            tier.name
        );
        for k in &kernels {
            assert!(
                text.contains(&format!("name: \"{k}\",")),
                "{}: {k} missing",
                tier.name
            );
        }
        assert!(text.contains(&format!("name: \"{}\",", tier.name)));
        assert!(text.contains(&format!("gencode: \"{}\",", tier.gencode)));
        let (major, minor) = tier.cc;
        let cc = format!("compute_capability: ({major}, {minor}),");
        assert!(text.contains(&cc), "{}: no `{cc}`", tier.name);
        assert!(text.contains(&format!("arch_specific: {},", tier.arch_specific)));
        assert!(
            text.contains("pub static ROUTES: [RouteInfo;"),
            "{}",
            tier.name
        );
    });
}

#[test]
fn dispatch_per_tier() {
    per_tier("dispatch.rs", |tier, text| {
        let served = tier.served();
        assert!(!served.is_empty(), "tier {} routes nothing", tier.name);
        assert_eq!(
            text.matches("(0, Policy::").count(),
            served.len(),
            "{}: one match arm per served (policy, op, dtype)",
            tier.name
        );
        assert!(text.contains("_ => None,"));
        assert!(
            !text.contains("(1, Policy::"),
            "generated from one tier alone"
        );
    });
}
