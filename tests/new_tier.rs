//! Adding a GPU generation takes a spec file only: a new `sm86` tier (compute capability 8.6),
//! copied from `sm89`, validates, compiles with nvcc, and dispatches, with no code change.

use gemm_codegen::{build, BuildOptions, CompileMode};
use gemm_spec::{Dtype, DtypeTriple, Op, Policy};

#[test]
fn a_new_tier_from_a_spec_file_alone() {
    let dir = tempfile::tempdir().unwrap();
    let specs = dir.path().join("specs");
    gemm_aot_tests::copy_specs(&gemm_aot_tests::shipped_specs(), &specs).unwrap();
    let sm89 = std::fs::read_to_string(specs.join("sm89.toml")).unwrap();
    let sm86 = sm89
        .replace("name = \"sm89\"", "name = \"sm86\"")
        .replace("arch=compute_89,code=sm_89", "arch=compute_86,code=sm_86")
        .replace("compute_capability = [8, 9]", "compute_capability = [8, 6]");
    assert_ne!(sm86, sm89);
    std::fs::write(specs.join("sm86.toml"), sm86).unwrap();

    // Validates.
    let v = gemm_spec::load_dir(&specs).expect("the new tier validates");
    assert!(v.warnings.is_empty(), "{:?}", v.warnings);
    let tier = v.specs.tier("sm86").expect("sm86 is a tier");
    assert_eq!(v.specs.tier_for_capability((8, 6)).unwrap().name, "sm86");
    assert_eq!(v.specs.tier_for_capability((8, 7)).unwrap().name, "sm86");
    assert_eq!(v.specs.tier_for_capability((8, 9)).unwrap().name, "sm89");
    assert_eq!(v.specs.tier_for_capability((8, 0)).unwrap().name, "sm80");

    // Compiles (only the new tier; the others are covered by compile_tiers).
    let out = dir.path().join("out");
    let mut opts = BuildOptions::new(&specs, &out, "new_tier test");
    opts.tiers = vec!["sm86".into()];
    opts.compile = CompileMode::Cubins { bootstrap: true };
    let report = build(&opts, &|m| eprintln!("{m}")).unwrap_or_else(|e| panic!("{e}"));
    let res = report.resources.as_ref().unwrap();
    assert_eq!(report.plan.kernels.len(), 52);
    assert!(report
        .plan
        .kernels
        .iter()
        .all(|k| k.tier == "sm86" && res[k.id].spill_bytes() == 0));
    let cubin = std::fs::read(out.join("cubins/sm86.cubin")).unwrap();
    assert_eq!(&cubin[..4], b"\x7fELF");

    // Dispatches: the route table picks the decode kernels for small m and tiles beyond,
    // and the generated Rust routes to it and maps 8.6 devices to the tier.
    let bf16 = DtypeTriple::new(Dtype::Bf16, Dtype::Bf16, Dtype::F32);
    let pick = |m| {
        tier.select(Policy::Exact, Op::Nn, bf16, m, 4096, 4096)
            .unwrap()
            .tile
            .clone()
    };
    assert_eq!(pick(1), "dec4");
    assert_eq!(pick(16), "dec16");
    assert_eq!(pick(100), "mid");
    assert_eq!(pick(4096), "tiled");
    let thin = report
        .plan
        .kernels
        .iter()
        .find(|k| k.op == Op::Nn && k.dtype == bf16 && k.tile.name == "dec4")
        .unwrap();
    assert_eq!(
        thin.name,
        "gemm_sm86_fmadec_nn_bf16_bf16_f32_dec4_m4n32k256"
    );
    assert!(cubin
        .windows(thin.name.len())
        .any(|w| w == thin.name.as_bytes()));
    let dispatch = std::fs::read_to_string(out.join("rust/dispatch.rs")).unwrap();
    assert!(
        dispatch.contains("(0, Policy::Exact, Op::Nn, Dtype::Bf16, Dtype::Bf16, Dtype::F32) => {"),
        "{dispatch}"
    );
    assert!(dispatch.contains(&format!("kernel: KernelId({}),", thin.id)));
    let kernels = std::fs::read_to_string(out.join("rust/kernels.rs")).unwrap();
    assert!(
        kernels.contains("(8, minor) if minor >= 6 => Some(TierId(0)),"),
        "{kernels}"
    );
    assert!(kernels.contains("name: \"sm86\""));
}
