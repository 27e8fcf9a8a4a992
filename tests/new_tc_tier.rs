//! A tensor-core tier from a spec file alone: the README's "Adding a tier" steps for a device
//! with less shared memory than the tier it is copied from. `specs/sm80.toml` becomes
//! `specs/sm86.toml` (Ampere consumer parts: 99 KiB a block): `name`, `gencode`,
//! `compute_capability`, `max_shared_bytes`, and the tensor-core `wide` tile one stage shorter.
//! No Rust changes: the tier validates (an over-budget tile is refused at its line), routes the
//! tensor-core policy as sm80 does (tc-k16 and TF32's tc-tf32-k8, each route with its unaligned
//! kernel), compiles with zero spills, and embeds its PTX for compute_86.

use gemm_codegen::{build, BuildOptions, CompileMode};
use gemm_spec::{Op, Policy};

/// The wide tcasync tile as sm80.toml writes it, and as sm86 gets it.
const SM80_WIDE: &str = "name = \"wide\"\nm = 128\nn = 128\nk = 32\nstages = 4\n";

fn sm86_from_sm80(sm80: &str, wide_stages: u32) -> String {
    let edits = [
        ("name = \"sm80\"", "name = \"sm86\"".to_string()),
        (
            "arch=compute_80,code=sm_80",
            "arch=compute_86,code=sm_86".to_string(),
        ),
        (
            "compute_capability = [8, 0]",
            "compute_capability = [8, 6]".to_string(),
        ),
        (
            "max_shared_bytes = 166912",
            "max_shared_bytes = 101376".to_string(),
        ),
        (
            SM80_WIDE,
            SM80_WIDE.replace("stages = 4", &format!("stages = {wide_stages}")),
        ),
    ];
    let mut text = sm80.to_string();
    for (old, new) in edits {
        assert!(
            text.contains(old),
            "sm80.toml has no `{old}`: the steps no longer apply as written"
        );
        text = text.replacen(old, &new, 1);
    }
    text
}

/// 1-based line of the `[[tile]]` header of the tile whose block holds `block`.
fn tile_line(text: &str, block: &str) -> usize {
    let at = text.find(block).expect("tile block present");
    text[..at]
        .lines()
        .enumerate()
        .filter(|(_, l)| *l == "[[tile]]")
        .last()
        .unwrap()
        .0
        + 1
}

#[test]
fn a_tensor_core_tier_from_a_spec_file_alone() {
    let dir = tempfile::tempdir().unwrap();
    let specs = dir.path().join("specs");
    gemm_aot_tests::copy_specs(&gemm_aot_tests::shipped_specs(), &specs).unwrap();
    let sm80_text = std::fs::read_to_string(specs.join("sm80.toml")).unwrap();

    // Over the budget: 8 stages of 128x128x32 need 131072 bytes; refused at the tile's line.
    let too_deep = sm86_from_sm80(&sm80_text, 8);
    std::fs::write(specs.join("sm86.toml"), &too_deep).unwrap();
    let errors: Vec<String> = gemm_aot_tests::load(&specs)
        .expect_err("8 stages exceed 99 KiB")
        .0
        .iter()
        .map(|e| e.to_string())
        .collect();
    let line = tile_line(&too_deep, "family = \"tcasync\"\nname = \"wide\"");
    assert_eq!(
        errors,
        [format!("sm86.toml:{line}: tile tcasync.wide 128x128x32 needs 131072 bytes of shared memory; sm86 allows 101376")]
    );

    // Adjusted: validates without warnings and serves 8.6 to 8.8.
    std::fs::write(specs.join("sm86.toml"), sm86_from_sm80(&sm80_text, 3)).unwrap();
    let v = gemm_aot_tests::load(&specs).expect("the new tier validates");
    assert!(v.warnings.is_empty(), "{:?}", v.warnings);
    let tier = v.specs.tier("sm86").unwrap();
    let sm80 = v.specs.tier("sm80").unwrap();
    for minor in 6..=8 {
        let t = v
            .specs
            .tier_for_capability((8, minor))
            .map(|t| t.name.as_str());
        assert_eq!(t, Some("sm86"), "8.{minor}");
    }

    // Routes the tensor-core policy as sm80 does, at every route boundary of every (op, dtype)
    // sm80 serves under it, to kernels of one contract with an unaligned kernel.
    let tc_routes: Vec<_> = sm80
        .routes
        .iter()
        .filter(|r| r.policy == Policy::TensorCore)
        .collect();
    assert!(!tc_routes.is_empty(), "sm80 routes the tensor-core policy");
    for r in &tc_routes {
        let mut ms: Vec<u64> = vec![1, 4096];
        for s in sm80.routes_for(Policy::TensorCore, r.op, r.dtype) {
            ms.extend(s.m.max.map(|max| [max, max + 1]).into_iter().flatten());
        }
        for m in ms {
            for n in [4096, 14336] {
                let pick = |t: &gemm_spec::Tier| {
                    let hit = t
                        .select(Policy::TensorCore, r.op, r.dtype, m, n, 4096)
                        .unwrap();
                    let contract = v.specs.families[&hit.family].contract.clone();
                    let unaligned = hit.unaligned.as_ref().map(|u| u.to_string());
                    (hit.family.clone(), hit.tile.clone(), contract, unaligned)
                };
                let got = pick(tier);
                assert_eq!(got, pick(sm80), "{} {} m = {m} n = {n}", r.op, r.dtype);
                assert!(
                    got.2.starts_with("tc-"),
                    "a tensor-core contract: {}",
                    got.2
                );
                assert!(got.3.is_some(), "cp.async kernels need an unaligned kernel");
            }
        }
    }

    // Compiles with zero spills, and embeds PTX for compute_86 beside each cubin.
    let out = dir.path().join("out");
    let mut opts = BuildOptions::new(&specs, &out, "new_tc_tier test");
    opts.tiers = vec!["sm86".into()];
    opts.compile = CompileMode::Cubins { bootstrap: true };
    let report = build(&opts, &|m| eprintln!("{m}")).unwrap_or_else(|e| panic!("{e}"));
    let res = report.resources.as_ref().unwrap();
    let tc: Vec<_> = report
        .catalog
        .kernels
        .iter()
        .filter(|k| k.family == "tcasync")
        .collect();
    assert!(!tc.is_empty());
    assert!(report
        .catalog
        .kernels
        .iter()
        .all(|k| res[k.id].spill_bytes() == 0));
    let wide = tc
        .iter()
        .find(|k| k.op == Op::Nn && k.tile.name == "wide")
        .unwrap();
    let ptx = std::fs::read_to_string(out.join("cubins/sm86/tcasync.ptx")).unwrap();
    assert!(ptx.contains(".target sm_86"), "PTX for compute_86");
    assert!(ptx.contains(&wide.name), "the PTX holds {}", wide.name);
    assert!(ptx.contains("mma.sync.aligned.m16n8k16") && ptx.contains("cp.async"));
    let table = std::fs::read_to_string(out.join("rust/ptx.rs")).unwrap();
    assert!(table.contains("tier: \"sm86\"") && table.contains("target: \"compute_86\""));
    assert!(
        table.contains("ptx: ptx!(\"sm86\", \"tcasync\")"),
        "{table}"
    );
    let dispatch = std::fs::read_to_string(out.join("rust/dispatch.rs")).unwrap();
    assert!(dispatch.contains(&format!("kernel: KernelId({}),", wide.id)));
}
