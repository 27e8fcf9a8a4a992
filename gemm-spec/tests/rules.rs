//! One failing spec per validation rule, each asserting its message (file, line, numbers).

use gemm_spec::{load_sources, SpecSource, Validated};

const SHARED: &str = r#"
[instruction.fma]
shape = { m = 1, n = 1, k = 1 }
min_compute_capability = [5, 0]

[instruction.wgmma]
shape = { m = 64, n = 8, k = 16 }
min_compute_capability = [9, 0]
max_compute_capability = [9, 0]
arch_specific = true

[contract.fma-seq]
doc = "one f32 fma chain over ascending k"

[contract.fma-pair]
doc = "two interleaved chains, added at the end"

[abi.GemmArgs]
fields = [
  { name = "a", type = "const_ptr" },
  { name = "c", type = "mut_ptr" },
  { name = "m", type = "i32" },
  { name = "beta", type = "f32" },
]

[family.fma]
template = "fma_gemm"
header = "fma/fma_gemm.cuh"
contract = "fma-seq"
policy = "exact"
abi = "GemmArgs"
instruction = "fma"
staging = "f32"
grid = "tiles"
variants.nn = ["f32.f32.f32", "bf16.bf16.f32"]

[family.fmb]
template = "fmb_gemm"
header = "fmb/fmb_gemm.cuh"
contract = "fma-pair"
policy = "exact"
abi = "GemmArgs"
instruction = "fma"
staging = "f32"
grid = "tiles"
variants.nn = ["f32.f32.f32"]

[abi.ConvertArgs]
fields = [
  { name = "src", type = "const_ptr" },
  { name = "dst", type = "mut_ptr" },
  { name = "rows", type = "i32" },
  { name = "cols", type = "i32" },
  { name = "ld_src", type = "i32" },
  { name = "ld_dst", type = "i32" },
]

[conversion.upcast]
template = "convert_matrix"
header = "convert/convert_matrix.cuh"
abi = "ConvertArgs"
threads = 256
variants = ["bf16.f32", "f16.f32"]

[conversion.narrow]
template = "convert_matrix"
header = "convert/convert_matrix.cuh"
abi = "ConvertArgs"
threads = 128
variants = ["f32.bf16"]
"#;

const TIER: &str = r#"[tier]
name = "sm90a"
gencode = "arch=compute_90a,code=sm_90a"
compute_capability = [9, 0]
max_shared_bytes = 232448
max_registers_per_thread = 255
families = ["fma", "fmb"]

[[tile]]
family = "fma"
name = "thin"
m = 8
n = 64
k = 32
thread_m = 1
thread_n = 2

[[tile]]
family = "fma"
name = "tiled"
m = 128
n = 128
k = 8
stages = 2
thread_m = 8
thread_n = 8

[[tile]]
family = "fmb"
name = "wide"
m = 64
n = 64
k = 16
thread_m = 4
thread_n = 4

[[route]]
policy = "exact"
op = "nn"
dtype = "any"
m = { max = 64 }
kernel = "fma.thin"

[[route]]
policy = "exact"
op = "nn"
dtype = "any"
kernel = "fma.tiled"
"#;

fn load(shared: &str, tier: &str) -> Result<Validated, Vec<String>> {
    load_sources(&[
        SpecSource {
            file: "families.toml".into(),
            text: shared.into(),
        },
        SpecSource {
            file: "sm90a.toml".into(),
            text: tier.into(),
        },
    ])
    .map_err(|e| e.0.iter().map(|e| e.to_string()).collect())
}

/// The errors of the base spec with one replacement made in the shared or the tier file.
fn errors_with(in_shared: bool, from: &str, to: &str) -> Vec<String> {
    let (mut shared, mut tier) = (SHARED.to_string(), TIER.to_string());
    let target = if in_shared { &mut shared } else { &mut tier };
    assert!(target.contains(from), "fixture lacks {from:?}");
    *target = target.replacen(from, to, 1);
    match load(&shared, &tier) {
        Ok(_) => panic!("spec with {from:?} -> {to:?} validated"),
        Err(e) => e,
    }
}

fn assert_one(errors: Vec<String>, expected: &str) {
    assert_eq!(errors, vec![expected.to_string()]);
}

#[test]
fn base_spec_is_valid_and_warns_about_unreached_kernels() {
    let v = load(SHARED, TIER).expect("base spec validates");
    let t = v.specs.tier("sm90a").unwrap();
    assert_eq!(
        t.routes.len(),
        4,
        "two rules, each expanded over two dtypes"
    );
    let warnings: Vec<String> = v.warnings.iter().map(|w| w.to_string()).collect();
    assert_eq!(
        warnings,
        vec!["sm90a.toml:28: warning: kernel fmb.wide nn f32.f32.f32 of tier sm90a is compiled but no route reaches it"]
    );
}

#[test]
fn unknown_keys_are_rejected_with_their_line() {
    let e = errors_with(false, "thread_n = 2\n", "thread_n = 2\nwarps = 4\n");
    assert_eq!(e.len(), 1);
    assert!(
        e[0].starts_with("sm90a.toml:17: unknown field `warps`"),
        "{}",
        e[0]
    );
}

#[test]
fn malformed_toml_names_the_line() {
    let e = errors_with(false, "m = 8\n", "m = = 8\n");
    assert_eq!(e.len(), 1);
    assert!(e[0].starts_with("sm90a.toml:12: "), "{}", e[0]);
}

#[test]
fn tile_must_be_a_multiple_of_the_instruction_shape() {
    let shared = format!(
        "{SHARED}\n[family.tc]\ntemplate = \"tc\"\nheader = \"tc/tc.cuh\"\ncontract = \"fma-seq\"\npolicy = \"exact\"\nabi = \"GemmArgs\"\ninstruction = \"wgmma\"\nstaging = \"operand\"\ngrid = \"tiles\"\nvariants.nn = [\"bf16.bf16.f32\"]\n"
    );
    let tier = TIER.replace(r#"families = ["fma", "fmb"]"#, r#"families = ["fma", "fmb", "tc"]"#)
        + "\n[[tile]]\nfamily = \"tc\"\nname = \"big\"\nm = 96\nn = 256\nk = 64\nthread_m = 32\nthread_n = 64\n";
    let e = load(&shared, &tier).unwrap_err();
    assert_eq!(
        e,
        vec!["sm90a.toml:50: tile tc.big 96x256x64: m = 96 is not a multiple of 64 (instruction wgmma is 64x8x16)"]
    );
}

#[test]
fn thread_tile_must_divide_the_tile() {
    assert_one(
        errors_with(false, "thread_n = 2\n", "thread_n = 3\n"),
        "sm90a.toml:9: tile fma.thin 8x64x32: n = 64 is not a multiple of 3 (each thread computes thread_n columns)",
    );
}

#[test]
fn threads_per_block_are_bounded() {
    assert_one(
        errors_with(false, "thread_m = 8\nthread_n = 8\n", "thread_m = 2\nthread_n = 2\n"),
        "sm90a.toml:18: tile fma.tiled 128x128x8 runs 4096 threads a block; sm90a needs a multiple of 32 and at most 1024",
    );
}

#[test]
fn shared_memory_must_fit_the_tier() {
    assert_one(
        errors_with(false, "m = 128\nn = 128\nk = 8\nstages = 2", "m = 128\nn = 128\nk = 128\nstages = 2"),
        "sm90a.toml:18: tile fma.tiled 128x128x128 needs 262144 bytes of shared memory; sm90a allows 232448",
    );
}

#[test]
fn instructions_must_exist_on_the_tier() {
    let shared = SHARED.replace(
        "[family.fmb]\ntemplate = \"fmb_gemm\"\nheader = \"fmb/fmb_gemm.cuh\"\ncontract = \"fma-pair\"\npolicy = \"exact\"\nabi = \"GemmArgs\"\ninstruction = \"fma\"",
        "[family.fmb]\ntemplate = \"fmb_gemm\"\nheader = \"fmb/fmb_gemm.cuh\"\ncontract = \"fma-pair\"\npolicy = \"exact\"\nabi = \"GemmArgs\"\ninstruction = \"wgmma\"",
    );
    let tier = TIER
        .replace("compute_90a,code=sm_90a", "compute_80,code=sm_80")
        .replace("[9, 0]", "[8, 0]");
    assert_eq!(
        load(&shared, &tier).unwrap_err(),
        vec!["sm90a.toml:1: family fmb uses instruction wgmma, which needs compute capability >= 9.0 and <= 9.0 on an arch-specific target (sm_XYa); tier sm90a is compute capability 8.0 (portable target)"]
    );
}

#[test]
fn every_routed_combination_needs_a_catch_all() {
    assert_eq!(
        errors_with(false, "dtype = \"any\"\nkernel = \"fma.tiled\"", "dtype = \"any\"\nk = { min = 1 }\nkernel = \"fma.tiled\""),
        [
            "sm90a.toml:44: tier sm90a routes exact nn f32.f32.f32 but has no catch-all route for it: add a route without m, n or k conditions after the others",
            "sm90a.toml:44: tier sm90a routes exact nn bf16.bf16.f32 but has no catch-all route for it: add a route without m, n or k conditions after the others",
        ]
    );
}

#[test]
fn routes_must_name_an_existing_tile() {
    assert_one(
        errors_with(false, "kernel = \"fma.thin\"", "kernel = \"fma.skinny\""),
        "sm90a.toml:37: route 1: kernel `fma.skinny` names tile skinny, which tier sm90a does not define for fma (tiles: thin, tiled)",
    );
}

#[test]
fn routes_must_name_a_family_the_tier_uses() {
    assert_one(
        errors_with(false, "kernel = \"fma.thin\"", "kernel = \"tc.thin\""),
        "sm90a.toml:37: route 1: kernel `tc.thin` names family tc, which tier sm90a does not use (families: fma, fmb)",
    );
}

#[test]
fn routes_must_name_a_variant_the_family_has() {
    assert_one(
        errors_with(false, "op = \"nn\"\ndtype = \"any\"\nm = { max = 64 }", "op = \"nn\"\ndtype = \"f16.f16.f32\"\nm = { max = 64 }"),
        "sm90a.toml:37: route 1: kernel `fma.thin` has no nn f16.f16.f32 variant: family fma does not list it",
    );
}

#[test]
fn route_policy_must_match_the_family() {
    assert_one(
        errors_with(false, "policy = \"exact\"\nop = \"nn\"\ndtype = \"any\"\nm = { max = 64 }", "policy = \"tensor-core\"\nop = \"nn\"\ndtype = \"any\"\nm = { max = 64 }"),
        "sm90a.toml:37: route 1: kernel `fma.thin` is family fma of policy exact, but the route is for policy tensor-core",
    );
}

#[test]
fn ranges_must_not_be_empty() {
    assert_one(
        errors_with(false, "m = { max = 64 }", "m = { min = 65, max = 64 }"),
        "sm90a.toml:37: route 1: m range has min 65 > max 64",
    );
}

#[test]
fn batch_invariance_rejects_a_contract_switch_on_m() {
    let tier = TIER.replace(
        "dtype = \"any\"\nm = { max = 64 }\nkernel = \"fma.thin\"",
        "dtype = \"f32.f32.f32\"\nm = { max = 64 }\nkernel = \"fmb.wide\"\n\n[[route]]\npolicy = \"exact\"\nop = \"nn\"\ndtype = \"bf16.bf16.f32\"\nm = { max = 64 }\nkernel = \"fma.thin\"",
    );
    assert_eq!(
        load(SHARED, &tier).unwrap_err(),
        vec!["sm90a.toml:51: batch invariance broken in tier sm90a for exact nn f32.f32.f32: at n = 0, k = 0, m = 0 takes route 1 (fmb.wide, contract fma-pair) but m = 65 takes route 3 (fma.tiled, contract fma-seq); every m of one (n, k) must reach one contract"]
    );
}

#[test]
fn batch_invariance_allows_a_contract_switch_on_n_and_k() {
    // Switching contract by n or k keeps every row independent of m.
    let tier = TIER.replace(
        "dtype = \"any\"\nm = { max = 64 }\nkernel = \"fma.thin\"",
        "dtype = \"f32.f32.f32\"\nn = { max = 1000 }\nk = { min = 17 }\nkernel = \"fmb.wide\"\n\n[[route]]\npolicy = \"exact\"\nop = \"nn\"\ndtype = \"any\"\nm = { max = 64 }\nkernel = \"fma.thin\"",
    );
    let v = load(SHARED, &tier).expect("n/k switch is batch-invariant");
    let t = v.specs.tier("sm90a").unwrap();
    let f32 = "f32.f32.f32".parse().unwrap();
    let pick = |m, n, k| {
        let r = t
            .select(gemm_spec::Policy::Exact, gemm_spec::Op::Nn, f32, m, n, k)
            .unwrap();
        format!("{}.{}", r.family, r.tile)
    };
    assert_eq!(pick(1, 512, 64), "fmb.wide");
    assert_eq!(pick(4096, 512, 64), "fmb.wide");
    assert_eq!(pick(1, 2048, 64), "fma.thin");
    assert_eq!(pick(4096, 2048, 64), "fma.tiled");
}

#[test]
fn an_earlier_m_split_must_share_its_contract_with_later_overlapping_routes() {
    // Route 1 (m <= 64, n <= 100) uses fma-pair; route 2 overlaps it in n with fma-seq.
    let tier = TIER.replace(
        "dtype = \"any\"\nm = { max = 64 }\nkernel = \"fma.thin\"",
        "dtype = \"f32.f32.f32\"\nm = { max = 64 }\nn = { min = 50, max = 100 }\nkernel = \"fmb.wide\"\n\n[[route]]\npolicy = \"exact\"\nop = \"nn\"\ndtype = \"bf16.bf16.f32\"\nkernel = \"fma.thin\"",
    );
    let e = load(SHARED, &tier).unwrap_err();
    assert_eq!(e.len(), 1, "{e:?}");
    assert!(
        e[0].contains("at n = 50, k = 0, m = 0 takes route 1 (fmb.wide, contract fma-pair) but m = 65 takes route 3 (fma.tiled, contract fma-seq)"),
        "{}",
        e[0]
    );
}

#[test]
fn references_must_resolve() {
    assert_one(
        errors_with(
            true,
            "contract = \"fma-seq\"\npolicy",
            "contract = \"fma-exact\"\npolicy",
        ),
        "families.toml:26: contract `fma-exact` is not defined; defined: fma-pair, fma-seq",
    );
    assert_one(
        errors_with(
            false,
            r#"families = ["fma", "fmb"]"#,
            r#"families = ["fma", "fmb", "mma"]"#,
        ),
        "sm90a.toml:1: family `mma` is not defined; defined: fma, fmb",
    );
}

#[test]
fn gencode_must_match_the_compute_capability() {
    assert_one(
        errors_with(false, "compute_capability = [9, 0]", "compute_capability = [8, 9]"),
        "sm90a.toml:1: tier sm90a: gencode `arch=compute_90a,code=sm_90a` targets sm_90 but compute_capability is [8, 9]",
    );
    let e = errors_with(false, "code=sm_90a", "code=sm_90");
    assert_eq!(
        e,
        vec!["sm90a.toml:1: tier sm90a: gencode `arch=compute_90a,code=sm_90` names compute_90a but sm_90; they must be the same target"]
    );
}

#[test]
fn abi_fields_are_checked() {
    assert_one(
        errors_with(true, r#"{ name = "m", type = "i32" }"#, r#"{ name = "m", type = "int" }"#),
        "families.toml:18: ABI struct GemmArgs: field `m` has type `int`; expected one of const_ptr, mut_ptr, i32, u32, i64, u64, f32",
    );
    assert_one(
        errors_with(
            true,
            r#"{ name = "m", type = "i32" }"#,
            r#"{ name = "a", type = "i32" }"#,
        ),
        "families.toml:18: ABI struct GemmArgs: field `a` appears twice",
    );
}

#[test]
fn abi_layout_follows_c_rules() {
    let shared = SHARED.replace(
        r#"{ name = "beta", type = "f32" },"#,
        r#"{ name = "beta", type = "f32" }, { name = "n", type = "i32" }, { name = "stride", type = "i64" },"#,
    );
    let v = load(&shared, TIER).unwrap();
    let abi = &v.specs.abis["GemmArgs"];
    let offsets: Vec<(&str, u64)> = abi
        .fields
        .iter()
        .map(|f| (f.name.as_str(), f.offset))
        .collect();
    assert_eq!(
        offsets,
        [
            ("a", 0),
            ("c", 8),
            ("m", 16),
            ("beta", 20),
            ("n", 24),
            ("stride", 32)
        ]
    );
    assert_eq!((abi.size, abi.align), (40, 8));
}

#[test]
fn names_and_duplicates_are_checked() {
    assert_one(
        errors_with(false, "name = \"thin\"", "name = \"Thin\""),
        "sm90a.toml:9: tile name `Thin` must be lowercase letters and digits, starting with a letter",
    );
    let e = load_sources(&[
        SpecSource {
            file: "families.toml".into(),
            text: SHARED.into(),
        },
        SpecSource {
            file: "sm90a.toml".into(),
            text: TIER.into(),
        },
        SpecSource {
            file: "sm90b.toml".into(),
            text: TIER.into(),
        },
    ])
    .unwrap_err();
    assert_eq!(e.0.len(), 1);
    assert_eq!(
        e.0[0].to_string(),
        "sm90b.toml:1: tier `sm90a` is defined twice; the first is at sm90a.toml:1"
    );
}

#[test]
fn two_tiers_may_not_claim_one_capability() {
    let e = load_sources(&[
        SpecSource {
            file: "families.toml".into(),
            text: SHARED.into(),
        },
        SpecSource {
            file: "sm90a.toml".into(),
            text: TIER.into(),
        },
        SpecSource {
            file: "sm90x.toml".into(),
            text: TIER.replace("name = \"sm90a\"", "name = \"sm90x\""),
        },
    ])
    .unwrap_err();
    assert_eq!(
        e.0[0].to_string(),
        "sm90x.toml:1: tiers sm90a and sm90x both claim compute capability 9.0 (arch-specific): the device's tier would be ambiguous"
    );
}

#[test]
fn tiles_and_routes_need_a_tier() {
    let e = load_sources(&[
        SpecSource { file: "families.toml".into(), text: SHARED.into() },
        SpecSource { file: "sm90a.toml".into(), text: TIER.into() },
        SpecSource { file: "stray.toml".into(), text: "[[route]]\npolicy = \"exact\"\nop = \"nn\"\ndtype = \"any\"\nkernel = \"fma.thin\"\n".into() },
    ])
    .unwrap_err();
    assert_eq!(
        e.0[0].to_string(),
        "stray.toml:1: routes in a file without a [tier] table: tiles and routes belong to the tier of their file"
    );
}

#[test]
fn a_folder_without_tiers_is_an_error() {
    let e = load_sources(&[SpecSource {
        file: "families.toml".into(),
        text: SHARED.into(),
    }])
    .unwrap_err();
    assert_eq!(
        e.0[0].to_string(),
        "families.toml:0: the specs define no tier: add a file with a [tier] table"
    );
    let e = load_sources(&[]).unwrap_err();
    assert_eq!(
        e.0[0].to_string(),
        "<specs>:0: the spec folder has no .toml files"
    );
}

#[test]
fn shadowed_routes_warn() {
    let tier = TIER.replace(
        "dtype = \"any\"\nkernel = \"fma.tiled\"",
        "dtype = \"any\"\nkernel = \"fma.tiled\"\n\n[[route]]\npolicy = \"exact\"\nop = \"nn\"\ndtype = \"any\"\nkernel = \"fma.thin\"",
    );
    let v = load(SHARED, &tier).unwrap();
    let w: Vec<String> = v.warnings.iter().map(|w| w.to_string()).collect();
    assert!(
        w.contains(&"sm90a.toml:50: warning: route 3 never wins for exact nn f32.f32.f32: earlier routes match every shape it matches".to_string()),
        "{w:?}"
    );
}

#[test]
fn the_shipped_specs_validate_without_warnings() {
    let v = gemm_spec::load_dir(std::path::Path::new("../specs")).expect("shipped specs validate");
    assert!(v.warnings.is_empty(), "{:?}", v.warnings);
    let names: Vec<&str> = v.specs.tiers.iter().map(|t| t.name.as_str()).collect();
    assert_eq!(names, ["sm100a", "sm120", "sm80", "sm89", "sm90a"]);
    for t in &v.specs.tiers {
        // NN and NT over every dtype pair, TN into f32, all exact.
        assert_eq!(t.served().len(), 13, "tier {}", t.name);
    }
}

#[test]
fn conversions_resolve_with_their_kind() {
    let v = load(SHARED, TIER).expect("base spec validates");
    let c = &v.specs.conversions["upcast"];
    assert_eq!(c.threads, 256);
    assert_eq!(
        c.variants
            .iter()
            .map(|&(f, t)| gemm_spec::ConversionKind::of(f, t))
            .collect::<Vec<_>>(),
        vec![Some(gemm_spec::ConversionKind::InputUpcast); 2]
    );
}

#[test]
fn a_conversion_must_widen_or_narrow_a_half_type() {
    assert_one(
        errors_with(true, r#"variants = ["bf16.f32", "f16.f32"]"#, r#"variants = ["bf16.f16"]"#),
        "families.toml:58: conversion upcast: variant `bf16.f16` converts bf16 to f16; a conversion widens a half type to f32 or narrows f32 to a half type",
    );
    assert_one(
        errors_with(true, r#"variants = ["bf16.f32", "f16.f32"]"#, r#"variants = ["bf16"]"#),
        "families.toml:58: conversion upcast: variant `bf16` must read `from.to` with dtypes f32, bf16 or f16, e.g. `bf16.f32`",
    );
}

#[test]
fn a_conversion_needs_whole_warps_and_a_known_abi() {
    assert_one(
        errors_with(true, "threads = 256", "threads = 100"),
        "families.toml:58: conversion upcast: runs 100 threads a block; it needs a multiple of 32 and at most 1024",
    );
    assert_one(
        errors_with(
            true,
            "abi = \"ConvertArgs\"\nthreads = 256",
            "abi = \"CastArgs\"\nthreads = 256",
        ),
        "families.toml:58: ABI struct `CastArgs` is not defined; defined: ConvertArgs, GemmArgs",
    );
    assert_one(
        errors_with(
            true,
            "abi = \"ConvertArgs\"\nthreads = 256",
            "abi = \"GemmArgs\"\nthreads = 256",
        ),
        "families.toml:58: conversion upcast: ABI struct GemmArgs must have exactly the fields src (const_ptr), dst (mut_ptr), rows, cols, ld_src, ld_dst (i32)",
    );
}

#[test]
fn a_conversion_pair_has_one_kernel() {
    assert_one(
        errors_with(true, r#"variants = ["f32.bf16"]"#, r#"variants = ["f16.f32"]"#),
        "families.toml:58: conversion upcast: variant `f16.f32` is also built by conversion narrow; each pair needs one kernel",
    );
}

#[test]
fn staged_slices_count_towards_shared_memory_at_the_operand_size() {
    let shared = format!(
        "{SHARED}\n{}",
        r#"[family.fms]
template = "fms_gemm"
header = "fms/fms_gemm.cuh"
contract = "fma-seq"
policy = "exact"
abi = "GemmArgs"
instruction = "fma"
staging = "operand"
shared = ["slices", "partials"]
grid = "tiles"
variants.nn = ["f32.f32.f32", "bf16.bf16.f32"]
"#
    );
    let tile = |stages: u32| {
        format!(
            "{}\n[[tile]]\nfamily = \"fms\"\nname = \"dec\"\nm = 4\nn = 32\nk = 256\nstages = {stages}\nthread_m = 4\nthread_n = 1\nk_split = 16\n",
            TIER.replace(r#"families = ["fma", "fmb"]"#, r#"families = ["fma", "fmb", "fms"]"#)
        )
    };
    // 2 stages x 16 warps x 32 k x (4 rows of A + 32 columns of B) x 4 bytes + 16 x 4 x 32 x 4
    // partials.
    let v = load(&shared, &tile(2)).expect("two stages fit");
    let family = &v.specs.families["fms"];
    let t = v.specs.tier("sm90a").unwrap().tile("fms", "dec").unwrap();
    let f32 = gemm_spec::DtypeTriple::new(
        gemm_spec::Dtype::F32,
        gemm_spec::Dtype::F32,
        gemm_spec::Dtype::F32,
    );
    let bf16 = gemm_spec::DtypeTriple::new(
        gemm_spec::Dtype::Bf16,
        gemm_spec::Dtype::Bf16,
        gemm_spec::Dtype::F32,
    );
    assert_eq!(gemm_spec::shared_bytes_for(family, t, f32), 147456 + 8192);
    assert_eq!(gemm_spec::shared_bytes_for(family, t, bf16), 73728 + 8192);
    assert_eq!(gemm_spec::shared_bytes(family, t), 147456 + 8192);
    let Err(errors) = load(&shared, &tile(4)) else {
        panic!("four stages do not fit");
    };
    assert_eq!(errors.len(), 1, "{errors:?}");
    assert!(
        errors[0].ends_with(
            "tile fms.dec 4x32x256 needs 303104 bytes of shared memory; sm90a allows 232448"
        ),
        "{errors:?}"
    );
}
