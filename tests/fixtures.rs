//! Fixture tests: a small spec folder in, the exact generated files out. Expected files live
//! beside the specs under `tests/fixtures/<name>/`; run with `GEMM_AOT_BLESS=1` to rewrite
//! them after an intended change, then review the diff.

use gemm_aot_tests::{catalog, ensure_file_contents as check, generated};
use gemm_codegen::pipeline::{generate, template_files, validate_and_catalog};
use gemm_codegen::{Instrumentation, Provenance, Templates};
use std::path::Path;

#[test]
fn tiny_spec_generates_the_expected_files() {
    let root = Path::new("fixtures/tiny");
    let (plan, warnings) = catalog(&root.join("specs"));
    assert!(warnings.is_empty(), "{warnings:?}");
    let generated = generated(&plan);
    let mut compared = 0;
    let mut names = Vec::new();
    for (rel, text) in &generated.files {
        if rel.starts_with("cuda/kernels-templates") {
            continue; // copies of kernels-templates/, not generated
        }
        // Expected files mirror the output's layout: cuda/<tier>/<unit>.cu, rust/*.rs, ...
        check(&root.join("expected").join(rel), text);
        names.push(rel.display().to_string());
        compared += 1;
    }
    let resources = gemm_codegen::emit::rust::resources(
        &plan,
        None,
        &Provenance::new("fixture test"),
        Instrumentation::NONE,
    );
    check(&root.join("expected/rust/resources.rs"), &resources);
    // The header, one compile unit per family of the tier, and the four Rust tables (ABI,
    // kernels, dispatch, PTX).
    let units = plan.specs.tiers[0].families.len();
    assert_eq!(compared, 1 + units + 4, "{names:?}");
}

#[test]
fn several_tiers_generate_the_expected_tables() {
    // Three tiers (portable 8.0 and 8.6, arch-specific 9.0) with a conversion: kernel and
    // conversion ids run on across tiers, and the device match puts 8.6 before 8.0. The
    // shipped specs' tables are snapshotted per tier (shipped_snapshots.rs); this pins the
    // whole-table output, and which tiers embed PTX (every tier here: none uses an
    // arch-specific instruction, so the 9.0a tier's PTX is compute_90's).
    let root = Path::new("fixtures/tiers");
    let (plan, warnings) = catalog(&root.join("specs"));
    assert!(warnings.is_empty(), "{warnings:?}");
    let generated = generated(&plan);
    for name in ["kernels.rs", "dispatch.rs", "ptx.rs"] {
        let (_, text) = generated
            .files
            .iter()
            .find(|(p, _)| p.file_name().is_some_and(|f| f == name))
            .unwrap();
        check(&root.join("expected").join(name), text);
    }
}

#[test]
fn a_timing_perturbation_build_differs_from_the_shipped_one_only_by_its_switch() {
    // The switch defines GEMM_AOT_TIMING_PERTURBATION in every unit before anything is
    // included, and the tables say so; everything else is the shipped build's, line for line.
    let root = Path::new("fixtures/tiny");
    let (plan, _) = catalog(&root.join("specs"));
    let prov = Provenance::new("fixture test");
    let templates = template_files(&Templates::Shipped).unwrap();
    let shipped = generate(&plan, &templates, &prov, Instrumentation::NONE);
    let perturbed = generate(
        &plan,
        &templates,
        &prov,
        Instrumentation {
            timing_perturbation: true,
        },
    );
    const DEFINE: &str = "#define GEMM_AOT_TIMING_PERTURBATION 1";
    let mut units = 0;
    for ((path, plain), (path2, text)) in shipped.files.iter().zip(&perturbed.files) {
        assert_eq!(path, path2);
        let is_unit = path.extension().is_some_and(|e| e == "cu");
        if !is_unit {
            assert_eq!(plain, text, "{}: only units change", path.display());
            continue;
        }
        units += 1;
        assert!(
            !plain.contains("GEMM_AOT_TIMING_PERTURBATION"),
            "{}",
            path.display()
        );
        let at = text
            .find(DEFINE)
            .unwrap_or_else(|| panic!("{}", path.display()));
        assert!(
            at < text.find("#include").unwrap(),
            "{}: the switch must precede every include",
            path.display()
        );
        let without: Vec<&str> = text
            .lines()
            .filter(|l| {
                !l.contains("GEMM_AOT_TIMING_PERTURBATION")
                    && !l.contains("Timing-perturbation build")
            })
            .collect();
        assert_eq!(
            without,
            plain.lines().collect::<Vec<_>>(),
            "{}",
            path.display()
        );
    }
    assert!(units > 0);
    let resources =
        |instrumentation| gemm_codegen::emit::rust::resources(&plan, None, &prov, instrumentation);
    assert!(resources(Instrumentation::NONE).contains("TIMING_PERTURBATION: bool = false"));
    assert!(resources(Instrumentation {
        timing_perturbation: true
    })
    .contains("TIMING_PERTURBATION: bool = true"));
}

#[test]
fn tiny_spec_dispatch_follows_first_match() {
    let (plan, _) = catalog(Path::new("fixtures/tiny/specs"));
    let tier = plan.specs.tier("sm80").unwrap();
    let f32 = "f32.f32.f32".parse().unwrap();
    let bf16 = "bf16.bf16.f32".parse().unwrap();
    let pick = |d, m, n, k| {
        let r = tier
            .select(gemm_spec::Policy::Exact, gemm_spec::Op::Nn, d, m, n, k)
            .unwrap();
        (r.rule, r.tile.clone())
    };
    assert_eq!(pick(f32, 31, 1, 50), (1, "small".into()));
    assert_eq!(
        pick(f32, 31, 0, 50),
        (3, "big".into()),
        "n = 0 fails route 1's n >= 1"
    );
    assert_eq!(pick(f32, 32, 8, 150), (2, "small".into()));
    assert_eq!(
        pick(bf16, 32, 8, 150),
        (3, "big".into()),
        "route 2 is f32 only"
    );
    assert_eq!(pick(f32, 32, 8, 201), (3, "big".into()));
}

#[test]
fn mixed_contracts_are_rejected_with_the_expected_message() {
    let root = Path::new("fixtures/mixed-contracts");
    let templates = template_files(&Templates::ShippedAnd(root.join("templates"))).unwrap();
    let err = validate_and_catalog(&root.join("specs"), &[], &templates, false)
        .expect_err("m switches contract");
    check(&root.join("expected-errors.txt"), &format!("{err}\n"));
}
