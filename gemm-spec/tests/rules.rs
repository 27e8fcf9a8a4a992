//! One failing spec per validation rule, each asserting its message (file, line, numbers).

mod support;

use gemm_spec::{SpecSource, Validated};
use support::load_sources;

const SHARED: &str = r#"
[instruction.fma]
shape = { m = 1, n = 1, k = 1 }
min_compute_capability = [5, 0]

[instruction.wgmma]
shape = { m = 64, n = 8, k = 16 }
min_compute_capability = [9, 0]
max_compute_capability = [9, 0]
arch_specific = true

[contract.fma-k256]
doc = "K in chunks of 256, one f32 fma chain each, the chunks added in order"
chunk = 256

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
contract = "fma-k256"
policy = "exact"
abi = "GemmArgs"
instruction = "fma"
variants.nn = ["f32.f32.f32", "bf16.bf16.f32"]

[family.fmb]
template = "fma_pair_gemm"
contract = "fma-pair"
policy = "exact"
abi = "GemmArgs"
instruction = "fma"
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
abi = "ConvertArgs"
threads = 256
variants = ["bf16.f32", "f16.f32"]

[conversion.narrow]
template = "convert_matrix"
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
    support::load_pair(shared, "sm90a.toml", tier)
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
fn a_tuning_candidate_is_compiled_without_the_unreached_warning() {
    let tier = TIER.replacen(
        "name = \"wide\"\n",
        "name = \"wide\"\ntuning_candidate = true\n",
        1,
    );
    assert_ne!(tier, TIER, "fixture lacks the wide tile");
    let v = load(SHARED, &tier).expect("spec validates");
    assert!(v.warnings.is_empty(), "{:?}", v.warnings);
    let t = v.specs.tier("sm90a").unwrap();
    assert!(t
        .tiles
        .iter()
        .any(|x| x.name == "wide" && x.tuning_candidate));
}

#[test]
fn unknown_keys_are_rejected_with_their_line() {
    let e = errors_with(false, "thread_n = 2\n", "thread_n = 2\nwarps = 4\n");
    assert_eq!(e.len(), 1);
    assert!(
        e[0].starts_with("sm90a.toml:17: tile fma.thin: `warps` is not a parameter of template fma_gemm (family fma, fma/fma_gemm.toml); its keys are family, name, m, n, k, stages, thread_m, thread_n, k_split, min_blocks"),
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
        "{SHARED}\n[family.tc]\ntemplate = \"fma_gemm\"\ncontract = \"fma-k256\"\npolicy = \"exact\"\nabi = \"GemmArgs\"\ninstruction = \"wgmma\"\nvariants.nn = [\"bf16.bf16.f32\"]\n"
    );
    let tier = TIER.replace(r#"families = ["fma", "fmb"]"#, r#"families = ["fma", "fmb", "tc"]"#)
        + "\n[[tile]]\nfamily = \"tc\"\nname = \"big\"\nm = 96\nn = 256\nk = 64\nthread_m = 32\nthread_n = 64\n";
    let e = load(&shared, &tier).unwrap_err();
    assert_eq!(
        e,
        vec!["sm90a.toml:53: tile tc.big 96x256x64: m = 96 is not a multiple of 64 (instruction wgmma is 64x8x16)"]
    );
}

#[test]
fn thread_tile_must_divide_the_tile() {
    assert_one(
        errors_with(false, "thread_n = 2\n", "thread_n = 3\n"),
        format!("sm90a.toml:9: tile fma.thin 8x64x32: template fma_gemm needs m % thread_m == 0 && n % thread_n == 0 (m = 8, thread_m = 1, n = 64, thread_n = 3): each thread computes thread_m rows and thread_n columns of the tile ({})", support::block_at("fma/fma_gemm.toml", "rule = \"m % thread_m == 0 && n % thread_n == 0\"")).as_str(),
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
        "[family.fmb]\ntemplate = \"fma_pair_gemm\"\ncontract = \"fma-pair\"\npolicy = \"exact\"\nabi = \"GemmArgs\"\ninstruction = \"fma\"",
        "[family.fmb]\ntemplate = \"fma_pair_gemm\"\ncontract = \"fma-pair\"\npolicy = \"exact\"\nabi = \"GemmArgs\"\ninstruction = \"wgmma\"",
    );
    let tier = TIER
        .replace("compute_90a,code=sm_90a", "compute_80,code=sm_80")
        .replace("[9, 0]", "[8, 0]")
        .replace("max_shared_bytes = 232448", "max_shared_bytes = 166912");
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
        vec!["sm90a.toml:51: batch invariance broken in tier sm90a for exact nn f32.f32.f32: at n = 0, k = 0, m = 0 takes route 1 (fmb.wide, contract fma-pair) but m = 65 takes route 3 (fma.tiled, contract fma-k256); every m of one (n, k) must reach one contract"]
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
    // Route 1 (m <= 64, n <= 100) uses fma-pair; route 2 overlaps it in n with fma-k256.
    let tier = TIER.replace(
        "dtype = \"any\"\nm = { max = 64 }\nkernel = \"fma.thin\"",
        "dtype = \"f32.f32.f32\"\nm = { max = 64 }\nn = { min = 50, max = 100 }\nkernel = \"fmb.wide\"\n\n[[route]]\npolicy = \"exact\"\nop = \"nn\"\ndtype = \"bf16.bf16.f32\"\nkernel = \"fma.thin\"",
    );
    let e = load(SHARED, &tier).unwrap_err();
    assert_eq!(e.len(), 1, "{e:?}");
    assert!(
        e[0].contains("at n = 50, k = 0, m = 0 takes route 1 (fmb.wide, contract fma-pair) but m = 65 takes route 3 (fma.tiled, contract fma-k256)"),
        "{}",
        e[0]
    );
}

#[test]
fn references_must_resolve() {
    assert_one(
        errors_with(
            true,
            "contract = \"fma-k256\"\npolicy",
            "contract = \"fma-exact\"\npolicy",
        ),
        "families.toml:27: contract `fma-exact` is not defined; defined: fma-k256, fma-pair",
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
        "families.toml:23: ABI struct GemmArgs: field `m` has type `int`; expected one of const_ptr, mut_ptr, i32, u32, i64, u64, f32, tensor_map",
    );
    assert_one(
        errors_with(
            true,
            r#"{ name = "m", type = "i32" }"#,
            r#"{ name = "a", type = "i32" }"#,
        ),
        "families.toml:23: ABI struct GemmArgs: field `a` appears twice",
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
        "families.toml:16: contract name `Fma pair` must be lowercase letters, digits and `-`, starting with a letter"
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
        "stray.toml:1: routes in a file without a [tier] table: tiles and routes belong to the tier of their file; a file of routes alone is a routes file, which a tier lists in `routes_files`"
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
    let v = support::load_dir(std::path::Path::new("../specs")).expect("shipped specs validate");
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
fn a_conversion_must_widen_narrow_or_repack() {
    assert_one(
        errors_with(true, r#"variants = ["bf16.f32", "f16.f32"]"#, r#"variants = ["bf16.f16"]"#),
        "families.toml:53: conversion upcast: variant `bf16.f16` converts bf16 to f16; a conversion widens a half type to f32, narrows f32 to a half type, or repacks a type to itself",
    );
    // A type to itself is the repack, a conversion of its own.
    load(
        &SHARED.replacen(
            r#"variants = ["bf16.f32", "f16.f32"]"#,
            r#"variants = ["bf16.f32", "f16.f32", "bf16.bf16"]"#,
            1,
        ),
        TIER,
    )
    .expect("a repack variant validates");
    assert_one(
        errors_with(true, r#"variants = ["bf16.f32", "f16.f32"]"#, r#"variants = ["bf16"]"#),
        "families.toml:53: conversion upcast: variant `bf16` must read `from.to` with dtypes f32, bf16 or f16, e.g. `bf16.f32`",
    );
}

#[test]
fn a_conversion_needs_whole_warps_and_a_known_abi() {
    assert_one(
        errors_with(true, "threads = 256", "threads = 100"),
        format!("families.toml:53: conversion upcast: runs 100 threads a block, but template convert_matrix needs threads % 32 == 0 && threads <= 1024: a block is whole warps, at most 1024 threads ({})", support::block_at("convert/convert_matrix.toml", "rule = \"threads % 32 == 0 && threads <= 1024\"")).as_str(),
    );
    assert_one(
        errors_with(
            true,
            "abi = \"ConvertArgs\"\nthreads = 256",
            "abi = \"CastArgs\"\nthreads = 256",
        ),
        "families.toml:53: ABI struct `CastArgs` is not defined; defined: ConvertArgs, GemmArgs",
    );
    assert_one(
        errors_with(
            true,
            "abi = \"ConvertArgs\"\nthreads = 256",
            "abi = \"GemmArgs\"\nthreads = 256",
        ),
        "families.toml:53: conversion upcast: ABI struct GemmArgs must have exactly the fields src (const_ptr), dst (mut_ptr), rows, cols, ld_src, ld_dst (i32)",
    );
}

#[test]
fn a_conversion_pair_has_one_kernel() {
    assert_one(
        errors_with(true, r#"variants = ["f32.bf16"]"#, r#"variants = ["f16.f32"]"#),
        "families.toml:53: conversion upcast: variant `f16.f32` is also built by conversion narrow; each pair needs one kernel",
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
contract = "fma-k256"
policy = "exact"
abi = "GemmArgs"
instruction = "cpasync"
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
    let _ = (family, t);
    assert_eq!(
        support::derived(&v, "sm90a", "fms", "dec", f32).shared_bytes,
        147456 + 8192
    );
    assert_eq!(
        support::derived(&v, "sm90a", "fms", "dec", bf16).shared_bytes,
        73728 + 8192
    );
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
// Template limits: every limit of a kind manifest (kernels-templates/**/*.toml) is a spec rule.

/// A decode family on fma_decode_gemm (`fmd`) or fma_decode_staged (`fms`), for tile tests.
const DECODE_FAMILIES: &str = r#"
[instruction.cpasync]
shape = { m = 1, n = 1, k = 1 }
min_compute_capability = [8, 0]

[family.fmd]
template = "fma_decode_gemm"
contract = "fma-k256"
policy = "exact"
abi = "GemmArgs"
instruction = "fma"
variants.nn = ["f32.f32.f32"]

[family.fms]
template = "fma_decode_staged"
contract = "fma-k256"
policy = "exact"
abi = "GemmArgs"
instruction = "cpasync"
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
        format!("sm90a.toml:50: tile fmd.dec 4x64x256: template fma_decode_gemm needs n == 32 (n = 64): a block is one warp (32 columns) wide ({})", support::block_at("fma/fma_decode_gemm.toml", "rule = \"n == 32\"")).as_str(),
    );
    assert_one(
        dec("thread_n = 1", "thread_n = 2"),
        format!("sm90a.toml:50: tile fmd.dec 4x32x256: template fma_decode_gemm needs thread_n == 1 (thread_n = 2): each lane computes one column ({})", support::block_at("fma/fma_decode_gemm.toml", "rule = \"thread_n == 1\"")).as_str(),
    );
    assert_one(
        dec("thread_m = 4", "thread_m = 2"),
        format!("sm90a.toml:50: tile fmd.dec 4x32x256: template fma_decode_gemm needs thread_m == m (thread_m = 2, m = 4): each thread computes all of the block's rows ({})", support::block_at("fma/fma_decode_gemm.toml", "rule = \"thread_m == m\"")).as_str(),
    );
    assert_one(
        dec("k = 256", "k = 128"),
        format!("sm90a.toml:50: tile fmd.dec 4x32x128: template fma_decode_gemm needs k == chunk (k = 128, chunk = 256): tile k must equal the contract's chunk of 256 ({})", support::block_at("fma/fma_decode_gemm.toml", "rule = \"k == chunk\"")).as_str(),
    );
    assert_one(
        dec("k_split = 16", "k_split = 2"),
        format!("sm90a.toml:50: tile fmd.dec 4x32x256: template fma_decode_gemm needs k_split >= m (k_split = 2, m = 4): the fold uses one thread per row of the block ({})", support::block_at("fma/fma_decode_gemm.toml", "rule = \"k_split >= m\"")).as_str(),
    );
    assert_one(
        dec("k_split = 16", "k_split = 16\nstages = 2"),
        format!("sm90a.toml:50: tile fmd.dec 4x32x256: template fma_decode_gemm needs stages == 1 (stages = 2): the template reads operands straight from global memory and has no shared-memory stages ({})", support::block_at("fma/fma_decode_gemm.toml", "rule = \"stages == 1\"")).as_str(),
    );
}

#[test]
fn staged_decode_tiles_need_two_stages() {
    assert_one(
        tile_errors(&format!("family = \"fms\"\n{DEC}")),
        format!("sm90a.toml:50: tile fms.dec 4x32x256: template fma_decode_staged needs stages >= 2 (stages = 1): at least two stages, one loading while one is read ({})", support::block_at("fma/fma_decode_staged.toml", "rule = \"stages >= 2\"")).as_str(),
    );
    assert_one(
        tile_errors(&format!("family = \"fms\"\nstages = 2\n{}", DEC.replace("n = 32", "n = 16"))),
        format!("sm90a.toml:50: tile fms.dec 4x16x256: template fma_decode_staged needs n == 32 (n = 16): a block is one warp (32 columns) wide ({})", support::block_at("fma/fma_decode_staged.toml", "rule = \"n == 32\"")).as_str(),
    );
}

#[test]
fn fma_gemm_tiles_keep_its_limits() {
    let tiled = |from: &str, to: &str| errors_with(false, from, to);
    assert_one(
        tiled("stages = 2\nthread_m = 8", "stages = 3\nthread_m = 8"),
        format!("sm90a.toml:18: tile fma.tiled 128x128x8: template fma_gemm needs stages in [1, 2] (stages = 3): the template supports one or two shared-memory stages ({})", support::block_at("fma/fma_gemm.toml", "rule = \"stages in [1, 2]\"")).as_str(),
    );
    assert_one(
        tiled("thread_n = 8\n", "thread_n = 8\nk_split = 2\n"),
        format!("sm90a.toml:18: tile fma.tiled 128x128x8: template fma_gemm needs k_split == 1 (k_split = 2): the template reduces K in sequence ({})", support::block_at("fma/fma_gemm.toml", "rule = \"k_split == 1\"")).as_str(),
    );
    assert_one(
        tiled("k = 8\nstages = 2", "k = 24\nstages = 2"),
        format!("sm90a.toml:18: tile fma.tiled 128x128x24: template fma_gemm needs chunk % k == 0 (chunk = 256, k = 24): chunk totals are folded every chunk / k k-tiles, so k must divide the contract's chunk of 256 ({})", support::block_at("fma/fma_gemm.toml", "rule = \"chunk % k == 0\"")).as_str(),
    );
    // B's stage starts m*k = 2 floats in: a float4 read of B would be misaligned.
    assert_one(
        tiled(
            "m = 8\nn = 64\nk = 32\nthread_m = 1\nthread_n = 2",
            "m = 2\nn = 64\nk = 1\nthread_m = 1\nthread_n = 4",
        ),
        format!("sm90a.toml:9: tile fma.thin 2x64x1: template fma_gemm needs thread_n % 4 != 0 || (m * k) % 4 == 0 (thread_n = 4, m = 2, k = 1): B is read from shared memory as float4, and B's stage starts m*k floats in ({})", support::block_at("fma/fma_gemm.toml", "rule = \"thread_n % 4 != 0 || (m * k) % 4 == 0\"")).as_str(),
    );
    assert_one(
        tiled(
            "m = 8\nn = 64\nk = 32\nthread_m = 1\nthread_n = 2",
            "m = 16\nn = 2\nk = 1\nstages = 2\nthread_m = 4\nthread_n = 1",
        ),
        format!("sm90a.toml:9: tile fma.thin 16x2x1: template fma_gemm needs thread_m % 4 != 0 || stages != 2 || (k * n) % 4 == 0 (thread_m = 4, stages = 2, k = 1, n = 2): A is read from shared memory as float4, and the second stage starts m*k + k*n floats in ({})", support::block_at("fma/fma_gemm.toml", "rule = \"thread_m % 4 != 0 || stages != 2 || (k * n) % 4 == 0\"")).as_str(),
    );
}

#[test]
fn a_family_names_a_known_template() {
    assert_one(
        errors_with(true, "template = \"fma_gemm\"\ncontract = \"fma-k256\"", "template = \"fma_gem\"\ncontract = \"fma-k256\""),
        format!("families.toml:27: family fma: template `fma_gem` is not a known kernel template (did you mean `fma_gemm`?); known: {}", support::template_listing(false)).as_str(),
    );
    assert_one(
        errors_with(true, "template = \"convert_matrix\"\nabi = \"ConvertArgs\"\nthreads = 256", "template = \"ConvertMatrix\"\nabi = \"ConvertArgs\"\nthreads = 256"),
        format!("families.toml:53: conversion upcast: template `ConvertMatrix` is not a known kernel template (did you mean `convert_matrix`?); known: {}", support::template_listing(true)).as_str(),
    );
    assert_one(
        errors_with(true, "template = \"fma_gemm\"\ncontract = \"fma-k256\"", "template = \"convert_matrix\"\ncontract = \"fma-k256\""),
        format!("families.toml:27: family fma: template convert_matrix is an elementwise conversion template; a family needs a GEMM template: {}", support::template_listing(false)).as_str(),
    );
}

#[test]
fn a_family_says_nothing_its_templates_manifest_says() {
    // Header, shared-memory layout and grid are the template's (its manifest's): a family
    // that states them is refused by the TOML schema, at the key.
    for (key, value) in [
        ("header", "\"fma/fma_gemm.cuh\""),
        ("staging", "\"f32\""),
        ("shared", "[\"operands\"]"),
        ("grid", "\"tiles\""),
    ] {
        let e = errors_with(
            true,
            "[family.fma]\ntemplate = \"fma_gemm\"\n",
            &format!("[family.fma]\ntemplate = \"fma_gemm\"\n{key} = {value}\n"),
        );
        assert!(e[0].starts_with("families.toml:29: "), "{e:?}");
        assert!(e[0].contains(&format!("unknown field `{key}`")), "{e:?}");
    }
}

#[test]
fn a_family_lists_only_ops_its_template_supports() {
    let shared = format!("{SHARED}{DECODE_FAMILIES}variants.nt = [\"f32.f32.f32\"]\n");
    assert_eq!(
        load(&shared, TIER).unwrap_err(),
        vec!["families.toml:84: family fms: template fma_decode_staged supports op nn only; the family lists variants.nt"]
    );
}

#[test]
fn a_template_needs_an_instruction_of_its_capability() {
    let shared = format!("{SHARED}{DECODE_FAMILIES}")
        .replace("instruction = \"cpasync\"", "instruction = \"fma\"");
    assert_eq!(
        load(&shared, TIER).unwrap_err(),
        vec!["families.toml:77: family fms: template fma_decode_staged needs compute capability >= 8.0 (it copies operands with cp.async), but the family's instruction fma exists from 5.0: name an instruction that starts at 8.0 or later"]
    );
}

#[test]
fn every_shipped_template_has_its_manifest_and_defines_its_struct() {
    let v = support::load_dir(std::path::Path::new("../specs")).unwrap();
    let kinds = v
        .specs
        .families
        .values()
        .map(|f| &f.kind)
        .chain(v.specs.conversions.values().map(|c| &c.kind));
    for k in kinds {
        let header = std::path::Path::new("../kernels-templates").join(&k.header);
        let text = std::fs::read_to_string(&header)
            .unwrap_or_else(|e| panic!("{}: {e}", header.display()));
        assert!(
            text.contains(&format!("struct {} {{", k.template)),
            "{} lacks struct {}",
            k.header,
            k.template
        );
        assert!(std::path::Path::new("../kernels-templates")
            .join(&k.manifest)
            .is_file());
    }
}

/// A kind's `describe` may name the builtins (the tile's m, n, k, ...) as well as its parameters
/// and lets: every shipped tile's description has each name filled in.
#[test]
fn every_shipped_tile_description_fills_its_names() {
    let v = support::load_dir(std::path::Path::new("../specs")).unwrap();
    let mut described = 0;
    for tier in &v.specs.tiers {
        for tile in &tier.tiles {
            let family = &v.specs.families[&tile.family];
            let Some(&(op, dtype)) = family.variants.first() else {
                continue;
            };
            let d = v.specs.derive(tier, tile, op, dtype).unwrap().unwrap();
            let text = gemm_spec::kinds::describe(&family.kind, &d);
            assert!(
                !text.contains('{'),
                "{}.{} on {}: `{text}` keeps a name unfilled",
                tile.family,
                tile.name,
                tier.name
            );
            described += 1;
        }
    }
    assert!(described > 0);
}

// ---------------------------------------------------------------------------------------------
// Zero where zero means nothing.

#[test]
fn a_zero_thread_tile_is_an_error() {
    assert_one(
        errors_with(false, "thread_m = 1\n", "thread_m = 0\n"),
        "sm90a.toml:15: tile fma.thin: `thread_m` = 0, but its least value is 1 (rows of C a thread computes)",
    );
    assert_one(
        errors_with(false, "thread_n = 2\n", "thread_n = 0\n"),
        "sm90a.toml:16: tile fma.thin: `thread_n` = 0, but its least value is 1 (columns of C a thread computes)",
    );
}

#[test]
fn zero_stages_say_a_tile_needs_one() {
    assert_one(
        errors_with(false, "stages = 2\n", "stages = 0\n"),
        "sm90a.toml:24: tile fma.tiled: `stages` = 0, but its least value is 1 (shared-memory stages: 1, or 2 with the next k-tile loaded into registers while one is used)",
    );
}

#[test]
fn zero_tile_dimensions_and_k_split_are_errors() {
    assert_one(
        errors_with(false, "m = 8\n", "m = 0\n"),
        "sm90a.toml:12: tile fma.thin: m = 0, but a tile covers at least one row of C",
    );
    assert_one(
        errors_with(false, "thread_n = 2\n", "thread_n = 2\nk_split = 0\n"),
        "sm90a.toml:17: tile fma.thin: `k_split` = 0, but its least value is 1 (K chunks a block reduces in parallel)",
    );
}

#[test]
fn min_blocks_is_at_least_one_and_at_most_what_an_sm_holds() {
    assert_one(
        errors_with(false, "thread_n = 2\n", "thread_n = 2\nmin_blocks = 0\n"),
        "sm90a.toml:17: tile fma.thin: `min_blocks` = 0, but its least value is 1 (blocks an SM the launch bounds ask for (caps registers); none when omitted); leave it out for none",
    );
    // What the tier's hardware holds: blocks, threads, shared memory and registers an SM.
    assert_one(
        errors_with(false, "thread_n = 2\n", "thread_n = 2\nmin_blocks = 33\n"),
        "sm90a.toml:9: tile fma.thin 8x64x32: min_blocks = 33 cannot be resident on compute capability 9.0 (hardware.toml:91): an SM holds at most 32 blocks",
    );
    assert_one(
        errors_with(false, "thread_n = 2\n", "thread_n = 2\nmin_blocks = 9\n"),
        "sm90a.toml:9: tile fma.thin 8x64x32: min_blocks = 9 cannot be resident on compute capability 9.0 (hardware.toml:91): 9 blocks of 256 threads are 2304 threads, more than an SM's 2048",
    );
    assert_one(
        errors_with(false, "stages = 2\n", "stages = 2\nmin_blocks = 3\n"),
        "sm90a.toml:18: tile fma.tiled 128x128x8: min_blocks = 3 cannot be resident on compute capability 9.0 (hardware.toml:91): 3 blocks of 81920 bytes of shared memory (and 1024 reserved each) are 248832 bytes, more than an SM's 233472",
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
        errors_with(true, "instruction = \"fma\"\nvariants.nn = [\"f32.f32.f32\"]", "instruction = \"fma\"\nvariants.nn = [\"f32.f32.f32\"]\nvariants.nt = []"),
        "families.toml:42: family fmb: `variants.nt = []` lists nothing; list the dtype triples to build for the op, or leave the key out",
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
        "sm90a.toml:1: tier sm90a: max_shared_bytes = 5000000000 is more than compute capability 9.0 gives a block of shared memory (232448, hardware.toml:91): lower it, or correct the hardware entry",
    );
    let e = errors_with(false, "max_shared_bytes = 232448", "max_shared_bytes = 0");
    assert_eq!(
        e[0],
        "sm90a.toml:1: tier sm90a: max_shared_bytes = 0 leaves a block no a block of shared memory"
    );
    let e = errors_with(
        false,
        "max_registers_per_thread = 255",
        "max_registers_per_thread = 256",
    );
    assert_eq!(
        e,
        vec!["sm90a.toml:1: tier sm90a: max_registers_per_thread = 256 is more than compute capability 9.0 gives a thread of registers (255, hardware.toml:91): lower it, or correct the hardware entry"]
    );
    assert_one(
        errors_with(false, "max_registers_per_thread = 255", "max_registers_per_thread = 255\nmax_threads_per_block = 1000"),
        "sm90a.toml:1: tier sm90a: max_threads_per_block = 1000 must be a multiple of 32: blocks are whole warps",
    );
    assert_one(
        errors_with(false, "max_registers_per_thread = 255", "max_registers_per_thread = 255\nregisters_per_block = 131072"),
        "sm90a.toml:1: tier sm90a: registers_per_block = 131072 is more than compute capability 9.0 gives a block of registers (65536, hardware.toml:91): lower it, or correct the hardware entry",
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
        "families.toml:33: family fma: variant nn bf16.bf16.bf16 accumulates in bf16, but its contract fma-k256 accumulates in f32",
    );
}

// ---------------------------------------------------------------------------------------------
// Inputs: a contract may be defined for some operand dtypes only (TF32's tc-tf32-k8 for f32).

#[test]
fn a_variant_takes_inputs_its_contract_is_defined_for() {
    assert_one(
        errors_with(
            true,
            "doc = \"K in chunks of 256, one f32 fma chain each, the chunks added in order\"",
            "doc = \"K in chunks of 256, one f32 fma chain each, the chunks added in order\"\ninputs = [\"f32\"]",
        ),
        "families.toml:34: family fma: variant nn bf16.bf16.f32 takes bf16.bf16.f32 inputs, but its contract fma-k256 is defined for f32 inputs only (its `inputs`): give the variant a family whose contract fma-k256 takes them",
    );
}

#[test]
fn contract_inputs_are_known_dtypes_listed_once() {
    assert_one(
        errors_with(
            true,
            "doc = \"K in chunks of 256, one f32 fma chain each, the chunks added in order\"",
            "doc = \"K in chunks of 256, one f32 fma chain each, the chunks added in order\"\ninputs = []",
        ),
        "families.toml:12: contract fma-k256: `inputs` is empty; list the operand dtypes the contract is defined for, or leave the key out for all",
    );
    assert_one(
        errors_with(
            true,
            "doc = \"K in chunks of 256, one f32 fma chain each, the chunks added in order\"",
            "doc = \"K in chunks of 256, one f32 fma chain each, the chunks added in order\"\ninputs = [\"f32\", \"tf32\"]",
        ),
        "families.toml:12: contract fma-k256: inputs: unknown dtype `tf32`; expected one of f32, bf16, f16",
    );
    assert_one(
        errors_with(
            true,
            "doc = \"K in chunks of 256, one f32 fma chain each, the chunks added in order\"",
            "doc = \"K in chunks of 256, one f32 fma chain each, the chunks added in order\"\ninputs = [\"f32\", \"bf16\", \"f32\"]",
        ),
        "families.toml:12: contract fma-k256: input `f32` is listed twice",
    );
}

#[test]
fn a_contract_accumulates_in_f32() {
    assert_one(
        errors_with(true, "doc = \"K in chunks of 256, one f32 fma chain each, the chunks added in order\"", "doc = \"K in chunks of 256, one f32 fma chain each, the chunks added in order\"\naccumulator = \"f16\""),
        "families.toml:12: contract fma-k256: accumulator `f16` is not one the templates have; every kernel template accumulates in f32 (accumulator = \"f32\")",
    );
    assert_one(
        errors_with(
            true,
            "doc = \"K in chunks of 256, one f32 fma chain each, the chunks added in order\"",
            "doc = \"K in chunks of 256, one f32 fma chain each, the chunks added in order\"\naccumulator = \"f64\"",
        ),
        "families.toml:12: contract fma-k256: unknown dtype `f64`; expected one of f32, bf16, f16",
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
    // A capability the hardware table knows and no tier file claims.
    let tiers = files
        .iter()
        .filter(|s| s.text.lines().any(|l| l.trim() == "[tier]"));
    let claimed: Vec<u32> = tiers
        .flat_map(|s| {
            (0..10).filter(|m| s.text.contains(&format!("compute_capability = [8, {m}]")))
        })
        .collect();
    let hardware = files
        .iter()
        .find(|s| s.file == "hardware.toml")
        .expect("specs/hardware.toml ships");
    let minor = (1..10)
        .filter(|m| {
            hardware
                .text
                .contains(&format!("compute_capability = [8, {m}]"))
        })
        .find(|m| !claimed.contains(m))
        .expect("a free 8.x capability in the hardware table");
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
    // The new tier with routes of its own: its base's, without tn.
    let base = shipped()
        .into_iter()
        .find(|s| s.file == "sm80.toml")
        .expect("specs/sm80.toml ships")
        .text;
    // Every `[[route]]` table of the base, in order (each up to the next table).
    let routes: String = base
        .split("\n[")
        .filter(|t| t.starts_with("[route]]"))
        .map(|t| format!("\n[{t}\n"))
        .collect();
    assert!(!routes.is_empty(), "sm80 has routes");
    let no_tn = format!(
        "{text}\n{}",
        routes.replace("op = [\"nn\", \"nt\", \"tn\"]", "op = [\"nn\", \"nt\"]")
    );
    assert_ne!(no_tn, format!("{text}\n{routes}"), "sm80's routes name tn");
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
        && shipped().iter().all(|s| {
            !s.text.lines().any(|l| l.trim() == "[tier]")
                || !s.text.contains("compute_capability = [8, 7]")
        })
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
    let e = support::load_dir(&dir).unwrap_err();
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
  { name = "m", type = "i32" }, { name = "a_batch_stride", type = "i64", bind = "a.batch_stride" }, { name = "b_batch_stride", type = "i64", bind = "b.batch_stride" }, { name = "c_batch_stride", type = "i64", bind = "c.batch_stride" }, { name = "bias_batch_stride", type = "i64", bind = "bias.batch_stride" },
]

[family.wide]
template = "wgmma_tma_gemm"
contract = "tc-k16"
policy = "tensor-core"
abi = "TcGemmArgs"
instruction = "wgmma"
variants.nn = ["bf16.bf16.f32", "bf16.f32.f32"]

[family.dec]
template = "mma_decode_tma"
contract = "tc-k16"
policy = "tensor-core"
abi = "TcGemmArgs"
instruction = "mmatma"
variants.nn = ["bf16.bf16.f32", "bf16.f32.f32"]

[family.plain]
template = "mma_gemm"
contract = "tc-k16"
policy = "tensor-core"
abi = "TcGemmArgs"
instruction = "mma16816"
variants.nn = ["bf16.bf16.f32", "bf16.f32.f32"]

[family.other]
template = "mma_other_gemm"
contract = "tc-other"
policy = "tensor-core"
abi = "TcGemmArgs"
instruction = "mma16816"
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
    let bf16 = "bf16.bf16.f32".parse().unwrap();
    let wide = support::derived(&v, "sm90a", "wide", "w", bf16);
    assert_eq!(wide.threads, 384);
    assert_eq!(wide.cluster, 1);
    assert_eq!(
        wide.shared_bytes,
        // stages, the staging of C (2 consumers x 2 boxes of 64 x 128 bytes), slack, barriers
        4 * (128 * 64 + 64 * 256) * 2 + 2 * 2 * 64 * 128 + 1024 + 4 * 16
    );
    // 192 x 192 by three consumers: 512 threads, one C box a round each (any C), and 16 bytes
    // for the third consumer's C-load barrier past the slack.
    let sq = load(
        TC_SHARED,
        &TC_TIER.replacen(
            "m = 128\nn = 256\nk = 64\nstages = 4\nconsumers = 2\n",
            "m = 192\nn = 192\nk = 64\nstages = 4\nconsumers = 3\n",
            1,
        ),
    )
    .unwrap_or_else(|e| panic!("{e:?}"));
    for c in ["bf16.bf16.f32", "bf16.f32.f32"] {
        let d = support::derived(&sq, "sm90a", "wide", "w", c.parse().unwrap());
        assert_eq!(
            (d.threads, d.accumulator_registers),
            (512, Some(160)),
            "{c}"
        );
        assert_eq!(
            d.shared_bytes,
            4 * (192 * 64 + 64 * 192) * 2 + 3 * 64 * 128 + 1024 + 4 * 16 + 16,
            "{c}"
        );
    }
    let p = support::derived(&v, "sm90a", "plain", "p", bf16);
    assert_eq!(p.threads, 128);
    assert_eq!(p.shared_bytes, (64 + 64) * (32 + 8) * 2);
    let d = support::derived(&v, "sm90a", "dec", "d", bf16);
    assert_eq!(d.threads, 32 * 4 + 32);
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
        "sm90a.toml:25: tile wide.w: `thread_m` is not a parameter of template wgmma_tma_gemm (family wide, wgmma/wgmma_tma_gemm.toml); its keys are family, name, m, n, k, stages, consumers, cluster_m, pingpong, fold_overlap, split_k, slots, exchange, split_fence",
    );
    assert_one(
        tc_errors(false, "stages = 8\n", "stages = 8\nwarps_m = 1\n"),
        "sm90a.toml:16: tile dec.d: `warps_m` is not a parameter of template mma_decode_tma (family dec, mma/mma_decode_tma.toml); its keys are family, name, m, n, k, stages, split_k, slots, chunk_groups",
    );
}

#[test]
fn a_tc_tile_without_a_required_key_is_an_error() {
    assert_one(
        tc_errors(false, "consumers = 2\n", ""),
        "sm90a.toml:17: tile wide.w: needs `consumers` (consumer warpgroups, 64 rows of the tile each): template wgmma_tma_gemm has no default for it",
    );
    assert_one(
        tc_errors(false, "warps_n = 2\n", ""),
        "sm90a.toml:27: tile plain.p: needs `warps_n` (warps along N; each covers n / warps_n columns): template mma_gemm has no default for it",
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
    // The grid is the template's (persistent, its manifest says): no tile key chooses it.
    assert_one(
        tc_errors(false, "cluster_m = 1\n", "cluster_m = 1\nscheduler = \"tiles\"\n"),
        "sm90a.toml:26: tile wide.w: `scheduler` is not a parameter of template wgmma_tma_gemm (family wide, wgmma/wgmma_tma_gemm.toml); its keys are family, name, m, n, k, stages, consumers, cluster_m, pingpong, fold_overlap, split_k, slots, exchange, split_fence",
    );
}

#[test]
fn zero_tc_parameters_are_errors() {
    assert_one(tc_errors(false, "consumers = 2\n", "consumers = 0\n"), "sm90a.toml:24: tile wide.w: `consumers` = 0, but its least value is 1 (consumer warpgroups, 64 rows of the tile each)");
    assert_one(tc_errors(false, "cluster_m = 1\n", "cluster_m = 0\n"), "sm90a.toml:25: tile wide.w: `cluster_m` = 0, but its least value is 1 (CTAs a cluster along M (B multicast to each))");
    assert_one(tc_errors(false, "warps_m = 2\n", "warps_m = 0\n"), "sm90a.toml:34: tile plain.p: `warps_m` = 0, but its least value is 1 (warps along M; each covers m / warps_m rows)");
}

#[test]
fn wgmma_tma_gemm_limits() {
    assert_one(
        tc_errors(false, "m = 128\nn = 256\nk = 64\nstages = 4\nconsumers = 2\n", "m = 256\nn = 128\nk = 64\nstages = 4\nconsumers = 4\n"),
        format!("sm90a.toml:17: tile wide.w 256x128x64: template wgmma_tma_gemm needs consumers in [1, 2, 3] (consumers = 4): one producer and one to three consumer warpgroups (setmaxnreg shares 64 Ki registers among at most four) ({})", support::block_at("wgmma/wgmma_tma_gemm.toml", "rule = \"consumers in [1, 2, 3]\"")).as_str(),
    );
    // Three consumers have 160 registers a thread: 128 accumulators (n = 256) do not fit.
    assert_one(
        tc_errors(false, "m = 128\nn = 256\nk = 64\nstages = 4\nconsumers = 2\n", "m = 192\nn = 256\nk = 64\nstages = 3\nconsumers = 3\n"),
        format!("sm90a.toml:17: tile wide.w 192x256x64: template wgmma_tma_gemm needs consumers < 3 || (n <= 192 && chunk == 0 && split_k == 1 && pingpong == 0) (consumers = 3, n = 256, chunk = 0, split_k = 1, pingpong = 0): three consumer warpgroups have 160 registers a thread: at most 96 accumulators (n <= 192) and no chunk fold's second set ({})", support::block_at("wgmma/wgmma_tma_gemm.toml", "rule = \"consumers < 3 || (n <= 192 && chunk == 0 && split_k == 1 && pingpong == 0)\"")).as_str(),
    );
    assert_one(tc_errors(false, "m = 128\n", "m = 192\n"), format!("sm90a.toml:17: tile wide.w 192x256x64: template wgmma_tma_gemm needs m == (pingpong == 1 ? 64 : 64 * consumers) (m = 192, pingpong = 0, consumers = 2): each consumer warpgroup computes 64 rows of the tile with wgmma m64nNk16 (with pingpong, each takes whole 64-row tiles in turn) ({})", support::block_at("wgmma/wgmma_tma_gemm.toml", "rule = \"m == (pingpong == 1 ? 64 : 64 * consumers)\"")).as_str());
    assert_one(tc_errors(false, "n = 256\nk = 64\nstages = 4\n", "n = 96\nk = 64\nstages = 4\n"), format!("sm90a.toml:17: tile wide.w 128x96x64: template wgmma_tma_gemm needs (n % 64 == 0 || (b_k_major && n % 16 == 0 && split_k == 1)) && n <= 256 (n = 96, b_k_major = false, split_k = 1, variant nn bf16.bf16.f32): wgmma's n is at most 256, and B stored [k, n] arrives in boxes of 64 columns (B stored [n, k], in nt, arrives in one box of n rows: there n may be any multiple of 16, with no K split) ({})", support::block_at("wgmma/wgmma_tma_gemm.toml", "rule = \"(n % 64 == 0 || (b_k_major && n % 16 == 0 && split_k == 1)) && n <= 256\"")).as_str());
    assert_one(tc_errors(false, "n = 256\nk = 64\nstages = 4\n", "n = 320\nk = 64\nstages = 4\n"), format!("sm90a.toml:17: tile wide.w 128x320x64: template wgmma_tma_gemm needs (n % 64 == 0 || (b_k_major && n % 16 == 0 && split_k == 1)) && n <= 256 (n = 320, b_k_major = false, split_k = 1, variant nn bf16.bf16.f32): wgmma's n is at most 256, and B stored [k, n] arrives in boxes of 64 columns (B stored [n, k], in nt, arrives in one box of n rows: there n may be any multiple of 16, with no K split) ({})", support::block_at("wgmma/wgmma_tma_gemm.toml", "rule = \"(n % 64 == 0 || (b_k_major && n % 16 == 0 && split_k == 1)) && n <= 256\"")).as_str());
    assert_one(tc_errors(false, "n = 256\nk = 64\nstages = 4\n", "n = 256\nk = 128\nstages = 4\n"), format!("sm90a.toml:17: tile wide.w 128x256x128: template wgmma_tma_gemm needs k == 64 (k = 128): a stage is 64 k, one 128-byte swizzled row of 16-bit elements ({})", support::block_at("wgmma/wgmma_tma_gemm.toml", "rule = \"k == 64\"")).as_str());
    assert_one(tc_errors(false, "stages = 4\n", "stages = 1\n"), format!("sm90a.toml:17: tile wide.w 128x256x64: template wgmma_tma_gemm needs stages >= 2 && stages <= 16 (stages = 1): the TMA ring needs a stage loading while another is consumed; 16 stages of the smallest tile (64 x 64, 16 KiB a stage) fill shared memory ({})", support::block_at("wgmma/wgmma_tma_gemm.toml", "rule = \"stages >= 2 && stages <= 16\"")).as_str());
    assert_one(tc_errors(false, "cluster_m = 1\n", "cluster_m = 4\n"), format!("sm90a.toml:17: tile wide.w 128x256x64: template wgmma_tma_gemm needs cluster_m in [1, 2] (cluster_m = 4): B is multicast to clusters of one or two CTAs along M ({})", support::block_at("wgmma/wgmma_tma_gemm.toml", "rule = \"cluster_m in [1, 2]\"")).as_str());
    // The overlapped fold is the chunked contract's: a tile of tc-k16 (one chain over K) has no
    // chunks to fold.
    assert_one(tc_errors(false, "cluster_m = 1\n", "cluster_m = 1\nfold_overlap = 1\n"), format!("sm90a.toml:17: tile wide.w 128x256x64: template wgmma_tma_gemm needs fold_overlap in [0, 1] && (fold_overlap == 0 || (chunk > 0 && split_k == 1 && pingpong == 0)) (fold_overlap = 1, chunk = 0, split_k = 1, pingpong = 0): the overlapped fold is the chunked contract's second chain set (chunks, no split, one tile at a time) ({})", support::block_at("wgmma/wgmma_tma_gemm.toml", "rule = \"fold_overlap in [0, 1] && (fold_overlap == 0 || (chunk > 0 && split_k == 1 && pingpong == 0))\"")).as_str());
    // Dropping the split's fence needs a slotted split: without one there is no signal to drop.
    assert_one(tc_errors(false, "cluster_m = 1\n", "cluster_m = 1\nsplit_fence = 0\n"), format!("sm90a.toml:17: tile wide.w 128x256x64: template wgmma_tma_gemm needs split_fence in [0, 1] && (split_fence == 1 || (split_k > 1 && exchange == 0)) (split_fence = 0, split_k = 1, exchange = 0): the fence is a slotted split's signal (an exchange signals otherwise; without a split there is none) ({})", support::block_at("wgmma/wgmma_tma_gemm.toml", "rule = \"split_fence in [0, 1] && (split_fence == 1 || (split_k > 1 && exchange == 0))\"")).as_str());
    // An exchange is a split: without one there are no peers to fold for.
    assert_one(tc_errors(false, "cluster_m = 1\n", "cluster_m = 1\nexchange = 1\n"), format!("sm90a.toml:17: tile wide.w 128x256x64: template wgmma_tma_gemm needs exchange in [0, 1, 2] && (exchange == 0 || (split_k > 1 && slots == 2 * (split_k - 1))) (exchange = 1, split_k = 1, slots = 0): an exchange is a split whose slots hold one chunk's columns from each peer, for two rounds ({})", support::block_at("wgmma/wgmma_tma_gemm.toml", "rule = \"exchange in [0, 1, 2] && (exchange == 0 || (split_k > 1 && slots == 2 * (split_k - 1)))\"")).as_str());
}

#[test]
fn mma_decode_tma_limits() {
    assert_one(tc_errors(false, "m = 16\nn = 32\n", "m = 48\nn = 32\n"), format!("sm90a.toml:9: tile dec.d 48x32x64: template mma_decode_tma needs m in [16, 32, 64] (m = 48): a consumer warp runs m / 16 row tiles of mma.sync m16n8k16 (m16n8k8 on TF32), one accumulator chain each, against the one B fragment; tn's A rows of m halves (48 * 2 bytes) must be a TMA swizzle width (32, 64 or 128) ({})", support::block_at("mma/mma_decode_tma.toml", "rule = \"m in [16, 32, 64]\"")).as_str());
    assert_one(tc_errors(false, "m = 16\nn = 32\n", "m = 16\nn = 24\n"), format!("sm90a.toml:9: tile dec.d 16x24x64: template mma_decode_tma needs n * ab_bytes in [32, 64, 128] (n = 24, ab_bytes = 2, variant nn bf16.bf16.f32): one consumer warp per 8 columns, and B stored [k, n] arrives in boxes of n-element rows whose n * 2 bytes must be a TMA swizzle width (32, 64 or 128) ({})", support::block_at("mma/mma_decode_tma.toml", "rule = \"n * ab_bytes in [32, 64, 128]\"")).as_str());
    assert_one(tc_errors(false, "n = 32\nk = 64\nstages = 8\n", "n = 32\nk = 32\nstages = 8\n"), format!("sm90a.toml:9: tile dec.d 16x32x32: template mma_decode_tma needs k * ab_bytes == 128 (k = 32, ab_bytes = 2, variant nn bf16.bf16.f32): a stage's K-major rows are one 128-byte swizzled line of k (32 elements of 2 bytes) ({})", support::block_at("mma/mma_decode_tma.toml", "rule = \"k * ab_bytes == 128\"")).as_str());
    assert_one(tc_errors(false, "stages = 8\n", "stages = 17\n"), format!("sm90a.toml:9: tile dec.d 16x32x64: template mma_decode_tma needs stages >= 2 && stages <= 16 (stages = 17): the TMA ring needs a stage loading while another is consumed, and the template supports at most 16 ({})", support::block_at("mma/mma_decode_tma.toml", "rule = \"stages >= 2 && stages <= 16\"")).as_str());
}

/// A decode tile of 32 or 64 rows: each warp runs m / 16 chains, so the A box, the A stage and the
/// accumulators grow with m; tn's A [k, m] rows are 2m bytes at the 2m-byte swizzle.
#[test]
fn mma_decode_tma_row_tiles() {
    // The fixture's decode tile with m rows, validated.
    let decode_rows = |m: u32| {
        let tier = TC_TIER.replacen("m = 16\nn = 32\n", &format!("m = {m}\nn = 32\n"), 1);
        load(TC_SHARED, &tier).unwrap_or_else(|e| panic!("{e:?}"))
    };
    // Its tn kernel (A stored [k, m]), derived.
    let tn = |v: &Validated| {
        let t = v.specs.tier("sm90a").unwrap();
        let tile = t.tile("dec", "d").unwrap();
        let dtype = "bf16.f32.f32".parse().unwrap();
        v.specs
            .derive(t, tile, gemm_spec::Op::Tn, dtype)
            .unwrap()
            .unwrap_or_else(|e| panic!("{e}"))
    };
    let map_a = |d: &gemm_spec::kinds::Derived| {
        let a = &d.tensor_maps[0];
        (a.box_inner, a.box_outer, a.swizzle_bytes)
    };
    let v = decode_rows(64);
    let d = support::derived(&v, "sm90a", "dec", "d", "bf16.bf16.f32".parse().unwrap());
    // 8 stages of A (64 x 64 halves) and B (64 k x 32 n halves), the mbarriers, the slack.
    assert_eq!(
        d.shared_bytes,
        8 * (64 * 64 + 64 * 32) * 2 + 2 * 8 * 8 + 1024
    );
    assert_eq!(d.accumulators, Some(16));
    assert_eq!(d.threads, 32 * 4 + 32);
    assert_eq!(map_a(&d), (64, 64, 128));
    assert_eq!(map_a(&tn(&v)), (64, 64, 128));
    let tn32 = tn(&decode_rows(32));
    assert_eq!(map_a(&tn32), (32, 64, 64));
    assert_eq!(tn32.accumulators, Some(8));
}

/// The decode template's TF32 rules: tn's m-contiguous A goes through transposing ldmatrix,
/// which moves 16-bit elements only, and TF32 stores f32.
#[test]
fn mma_decode_tma_tf32_limits() {
    let shared = format!(
        "{TC_SHARED}\n[instruction.mmatf32]\nshape = {{ m = 16, n = 8, k = 8 }}\nmin_compute_capability = [9, 0]\n\n[contract.tc-tf32-k8]\ndoc = \"k8 steps of TF32\"\n\n[family.dec32]\ntemplate = \"mma_decode_tma\"\ncontract = \"tc-tf32-k8\"\npolicy = \"tensor-core\"\nabi = \"TcGemmArgs\"\ninstruction = \"mmatf32\"\nvariants.nn = [\"f32.f32.f32\", \"f32.bf16.f32\"]\nvariants.tn = [\"f32.f32.f32\"]\n"
    );
    let tier = TC_TIER.replacen(
        "families = [\"wide\", \"dec\", \"plain\", \"other\"]\n",
        "families = [\"wide\", \"dec\", \"plain\", \"other\", \"dec32\"]\n\n[[tile]]\nfamily = \"dec32\"\nname = \"d32\"\nm = 16\nn = 16\nk = 32\nstages = 8\n",
        1,
    );
    let errors = match load(&shared, &tier) {
        Ok(_) => panic!("a TF32 tn variant and a bf16 TF32 output validated"),
        Err(e) => e,
    };
    assert_eq!(
        errors,
        [
            format!("sm90a.toml:9: tile dec32.d32 16x16x32: template mma_decode_tma needs ab_bytes == 4 ? c_bytes == 4 : true (ab_bytes = 4, c_bytes = 2, variant nn f32.bf16.f32): TF32 kernels store f32 C ({})", support::block_at("mma/mma_decode_tma.toml", "rule = \"ab_bytes == 4 ? c_bytes == 4 : true\"")),
            format!("sm90a.toml:9: tile dec32.d32 16x16x32: template mma_decode_tma needs ab_bytes == 2 || a_k_major (ab_bytes = 4, a_k_major = false, variant tn f32.f32.f32): tn's A (m-contiguous) is read by transposing ldmatrix, which moves 16-bit elements only ({})", support::block_at("mma/mma_decode_tma.toml", "rule = \"ab_bytes == 2 || a_k_major\"")),
        ]
    );
    // Without the two variants the same TF32 family and tile validate.
    let ok = shared
        .replace(
            "variants.nn = [\"f32.f32.f32\", \"f32.bf16.f32\"]",
            "variants.nn = [\"f32.f32.f32\"]",
        )
        .replace("variants.tn = [\"f32.f32.f32\"]\n", "");
    load(&ok, &tier).unwrap_or_else(|e| panic!("{e:?}"));
}

#[test]
fn mma_gemm_limits() {
    assert_one(tc_errors(false, "m = 64\nn = 64\nk = 32\nstages = 2\n", "m = 48\nn = 64\nk = 32\nstages = 2\n"), format!("sm90a.toml:27: tile plain.p 48x64x32: template mma_gemm needs m % (16 * warps_m) == 0 (m = 48, warps_m = 2): each warp covers whole 16-row mma.sync fragments ({})", support::block_at("mma/mma_gemm.toml", "rule = \"m % (16 * warps_m) == 0\"")).as_str());
    assert_one(tc_errors(false, "warps_n = 2\n", "warps_n = 16\n"), format!("sm90a.toml:27: tile plain.p 64x64x32: template mma_gemm needs n % (8 * warps_n) == 0 (n = 64, warps_n = 16): each warp covers whole 8-column mma.sync fragments ({})", support::block_at("mma/mma_gemm.toml", "rule = \"n % (8 * warps_n) == 0\"")).as_str());
    // The instruction's shape first, at the key's line; the template's limits are not judged
    // for a tile the instruction cannot cover.
    assert_one(tc_errors(false, "k = 32\nstages = 2\n", "k = 24\nstages = 2\n"), "sm90a.toml:32: tile plain.p 64x64x24: k = 24 is not a multiple of 16 (instruction mma16816 is 16x8x16)");
    assert_one(tc_errors(false, "stages = 2\nwarps_m", "stages = 3\nwarps_m"), format!("sm90a.toml:27: tile plain.p 64x64x32: template mma_gemm needs stages in [1, 2] (stages = 3): the template loads a step then computes it (1), or keeps the next step's loads in flight in registers (2) ({})", support::block_at("mma/mma_gemm.toml", "rule = \"stages in [1, 2]\"")).as_str());
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
        [format!("families.toml:31: family wide: template wgmma_tma_gemm reads a tensor map of C ({}); ABI struct TcGemmArgs has no field of type tensor_map bound to c.tensor_map", support::block_at("wgmma/wgmma_tma_gemm.toml", "operand = \"c\"")).as_str()]
    );
}

#[test]
fn a_tma_family_needs_tensor_map_fields() {
    let e = tc_errors(
        true,
        "  { name = \"b_map\", type = \"tensor_map\", bind = \"b.tensor_map\" },\n",
        "",
    );
    assert_errors(e, &[format!("families.toml:39: family dec: template mma_decode_tma reads a tensor map of B ({}); ABI struct TcGemmArgs has no field of type tensor_map bound to b.tensor_map", support::block_at("mma/mma_decode_tma.toml", "operand = \"b\"")).as_str(), format!("families.toml:31: family wide: template wgmma_tma_gemm reads a tensor map of B ({}); ABI struct TcGemmArgs has no field of type tensor_map bound to b.tensor_map", support::block_at("wgmma/wgmma_tma_gemm.toml", "operand = \"b\"")).as_str()]);
}

#[test]
fn tc_templates_need_their_instruction_and_16_bit_operands() {
    assert_one(
        tc_errors(true, "instruction = \"wgmma\"", "instruction = \"mmatma\""),
        "families.toml:32: family wide: template wgmma_tma_gemm needs an arch-specific target (wgmma exists only on arch-specific sm_90a targets), but the family's instruction mmatma is not arch_specific: name an arch-specific instruction",
    );
    assert_one(
        tc_errors(true, "instruction = \"mmatma\"", "instruction = \"mma16816\""),
        "families.toml:40: family dec: template mma_decode_tma needs compute capability >= 9.0 (it loads operands with TMA), but the family's instruction mma16816 exists from 8.0: name an instruction that starts at 9.0 or later",
    );
    assert_one(
        tc_errors(
            true,
            "variants.nn = [\"bf16.bf16.f32\", \"bf16.f32.f32\"]\n\n[family.dec]",
            "variants.nn = [\"bf16.bf16.f32\", \"f32.f32.f32\"]\n\n[family.dec]",
        ),
        "families.toml:38: family wide: variant nn f32.f32.f32 takes f32.f32.f32 inputs, but its template wgmma_tma_gemm for contract tc-k16 is defined for bf16, f16 inputs only (its `inputs`): give the variant a family whose template wgmma_tma_gemm for contract tc-k16 takes them",
    );
}

#[test]
fn abi_fields_bind_known_sources_of_their_type_once() {
    assert_one(
        tc_errors(true, "{ name = \"m\", type = \"i32\" }", "{ name = \"m\", type = \"i32\", bind = \"rows_of_c\" }"),
        "families.toml:29: ABI struct TcGemmArgs: field `m` binds `rows_of_c`, which is not a source of launch arguments; give `bind` one of a.ptr, b.ptr, bias.ptr, c.ptr, a.tensor_map, b.tensor_map, c.tensor_map, m, n, k, lda, ldb, ldc, beta, flags, src, dst, rows, cols, ld_src, ld_dst, a.batch_stride, b.batch_stride, c.batch_stride, bias.batch_stride",
    );
    assert_one(
        tc_errors(true, "{ name = \"m\", type = \"i32\" }", "{ name = \"m\", type = \"i32\", bind = \"a.tensor_map\" }"),
        "families.toml:29: ABI struct TcGemmArgs: field `m` has type i32 but binds a.tensor_map, a tensor_map value",
    );
    assert_one(
        tc_errors(true, "{ name = \"m\", type = \"i32\" }", "{ name = \"m\", type = \"i32\" }, { name = \"rows\", type = \"i32\", bind = \"m\" }"),
        "families.toml:29: ABI struct TcGemmArgs: field `rows` binds m, which field `m` binds already: each source fills one field",
    );
    assert_one(
        tc_errors(true, "{ name = \"m\", type = \"i32\" }", "{ name = \"count\", type = \"i32\" }"),
        "families.toml:29: ABI struct TcGemmArgs: field `count` has no `bind`, and its name `count` is not a source of launch arguments; give `bind` one of a.ptr, b.ptr, bias.ptr, c.ptr, a.tensor_map, b.tensor_map, c.tensor_map, m, n, k, lda, ldb, ldc, beta, flags, src, dst, rows, cols, ld_src, ld_dst, a.batch_stride, b.batch_stride, c.batch_stride, bias.batch_stride",
    );
}

#[test]
fn unaligned_kernels_are_checked() {
    assert_one(tc_errors(false, "kernel = \"dec.d\"\nunaligned = \"plain.p\"\n", "kernel = \"dec.d\"\n"), "sm90a.toml:46: route 1: kernel `dec.d` is a mma_decode_tma kernel, which loads A and B through TMA: the route needs `unaligned = \"family.tile\"`, a plain-load kernel of contract tc-k16 for operands it cannot take");
    assert_one(
        tc_errors(false, "kernel = \"dec.d\"\nunaligned = \"plain.p\"\n", "kernel = \"plain.p\"\nunaligned = \"plain.p\"\n"),
        "sm90a.toml:46: route 1: unaligned kernel `plain.p` is given, but the route's kernel plain.p is a mma_gemm kernel, which reads A and B with plain loads: only routes to kernels that need aligned operands (TMA, cp.async) or read them through a vector path (`vector_bytes`) have an unaligned kernel",
    );
    assert_one(
        tc_errors(false, "kernel = \"dec.d\"\nunaligned = \"plain.p\"\n", "kernel = \"dec.d\"\nunaligned = \"wide.w\"\n"),
        "sm90a.toml:46: route 1: unaligned kernel `wide.w` is a wgmma_tma_gemm kernel, which loads A and B through TMA too: name a plain-load kernel (e.g. of template mma_gemm)",
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
        "contract = \"tc-k16\"\npolicy = \"tensor-core\"\nabi = \"TcGemmArgs\"\ninstruction = \"mma16816\"\nvariants.nn = [\"bf16.bf16.f32\", \"bf16.f32.f32\"]",
        "contract = \"tc-k16\"\npolicy = \"tensor-core\"\nabi = \"TcGemmArgs\"\ninstruction = \"mma16816\"\nvariants.nn = [\"bf16.bf16.f32\"]",
    );
    assert_errors(load(&shared, TC_TIER).unwrap_err(), &["sm90a.toml:46: route 1: unaligned kernel `plain.p` has no nn bf16.f32.f32 variant, which the route serves: family plain does not list it", "sm90a.toml:54: route 2: unaligned kernel `plain.p` has no nn bf16.f32.f32 variant, which the route serves: family plain does not list it"]);
}

#[test]
fn the_conversions_unit_name_is_reserved() {
    let shared = TC_SHARED.replace("[family.other]", "[family.conversions]");
    let tier = TC_TIER
        .replace("\"other\"]", "\"conversions\"]")
        .replace("family = \"other\"", "family = \"conversions\"");
    assert_one(load(&shared, &tier).unwrap_err(), "families.toml:56: family name `conversions` is reserved: each family compiles to cuda/<tier>/<family>.cu, and conversions.cu holds the conversion kernels");
}

// ---------------------------------------------------------------------------------------------
// What a kind manifest, a contract, an instruction and the hardware table let the specs say.

#[test]
fn a_family_cannot_claim_a_contract_its_template_does_not_implement() {
    // fma_gemm implements fma-k256: a family of it labelled fma-pair would let a route switch
    // by m between kernels of two reduction orders while both report one contract.
    assert_one(
        errors_with(
            true,
            "template = \"fma_gemm\"\ncontract = \"fma-k256\"",
            "template = \"fma_gemm\"\ncontract = \"fma-pair\"",
        ),
        "families.toml:27: family fma: template fma_gemm implements fma-k256 (on f32, bf16, f16) (fma/fma_gemm.toml); the family says contract fma-pair, which its kernels would not keep: rows of one request could then differ with the batch",
    );
}

#[test]
fn accumulators_a_thread_must_fit_its_registers() {
    // 16 x 16 f32 accumulators a thread: more than the 255 registers of compute capability 9.0.
    assert_one(
        errors_with(
            false,
            "stages = 2\nthread_m = 8\nthread_n = 8\n",
            "stages = 2\nthread_m = 16\nthread_n = 16\n",
        ),
        "sm90a.toml:18: tile fma.tiled 128x128x8: each thread keeps 256 f32 accumulators (thread_m * thread_n of template fma_gemm), more than the 255 registers a thread has on compute capability 9.0: spread the tile over more threads (warps, thread tile)",
    );
}

#[test]
fn min_blocks_must_leave_the_registers_the_accumulators_need() {
    let shared = format!(
        "{TC_SHARED}\n[family.async]\ntemplate = \"mma_async_gemm\"\ncontract = \"tc-k16\"\npolicy = \"tensor-core\"\nabi = \"TcGemmArgs\"\ninstruction = \"mma16816\"\nvariants.nn = [\"bf16.bf16.f32\"]\n"
    );
    let tier = format!(
        "{}\n[[tile]]\nfamily = \"async\"\nname = \"a\"\nm = 128\nn = 256\nk = 16\nstages = 2\nwarps_m = 2\nwarps_n = 4\nmin_blocks = 3\n",
        TC_TIER.replace("\"other\"]", "\"other\", \"async\"]")
    );
    // 128 x 256 over 2 x 4 warps: 128 accumulators a thread; three blocks of 256 threads leave
    // 65536 / 768 = 85 registers a thread, 80 in whole granules.
    assert_one(
        load(&shared, &tier).unwrap_err(),
        "sm90a.toml:61: tile async.a 128x256x16: min_blocks = 3 cannot be resident on compute capability 9.0 (hardware.toml:91): 3 blocks of 256 threads leave 80 registers a thread of the SM's 65536, fewer than the tile's 128 f32 accumulators a thread",
    );
}

#[test]
fn an_instruction_takes_only_the_operand_types_it_lists() {
    let e = tc_errors(
        true,
        "[instruction.mma16816]\nshape = { m = 16, n = 8, k = 16 }\nmin_compute_capability = [8, 0]\n",
        "[instruction.mma16816]\nshape = { m = 16, n = 8, k = 16 }\nmin_compute_capability = [8, 0]\ninputs = [\"f16\"]\n",
    );
    // Every bf16 variant of each family on mma16816, at its own line.
    assert_eq!(e.len(), 3, "{e:?}");
    assert!(e.contains(&"families.toml:55: family plain: variant nn bf16.bf16.f32 takes bf16.bf16.f32 inputs, but its instruction mma16816 is defined for f16 inputs only (its `inputs`): give the variant a family whose instruction mma16816 takes them".to_string()), "{e:?}");
    assert!(
        e.iter()
            .all(|x| x.contains("its instruction mma16816 is defined for f16 inputs only")),
        "{e:?}"
    );
}

#[test]
fn a_tf32_family_s_limits_name_its_k8_steps() {
    let shared = format!(
        "{TC_SHARED}\n[instruction.mma1688tf32]\nshape = {{ m = 16, n = 8, k = 8 }}\nmin_compute_capability = [8, 0]\ninputs = [\"f32\"]\n\n[contract.tc-tf32-k8]\ndoc = \"TF32 k8 steps\"\ninputs = [\"f32\"]\nk_step = 8\n\n[family.tf32]\ntemplate = \"mma_gemm\"\ncontract = \"tc-tf32-k8\"\npolicy = \"tensor-core\"\nabi = \"TcGemmArgs\"\ninstruction = \"mma1688tf32\"\nvariants.nn = [\"f32.f32.f32\"]\n"
    );
    let tier = format!(
        "{}\n[[tile]]\nfamily = \"tf32\"\nname = \"t\"\nm = 64\nn = 64\nk = 24\nwarps_m = 2\nwarps_n = 2\n",
        TC_TIER.replace("\"other\"]", "\"other\", \"tf32\"]")
    );
    let e = load(&shared, &tier).unwrap_err();
    assert_eq!(e.len(), 1, "{e:?}");
    assert!(
        e[0].starts_with(
            "sm90a.toml:61: tile tf32.t 64x64x24: template mma_gemm needs k % 16 == 0 (k = 24)"
        ),
        "{e:?}"
    );
    assert!(e[0].contains("k8 mma.sync steps"), "{e:?}");
    assert!(!e[0].contains("k16 mma.sync"), "{e:?}");
}

#[test]
fn hardware_entries_are_checked_and_located() {
    let hw = "[[hardware]]\ncompute_capability = [9, 0]\nshared_bytes_per_block = 300000\nshared_bytes_per_sm = 233472\nreserved_shared_bytes_per_block = 1024\nregisters_per_sm = 65536\nregisters_per_block = 65536\nregisters_per_thread = 255\nthreads_per_sm = 2048\nthreads_per_block = 1024\nblocks_per_sm = 32\n";
    let e = load_sources(&[
        SpecSource {
            file: "families.toml".into(),
            text: SHARED.into(),
        },
        SpecSource {
            file: "hw.toml".into(),
            text: hw.into(),
        },
        SpecSource {
            file: "sm90a.toml".into(),
            text: TIER.into(),
        },
    ])
    .unwrap_err();
    let e: Vec<String> = e.0.iter().map(|e| e.to_string()).collect();
    assert_eq!(
        e,
        ["hw.toml:1: hardware 9.0: shared_bytes_per_block (300000) and its reserved 1024 bytes exceed shared_bytes_per_sm (233472)"]
    );
    // A folder's own table replaces the default one: a tier at a capability it lacks is named.
    let other = hw
        .replace("[9, 0]", "[8, 0]")
        .replace("300000", "166912")
        .replace("233472", "167936");
    let e = load_sources(&[
        SpecSource {
            file: "families.toml".into(),
            text: SHARED.into(),
        },
        SpecSource {
            file: "hw.toml".into(),
            text: other,
        },
        SpecSource {
            file: "sm90a.toml".into(),
            text: TIER.into(),
        },
    ])
    .unwrap_err();
    assert_eq!(
        e.0.iter().map(|e| e.to_string()).collect::<Vec<_>>(),
        ["sm90a.toml:1: tier sm90a is compute capability 9.0, which has no [[hardware]] entry (entries: 8.0): add one for it (specs/hardware.toml)"]
    );
}

// ---------------------------------------------------------------------------------------------
// Tiers on a base.

/// A portable tier on the base spec's sm90a, with `body` after its keys.
fn derived_tier(base: &str, body: &str) -> String {
    format!(
        "[tier]\nname = \"sm80\"\nbase = \"{base}\"\ngencode = \"arch=compute_80,code=sm_80\"\ncompute_capability = [8, 0]\nmax_shared_bytes = 166912\n{body}"
    )
}

fn load_three(shared: &str, tier: &str, derived: &str) -> Result<Validated, Vec<String>> {
    load_sources(&[
        SpecSource {
            file: "families.toml".into(),
            text: shared.into(),
        },
        SpecSource {
            file: "sm90a.toml".into(),
            text: tier.into(),
        },
        SpecSource {
            file: "sm80.toml".into(),
            text: derived.into(),
        },
    ])
    .map_err(|e| e.0.iter().map(|e| e.to_string()).collect())
}

#[test]
fn a_tier_on_a_base_takes_its_tiles_and_routes_and_changes_what_it_lists() {
    let v = load_three(
        SHARED,
        TIER,
        &derived_tier(
            "sm90a",
            "\n[[tile]]\nfamily = \"fma\"\nname = \"tiled\"\nstages = 1\n",
        ),
    )
    .unwrap_or_else(|e| panic!("{e:?}"));
    let (base, derived) = (
        v.specs.tier("sm90a").unwrap(),
        v.specs.tier("sm80").unwrap(),
    );
    assert_eq!(derived.routes.len(), base.routes.len());
    assert_eq!(derived.tiles.len(), base.tiles.len());
    assert_eq!(
        derived.tile("fma", "tiled").unwrap().param("stages"),
        Some(1)
    );
    assert_eq!(base.tile("fma", "tiled").unwrap().param("stages"), Some(2));
    assert_eq!(derived.max_shared_bytes, 166912);
}

#[test]
fn a_base_that_is_no_tier_or_leads_back_is_an_error_at_the_tier() {
    let e = load_three(SHARED, TIER, &derived_tier("sm91", "")).unwrap_err();
    assert_eq!(
        e,
        ["sm80.toml:1: tier sm80: base `sm91` is no tier of the specs; they define sm90a, sm80"]
    );
    let circular = TIER.replacen("[tier]\n", "[tier]\nbase = \"sm80\"\n", 1);
    let e = load_three(SHARED, &circular, &derived_tier("sm90a", "")).unwrap_err();
    assert!(
        e.iter()
            .any(|e| e.contains("leads back to") && e.contains("a tier cannot derive from itself")),
        "{e:?}"
    );
}

#[test]
fn replacing_a_tile_the_base_lacks_is_an_error_at_the_tile() {
    let e = load_three(
        SHARED,
        TIER,
        &derived_tier(
            "sm90a",
            "\n[[tile]]\nfamily = \"fma\"\nname = \"small\"\nreplaces = \"nope\"\nm = 8\n",
        ),
    )
    .unwrap_err();
    assert_eq!(
        e,
        ["sm80.toml:8: tier sm80: tile fma.small replaces fma.nope, which tier sm90a does not have"]
    );
    let e = load(
        SHARED,
        &format!("{TIER}\n[[tile]]\nfamily = \"fma\"\nname = \"x\"\nreplaces = \"thin\"\n"),
    )
    .unwrap_err();
    assert!(
        e[0].contains("says replaces = \"thin\", but the tier has no base"),
        "{e:?}"
    );
}

#[test]
fn a_mistake_in_a_base_file_is_reported_once() {
    let dup =
        format!("{TIER}\n[[tile]]\nfamily = \"fma\"\nname = \"thin\"\nm = 8\nn = 64\nk = 32\n");
    let alone = load(SHARED, &dup).unwrap_err();
    let with_derived = load_three(SHARED, &dup, &derived_tier("sm90a", "")).unwrap_err();
    assert_eq!(alone.len(), 1, "{alone:?}");
    assert_eq!(with_derived, alone);
}

#[test]
fn accumulators_must_fit_the_tiers_register_cap_too() {
    // 64 accumulators fit compute capability 9.0's 255 registers, not a tier capped at 48.
    assert_one(
        errors_with(
            false,
            "max_registers_per_thread = 255\n",
            "max_registers_per_thread = 48\n",
        )
        .into_iter()
        .filter(|e| e.contains("accumulators"))
        .collect(),
        "sm90a.toml:18: tile fma.tiled 128x128x8: each thread keeps 64 f32 accumulators (thread_m * thread_n of template fma_gemm), more than the 48 registers tier sm90a allows a thread: spread the tile over more threads (warps, thread tile)",
    );
}

#[test]
fn an_instruction_with_no_inputs_is_an_error() {
    assert_one(
        errors_with(
            true,
            "shape = { m = 1, n = 1, k = 1 }\n",
            "shape = { m = 1, n = 1, k = 1 }\ninputs = []\n",
        ),
        "families.toml:2: instruction fma: `inputs = []` lists nothing; list the operand dtypes it takes, or leave the key out for all",
    );
}

#[test]
fn a_flag_must_report_an_operand_a_field_carries() {
    let shared = SHARED.replacen(
        "  { name = \"beta\", type = \"f32\" },\n]",
        "  { name = \"beta\", type = \"f32\" },\n  { name = \"flags\", type = \"u32\" },\n]\nflags = [{ name = \"bias\", bit = 0, set = \"bias.ptr\" }]",
        1,
    );
    let e = load(&shared, TIER).unwrap_err();
    assert_eq!(e.len(), 1, "{e:?}");
    assert!(
        e[0].contains("flags.bias")
            && e[0].contains("is set by `bias.ptr`, which no field of GemmArgs carries"),
        "{e:?}"
    );
}

#[test]
fn a_parameter_above_its_greatest_value_is_an_error_at_its_key() {
    // fma_gemm's manifest with thread_m capped at 4, as a kind of its own.
    let manifest =
        std::fs::read_to_string(support::root().join("kernels-templates/fma/fma_gemm.toml"))
            .unwrap()
            .replace("template = \"fma_gemm\"", "template = \"fma_capped_gemm\"")
            .replace("name = \"thread_m\"\n", "name = \"thread_m\"\nmax = 4\n");
    let kinds = support::kinds_with(&[
        ("test/fma_capped_gemm.toml", &manifest),
        ("test/fma_capped_gemm.cuh", "// never compiled\n"),
    ]);
    let shared = SHARED.replacen(
        "template = \"fma_gemm\"",
        "template = \"fma_capped_gemm\"",
        1,
    );
    let e = gemm_spec::load_sources(
        &[
            SpecSource {
                file: "families.toml".into(),
                text: shared,
            },
            SpecSource {
                file: "sm90a.toml".into(),
                text: TIER.into(),
            },
        ],
        &kinds,
        &support::defaults(),
    )
    .unwrap_err();
    let e: Vec<String> = e.0.iter().map(|e| e.to_string()).collect();
    assert_one(
        e,
        "sm90a.toml:25: tile fma.tiled: `thread_m` = 8, but its greatest value is 4 (rows of C a thread computes)",
    );
}

/// A row kernel (`[conversion.*]` with a `row_op`), appended to the base spec.
const ROWS: &str = r#"
[conversion.softmax]
template = "row_reduce"
abi = "ConvertArgs"
threads = 256
row_op = "softmax"
contract = "row-t256"
variants = ["bf16.bf16", "bf16.f32", "f32.f32"]
"#;

fn with_rows(from: &str, to: &str) -> Result<Validated, Vec<String>> {
    assert!(ROWS.contains(from), "fixture lacks {from:?}");
    load(&format!("{SHARED}{}", ROWS.replacen(from, to, 1)), TIER)
}

/// The one error of the row fixture with a replacement, without its `file:line: ` prefix.
fn row_error(from: &str, to: &str) -> String {
    let errors = with_rows(from, to).expect_err("validated");
    assert_eq!(errors.len(), 1, "{errors:?}");
    errors[0].split_once(": ").unwrap().1.to_string()
}

#[test]
fn row_kernels_resolve_with_their_op_and_contract() {
    let v = with_rows("", "").expect("row fixture validates");
    let c = &v.specs.conversions["softmax"];
    assert_eq!(c.row_op, Some(gemm_spec::RowOp::Softmax));
    assert_eq!(c.contract, "row-t256");
    // f32.f32 is also the repack's pair: a row kernel is a kind of its own.
    assert_eq!(
        c.kind_of(gemm_spec::Dtype::F32, gemm_spec::Dtype::F32),
        Some(gemm_spec::ConversionKind::Row(gemm_spec::RowOp::Softmax))
    );
    assert_eq!(v.specs.conversions["upcast"].row_op, None);
    assert_eq!(v.specs.conversions["upcast"].contract, "");
}

#[test]
fn a_row_kernel_builds_one_kernel_a_warp_path_length() {
    // Without warp_cols: the default length; with it, every length, ascending.
    let v = with_rows("", "").expect("row fixture validates");
    assert_eq!(v.specs.conversions["softmax"].warp_cols, [512]);
    assert!(v.specs.conversions["upcast"].warp_cols.is_empty());
    let two = with_rows(
        "contract = \"row-t256\"",
        "contract = \"row-t256\"\nwarp_cols = [512, 1024]",
    )
    .expect("two lengths validate");
    assert_eq!(two.specs.conversions["softmax"].warp_cols, [512, 1024]);
    let set = |list: &str| {
        row_error(
            "contract = \"row-t256\"",
            &format!("contract = \"row-t256\"\nwarp_cols = {list}"),
        )
    };
    assert_eq!(
        set("[1024, 512]"),
        "conversion softmax: warp_cols [1024, 512] must ascend, without repeats"
    );
    assert_eq!(
        set("[500]"),
        "conversion softmax: warp_cols has 500: a length is a multiple of 32 from 32 to 2048 (a warp holds at most 64 values a lane)"
    );
    assert_eq!(
        set("[4096]"),
        "conversion softmax: warp_cols has 4096: a length is a multiple of 32 from 32 to 2048 (a warp holds at most 64 values a lane)"
    );
    assert_eq!(
        set("[]"),
        "conversion softmax: has warp_cols = []: name at least one length (e.g. [512])"
    );
    assert_eq!(
        row_error(
            "row_op = \"softmax\"\ncontract = \"row-t256\"",
            "warp_cols = [512]"
        ),
        "conversion softmax: has warp_cols but no row_op: only row kernels have a warp path"
    );
}

#[test]
fn a_row_kernel_takes_blocks_an_sm_one_a_warp_path_length() {
    let set = |from: &str, to: &str| with_rows(from, to);
    let one = set(
        "contract = \"row-t256\"",
        "contract = \"row-t256\"\nmin_blocks = [5]",
    )
    .expect("one length, one value");
    assert_eq!(one.specs.conversions["softmax"].min_blocks, [5]);
    assert!(
        with_rows("", "").expect("validates").specs.conversions["softmax"]
            .min_blocks
            .is_empty()
    );
    let two = set(
        "contract = \"row-t256\"",
        "contract = \"row-t256\"\nwarp_cols = [512, 1024]\nmin_blocks = [5, 3]",
    )
    .expect("two lengths, two values");
    assert_eq!(two.specs.conversions["softmax"].min_blocks, [5, 3]);
    let error = |list: &str| {
        row_error(
            "contract = \"row-t256\"",
            &format!("contract = \"row-t256\"\nmin_blocks = {list}"),
        )
    };
    assert_eq!(
        error("[5, 3]"),
        "conversion softmax: min_blocks [5, 3] names 2 value(s) for 1 warp-path length(s) [512]: one each"
    );
    assert_eq!(
        error("[0]"),
        "conversion softmax: min_blocks has 0: a kernel holds at least 1 block an SM"
    );
    // 9 blocks of 256 threads: more threads than the fixture tier's SM holds.
    assert_eq!(
        error("[9]"),
        "conversion softmax: min_blocks has 9: 9 blocks of 256 threads do not fit an SM of tier sm90a (compute capability 9.0: 2048 threads, 32 blocks)"
    );
    assert_eq!(
        row_error(
            "row_op = \"softmax\"\ncontract = \"row-t256\"",
            "min_blocks = [5]"
        ),
        "conversion softmax: has min_blocks but no row_op: only row kernels take it"
    );
}

#[test]
fn a_row_kernel_folds_its_warps_by_butterflies_or_one_halving() {
    let fold = |word: &str| {
        with_rows(
            "contract = \"row-t256\"",
            &format!("contract = \"row-t256\"\nwarp_fold = \"{word}\""),
        )
    };
    assert!(!with_rows("", "").expect("validates").specs.conversions["softmax"].halving_fold);
    assert!(fold("halving").expect("halving").specs.conversions["softmax"].halving_fold);
    assert!(!fold("butterflies").expect("butterflies").specs.conversions["softmax"].halving_fold);
    assert_eq!(
        row_error(
            "contract = \"row-t256\"",
            "contract = \"row-t256\"\nwarp_fold = \"tree\""
        ),
        "conversion softmax: warp_fold `tree` is neither `butterflies` nor `halving`"
    );
    assert_eq!(
        row_error(
            "row_op = \"softmax\"\ncontract = \"row-t256\"",
            "warp_fold = \"halving\""
        ),
        "conversion softmax: has warp_fold but no row_op: only row kernels have a warp path"
    );
}

#[test]
fn a_row_kernel_names_the_tree_of_its_block_and_writes_its_type_or_f32() {
    assert_eq!(
        row_error(r#"contract = "row-t256""#, r#"contract = "row-t128""#),
        "conversion softmax: names contract `row-t128`, but a row kernel of 256 threads implements `row-t256` (thread t of 256 takes elements t, t + 256, ...)"
    );
    assert_eq!(
        row_error("contract = \"row-t256\"\n", ""),
        "conversion softmax: is a row kernel without a contract: add contract = \"row-t256\" (its reduction tree)"
    );
    assert_eq!(
        row_error(r#"row_op = "softmax""#, r#"row_op = "sum""#),
        "conversion softmax: row_op `sum` is none of softmax, log_softmax, mean"
    );
    assert_eq!(
        row_error(r#""bf16.f32", "f32.f32""#, r#""bf16.f16""#),
        "conversion softmax: variant `bf16.f16` reduces bf16 rows into f16; a row kernel writes its input's type or f32"
    );
    assert_eq!(
        row_error(
            "threads = 256\nrow_op = \"softmax\"\ncontract = \"row-t256\"",
            "threads = 32\nrow_op = \"softmax\"\ncontract = \"row-t32\""
        ),
        format!("conversion softmax: runs 32 threads a block, but template row_reduce needs threads % 32 == 0 && threads <= 1024 && threads >= 64: a block is whole warps (at least 2, at most 32): the tree folds warps, then the warps' totals ({})", support::block_at("rows/row_reduce.toml", "rule = \"threads % 32 == 0 && threads <= 1024 && threads >= 64\"")).as_str()
    );
    // An elementwise conversion names no contract.
    let errors = load(
        &format!(
            "{}{ROWS}",
            SHARED.replacen(
                "threads = 128\n",
                "threads = 128\ncontract = \"row-t128\"\n",
                1
            )
        ),
        TIER,
    )
    .expect_err("validated");
    assert!(
        errors
            .iter()
            .any(|e| e.ends_with("conversion narrow: has contract `row-t128` but no row_op: only row kernels name a contract")),
        "{errors:?}"
    );
    // One kernel per (op, pair): a second softmax of bf16.bf16 is refused, a mean is not.
    let second = ROWS.replace("[conversion.softmax]", "[conversion.softmaxtoo]");
    let errors = load(&format!("{SHARED}{ROWS}{second}"), TIER).expect_err("validated");
    assert!(
        errors
            .iter()
            .any(|e| e.contains("variant `bf16.bf16` is also built by conversion softmax")),
        "{errors:?}"
    );
    let mean = ROWS
        .replace("[conversion.softmax]", "[conversion.rowmean]")
        .replace(r#"row_op = "softmax""#, r#"row_op = "mean""#);
    load(&format!("{SHARED}{ROWS}{mean}"), TIER).expect("a mean of the same pairs validates");
}

#[test]
fn a_batched_kind_needs_the_batch_strides() {
    // mma_gemm is batched (grid z walks a strided batch): without a stride its entries would
    // all read entry 0's operands.
    let e = tc_errors(
        true,
        " { name = \"c_batch_stride\", type = \"i64\", bind = \"c.batch_stride\" },",
        "",
    );
    assert_errors(e, &["families.toml:56: family other: template mma_other_gemm is batched (test/mma_other_gemm.toml: batch = true), but ABI struct TcGemmArgs has no i64 field bound to c.batch_stride: add them, or use a kind without batch", "families.toml:48: family plain: template mma_gemm is batched (mma/mma_gemm.toml: batch = true), but ABI struct TcGemmArgs has no i64 field bound to c.batch_stride: add them, or use a kind without batch", "families.toml:32: family wide: template wgmma_tma_gemm is batched (wgmma/wgmma_tma_gemm.toml: batch = true), but ABI struct TcGemmArgs has no i64 field bound to c.batch_stride: add them, or use a kind without batch"]);
}

#[test]
fn batch_kernels_name_tiles_of_batched_kinds() {
    let tier = |list: &str| {
        let t = TC_TIER.replacen(
            "families = [\"wide\", \"dec\", \"plain\", \"other\"]",
            &format!(
                "families = [\"wide\", \"dec\", \"plain\", \"other\"]\nbatch_kernels = {list}"
            ),
            1,
        );
        load(TC_SHARED, &t)
    };
    // A tile of a batched kind (mma_gemm): valid.
    let v = tier("[\"plain.p\"]").unwrap_or_else(|e| panic!("{e:?}"));
    let t = v.specs.tier("sm90a").unwrap();
    assert_eq!(t.batch_kernels, [("plain".to_string(), "p".to_string())]);
    // A tile no route reaches is reached as a batch kernel: no warning about it once listed.
    let extra = "\n[[tile]]\nfamily = \"plain\"\nname = \"b\"\nm = 64\nn = 64\nk = 32\nwarps_m = 2\nwarps_n = 2\n";
    let unlisted =
        load(TC_SHARED, &format!("{TC_TIER}{extra}")).unwrap_or_else(|e| panic!("{e:?}"));
    let warned = |v: &Validated| v.warnings.iter().any(|w| w.to_string().contains("plain.b"));
    assert!(warned(&unlisted), "{:?}", unlisted.warnings);
    let listed = TC_TIER.replacen(
        "families = [\"wide\", \"dec\", \"plain\", \"other\"]",
        "families = [\"wide\", \"dec\", \"plain\", \"other\"]\nbatch_kernels = [\"plain.b\"]",
        1,
    );
    let listed = load(TC_SHARED, &format!("{listed}{extra}")).unwrap_or_else(|e| panic!("{e:?}"));
    assert!(!warned(&listed), "{:?}", listed.warnings);
    // Two of one contract, op and dtype.
    let two = TC_TIER.replacen(
        "families = [\"wide\", \"dec\", \"plain\", \"other\"]",
        "families = [\"wide\", \"dec\", \"plain\", \"other\"]\nbatch_kernels = [\"plain.p\", \"plain.b\"]",
        1,
    );
    let e = load(TC_SHARED, &format!("{two}{extra}")).unwrap_err();
    assert!(
        e.iter().any(|e| e
            .contains("`plain.b` serves contract tc-k16 for nn bf16.bf16.f32 as `plain.p` does")),
        "{e:?}"
    );
    // One reading tensor maps (the wgmma kind's: 3-D maps) and one reading its operands as
    // stored may serve one contract, op and dtype: a batch takes the first where TMA takes it.
    let v = tier("[\"wide.w\", \"plain.p\"]").unwrap_or_else(|e| panic!("{e:?}"));
    assert_eq!(v.specs.tier("sm90a").unwrap().batch_kernels.len(), 2);
    assert_errors(
        tier("[\"dec.d\"]").unwrap_err(),
        &["sm90a.toml:1: tier sm90a: batch kernel `dec.d` is a mma_decode_tma kernel, which runs one GEMM a launch (mma/mma_decode_tma.toml has no `batch = true`): name a kernel of a batched kind (e.g. mma_async_gemm)"],
    );
    // A tile clustering along M (B multicast to a peer): its grid z could not be the entry.
    let clustered = TC_TIER.replacen(
        "families = [\"wide\", \"dec\", \"plain\", \"other\"]",
        "families = [\"wide\", \"dec\", \"plain\", \"other\"]\nbatch_kernels = [\"wide.c\"]",
        1,
    );
    let cluster_tile = "\n[[tile]]\nfamily = \"wide\"\nname = \"c\"\nm = 128\nn = 256\nk = 64\nstages = 4\nconsumers = 2\ncluster_m = 2\n";
    let e = load(TC_SHARED, &format!("{clustered}{cluster_tile}")).unwrap_err();
    assert!(
        e.iter().any(|e| e
            .contains("batch kernel `wide.c` has a cluster of 2 CTAs along M and a K split of 1")),
        "{e:?}"
    );
    assert_errors(
        tier("[\"plain.q\", \"plain\"]").unwrap_err(),
        &[
            "sm90a.toml:1: tier sm90a: batch kernel `plain.q` names no tile of the tier; its tiles: dec.d, wide.w, plain.p, other.o",
            "sm90a.toml:1: tier sm90a: batch kernel `plain` is not `family.tile`",
        ],
    );
}

/// The tensor-core fixture with a wgmma family under a chunked contract and one tile of it:
/// two accumulator sets (the chain's and the fold's) of `n / 2` each a consumer thread.
fn chunked_wgmma(n: u32) -> Result<Validated, Vec<String>> {
    let shared = format!(
        "{TC_SHARED}\n[contract.tc-k16-c512]\ndoc = \"chunks of 512 k, folded in ascending order\"\nk_step = 16\nchunk = 512\n\n[family.widechunk]\ntemplate = \"wgmma_tma_gemm\"\ncontract = \"tc-k16-c512\"\npolicy = \"tensor-core\"\nabi = \"TcGemmArgs\"\ninstruction = \"wgmma\"\nvariants.nn = [\"bf16.bf16.f32\"]\n"
    );
    let tier = format!(
        "{}\n[[tile]]\nfamily = \"widechunk\"\nname = \"c\"\nm = 128\nn = {n}\nk = 64\nstages = 4\nconsumers = 2\n",
        TC_TIER.replace("\"other\"]", "\"other\", \"widechunk\"]")
    );
    load(&shared, &tier)
}

#[test]
fn accumulators_may_use_the_registers_setmaxnreg_grants() {
    // 128 x 192 with two consumer warpgroups: 192 accumulators a thread, above the even share
    // of 384 threads (168 registers) and within the 240 the template grants its consumers.
    assert!(chunked_wgmma(192).is_ok(), "{:?}", chunked_wgmma(192).err());
    // 128 x 256: 256 accumulators, more than a thread's registers and than the grant.
    let e = chunked_wgmma(256).unwrap_err();
    assert_eq!(e.len(), 2, "{e:?}");
    assert_eq!(
        e[0],
        "sm90a.toml:61: tile widechunk.c 128x256x64: each thread keeps 256 f32 accumulators (chunk > 0 && split_k == 1 ? (fold_overlap == 1 ? 3 * n / 2 : n) : n / 2 of template wgmma_tma_gemm), more than the 255 registers a thread has on compute capability 9.0: spread the tile over more threads (warps, thread tile)"
    );
    assert_eq!(
        e[1],
        "sm90a.toml:61: tile widechunk.c 128x256x64: min_blocks = 1 cannot be resident on compute capability 9.0 (hardware.toml:91): 1 blocks of 384 threads leave 240 registers a thread of the SM's 65536 (the template grants its accumulating warps 240), fewer than the tile's 256 f32 accumulators a thread"
    );
}

/// `chunk_groups`: warp groups running whole chunks side by side need a chunked contract, no
/// split across CTAs and an equal share of the ring each; the derived numbers give every group
/// its warps and groups 1..G-1 a partial tile of shared memory.
#[test]
fn mma_decode_tma_chunk_groups() {
    // The fixture's decode family under the chunked contract; its route taken out (a decode
    // route of that contract would need a plain-load kernel of it too), its tile with `extra`.
    let chunked = TC_SHARED
        .replacen(
            "[contract.tc-other]",
            "[contract.tc-k16-c512]\ndoc = \"chunks of 512 k\"\nk_step = 16\nchunk = 512\n\n[contract.tc-other]",
            1,
        )
        .replacen(
            "template = \"mma_decode_tma\"\ncontract = \"tc-k16\"",
            "template = \"mma_decode_tma\"\ncontract = \"tc-k16-c512\"",
            1,
        );
    let tier = |n: u32, extra: &str| {
        TC_TIER
            .replacen(
                "n = 32\nk = 64\nstages = 8\n",
                &format!("n = {n}\nk = 64\nstages = 8\n{extra}"),
                1,
            )
            .replacen(
                "[[route]]\npolicy = \"tensor-core\"\nop = \"nn\"\ndtype = \"any\"\nm = { max = 16 }\nkernel = \"dec.d\"\nunaligned = \"plain.p\"\n\n",
                "",
                1,
            )
    };
    let errors = |shared: &str, n: u32, extra: &str| match load(shared, &tier(n, extra)) {
        Ok(_) => panic!("chunk_groups with {extra:?} validated"),
        Err(e) => e,
    };
    let rule = "chunk_groups in [1, 2, 4] && (chunk_groups == 1 || (chunk > 0 && split_k == 1)) && stages % chunk_groups == 0 && stages / chunk_groups >= 2";
    let why = |values: &str| {
        format!("sm90a.toml:9: tile dec.d 16x32x64: template mma_decode_tma needs {rule} ({values}): warp groups run whole chunks of a chunked contract side by side in one CTA (no split across CTAs with them), each on its own equal share of the 8 stages, at least 2 (one loading while another is read) ({})", support::block_at("mma/mma_decode_tma.toml", &format!("rule = \"{rule}\"")))
    };
    // One chain over all of K has no chunks to share out; a split across CTAs shares them
    // already; three groups cannot share 8 stages equally.
    assert_one(
        errors(TC_SHARED, 32, "chunk_groups = 2\n"),
        &why("chunk_groups = 2, chunk = 0, split_k = 1, stages = 8"),
    );
    assert_one(
        errors(&chunked, 32, "chunk_groups = 2\nsplit_k = 2\nslots = 4\n"),
        &why("chunk_groups = 2, chunk = 512, split_k = 2, stages = 8"),
    );
    assert_one(
        errors(&chunked, 32, "chunk_groups = 3\n"),
        &why("chunk_groups = 3, chunk = 512, split_k = 1, stages = 8"),
    );
    // Four groups sharing 4 stages would each have one: none loading while it is read.
    let four_stages = tier(32, "chunk_groups = 4\n").replacen("stages = 8\n", "stages = 4\n", 1);
    assert_one(
        load(&chunked, &four_stages).unwrap_err(),
        &format!("sm90a.toml:9: tile dec.d 16x32x64: template mma_decode_tma needs {rule} (chunk_groups = 4, chunk = 512, split_k = 1, stages = 4): warp groups run whole chunks of a chunked contract side by side in one CTA (no split across CTAs with them), each on its own equal share of the 4 stages, at least 2 (one loading while another is read) ({})", support::block_at("mma/mma_decode_tma.toml", &format!("rule = \"{rule}\""))),
    );
    // Four groups of 8 warps are more consumer warps than the template takes.
    assert_one(
        errors(&chunked, 64, "chunk_groups = 4\n"),
        &format!("sm90a.toml:9: tile dec.d 16x64x64: template mma_decode_tma needs chunk_groups * n / 8 <= 16 (chunk_groups = 4, n = 64): 4 group(s) of n / 8 consumer warps and the producer warp: at most 16 consumer warps (544 threads) ({})", support::block_at("mma/mma_decode_tma.toml", "rule = \"chunk_groups * n / 8 <= 16\"")),
    );
    // Two groups of the 16 x 64 tile: 16 consumer warps, half the ring each, and one 16 x 64
    // f32 partial tile for group 1.
    let v = load(&chunked, &tier(64, "chunk_groups = 2\n")).unwrap_or_else(|e| panic!("{e:?}"));
    let d = support::derived(&v, "sm90a", "dec", "d", "bf16.bf16.f32".parse().unwrap());
    assert_eq!(d.threads, 32 * 2 * 8 + 32);
    assert_eq!(
        d.shared_bytes,
        8 * (16 * 64 + 64 * 64) * 2 + 2 * 8 * 8 + 16 * 64 * 4 + 1024
    );
}

/// The tensor-core base spec with a second wide tile `w2` (128 x 128) and the costs the wave
/// model reads on `dec.d`, `wide.w` and `wide.w2`, with `route2` as its second route's kernel
/// lines.
fn wave_fit_spec(route2: &str) -> String {
    TC_TIER
        .replacen(
            "stages = 8\n",
            "stages = 8\ntile_ps_per_k = 1500\n",
            1,
        )
        .replacen(
            "consumers = 2\ncluster_m = 1\n",
            "consumers = 2\ncluster_m = 1\ntile_ps_per_k = 11500\n\n[[tile]]\nfamily = \"wide\"\nname = \"w2\"\nm = 128\nn = 128\nk = 64\nstages = 6\nconsumers = 2\ntile_ps_per_k = 5900\n\n[[tile]]\nfamily = \"wide\"\nname = \"w4\"\nm = 64\nn = 128\nk = 64\nstages = 6\nconsumers = 1\n",
            1,
        )
        .replacen(
            "kernel = \"wide.w\"\nunaligned = \"plain.p\"\n",
            route2,
            1,
        )
}

#[test]
fn wave_fit_kernels_are_checked() {
    let ok = wave_fit_spec(
        "kernel = \"wide.w\"\nwave_fit = [\"wide.w2\", \"dec.d\"]\nunaligned = \"plain.p\"\n",
    );
    let v = load(TC_SHARED, &ok).unwrap_or_else(|e| panic!("{e:?}"));
    let t = v.specs.tier("sm90a").unwrap();
    for r in &t.routes {
        let fit: Vec<String> = r.wave_fit.iter().map(|w| w.to_string()).collect();
        let want: &[&str] = if r.rule == 2 {
            &["wide.w2", "dec.d"]
        } else {
            &[]
        };
        assert_eq!(fit, want, "route {} {}", r.rule, r.dtype);
    }
    assert_eq!(t.tile("wide", "w2").unwrap().tile_ps_per_k, Some(5900));
    let errors = |route2: &str| match load(TC_SHARED, &wave_fit_spec(route2)) {
        Ok(_) => panic!("{route2:?} validated"),
        Err(e) => e,
    };
    let cases = [
        (
            "kernel = \"wide.w\"\nwave_fit = [\"other.o\"]\nunaligned = \"plain.p\"\n",
            "route 2: wave_fit kernel `other.o` is family other (policy tensor-core, contract tc-other), but the route's kernel wide.w is policy tensor-core, contract tc-k16: a call must give the same bits whichever kernel the wave model runs",
        ),
        (
            "kernel = \"wide.w\"\nwave_fit = [\"plain.p\"]\nunaligned = \"plain.p\"\n",
            "route 2: wave_fit kernel `plain.p` is a mma_gemm kernel, which reads A and B with plain loads: the wave model runs only TMA and cp.async kernels of one GEMM a launch, so it would never run",
        ),
        (
            "kernel = \"wide.w\"\nwave_fit = [\"dec.d\", \"wide.w4\"]\nunaligned = \"plain.p\"\n",
            "route 2: wave_fit kernel `wide.w4` says no `tile_ps_per_k`: give tile wide.w4 its time per unit of k (picoseconds one CTA spends on one tile), which the wave model weighs",
        ),
        (
            "kernel = \"wide.w\"\nwave_fit = [\"wide.w3\"]\nunaligned = \"plain.p\"\n",
            "route 2: wave_fit kernel `wide.w3` names tile w3, which tier sm90a does not define for wide",
        ),
        (
            "kernel = \"wide.w\"\nwave_fit = [\"wide.w\"]\nunaligned = \"plain.p\"\n",
            "route 2: wave_fit kernel `wide.w` is named twice (the route's kernel always takes part)",
        ),
        (
            "kernel = \"wide.w\"\nwave_fit = [\"widew2\"]\nunaligned = \"plain.p\"\n",
            "route 2: wave_fit kernel `widew2` must read `family.tile`, e.g. `tcwide.wide`",
        ),
        (
            "kernel = \"wide.w\"\nwave_fit = []\nunaligned = \"plain.p\"\n",
            "route 2: `wave_fit = []` lists nothing; name the kernels the wave model may run instead of the route's, or leave the key out",
        ),
    ];
    for (route2, want) in cases {
        let got = errors(route2);
        assert!(
            got.len() == 1 && got[0].ends_with(want),
            "{route2:?}: {got:#?}"
        );
    }
    // A plain-load route's kernel: no cost of its own, and no unaligned kernel for a TMA one.
    assert_errors(
        errors("kernel = \"plain.p\"\nwave_fit = [\"wide.w2\"]\n"),
        &[
            "sm90a.toml:75: route 2: wave_fit kernel `wide.w2` is named, but the route's own kernel plain.p says no `tile_ps_per_k`: the wave model compares every kernel's cost, the route's too",
            "sm90a.toml:75: route 2: wave_fit kernel `wide.w2` is a wgmma_tma_gemm kernel, which loads A and B through TMA: the route needs `unaligned = \"family.tile\"` for operands it cannot take",
        ],
    );
    // A tile's cost is at least one picosecond.
    let zero = ok.replacen("tile_ps_per_k = 5900", "tile_ps_per_k = 0", 1);
    let got = load(TC_SHARED, &zero).unwrap_err();
    assert!(
        got.iter().any(|e| e.contains("tile wide.w2: `tile_ps_per_k` = 0: a tile's time per unit of k is at least 1 picosecond")),
        "{got:#?}"
    );
}
