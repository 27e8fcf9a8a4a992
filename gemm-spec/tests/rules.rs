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
template = "fma_gemm"
header = "fma/fma_gemm.cuh"
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
template = "ConvertMatrix"
header = "convert/convert_matrix.cuh"
abi = "ConvertArgs"
threads = 256
variants = ["bf16.f32", "f16.f32"]

[conversion.narrow]
template = "ConvertMatrix"
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

fn assert_errors(errors: Vec<String>, expected: &[&str]) {
    assert_eq!(errors, expected);
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
        e[0].starts_with("sm90a.toml:17: tile fma.thin: `warps` is not a parameter of a scalar tile (family fma, template fma_gemm); its keys are family, name, m, n, k, stages, thread_m, thread_n, k_split, min_blocks"),
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
        "{SHARED}\n[family.tc]\ntemplate = \"fma_gemm\"\nheader = \"fma/fma_gemm.cuh\"\ncontract = \"fma-seq\"\npolicy = \"exact\"\nabi = \"GemmArgs\"\ninstruction = \"wgmma\"\nstaging = \"f32\"\ngrid = \"tiles\"\nvariants.nn = [\"bf16.bf16.f32\"]\n"
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
        "sm90a.toml:18: tile fma.tiled 128x128x128 needs 327680 bytes of shared memory; sm90a allows 232448",
    );
}

#[test]
fn instructions_must_exist_on_the_tier() {
    let shared = SHARED.replace(
        "[family.fmb]\ntemplate = \"fma_gemm\"\nheader = \"fma/fma_gemm.cuh\"\ncontract = \"fma-pair\"\npolicy = \"exact\"\nabi = \"GemmArgs\"\ninstruction = \"fma\"",
        "[family.fmb]\ntemplate = \"fma_gemm\"\nheader = \"fma/fma_gemm.cuh\"\ncontract = \"fma-pair\"\npolicy = \"exact\"\nabi = \"GemmArgs\"\ninstruction = \"wgmma\"",
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
        "sm90a.toml:1: tier sm90a: gencode `arch=compute_90a,code=sm_90a` targets sm_90a (compute capability 9.0) but compute_capability is [8, 9]",
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
        "families.toml:18: ABI struct GemmArgs: field `m` has type `int`; expected one of const_ptr, mut_ptr, i32, u32, i64, u64, f32, tensor_map",
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
        r#"{ name = "beta", type = "f32" }, { name = "n", type = "i32" }, { name = "stride", type = "i64", bind = "lda" },"#,
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
fn contract_names_are_lowercase_words_with_dashes() {
    let errors = errors_with(true, "[contract.fma-pair]", "[contract.\"Fma pair\"]");
    assert_eq!(
        errors[0],
        "families.toml:15: contract name `Fma pair` must be lowercase letters, digits and `-`, starting with a letter"
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
        w.contains(&"sm90a.toml:50: warning: route 3 never wins for exact nn f32.f32.f32: earlier route 2 matches every shape it matches".to_string()),
        "{w:?}"
    );
}

/// The shipped spec files, as `load_dir` reads them.
fn shipped() -> Vec<SpecSource> {
    let mut v: Vec<SpecSource> = std::fs::read_dir("../specs")
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "toml"))
        .map(|p| SpecSource {
            file: p.file_name().unwrap().to_string_lossy().into_owned(),
            text: std::fs::read_to_string(&p).unwrap(),
        })
        .collect();
    v.sort_by(|a, b| a.file.cmp(&b.file));
    v
}

#[test]
fn the_shipped_specs_validate_without_warnings() {
    let v = gemm_spec::load_dir(std::path::Path::new("../specs")).expect("shipped specs validate");
    assert!(v.warnings.is_empty(), "{:?}", v.warnings);
    // One tier per file with a [tier] table, whatever tiers ship.
    let tier_files: Vec<String> = shipped()
        .into_iter()
        .filter(|s| s.text.lines().any(|l| l.trim() == "[tier]"))
        .map(|s| s.file)
        .collect();
    let mut files: Vec<String> = v.specs.tiers.iter().map(|t| t.file.clone()).collect();
    files.sort();
    assert_eq!(files, tier_files);
    for t in &v.specs.tiers {
        // Every variant of every family a tier uses is routed.
        let mut compiled: Vec<_> = t
            .families
            .iter()
            .flat_map(|f| {
                let f = &v.specs.families[f];
                f.variants.iter().map(|&(op, d)| (f.policy, op, d))
            })
            .collect();
        compiled.sort();
        compiled.dedup();
        assert_eq!(t.served(), compiled, "tier {}", t.name);
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
        r#"[instruction.cpasync]
shape = { m = 1, n = 1, k = 1 }
min_compute_capability = [8, 0]

[family.fms]
template = "fma_decode_staged"
header = "fma/fma_decode_staged.cuh"
contract = "fma-seq"
policy = "exact"
abi = "GemmArgs"
instruction = "cpasync"
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

// ---------------------------------------------------------------------------------------------
// Template limits: every static_assert of kernels-templates/ is a spec rule.

/// A decode family on fma_decode_gemm (`fmd`) or fma_decode_staged (`fms`), for tile tests.
const DECODE_FAMILIES: &str = r#"
[instruction.cpasync]
shape = { m = 1, n = 1, k = 1 }
min_compute_capability = [8, 0]

[family.fmd]
template = "fma_decode_gemm"
header = "fma/fma_decode_gemm.cuh"
contract = "fma-seq"
policy = "exact"
abi = "GemmArgs"
instruction = "fma"
staging = "f32"
shared = ["partials"]
grid = "tiles"
variants.nn = ["f32.f32.f32"]

[family.fms]
template = "fma_decode_staged"
header = "fma/fma_decode_staged.cuh"
contract = "fma-seq"
policy = "exact"
abi = "GemmArgs"
instruction = "cpasync"
staging = "operand"
shared = ["slices", "partials"]
grid = "tiles"
variants.nn = ["f32.f32.f32"]
"#;

/// The errors of the base spec plus the decode families and one more tile (at line 50).
fn tile_errors(tile: &str) -> Vec<String> {
    let shared = format!("{SHARED}{DECODE_FAMILIES}");
    let tier = TIER.replace(
        r#"families = ["fma", "fmb"]"#,
        r#"families = ["fma", "fmb", "fmd", "fms"]"#,
    ) + "\n[[tile]]\n"
        + tile;
    load(&shared, &tier).unwrap_err()
}

const DEC: &str =
    "name = \"dec\"\nm = 4\nn = 32\nk = 256\nthread_m = 4\nthread_n = 1\nk_split = 16\n";

#[test]
fn decode_tiles_keep_the_decode_template_limits() {
    let dec = |from: &str, to: &str| {
        assert!(DEC.contains(from));
        tile_errors(&format!("family = \"fmd\"\n{}", DEC.replacen(from, to, 1)))
    };
    // The base decode tile is valid (it only warns that no route reaches it).
    let shared = format!("{SHARED}{DECODE_FAMILIES}");
    let tier = TIER.replace(
        r#"families = ["fma", "fmb"]"#,
        r#"families = ["fma", "fmb", "fmd", "fms"]"#,
    ) + "\n[[tile]]\nfamily = \"fmd\"\n"
        + DEC
        + "\n[[tile]]\nfamily = \"fms\"\nstages = 2\n"
        + DEC;
    load(&shared, &tier).expect("decode tiles that keep the limits validate");
    assert_one(
        dec("n = 32", "n = 64"),
        "sm90a.toml:50: tile fmd.dec 4x64x256: n = 64, but template fma_decode_gemm needs n = 32: fma_decode_gemm makes a block one warp (32 columns) wide",
    );
    assert_one(
        dec("thread_n = 1", "thread_n = 2"),
        "sm90a.toml:50: tile fmd.dec 4x32x256: thread_n = 2, but template fma_decode_gemm needs thread_n = 1: fma_decode_gemm gives each lane one column",
    );
    assert_one(
        dec("thread_m = 4", "thread_m = 2"),
        "sm90a.toml:50: tile fmd.dec 4x32x256: thread_m = 2, but template fma_decode_gemm needs thread_m = m: fma_decode_gemm: each thread computes all of the block's rows",
    );
    assert_one(
        dec("k = 256", "k = 128"),
        "sm90a.toml:50: tile fmd.dec 4x32x128: k = 128, but template fma_decode_gemm needs k = 256: fma_decode_gemm: tile k must equal the contract's chunk of 256",
    );
    assert_one(
        dec("k_split = 16", "k_split = 2"),
        "sm90a.toml:50: tile fmd.dec 4x32x256: k_split = 2, but template fma_decode_gemm needs k_split >= m: fma_decode_gemm: the fold uses one thread per row of the block",
    );
    assert_one(
        dec("k_split = 16", "k_split = 16\nstages = 2"),
        "sm90a.toml:50: tile fmd.dec 4x32x256: stages = 2, but template fma_decode_gemm needs stages = 1: fma_decode_gemm reads operands straight from global memory and has no shared-memory stages",
    );
}

#[test]
fn staged_decode_tiles_need_two_stages() {
    assert_one(
        tile_errors(&format!("family = \"fms\"\n{DEC}")),
        "sm90a.toml:50: tile fms.dec 4x32x256: stages = 1, but template fma_decode_staged needs stages >= 2: fma_decode_staged needs at least two stages, one loading while one is read",
    );
    assert_one(
        tile_errors(&format!("family = \"fms\"\nstages = 2\n{}", DEC.replace("n = 32", "n = 16"))),
        "sm90a.toml:50: tile fms.dec 4x16x256: n = 16, but template fma_decode_staged needs n = 32: fma_decode_staged makes a block one warp (32 columns) wide",
    );
}

#[test]
fn fma_gemm_tiles_keep_its_limits() {
    let tiled = |from: &str, to: &str| errors_with(false, from, to);
    assert_one(
        tiled("stages = 2\nthread_m = 8", "stages = 3\nthread_m = 8"),
        "sm90a.toml:18: tile fma.tiled 128x128x8: stages = 3, but template fma_gemm needs 1 <= stages <= 2: fma_gemm supports one or two shared-memory stages",
    );
    assert_one(
        tiled("thread_n = 8\n", "thread_n = 8\nk_split = 2\n"),
        "sm90a.toml:18: tile fma.tiled 128x128x8: k_split = 2, but template fma_gemm needs k_split = 1: fma_gemm reduces K in sequence",
    );
    assert_one(
        tiled("k = 8\nstages = 2", "k = 24\nstages = 2"),
        "sm90a.toml:18: tile fma.tiled 128x128x24: k = 24, but template fma_gemm needs 256 % k = 0: fma_gemm folds chunk totals every 256 / k k-tiles, so k must divide the contract's chunk of 256",
    );
    // B's stage starts m*k = 2 floats in: a float4 read of B would be misaligned.
    assert_one(
        tiled(
            "m = 8\nn = 64\nk = 32\nthread_m = 1\nthread_n = 2",
            "m = 2\nn = 64\nk = 1\nthread_m = 1\nthread_n = 4",
        ),
        "sm90a.toml:9: tile fma.thin 2x64x1: m*k = 2, but template fma_gemm needs m*k % 4 = 0 when thread_n % 4 = 0: fma_gemm reads B from shared memory as float4, and B's stage starts m*k floats in",
    );
    assert_one(
        tiled(
            "m = 8\nn = 64\nk = 32\nthread_m = 1\nthread_n = 2",
            "m = 16\nn = 2\nk = 1\nstages = 2\nthread_m = 4\nthread_n = 1",
        ),
        "sm90a.toml:9: tile fma.thin 16x2x1: k*n = 2, but template fma_gemm needs k*n % 4 = 0 when thread_m % 4 = 0 and stages = 2: fma_gemm reads A from shared memory as float4, and the second stage starts m*k + k*n floats in",
    );
}

#[test]
fn a_family_names_a_known_template() {
    assert_one(
        errors_with(true, "template = \"fma_gemm\"\nheader = \"fma/fma_gemm.cuh\"\ncontract = \"fma-seq\"", "template = \"fma_gem\"\nheader = \"fma/fma_gemm.cuh\"\ncontract = \"fma-seq\""),
        "families.toml:26: family fma: template `fma_gem` is not a known kernel template (did you mean `fma_gemm`?); known: fma_gemm (fma/fma_gemm.cuh), fma_decode_gemm (fma/fma_decode_gemm.cuh), fma_decode_staged (fma/fma_decode_staged.cuh), wgmma_tma_gemm (wgmma/wgmma_tma_gemm.cuh), mma_decode_tma (mma/mma_decode_tma.cuh), mma_gemm (mma/mma_gemm.cuh), mma_async_gemm (mma/mma_async_gemm.cuh)",
    );
    assert_one(
        errors_with(true, "template = \"ConvertMatrix\"\nheader = \"convert/convert_matrix.cuh\"\nabi = \"ConvertArgs\"\nthreads = 256", "template = \"convert_matrix\"\nheader = \"convert/convert_matrix.cuh\"\nabi = \"ConvertArgs\"\nthreads = 256"),
        "families.toml:58: conversion upcast: template `convert_matrix` is not a known kernel template (did you mean `ConvertMatrix`?); known: ConvertMatrix (convert/convert_matrix.cuh)",
    );
    assert_one(
        errors_with(true, "template = \"fma_gemm\"\nheader = \"fma/fma_gemm.cuh\"\ncontract = \"fma-seq\"", "template = \"ConvertMatrix\"\nheader = \"convert/convert_matrix.cuh\"\ncontract = \"fma-seq\""),
        "families.toml:26: family fma: template ConvertMatrix is an elementwise conversion template; a family needs a GEMM template: fma_gemm (fma/fma_gemm.cuh), fma_decode_gemm (fma/fma_decode_gemm.cuh), fma_decode_staged (fma/fma_decode_staged.cuh), wgmma_tma_gemm (wgmma/wgmma_tma_gemm.cuh), mma_decode_tma (mma/mma_decode_tma.cuh), mma_gemm (mma/mma_gemm.cuh), mma_async_gemm (mma/mma_async_gemm.cuh)",
    );
}

#[test]
fn a_template_header_must_be_the_templates_own() {
    assert_one(
        errors_with(true, "header = \"fma/fma_gemm.cuh\"\ncontract = \"fma-seq\"", "header = \"fma/gemm.cuh\"\ncontract = \"fma-seq\""),
        "families.toml:26: family fma: template fma_gemm is in header `fma/fma_gemm.cuh`, not `fma/gemm.cuh`",
    );
}

#[test]
fn a_family_declares_its_templates_shared_memory() {
    assert_one(
        errors_with(true, "staging = \"f32\"\ngrid = \"tiles\"\nvariants.nn = [\"f32.f32.f32\", \"bf16.bf16.f32\"]", "staging = \"operand\"\ngrid = \"tiles\"\nvariants.nn = [\"f32.f32.f32\", \"bf16.bf16.f32\"]"),
        "families.toml:26: family fma: template fma_gemm holds operands in shared memory as staging = \"f32\"; the family says staging = \"operand\" (its shared-memory size must match the template's kSharedBytes)",
    );
    assert_one(
        errors_with(true, "staging = \"f32\"\ngrid = \"tiles\"\nvariants.nn = [\"f32.f32.f32\", \"bf16.bf16.f32\"]", "staging = \"f32\"\nshared = [\"operands\"]\ngrid = \"tiles\"\nvariants.nn = [\"f32.f32.f32\", \"bf16.bf16.f32\"]"),
        "families.toml:26: family fma: template fma_gemm keeps shared = [\"operands\", \"totals\"] in shared memory; the family says shared = [\"operands\"] (its shared-memory size must match the template's kSharedBytes)",
    );
}

#[test]
fn a_family_lists_only_ops_its_template_supports() {
    let shared = format!("{SHARED}{DECODE_FAMILIES}variants.nt = [\"f32.f32.f32\"]\n");
    assert_eq!(
        load(&shared, TIER).unwrap_err(),
        vec!["families.toml:99: family fms: template fma_decode_staged supports op nn only; the family lists variants.nt"]
    );
}

#[test]
fn a_template_needs_an_instruction_of_its_capability() {
    let shared = format!("{SHARED}{DECODE_FAMILIES}")
        .replace("instruction = \"cpasync\"", "instruction = \"fma\"");
    assert_eq!(
        load(&shared, TIER).unwrap_err(),
        vec!["families.toml:88: family fms: template fma_decode_staged needs compute capability >= 8.0 (it copies operands with cp.async), but the family's instruction fma exists from 5.0: name an instruction that starts at 8.0 or later"]
    );
}

#[test]
fn the_template_list_names_every_shipped_template() {
    let v = gemm_spec::load_dir(std::path::Path::new("../specs")).unwrap();
    for f in v.specs.families.values() {
        let t = gemm_spec::templates::find(&f.template).unwrap();
        assert_eq!(t.header, f.header);
    }
    for t in gemm_spec::templates::KNOWN {
        let path = std::path::Path::new("../kernels-templates").join(t.header);
        let shipped = v.specs.families.values().any(|f| f.template == t.name)
            || v.specs.conversions.values().any(|c| c.template == t.name);
        // A template being written may be listed before its header lands; a shipped family's
        // header must exist.
        if !path.exists() && !shipped {
            eprintln!(
                "SKIPPED: {} ({}) has no header yet and no shipped family uses it",
                t.name, t.header
            );
            continue;
        }
        let text =
            std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        assert!(
            text.contains(&format!("struct {} {{", t.name)),
            "{} lacks struct {}",
            t.header,
            t.name
        );
    }
}

// ---------------------------------------------------------------------------------------------
// Zero where zero means nothing.

#[test]
fn a_zero_thread_tile_is_an_error() {
    assert_one(
        errors_with(false, "thread_m = 1\n", "thread_m = 0\n"),
        "sm90a.toml:9: tile fma.thin 8x64x32: thread_m = 0, but each thread computes at least one row of C",
    );
    assert_one(
        errors_with(false, "thread_n = 2\n", "thread_n = 0\n"),
        "sm90a.toml:9: tile fma.thin 8x64x32: thread_n = 0, but each thread computes at least one column of C",
    );
}

#[test]
fn zero_stages_say_a_tile_needs_one() {
    assert_one(
        errors_with(false, "stages = 2\n", "stages = 0\n"),
        "sm90a.toml:18: tile fma.tiled 128x128x8: stages = 0, but a tile needs at least one shared-memory stage",
    );
}

#[test]
fn zero_tile_dimensions_and_k_split_are_errors() {
    assert_one(
        errors_with(false, "m = 8\n", "m = 0\n"),
        "sm90a.toml:9: tile fma.thin 0x64x32: m = 0, but a tile covers at least one row of C",
    );
    assert_one(
        errors_with(false, "thread_n = 2\n", "thread_n = 2\nk_split = 0\n"),
        "sm90a.toml:9: tile fma.thin 8x64x32: k_split = 0, but a block reduces at least one K chunk",
    );
}

#[test]
fn min_blocks_is_at_least_one_and_at_most_what_an_sm_holds() {
    assert_one(
        errors_with(false, "thread_n = 2\n", "thread_n = 2\nmin_blocks = 0\n"),
        "sm90a.toml:9: tile fma.thin 8x64x32: min_blocks = 0, but an SM holds at least one block (leave min_blocks out for no occupancy bound)",
    );
    assert_one(
        errors_with(false, "thread_n = 2\n", "thread_n = 2\nmin_blocks = 33\n"),
        "sm90a.toml:9: tile fma.thin 8x64x32: min_blocks = 33, but no NVIDIA GPU through sm_120 keeps more than 32 blocks on an SM",
    );
}

#[test]
fn a_zero_instruction_shape_is_an_error() {
    assert_one(
        errors_with(true, "shape = { m = 1, n = 1, k = 1 }", "shape = { m = 1, n = 0, k = 1 }"),
        "families.toml:2: instruction fma: shape.n = 0, but an instruction covers at least one element in each dimension (tiles are multiples of its shape)",
    );
}

#[test]
fn empty_route_lists_are_errors() {
    assert_one(
        errors_with(false, "op = \"nn\"\ndtype = \"any\"\nm = { max = 64 }", "op = []\ndtype = \"any\"\nm = { max = 64 }"),
        "sm90a.toml:37: route 1: `op = []` lists nothing; name the ops the route serves (nn, tn, nt)",
    );
    assert_one(
        errors_with(false, "op = \"nn\"\ndtype = \"any\"\nm = { max = 64 }", "op = \"nn\"\ndtype = []\nm = { max = 64 }"),
        "sm90a.toml:37: route 1: `dtype = []` lists nothing; name dtype triples such as \"f32.f32.f32\", or write \"any\"",
    );
}

#[test]
fn an_empty_variant_list_is_an_error() {
    assert_one(
        errors_with(true, "grid = \"tiles\"\nvariants.nn = [\"f32.f32.f32\"]", "grid = \"tiles\"\nvariants.nn = [\"f32.f32.f32\"]\nvariants.nt = []"),
        "families.toml:47: family fmb: `variants.nt = []` lists nothing; list the dtype triples to build for the op, or leave the key out",
    );
}

#[test]
fn an_empty_shared_list_is_an_error() {
    assert_one(
        errors_with(true, "staging = \"f32\"\ngrid = \"tiles\"\nvariants.nn = [\"f32.f32.f32\"]", "staging = \"f32\"\nshared = []\ngrid = \"tiles\"\nvariants.nn = [\"f32.f32.f32\"]"),
        "families.toml:37: family fmb: `shared = []` lists nothing; name what the template keeps in shared memory (operands, totals, partials, slices)",
    );
}

#[test]
fn a_tier_without_families_is_an_error() {
    let e = errors_with(false, r#"families = ["fma", "fmb"]"#, "families = []");
    assert_eq!(
        e[0],
        "sm90a.toml:1: tier sm90a: `families = []` lists nothing; a tier builds and routes the kernels of its families; name at least one"
    );
}

#[test]
fn a_tier_without_routes_is_an_error() {
    let tier = &TIER[..TIER.find("[[route]]").unwrap()];
    assert_eq!(
        load(SHARED, tier).unwrap_err(),
        vec!["sm90a.toml:1: tier sm90a has no routes: add [[route]] blocks, or no request reaches its kernels"]
    );
}

// ---------------------------------------------------------------------------------------------
// Capabilities and gencode.

#[test]
fn compute_capabilities_are_bounded() {
    // Once a panic (`major * 10 + minor` overflowed).
    assert_one(
        errors_with(false, "compute_capability = [9, 0]", "compute_capability = [4294967295, 9]"),
        "sm90a.toml:1: tier sm90a: compute_capability [4294967295, 9] is out of range: the major version must be 1..=99 and the minor 0..=9 (sm_XY reads major X, minor Y)",
    );
    assert_one(
        errors_with(false, "compute_capability = [9, 0]", "compute_capability = [8, 10]"),
        "sm90a.toml:1: tier sm90a: compute_capability [8, 10] is out of range: the major version must be 1..=99 and the minor 0..=9 (sm_XY reads major X, minor Y)",
    );
    assert_one(
        errors_with(true, "min_compute_capability = [5, 0]", "min_compute_capability = [5, 10]"),
        "families.toml:2: instruction fma: min_compute_capability [5, 10] is out of range: the major version must be 1..=99 and the minor 0..=9 (sm_XY reads major X, minor Y)",
    );
}

#[test]
fn an_instruction_range_must_not_be_empty() {
    assert_one(
        errors_with(true, "max_compute_capability = [9, 0]", "max_compute_capability = [8, 9]"),
        "families.toml:6: instruction wgmma: max_compute_capability [8, 9] lies below min_compute_capability [9, 0]: the instruction would exist on no tier",
    );
}

#[test]
fn gencode_reads_major_then_one_minor_digit() {
    // 100a is (10, 0), not (1, 0) or (10, 0) by arithmetic on 100.
    let tier = TIER
        .replace("compute_90a,code=sm_90a", "compute_100a,code=sm_100a")
        .replace("[9, 0]", "[10, 0]");
    assert_eq!(
        load(SHARED, &tier).err(),
        None,
        "a [10, 0] tier builds for sm_100a"
    );
    assert_one(
        errors_with(false, "compute_capability = [9, 0]", "compute_capability = [9, 1]"),
        "sm90a.toml:1: tier sm90a: gencode `arch=compute_90a,code=sm_90a` targets sm_90a (compute capability 9.0) but compute_capability is [9, 1]",
    );
    assert_one(
        errors_with(false, "compute_90a,code=sm_90a", "compute_090a,code=sm_090a"),
        "sm90a.toml:1: tier sm90a: gencode `arch=compute_090a,code=sm_090a` must read `arch=compute_XY,code=sm_XY` (XY the compute capability, major then one minor digit, optionally with an `a` suffix on both)",
    );
}

// ---------------------------------------------------------------------------------------------
// Budgets within the hardware and the generated types.

#[test]
fn tier_budgets_are_bounded_by_the_hardware() {
    assert_one(
        errors_with(false, "max_shared_bytes = 232448", "max_shared_bytes = 5000000000"),
        "sm90a.toml:1: tier sm90a: max_shared_bytes = 5000000000 is more than 232448, the most shared memory a block gets on any NVIDIA GPU through sm_120 (227 KiB on sm_90 and sm_100)",
    );
    let e = errors_with(false, "max_shared_bytes = 232448", "max_shared_bytes = 0");
    assert_eq!(
        e[0],
        "sm90a.toml:1: tier sm90a: max_shared_bytes = 0 leaves a block no shared memory; every template needs some"
    );
    let e = errors_with(
        false,
        "max_registers_per_thread = 255",
        "max_registers_per_thread = 256",
    );
    assert_eq!(
        e,
        vec!["sm90a.toml:1: tier sm90a: max_registers_per_thread = 256 is outside 16..=255: a thread addresses at most 255 registers on every NVIDIA GPU, and ptxas does not go below 16"]
    );
    assert_one(
        errors_with(false, "max_registers_per_thread = 255", "max_registers_per_thread = 255\nmax_threads_per_block = 1000"),
        "sm90a.toml:1: tier sm90a: max_threads_per_block = 1000 must be a multiple of 32 (blocks are whole warps) from 32 to 1024, the most any NVIDIA GPU runs in a block",
    );
    assert_one(
        errors_with(false, "max_registers_per_thread = 255", "max_registers_per_thread = 255\nregisters_per_block = 131072"),
        "sm90a.toml:1: tier sm90a: registers_per_block = 131072 is outside 1..=65536: no NVIDIA GPU through sm_120 has more than 64 Ki registers for a block",
    );
}

#[test]
fn conversions_fit_every_tiers_thread_limit() {
    let e = errors_with(
        false,
        "max_registers_per_thread = 255",
        "max_registers_per_thread = 255\nmax_threads_per_block = 128",
    );
    assert!(
        e.contains(&"sm90a.toml:1: conversion upcast: runs 256 threads a block; tier sm90a allows 128 (max_threads_per_block)".to_string()),
        "{e:?}"
    );
}

// ---------------------------------------------------------------------------------------------
// Accumulators: only what the contract names.

#[test]
fn a_variant_accumulates_in_its_contracts_type() {
    assert_one(
        errors_with(true, "variants.nn = [\"f32.f32.f32\", \"bf16.bf16.f32\"]", "variants.nn = [\"f32.f32.f32\", \"bf16.bf16.bf16\"]"),
        "families.toml:35: family fma: variant nn bf16.bf16.bf16 accumulates in bf16, but its contract fma-seq accumulates in f32",
    );
}

// ---------------------------------------------------------------------------------------------
// Inputs: a contract may be defined for some operand dtypes only (TF32's tc-tf32-k8 for f32).

#[test]
fn a_variant_takes_inputs_its_contract_is_defined_for() {
    assert_one(
        errors_with(
            true,
            "doc = \"one f32 fma chain over ascending k\"",
            "doc = \"one f32 fma chain over ascending k\"\ninputs = [\"f32\"]",
        ),
        "families.toml:36: family fma: variant nn bf16.bf16.f32 takes bf16.bf16.f32 inputs, but its contract fma-seq is defined for f32 inputs only (its `inputs`): give the variant a family of a contract for those inputs",
    );
}

#[test]
fn contract_inputs_are_known_dtypes_listed_once() {
    assert_one(
        errors_with(
            true,
            "doc = \"one f32 fma chain over ascending k\"",
            "doc = \"one f32 fma chain over ascending k\"\ninputs = []",
        ),
        "families.toml:12: contract fma-seq: `inputs` is empty; list the operand dtypes the contract is defined for, or leave the key out for all",
    );
    assert_one(
        errors_with(
            true,
            "doc = \"one f32 fma chain over ascending k\"",
            "doc = \"one f32 fma chain over ascending k\"\ninputs = [\"f32\", \"tf32\"]",
        ),
        "families.toml:12: contract fma-seq: inputs: unknown dtype `tf32`; expected one of f32, bf16, f16",
    );
    assert_one(
        errors_with(
            true,
            "doc = \"one f32 fma chain over ascending k\"",
            "doc = \"one f32 fma chain over ascending k\"\ninputs = [\"f32\", \"bf16\", \"f32\"]",
        ),
        "families.toml:12: contract fma-seq: input `f32` is listed twice",
    );
}

#[test]
fn a_contract_accumulates_in_f32() {
    assert_one(
        errors_with(true, "doc = \"one f32 fma chain over ascending k\"", "doc = \"one f32 fma chain over ascending k\"\naccumulator = \"f16\""),
        "families.toml:12: contract fma-seq: accumulator `f16` is not one the templates have; every kernel template accumulates in f32 (accumulator = \"f32\")",
    );
    assert_one(
        errors_with(
            true,
            "doc = \"one f32 fma chain over ascending k\"",
            "doc = \"one f32 fma chain over ascending k\"\naccumulator = \"f64\"",
        ),
        "families.toml:12: contract fma-seq: unknown dtype `f64`; expected one of f32, bf16, f16",
    );
}

// ---------------------------------------------------------------------------------------------
// Tiers that take devices from another.

/// The shipped specs plus one more file.
fn shipped_with(file: &str, text: String) -> Result<Validated, Vec<String>> {
    let mut files = shipped();
    files.push(SpecSource {
        file: file.into(),
        text,
    });
    load_sources(&files).map_err(|e| e.0.iter().map(|e| e.to_string()).collect())
}

/// A copy of sm89.toml for a compute capability 8.x no shipped tier claims (8.6 unless one
/// ships): (file name, tier name, minor, text).
fn new_ampere_tier() -> (String, String, u32, String) {
    let files = shipped();
    let sm89 = files
        .iter()
        .find(|s| s.file == "sm89.toml")
        .expect("specs/sm89.toml ships")
        .text
        .clone();
    let claimed = |minor: u32| {
        files.iter().any(|s| {
            s.text
                .contains(&format!("compute_capability = [8, {minor}]"))
        })
    };
    let minor = [6, 7, 5, 8, 1, 2, 3, 4]
        .into_iter()
        .find(|&m| !claimed(m))
        .expect("a free 8.x capability");
    let name = format!("sm8{minor}");
    let text = sm89
        .replace("name = \"sm89\"", &format!("name = \"{name}\""))
        .replace(
            "compute_89,code=sm_89",
            &format!("compute_8{minor},code=sm_8{minor}"),
        )
        .replace(
            "compute_capability = [8, 9]",
            &format!("compute_capability = [8, {minor}]"),
        );
    (format!("{name}.toml"), name, minor, text)
}

#[test]
fn a_tier_between_two_others_validates_when_it_serves_as_much() {
    let (file, name, minor, text) = new_ampere_tier();
    let v = shipped_with(&file, text).expect("a copy of sm89 at another 8.x validates");
    assert_eq!(v.specs.tier_for_capability((8, minor)).unwrap().name, name);
    assert!(v.warnings.is_empty(), "{:?}", v.warnings);
}

#[test]
fn a_tier_that_takes_devices_serves_what_they_had() {
    let (file, name, minor, text) = new_ampere_tier();
    let no_tn = text.replace("op = [\"nn\", \"nt\", \"tn\"]", "op = [\"nn\", \"nt\"]");
    let e = shipped_with(&file, no_tn).unwrap_err();
    assert_eq!(e.len(), 1, "{e:?}");
    let start = format!("{file}:4: tier {name} takes devices of compute capability 8.{minor}");
    assert!(e[0].starts_with(&start), "{e:?}");
    // Every tn it no longer routes is listed, under each policy the copied tier routes tn in.
    let copied = shipped_with(&file, text.clone()).expect("the copy validates");
    let lost: Vec<String> = copied
        .specs
        .tier(&name)
        .unwrap()
        .routes
        .iter()
        .filter(|r| r.op == gemm_spec::Op::Tn)
        .map(|r| format!("{} tn {}", r.policy, r.dtype))
        .fold(Vec::new(), |mut v, x| {
            if !v.contains(&x) {
                v.push(x);
            }
            v
        });
    assert!(lost.len() >= 3, "{lost:?}");
    let listed = e[0]
        .split(" but does not serve ")
        .nth(1)
        .and_then(|rest| rest.split(", which ").next())
        .unwrap_or_default();
    let mut got: Vec<&str> = listed.split(", ").collect();
    let mut want: Vec<&str> = lost.iter().map(String::as_str).collect();
    got.sort_unstable();
    want.sort_unstable();
    assert_eq!(got, want, "{e:?}");
    // With the shipped sm80 and sm89 and a new 8.6: it takes 8.6 to 8.8 from sm80.
    if minor == 6
        && shipped()
            .iter()
            .all(|s| !s.text.contains("compute_capability = [8, 7]"))
    {
        assert_eq!(
            e[0],
            format!("sm86.toml:4: tier sm86 takes devices of compute capability 8.6 to 8.8 from tier sm80 but does not serve {listed}, which sm80 serves: route them in sm86 too, or those devices lose them")
        );
    }
}

// ---------------------------------------------------------------------------------------------
// Errors that name the place.

#[test]
fn a_duplicate_toml_key_is_named() {
    let e = errors_with(false, "thread_n = 2\n", "thread_n = 2\nthread_m = 2\n");
    assert_eq!(
        e,
        vec!["sm90a.toml:17: duplicate key `thread_m`: a key may appear once in a table"]
    );
}

#[test]
fn a_duplicate_tile_points_at_the_first() {
    let tier = TIER.replace("name = \"tiled\"", "name = \"thin\"");
    let e = load(SHARED, &tier).unwrap_err();
    assert_eq!(
        e[0],
        "sm90a.toml:18: tile `fma.thin` is defined twice; the first is at sm90a.toml:9"
    );
}

#[test]
fn a_file_that_is_not_utf8_is_named() {
    let dir = std::env::temp_dir().join(format!("gemm-spec-rules-utf8-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("good.toml"), SHARED).unwrap();
    std::fs::write(dir.join("bad.toml"), b"[tier]\nname = \"sm\xff\"\n").unwrap();
    let e = gemm_spec::load_dir(&dir).unwrap_err();
    std::fs::remove_dir_all(&dir).unwrap();
    assert_eq!(
        e.0.iter().map(|e| e.to_string()).collect::<Vec<_>>(),
        vec!["bad.toml:2: the file is not UTF-8 text: byte 0xff at byte offset 17 starts no UTF-8 character; save the file as UTF-8"]
    );
}

#[test]
fn a_route_past_the_largest_dimension_says_so() {
    let tier = TIER.replace("m = { max = 64 }", "m = { min = 3000000000 }");
    let v = load(SHARED, &tier).unwrap();
    let w: Vec<String> = v.warnings.iter().map(|w| w.to_string()).collect();
    assert!(
        w.contains(&"sm90a.toml:37: warning: route 1 never wins for exact nn f32.f32.f32: its m range >= 3000000000 lies above the largest dimension 2147483647, so it matches no shape".to_string()),
        "{w:?}"
    );
}

// ---------------------------------------------------------------------------------------------
// Tensor-core kinds (docs/tensor-core.md): typed tile parameters, their limits, ABI binding,
// tensor maps, persistent grids and unaligned routes.

const TC_SHARED: &str = r#"
[instruction.wgmma]
shape = { m = 64, n = 8, k = 16 }
min_compute_capability = [9, 0]
max_compute_capability = [9, 0]
arch_specific = true

[instruction.mma16816]
shape = { m = 16, n = 8, k = 16 }
min_compute_capability = [8, 0]

[instruction.mmatma]
shape = { m = 16, n = 8, k = 16 }
min_compute_capability = [9, 0]

[contract.tc-k16]
doc = "k16 steps in ascending k"

[contract.tc-other]
doc = "another order"

[abi.TcGemmArgs]
fields = [
  { name = "a_map", type = "tensor_map", bind = "a.tensor_map" },
  { name = "b_map", type = "tensor_map", bind = "b.tensor_map" },
  { name = "c_map", type = "tensor_map", bind = "c.tensor_map" },
  { name = "a", type = "const_ptr" },
  { name = "c", type = "mut_ptr" },
  { name = "m", type = "i32" },
]

[family.wide]
template = "wgmma_tma_gemm"
header = "wgmma/wgmma_tma_gemm.cuh"
contract = "tc-k16"
policy = "tensor-core"
abi = "TcGemmArgs"
instruction = "wgmma"
staging = "operand"
grid = "persistent"
variants.nn = ["bf16.bf16.f32", "bf16.f32.f32"]

[family.dec]
template = "mma_decode_tma"
header = "mma/mma_decode_tma.cuh"
contract = "tc-k16"
policy = "tensor-core"
abi = "TcGemmArgs"
instruction = "mmatma"
staging = "operand"
grid = "tiles"
variants.nn = ["bf16.bf16.f32", "bf16.f32.f32"]

[family.plain]
template = "mma_gemm"
header = "mma/mma_gemm.cuh"
contract = "tc-k16"
policy = "tensor-core"
abi = "TcGemmArgs"
instruction = "mma16816"
staging = "operand"
grid = "tiles"
variants.nn = ["bf16.bf16.f32", "bf16.f32.f32"]

[family.other]
template = "mma_gemm"
header = "mma/mma_gemm.cuh"
contract = "tc-other"
policy = "tensor-core"
abi = "TcGemmArgs"
instruction = "mma16816"
staging = "operand"
grid = "tiles"
variants.nn = ["bf16.bf16.f32"]
"#;

const TC_TIER: &str = r#"[tier]
name = "sm90a"
gencode = "arch=compute_90a,code=sm_90a"
compute_capability = [9, 0]
max_shared_bytes = 232448
max_registers_per_thread = 255
families = ["wide", "dec", "plain", "other"]

[[tile]]
family = "dec"
name = "d"
m = 16
n = 32
k = 64
stages = 8

[[tile]]
family = "wide"
name = "w"
m = 128
n = 256
k = 64
stages = 4
consumers = 2
cluster_m = 1

[[tile]]
family = "plain"
name = "p"
m = 64
n = 64
k = 32
stages = 2
warps_m = 2
warps_n = 2

[[tile]]
family = "other"
name = "o"
m = 64
n = 64
k = 32
warps_m = 2
warps_n = 2

[[route]]
policy = "tensor-core"
op = "nn"
dtype = "any"
m = { max = 16 }
kernel = "dec.d"
unaligned = "plain.p"

[[route]]
policy = "tensor-core"
op = "nn"
dtype = "any"
kernel = "wide.w"
unaligned = "plain.p"
"#;

/// The errors of the tensor-core base spec with one replacement made.
fn tc_errors(in_shared: bool, from: &str, to: &str) -> Vec<String> {
    let (mut shared, mut tier) = (TC_SHARED.to_string(), TC_TIER.to_string());
    let target = if in_shared { &mut shared } else { &mut tier };
    assert!(target.contains(from), "fixture lacks {from:?}");
    *target = target.replacen(from, to, 1);
    match load(&shared, &tier) {
        Ok(_) => panic!("spec with {from:?} -> {to:?} validated"),
        Err(e) => e,
    }
}

#[test]
fn tc_base_spec_is_valid() {
    let v = load(TC_SHARED, TC_TIER).unwrap_or_else(|e| panic!("{e:?}"));
    let t = v.specs.tier("sm90a").unwrap();
    let w: Vec<String> = v.warnings.iter().map(|w| w.to_string()).collect();
    assert_eq!(
        w,
        ["sm90a.toml:37: warning: kernel other.o nn bf16.bf16.f32 of tier sm90a is compiled but no route reaches it"]
    );
    let wide = t.tile("wide", "w").unwrap();
    assert_eq!(wide.threads(), 384);
    assert_eq!(wide.cluster(), (1, 1, 1));
    assert_eq!(
        gemm_spec::shared_bytes(&v.specs.families["wide"], wide),
        // stages, the staging of C (2 consumers x 2 boxes of 64 x 128 bytes), slack, barriers
        4 * (128 * 64 + 64 * 256) * 2 + 2 * 2 * 64 * 128 + 1024 + 4 * 16
    );
    let p = t.tile("plain", "p").unwrap();
    assert_eq!(p.threads(), 128);
    assert_eq!(
        gemm_spec::shared_bytes(&v.specs.families["plain"], p),
        (64 + 64) * (32 + 8) * 2
    );
    let d = t.tile("dec", "d").unwrap();
    assert_eq!(d.threads(), 32 * 4 + 32);
    let r = &t.routes[0];
    assert_eq!(
        r.unaligned.as_ref().map(|u| u.to_string()).as_deref(),
        Some("plain.p")
    );
    let abi = &v.specs.abis["TcGemmArgs"];
    assert_eq!(
        (abi.size, abi.align),
        (512, 128),
        "three 128-byte maps, then 64 bytes, padded to 128"
    );
    assert_eq!(abi.fields[1].offset, 128);
    assert_eq!(abi.fields[2].offset, 256);
    assert_eq!(
        abi.fields[3].bind,
        gemm_spec::BindSource::APtr,
        "bind defaults to the name"
    );
}

#[test]
fn a_key_of_another_kind_is_an_error_naming_the_kinds_keys() {
    assert_one(
        tc_errors(false, "consumers = 2\n", "consumers = 2\nthread_m = 4\n"),
        "sm90a.toml:25: tile wide.w: `thread_m` is not a parameter of a wgmma_tma tile (family wide, template wgmma_tma_gemm); its keys are family, name, m, n, k, stages, consumers, cluster_m, scheduler",
    );
    assert_one(
        tc_errors(false, "stages = 8\n", "stages = 8\nwarps_m = 1\n"),
        "sm90a.toml:16: tile dec.d: `warps_m` is not a parameter of a mma_decode_tma tile (family dec, template mma_decode_tma); its keys are family, name, m, n, k, stages",
    );
}

#[test]
fn a_tc_tile_without_a_required_key_is_an_error() {
    assert_one(
        tc_errors(false, "consumers = 2\n", ""),
        "sm90a.toml:17: tile wide.w: needs `consumers`: a wgmma_tma tile has no default for it",
    );
    assert_one(
        tc_errors(false, "warps_n = 2\n", ""),
        "sm90a.toml:27: tile plain.p: needs `warps_n`: a mma_gemm tile has no default for it",
    );
}

#[test]
fn tile_values_must_be_whole_numbers_and_a_known_scheduler() {
    assert_one(
        tc_errors(false, "stages = 4\n", "stages = \"four\"\n"),
        "sm90a.toml:23: tile wide.w: `stages` = \"four\" must be a whole number",
    );
    assert_one(
        tc_errors(false, "stages = 4\n", "stages = -4\n"),
        "sm90a.toml:23: tile wide.w: `stages` = -4 is not a whole number from 0 to 4294967295",
    );
    assert_one(
        tc_errors(false, "cluster_m = 1\n", "cluster_m = 1\nscheduler = \"tiles\"\n"),
        "sm90a.toml:26: tile wide.w: `scheduler` = \"tiles\" is not a scheduler of template wgmma_tma_gemm; expected \"persistent\"",
    );
}

#[test]
fn zero_tc_parameters_are_errors() {
    assert_one(tc_errors(false, "consumers = 2\n", "consumers = 0\n"), "sm90a.toml:17: tile wide.w 128x256x64: consumers = 0, but a tile has at least one consumer warpgroup");
    assert_one(tc_errors(false, "cluster_m = 1\n", "cluster_m = 0\n"), "sm90a.toml:17: tile wide.w 128x256x64: cluster_m = 0, but a cluster holds at least one CTA");
    assert_one(tc_errors(false, "warps_m = 2\n", "warps_m = 0\n"), "sm90a.toml:27: tile plain.p 64x64x32: warps_m = 0, but a block has at least one warp along M");
}

#[test]
fn wgmma_tma_gemm_limits() {
    assert_one(
        tc_errors(false, "m = 128\nn = 256\nk = 64\nstages = 4\nconsumers = 2\n", "m = 192\nn = 256\nk = 64\nstages = 4\nconsumers = 3\n"),
        "sm90a.toml:17: tile wide.w 192x256x64: consumers = 3, but template wgmma_tma_gemm needs 1 <= consumers <= 2: wgmma_tma_gemm runs one producer and one or two consumer warpgroups (setmaxnreg shares 64 Ki registers among at most three)",
    );
    assert_one(tc_errors(false, "m = 128\n", "m = 192\n"), "sm90a.toml:17: tile wide.w 192x256x64: m = 192, but template wgmma_tma_gemm needs m = 64 * consumers: each consumer warpgroup computes 64 rows of the tile with wgmma m64nNk16");
    assert_one(tc_errors(false, "n = 256\nk = 64\nstages = 4\n", "n = 96\nk = 64\nstages = 4\n"), "sm90a.toml:17: tile wide.w 128x96x64: n = 96, but template wgmma_tma_gemm needs n % 64 = 0 and n <= 256: wgmma's n is at most 256, and B arrives in boxes of 64 columns");
    assert_one(tc_errors(false, "n = 256\nk = 64\nstages = 4\n", "n = 320\nk = 64\nstages = 4\n"), "sm90a.toml:17: tile wide.w 128x320x64: n = 320, but template wgmma_tma_gemm needs n % 64 = 0 and n <= 256: wgmma's n is at most 256, and B arrives in boxes of 64 columns");
    assert_one(tc_errors(false, "n = 256\nk = 64\nstages = 4\n", "n = 256\nk = 128\nstages = 4\n"), "sm90a.toml:17: tile wide.w 128x256x128: k = 128, but template wgmma_tma_gemm needs k = 64: a stage is 64 k, one 128-byte swizzled row of 16-bit elements");
    assert_one(tc_errors(false, "stages = 4\n", "stages = 1\n"), "sm90a.toml:17: tile wide.w 128x256x64: stages = 1, but template wgmma_tma_gemm needs 2 <= stages <= 8: the TMA ring needs a stage loading while another is consumed, and wgmma_tma_gemm's barrier phases support at most 8");
    assert_one(tc_errors(false, "cluster_m = 1\n", "cluster_m = 4\n"), "sm90a.toml:17: tile wide.w 128x256x64: cluster_m = 4, but template wgmma_tma_gemm needs 1 <= cluster_m <= 2: wgmma_tma_gemm multicasts B to clusters of one or two CTAs along M");
}

#[test]
fn mma_decode_tma_limits() {
    assert_one(tc_errors(false, "m = 16\nn = 32\n", "m = 32\nn = 32\n"), "sm90a.toml:9: tile dec.d 32x32x64: m = 32, but template mma_decode_tma needs m = 16: a CTA computes the 16 rows of one mma.sync m16n8k16");
    assert_one(tc_errors(false, "m = 16\nn = 32\n", "m = 16\nn = 24\n"), "sm90a.toml:9: tile dec.d 16x24x64: n = 24, but template mma_decode_tma needs n = 16, 32 or 64: one consumer warp per 8 columns, and B stored [k, n] arrives in boxes of n-element rows whose n * 2 bytes must be a TMA swizzle width (32, 64 or 128)");
    assert_one(tc_errors(false, "n = 32\nk = 64\nstages = 8\n", "n = 32\nk = 32\nstages = 8\n"), "sm90a.toml:9: tile dec.d 16x32x32: k = 32, but template mma_decode_tma needs k = 64: a stage is 64 k, one 128-byte swizzled row of 16-bit elements");
    assert_one(tc_errors(false, "stages = 8\n", "stages = 17\n"), "sm90a.toml:9: tile dec.d 16x32x64: stages = 17, but template mma_decode_tma needs 2 <= stages <= 16: the TMA ring needs a stage loading while another is consumed, and mma_decode_tma supports at most 16");
}

#[test]
fn mma_gemm_limits() {
    assert_one(tc_errors(false, "m = 64\nn = 64\nk = 32\nstages = 2\n", "m = 48\nn = 64\nk = 32\nstages = 2\n"), "sm90a.toml:27: tile plain.p 48x64x32: m = 48, but template mma_gemm needs m % (16 * warps_m) = 0: each warp covers whole 16-row mma.sync fragments");
    assert_one(tc_errors(false, "warps_n = 2\n", "warps_n = 16\n"), "sm90a.toml:27: tile plain.p 64x64x32: n = 64, but template mma_gemm needs n % (8 * warps_n) = 0: each warp covers whole 8-column mma.sync fragments");
    assert_errors(tc_errors(false, "k = 32\nstages = 2\n", "k = 24\nstages = 2\n"), &["sm90a.toml:27: tile plain.p 64x64x24: k = 24 is not a multiple of 16 (instruction mma16816 is 16x8x16)", "sm90a.toml:27: tile plain.p 64x64x24: k = 24, but template mma_gemm needs k % 16 = 0: a step is whole k16 steps of the contract"]);
    assert_one(tc_errors(false, "stages = 2\nwarps_m", "stages = 3\nwarps_m"), "sm90a.toml:27: tile plain.p 64x64x32: stages = 3, but template mma_gemm needs 1 <= stages <= 2: mma_gemm loads a step then computes it (1), or keeps the next step's loads in flight in registers (2)");
}

#[test]
fn tc_threads_and_shared_memory_are_checked() {
    assert_one(
        tc_errors(false, "n = 64\nk = 32\nstages = 2\nwarps_m = 2\nwarps_n = 2\n", "n = 128\nk = 32\nstages = 2\nwarps_m = 4\nwarps_n = 16\n"),
        "sm90a.toml:27: tile plain.p 64x128x32 runs 2048 threads a block; sm90a needs a multiple of 32 and at most 1024",
    );
    assert_one(tc_errors(false, "stages = 4\n", "stages = 8\n"), "sm90a.toml:17: tile wide.w 128x256x64 needs 427136 bytes of shared memory; sm90a allows 232448");
}

#[test]
fn the_wide_tma_family_needs_a_c_map_for_its_tma_store() {
    let errors = tc_errors(
        true,
        "  { name = \"c_map\", type = \"tensor_map\", bind = \"c.tensor_map\" },\n",
        "",
    );
    assert_eq!(
        errors,
        ["families.toml:31: family wide: template wgmma_tma_gemm stores C through TMA from args.c_map when flags has bit 1; ABI struct TcGemmArgs has no field `c_map` of type tensor_map bound to c.tensor_map"]
    );
}

#[test]
fn a_grid_must_suit_the_templates_scheduler() {
    assert_one(
        tc_errors(true, "grid = \"persistent\"\n", "grid = \"tiles\"\n"),
        "families.toml:32: family wide: template wgmma_tma_gemm is a wgmma_tma kernel, whose grid is grid = \"persistent\"; the family says grid = \"tiles\" (only templates with a persistent scheduler walk tiles on a persistent grid)",
    );
    assert_one(
        tc_errors(true, "instruction = \"mma16816\"\nstaging = \"operand\"\ngrid = \"tiles\"", "instruction = \"mma16816\"\nstaging = \"operand\"\ngrid = \"persistent\""),
        "families.toml:54: family plain: template mma_gemm is a mma_gemm kernel, whose grid is grid = \"tiles\"; the family says grid = \"persistent\" (only templates with a persistent scheduler walk tiles on a persistent grid)",
    );
}

#[test]
fn a_tma_family_needs_tensor_map_fields() {
    let e = tc_errors(
        true,
        "  { name = \"b_map\", type = \"tensor_map\", bind = \"b.tensor_map\" },\n",
        "",
    );
    assert_errors(e, &["families.toml:42: family dec: template mma_decode_tma loads A and B through TMA from args.a_map and args.b_map; ABI struct TcGemmArgs has no field `b_map` of type tensor_map bound to b.tensor_map", "families.toml:31: family wide: template wgmma_tma_gemm loads A and B through TMA from args.a_map and args.b_map; ABI struct TcGemmArgs has no field `b_map` of type tensor_map bound to b.tensor_map"]);
}

#[test]
fn tc_templates_need_their_instruction_and_16_bit_operands() {
    assert_one(
        tc_errors(true, "instruction = \"wgmma\"", "instruction = \"mmatma\""),
        "families.toml:32: family wide: template wgmma_tma_gemm needs an arch-specific target (wgmma exists only on arch-specific sm_90a targets), but the family's instruction mmatma is not arch_specific: name an arch-specific instruction",
    );
    assert_one(
        tc_errors(true, "instruction = \"mmatma\"", "instruction = \"mma16816\""),
        "families.toml:43: family dec: template mma_decode_tma needs compute capability >= 9.0 (it loads operands with TMA), but the family's instruction mma16816 exists from 8.0: name an instruction that starts at 9.0 or later",
    );
    assert_one(
        tc_errors(
            true,
            "variants.nn = [\"bf16.bf16.f32\", \"bf16.f32.f32\"]\n\n[family.dec]",
            "variants.nn = [\"bf16.bf16.f32\", \"f32.f32.f32\"]\n\n[family.dec]",
        ),
        "families.toml:41: family wide: template wgmma_tma_gemm takes A and B of 2 bytes an element (bf16, f16); the family lists variant nn f32.f32.f32",
    );
}

#[test]
fn abi_fields_bind_known_sources_of_their_type_once() {
    assert_one(
        tc_errors(true, "{ name = \"m\", type = \"i32\" }", "{ name = \"m\", type = \"i32\", bind = \"rows_of_c\" }"),
        "families.toml:22: ABI struct TcGemmArgs: field `m` binds `rows_of_c`, which is not a source of launch arguments; give `bind` one of a.ptr, b.ptr, bias.ptr, c.ptr, a.tensor_map, b.tensor_map, c.tensor_map, m, n, k, lda, ldb, ldc, beta, flags, src, dst, rows, cols, ld_src, ld_dst",
    );
    assert_one(
        tc_errors(true, "{ name = \"m\", type = \"i32\" }", "{ name = \"m\", type = \"i32\", bind = \"a.tensor_map\" }"),
        "families.toml:22: ABI struct TcGemmArgs: field `m` has type i32 but binds a.tensor_map, a tensor_map value",
    );
    assert_one(
        tc_errors(true, "{ name = \"m\", type = \"i32\" }", "{ name = \"m\", type = \"i32\" }, { name = \"rows\", type = \"i32\", bind = \"m\" }"),
        "families.toml:22: ABI struct TcGemmArgs: field `rows` binds m, which field `m` binds already: each source fills one field",
    );
    assert_one(
        tc_errors(true, "{ name = \"m\", type = \"i32\" }", "{ name = \"count\", type = \"i32\" }"),
        "families.toml:22: ABI struct TcGemmArgs: field `count` has no `bind`, and its name `count` is not a source of launch arguments; give `bind` one of a.ptr, b.ptr, bias.ptr, c.ptr, a.tensor_map, b.tensor_map, c.tensor_map, m, n, k, lda, ldb, ldc, beta, flags, src, dst, rows, cols, ld_src, ld_dst",
    );
}

#[test]
fn unaligned_kernels_are_checked() {
    assert_one(tc_errors(false, "kernel = \"dec.d\"\nunaligned = \"plain.p\"\n", "kernel = \"dec.d\"\n"), "sm90a.toml:46: route 1: kernel `dec.d` is a mma_decode_tma kernel, which loads A and B through TMA: the route needs `unaligned = \"family.tile\"`, a plain-load kernel of contract tc-k16 for operands off 16 bytes");
    assert_one(
        tc_errors(false, "kernel = \"dec.d\"\nunaligned = \"plain.p\"\n", "kernel = \"plain.p\"\nunaligned = \"plain.p\"\n"),
        "sm90a.toml:46: route 1: unaligned kernel `plain.p` is given, but the route's kernel plain.p is a mma_gemm kernel, which takes operands of any alignment: only routes to kernels that need aligned operands (TMA, cp.async) have an unaligned kernel",
    );
    assert_one(
        tc_errors(false, "kernel = \"dec.d\"\nunaligned = \"plain.p\"\n", "kernel = \"dec.d\"\nunaligned = \"wide.w\"\n"),
        "sm90a.toml:46: route 1: unaligned kernel `wide.w` is a wgmma_tma kernel, which loads A and B through TMA too: name a plain-load kernel (e.g. of template mma_gemm)",
    );
    assert_one(
        tc_errors(false, "kernel = \"dec.d\"\nunaligned = \"plain.p\"\n", "kernel = \"dec.d\"\nunaligned = \"other.o\"\n"),
        "sm90a.toml:46: route 1: unaligned kernel `other.o` implements contract tc-other, but the route's kernel dec.d implements tc-k16: the same call must give the same bits whether or not TMA can take its operands",
    );
    assert_one(
        tc_errors(false, "kernel = \"dec.d\"\nunaligned = \"plain.p\"\n", "kernel = \"dec.d\"\nunaligned = \"plain.q\"\n"),
        "sm90a.toml:46: route 1: unaligned kernel `plain.q` names tile q, which tier sm90a does not define for plain",
    );
    assert_one(
        tc_errors(false, "kernel = \"dec.d\"\nunaligned = \"plain.p\"\n", "kernel = \"dec.d\"\nunaligned = \"plainp\"\n"),
        "sm90a.toml:46: route 1: unaligned kernel `plainp` must read `family.tile`, e.g. `mma.wide`",
    );
    // The unaligned kernel must have every (op, dtype) the route serves.
    let shared = TC_SHARED.replace(
        "contract = \"tc-k16\"\npolicy = \"tensor-core\"\nabi = \"TcGemmArgs\"\ninstruction = \"mma16816\"\nstaging = \"operand\"\ngrid = \"tiles\"\nvariants.nn = [\"bf16.bf16.f32\", \"bf16.f32.f32\"]",
        "contract = \"tc-k16\"\npolicy = \"tensor-core\"\nabi = \"TcGemmArgs\"\ninstruction = \"mma16816\"\nstaging = \"operand\"\ngrid = \"tiles\"\nvariants.nn = [\"bf16.bf16.f32\"]",
    );
    assert_errors(load(&shared, TC_TIER).unwrap_err(), &["sm90a.toml:46: route 1: unaligned kernel `plain.p` has no nn bf16.f32.f32 variant, which the route serves: family plain does not list it", "sm90a.toml:54: route 2: unaligned kernel `plain.p` has no nn bf16.f32.f32 variant, which the route serves: family plain does not list it"]);
}

#[test]
fn the_conversions_unit_name_is_reserved() {
    let shared = TC_SHARED.replace("[family.other]", "[family.conversions]");
    let tier = TC_TIER
        .replace("\"other\"]", "\"conversions\"]")
        .replace("family = \"other\"", "family = \"conversions\"");
    assert_one(load(&shared, &tier).unwrap_err(), "families.toml:65: family name `conversions` is reserved: each family compiles to cuda/<tier>/<family>.cu, and conversions.cu holds the conversion kernels");
}
