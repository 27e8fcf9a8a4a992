//! The tensor-core fixture (`tests/fixtures/tc/`): one family of each tensor-core kind
//! (wgmma_tma_gemm, mma_decode_tma, mma_gemm) with routes that name an unaligned kernel.
//! Checks validation, the generated Rust (argument binder, tensor-map plans, clusters,
//! persistent grids, unaligned dispatch) and CUDA (static_asserts, `__grid_constant__`), and
//! pins every generated file under `tests/fixtures/tc/expected/`. nvcc is not run: the
//! generated text is what is checked. Run with `GEMM_AOT_BLESS=1` to rewrite the expected
//! files after an intended change, then review the diff.

use gemm_codegen::pipeline::generate;
use gemm_codegen::plan::Plan;
use gemm_codegen::{Instrumentation, Provenance};
use std::path::{Path, PathBuf};

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/tc")
}

fn plan() -> Plan {
    let v = gemm_spec::load_dir(&root().join("specs")).unwrap_or_else(|e| panic!("{e}"));
    let warnings: Vec<String> = v.warnings.iter().map(|w| w.to_string()).collect();
    assert!(warnings.is_empty(), "{warnings:?}");
    Plan::new(v.specs).unwrap()
}

fn files() -> Vec<(PathBuf, String)> {
    generate(
        &plan(),
        &Provenance::new("fixture test"),
        Instrumentation::NONE,
    )
    .files
}

fn file(rel: &str) -> String {
    files()
        .into_iter()
        .find(|(p, _)| p == Path::new(rel))
        .map(|(_, t)| t)
        .unwrap_or_else(|| panic!("{rel} not generated"))
}

fn check(expected: &Path, actual: &str) {
    if std::env::var_os("GEMM_AOT_BLESS").is_some() {
        std::fs::create_dir_all(expected.parent().unwrap()).unwrap();
        std::fs::write(expected, actual).unwrap();
        return;
    }
    let want = std::fs::read_to_string(expected).unwrap_or_else(|e| {
        panic!(
            "{}: {e} (run with GEMM_AOT_BLESS=1 to create it)",
            expected.display()
        )
    });
    assert!(
        want == actual,
        "{} differs from the generated output; run with GEMM_AOT_BLESS=1 and review the diff.\n--- generated ---\n{actual}",
        expected.display()
    );
}

#[test]
fn the_fixture_generates_the_expected_files() {
    let mut compared = Vec::new();
    for (rel, text) in files() {
        if rel.starts_with("cuda/kernels-templates") {
            continue; // copies of kernels-templates/, not generated
        }
        // cuda/include/gemm_abi.h -> gemm_abi.h, cuda/sm90a/x.cu -> sm90a/x.cu, rust/x.rs -> x.rs
        let name = rel
            .strip_prefix("cuda/include")
            .or_else(|_| rel.strip_prefix("cuda"))
            .or_else(|_| rel.strip_prefix("rust"))
            .unwrap()
            .to_path_buf();
        check(&root().join("expected").join(&name), &text);
        compared.push(name.display().to_string());
    }
    compared.sort();
    assert_eq!(
        compared,
        [
            "abi.rs",
            "dispatch.rs",
            "gemm_abi.h",
            "kernels.rs",
            "ptx.rs",
            "sm90a/conversions.cu",
            "sm90a/tcdec.cu",
            "sm90a/tcmma.cu",
            "sm90a/tcwide.cu",
        ]
    );
}

#[test]
fn one_unit_per_family_in_tier_order_then_conversions() {
    let plan = plan();
    assert_eq!(
        plan.tier_modules("sm90a"),
        ["tcdec", "tcwide", "tcmma", "conversions"]
    );
    for k in &plan.kernels {
        assert_eq!(plan.tier_modules("sm90a")[k.module], k.family);
    }
}

#[test]
fn kernels_carry_threads_shared_memory_cluster_grid_and_tensor_maps() {
    use gemm_spec::{GridKind, MapOperand, Op};
    let plan = plan();
    let find = |tile: &str, op: Op| {
        plan.kernels
            .iter()
            .find(|k| k.tile.name == tile && k.op == op)
            .unwrap()
    };
    let wide = find("wide", Op::Nt);
    assert_eq!(wide.threads, 384);
    // Stages, C's staging for the TMA store (2 consumers x 2 boxes of 64 x 128 bytes), slack,
    // barriers.
    assert_eq!(
        wide.shared_bytes,
        4 * (128 * 64 + 64 * 256) * 2 + 2 * 2 * 64 * 128 + 1024 + 4 * 16
    );
    assert_eq!(wide.grid, GridKind::Persistent);
    assert_eq!(wide.cluster, (1, 1, 1));
    let boxes: Vec<_> = wide
        .tensor_maps
        .iter()
        .map(|m| {
            (
                m.field.as_str(),
                m.operand,
                m.box_inner,
                m.box_outer,
                m.swizzle_bytes,
            )
        })
        .collect();
    assert_eq!(
        boxes,
        [
            ("a_map", MapOperand::A, 64, 128, 128),
            ("b_map", MapOperand::B, 64, 256, 128),
            // nt bf16.bf16.f32: C is bf16, one 128-byte row is 64 elements.
            ("c_map", MapOperand::C, 64, 64, 128)
        ]
    );
    let mid = find("mid", Op::Tn);
    assert_eq!(mid.cluster, (2, 1, 1));
    assert_eq!(mid.threads, 256);
    assert_eq!(
        (mid.tensor_maps[0].box_inner, mid.tensor_maps[0].box_outer),
        (64, 64),
        "A stored [k, m]"
    );
    let dec = find("dec", Op::Nn);
    assert_eq!(dec.threads, 32 * 4 + 32);
    assert_eq!(dec.grid, GridKind::Tiles);
    assert_eq!(
        dec.shared_bytes,
        8 * (16 * 64 + 64 * 32) * 2 + 1024 + 8 * 16
    );
    let b = &dec.tensor_maps[1];
    assert_eq!((b.box_inner, b.box_outer, b.swizzle_bytes), (32, 64, 64));
    let dec_tn = find("dec", Op::Tn);
    let a = &dec_tn.tensor_maps[0];
    assert_eq!((a.box_inner, a.box_outer, a.swizzle_bytes), (16, 64, 32));
    let any = find("any", Op::Nn);
    assert_eq!(any.threads, 128);
    assert_eq!(any.shared_bytes, (64 + 64) * (32 + 8) * 2);
    assert!(any.tensor_maps.is_empty(), "mma_gemm reads no maps");
}

#[test]
fn the_rust_binds_arguments_and_describes_launches() {
    let abi = file("rust/abi.rs");
    assert!(abi.contains("pub fn bind(s: &crate::ArgSources) -> Self"));
    assert!(abi.contains("a_map: s.a_map,"));
    assert!(abi.contains("pub a_map: crate::TensorMap,"));
    assert!(abi.contains("(\"b_map\", 128, Operand::B)"));
    assert!(abi.contains("bytes[0..128].copy_from_slice(&self.a_map.0);"));
    let kernels = file("rust/kernels.rs");
    assert!(kernels.contains("grid: GridKind::Persistent"));
    assert!(kernels.contains("cluster: (2, 1, 1)"));
    assert!(kernels.contains("TileParams::WgmmaTma {"));
    assert!(kernels.contains("ModuleInfo {"));
    assert!(kernels.contains("cubin: cubin!(\"sm90a\", \"tcwide\")"));
    let dispatch = file("rust/dispatch.rs");
    assert!(dispatch.contains("unaligned: Some(KernelId("));
    let header = file("cuda/include/gemm_abi.h");
    assert!(header.contains("#include <cuda.h>"));
    assert!(header.contains("    CUtensorMap a_map;"));
    assert!(header.contains("static_assert(alignof(TcGemmArgs) == 128"));
}

#[test]
fn the_cuda_asserts_every_table_value_against_the_template() {
    let wide = file("cuda/sm90a/tcwide.cu");
    assert!(wide.contains("#include \"wgmma/wgmma_tma_gemm.cuh\""));
    assert!(!wide.contains("mma_gemm.cuh"), "one family a unit");
    assert!(wide.contains("WgmmaConfig<128, 256, 64, 4, 2, 1>>::kClusterM == 1"));
    assert!(wide.contains("WgmmaConfig<64, 128, 64, 6, 1, 2>>::kClusterM == 2"));
    assert!(wide.contains("::kBBoxOuter == 256"));
    assert!(wide.contains("::kSwizzleA == 128"));
    assert!(wide.contains("__launch_bounds__(384, 1) gemm_sm90a_tcwide_nn_bf16_bf16_f32_wide_m128n256k64(const __grid_constant__ TcGemmArgs args)"));
    let dec = file("cuda/sm90a/tcdec.cu");
    assert!(dec.contains("MmaDecodeConfig<16, 32, 64, 8>>::kSwizzleB == 64"));
    let mma = file("cuda/sm90a/tcmma.cu");
    assert!(mma.contains("MmaConfig<64, 64, 32, 2, 2, 2>>::kSharedBytes == 10240"));
    assert!(mma.contains("MmaConfig<64, 64, 32, 2, 2, 2>>::kClusterM == 1"));
    assert!(!mma.contains("kABoxInner"), "mma_gemm has no tensor maps");
    assert!(mma.contains("(const __grid_constant__ TcGemmArgs args)"));
}

#[test]
fn explain_names_the_unaligned_kernel_and_the_persistent_grid() {
    let plan = plan();
    let q = gemm_codegen::explain::Query {
        policy: gemm_spec::Policy::TensorCore,
        op: gemm_spec::Op::Nn,
        dtype: "bf16.bf16.f32".parse().unwrap(),
        m: 1000,
        n: 4096,
        k: 4096,
    };
    let text = gemm_codegen::explain::explain(&plan, "sm90a", &q).unwrap();
    assert!(
        text.contains("tile wide 128x256x64, 4 stage(s), 2 consumer warpgroup(s)"),
        "{text}"
    );
    assert!(text.contains("when TMA cannot take A or B"), "{text}");
    assert!(text.contains("persistent grid"), "{text}");
    let list = gemm_codegen::explain::list(&plan);
    assert!(list.contains("(unaligned: tcmma.any)"), "{list}");
}

/// With the real compiler and the templates of kernels-templates/: every kernel of the fixture
/// compiles, so each static_assert of the generated CUDA (threads, shared memory, cluster, every
/// tensor-map box and swizzle) holds against its template. Skipped without an installed nvcc.
#[test]
fn the_fixture_compiles_against_the_templates() {
    let cache = gemm_codegen::compile::cache::cache_root();
    if gemm_codegen::compile::toolchain::find(&cache).is_err() {
        eprintln!("SKIPPED: no nvcc found (run `gemm-aot toolchain install`)");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let mut opts = gemm_codegen::BuildOptions::new(
        root().join("specs"),
        dir.path().join("out"),
        "fixture test",
    );
    opts.compile = gemm_codegen::CompileMode::Cubins { bootstrap: false };
    let report = gemm_codegen::build(&opts, &|_| {}).unwrap_or_else(|e| panic!("{e}"));
    let res = report.resources.unwrap();
    assert_eq!(res.len(), 16);
    assert!(res.iter().all(|r| r.registers > 0 && r.spill_bytes() == 0));
    for m in ["tcdec", "tcwide", "tcmma", "conversions"] {
        let cubin = std::fs::read(dir.path().join(format!("out/cubins/sm90a/{m}.cubin"))).unwrap();
        assert_eq!(&cubin[..4], b"\x7fELF", "{m}");
    }
}
