//! The tensor-core fixture (`fixtures/tc/`): one family of each tensor-core kind
//! (wgmma_tma_gemm, mma_decode_tma, mma_gemm) with routes that name an unaligned kernel.
//! Checks validation, the generated Rust (argument binds with their flag bits, tensor-map
//! plans, clusters, persistent grids, unaligned dispatch) and CUDA (each kernel's config,
//! `__grid_constant__`, launch bounds), and pins every generated file under
//! `fixtures/tc/expected/` (`ensure_file_contents`: `GEMM_AOT_BLESS=1` rewrites them after an
//! intended change). The last test compiles the fixture with nvcc when one is installed.

use gemm_aot_tests::{catalog, ensure_file_contents, generated};
use gemm_codegen::catalog::KernelCatalog;
use std::path::{Path, PathBuf};

fn root() -> PathBuf {
    PathBuf::from("fixtures/tc")
}

fn plan() -> KernelCatalog {
    let (c, warnings) = catalog(&root().join("specs"));
    assert!(warnings.is_empty(), "{warnings:?}");
    c
}

fn files() -> Vec<(PathBuf, String)> {
    generated(&plan()).files
}

fn file(rel: &str) -> String {
    files()
        .into_iter()
        .find(|(p, _)| p == Path::new(rel))
        .map(|(_, t)| t)
        .unwrap_or_else(|| panic!("{rel} not generated"))
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
        ensure_file_contents(&root().join("expected").join(&name), &text);
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
    assert_eq!(
        wide.min_blocks,
        Some(1),
        "setmaxnreg needs __launch_bounds__(384, 1)"
    );
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
    assert!(abi.contains("pub fn bind(s: &ArgSources) -> Self"));
    assert!(abi.contains("a_map: s.a_map.unwrap_or_default(),"));
    assert!(abi.contains("pub a_map: TensorMap,"));
    // The flag bits from the spec's `flags`: set exactly when their source is present.
    assert!(abi.contains("flags: 0u32 | (u32::from(s.present(\"bias.ptr\")) << 0)"));
    assert!(abi.contains("| (u32::from(s.present(\"c.tensor_map\")) << 1)"));
    assert!(abi.contains("pub const FLAG_C_TENSOR_MAP: u32 = 1 << 1;"));
    assert!(abi.contains("kind: FieldKind::TensorMap(Operand::B)"));
    assert!(abi.contains("bytes[0..128].copy_from_slice(&self.a_map.0);"));
    assert!(abi.contains("pub static ABIS: [AbiInfo; 2]"));
    let kernels = file("rust/kernels.rs");
    assert!(kernels.contains("grid: GridKind::Persistent"));
    assert!(kernels.contains("operands: OperandPath::Tma"));
    assert!(kernels.contains("cluster: (2, 1, 1)"));
    // Every parameter of the kind, defaults filled in (one a line once the list is long).
    for p in [
        "(\"stages\", 4),",
        "(\"consumers\", 2),",
        "(\"cluster_m\", 1),",
        "(\"split_k\", 1),",
        "(\"slots\", 0),",
    ] {
        assert!(kernels.contains(p), "{p}");
    }
    assert!(kernels.contains("template: \"wgmma_tma_gemm\""));
    assert!(kernels.contains("ModuleInfo {"));
    assert!(kernels.contains("cubin: cubin!(\"sm90a\", \"tcwide\")"));
    assert!(kernels.contains("pub static ROUTES: [RouteInfo;"));
    assert!(kernels.contains("location: \"sm90a.toml:"));
    let dispatch = file("rust/dispatch.rs");
    assert!(dispatch.contains("unaligned: Some(KernelId("));
    let header = file("cuda/include/gemm_abi.h");
    assert!(header.contains("#include <cuda.h>"));
    assert!(header.contains("    CUtensorMap a_map;"));
    assert!(header.contains("static constexpr unsigned kFlagCTensorMap = 1u << 1;"));
    assert!(header.contains("static_assert(alignof(TcGemmArgs) == 128"));
}

#[test]
fn each_kernel_gets_its_config_from_the_manifest() {
    let wide = file("cuda/sm90a/tcwide.cu");
    assert!(wide.contains("#include \"wgmma/wgmma_tma_gemm.cuh\""));
    assert!(!wide.contains("mma_gemm.cuh"), "one family a unit");
    let cfg = "struct gemm_sm90a_tcwide_nn_bf16_bf16_f32_wide_m128n256k64_cfg {";
    let at = wide.find(cfg).expect("the wide kernel's config");
    let body = &wide[at..at + wide[at..].find("};").unwrap()];
    for line in [
        "static constexpr int M = 128;",
        "static constexpr int STAGES = 4;",
        "static constexpr int CONSUMERS = 2;",
        "static constexpr int CLUSTER_M = 1;",
        "static constexpr int kThreads = 384;",
        "static constexpr int kSharedBytes = 230464;",
        "static constexpr int kBBoxOuter = 64;", // nn: B stored [k, n], boxes of 64 k rows
        "static constexpr int kSwizzleA = 128;",
        "static constexpr int kStepK = 16;",
        "static constexpr int kMaxSharedBytes = 232448;",
    ] {
        assert!(body.contains(line), "{line}\n{body}");
    }
    assert!(wide.contains("__launch_bounds__(384, 1) gemm_sm90a_tcwide_nn_bf16_bf16_f32_wide_m128n256k64(const __grid_constant__ TcGemmArgs args)"));
    assert!(wide.contains("wgmma_tma_gemm<__nv_bfloat16, __nv_bfloat16, kOpNN, gemm_sm90a_tcwide_nn_bf16_bf16_f32_wide_m128n256k64_cfg>::run(args);"));
    assert!(
        wide.contains("static constexpr int CLUSTER_M = 2;"),
        "the mid tile's cluster"
    );
    // Nothing here restates the template's rules: no static_assert of the generator's own.
    assert!(!wide.contains("static_assert"));
    let dec = file("cuda/sm90a/tcdec.cu");
    assert!(dec.contains("static constexpr int kSwizzleB = 64;"));
    assert!(dec.contains("static constexpr int kConsumerWarps = 4;"));
    let mma = file("cuda/sm90a/tcmma.cu");
    assert!(mma.contains("static constexpr int kSharedBytes = 10240;"));
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
        sms: None,
    };
    let text = gemm_codegen::explain::explain(&plan, "sm90a", &q).unwrap();
    assert!(
        text.contains("tile wide 128x256x64: 4 stage(s), 2 consumer warpgroup(s)"),
        "{text}"
    );
    assert!(text.contains("When TMA cannot take A or B"), "{text}");
    assert!(text.contains("persistent grid"), "{text}");
    let list = gemm_codegen::explain::list(&plan);
    assert!(list.contains("(unaligned: tcmma.any)"), "{list}");
}

/// With the real compiler and the templates of kernels-templates/: every kernel of the fixture
/// compiles, so each template's check of its layout against the config the generator delivered
/// (threads, shared memory, every tensor-map box and swizzle) holds. Skipped without an
/// installed nvcc.
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
    // A resource report for every kernel (the batch tile's kBatch = 1 wgmma instantiation
    // among them).
    let plan = plan();
    assert_eq!(res.len(), plan.kernels.len());
    assert!(plan
        .kernels
        .iter()
        .any(|k| k.batch && !k.tensor_maps.is_empty()));
    assert!(res.iter().all(|r| r.registers > 0 && r.spill_bytes() == 0));
    for m in ["tcdec", "tcwide", "tcmma", "conversions"] {
        let cubin = std::fs::read(dir.path().join(format!("out/cubins/sm90a/{m}.cubin"))).unwrap();
        assert_eq!(&cubin[..4], b"\x7fELF", "{m}");
    }
}
