//! Every kernel of every shipped tier through nvcc with the tier's gencode: the build passes
//! its resource checks (no spills, registers and shared memory within the tier's budgets), and
//! the report has every kernel. nvcc is found or bootstrapped as `gemm-aot build` does.

use gemm_codegen::{build, BuildOptions, CompileMode};

#[test]
fn every_shipped_tier_compiles_without_spills() {
    let out = tempfile::tempdir().unwrap();
    let mut opts = BuildOptions::new(
        gemm_aot_tests::shipped_specs(),
        out.path(),
        "compile_tiers test",
    );
    opts.compile = CompileMode::Cubins { bootstrap: true };
    let report =
        build(&opts, &|m| eprintln!("{m}")).unwrap_or_else(|e| panic!("build failed:\n{e}"));
    let resources = report.resources.expect("compiled");
    let shipped = gemm_aot_tests::load(&gemm_aot_tests::shipped_specs())
        .expect("shipped specs validate")
        .specs;
    let names: Vec<&str> = report.tiers.iter().map(|t| t.tier.as_str()).collect();
    let want: Vec<&str> = shipped.tiers.iter().map(|t| t.name.as_str()).collect();
    assert_eq!(names, want, "every tier of specs/ compiled");
    for t in &report.tiers {
        let cubins = gemm_aot_tests::tier_cubins(out.path(), &t.tier).unwrap();
        assert!(!cubins.is_empty(), "tier {} has no cubin", t.tier);
        for (path, cubin) in &cubins {
            assert_eq!(&cubin[..4], b"\x7fELF", "{}", path.display());
        }
        let bytes: usize = cubins.iter().map(|(_, c)| c.len()).sum();
        assert_eq!(bytes, t.cubin_bytes, "tier {}", t.tier);
    }
    eprintln!(
        "{:<7} {:<50} {:>4} {:>6} {:>6}",
        "tier", "kernel", "regs", "smem", "spills"
    );
    for k in &report.catalog.kernels {
        let r = resources[k.id];
        eprintln!(
            "{:<7} {:<50} {:>4} {:>6} {:>6}",
            k.tier,
            k.name,
            r.registers,
            k.shared_bytes,
            r.spill_bytes()
        );
        let tier = report.catalog.specs.tier(&k.tier).unwrap();
        assert!(r.registers > 0, "{}: ptxas reported no registers", k.name);
        assert_eq!(r.spill_bytes(), 0, "{} spills", k.name);
        assert!(r.registers <= tier.max_registers_per_thread, "{}", k.name);
        assert!(
            r.registers * k.threads <= tier.registers_per_block,
            "{}",
            k.name
        );
        assert!(
            k.shared_bytes + r.static_shared_bytes as u64 <= tier.max_shared_bytes,
            "{}",
            k.name
        );
    }
    let report_json: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.path().join("report.json")).unwrap())
            .unwrap();
    assert_eq!(
        report_json["kernels"].as_array().unwrap().len(),
        report.catalog.kernels.len()
    );
}

#[test]
fn a_kernel_over_its_register_budget_fails_the_build_by_name() {
    // On the tiny fixture (its own specs, so the message and line are fixed): a register
    // budget of 16 a thread, below what a kernel with a 4x4 micro-tile of accumulators needs.
    let dir = tempfile::tempdir().unwrap();
    let specs = dir.path().join("specs");
    gemm_aot_tests::copy_specs(std::path::Path::new("fixtures/tiny/specs"), &specs).unwrap();
    let p = specs.join("sm80.toml");
    let text = std::fs::read_to_string(&p).unwrap().replace(
        "max_registers_per_thread = 255",
        "max_registers_per_thread = 16",
    );
    std::fs::write(&p, text).unwrap();
    let opts = BuildOptions::new(&specs, dir.path().join("out"), "compile_tiers test");
    let err = build(&opts, &|_| {})
        .expect_err("budget exceeded")
        .to_string();
    assert!(
        err.contains("kernel gemm_sm80_fma_nn_f32_f32_f32_big_m64n64k8: uses ")
            && err.contains("registers a thread; sm80 allows 16 (tile fma.big at sm80.toml:18)"),
        "{err}"
    );
    assert!(
        !dir.path().join("out/rust/kernels.rs").exists(),
        "no Rust written after a failed check"
    );
}

#[test]
fn the_tiny_fixture_compiles_with_its_own_abi_struct() {
    let out = tempfile::tempdir().unwrap();
    let opts = BuildOptions::new("fixtures/tiny/specs", out.path(), "compile_tiers test");
    let report = build(&opts, &|m| eprintln!("{m}")).unwrap_or_else(|e| panic!("{e}"));
    let res = report.resources.unwrap();
    assert_eq!(res.len(), 4);
    assert!(res.iter().all(|r| r.registers > 0 && r.spill_bytes() == 0));
}
