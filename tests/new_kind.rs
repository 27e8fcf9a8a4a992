//! Adding a kernel kind takes files only. The README's steps ("Adding a kernel kind"): put a
//! template and its manifest (`<template>.cuh`, `<template>.toml`) in `kernels-templates/`, add
//! a family on it to `specs/families.toml`, then a tile and a route in a tier file. This test
//! does exactly that in a copy of `kernels-templates/` and `specs/`, with the kind of the
//! downstream example (`examples/downstream/templates/row/`, a kind the shipped templates do
//! not have), and builds the sm80 tier from the copy with nvcc: the kind validates, is routed,
//! its parameter reaches the generated CUDA and Rust tables, and its kernels are in the cubin.
//! No Rust is edited. The same kind runs through the runtime on the GPU in the downstream
//! example's `tests/gpu.rs`.

use gemm_codegen::pipeline::template_files;
use gemm_codegen::{build, BuildOptions, CompileMode, Templates};
use gemm_core::explain::Query;
use gemm_spec::{Dtype, DtypeTriple, Op, Policy};
use std::path::{Path, PathBuf};

/// The kind under test, as the downstream example ships it.
const KIND_DIR: &str = "../examples/downstream/templates/row";
const TEMPLATE: &str = "fma_row_gemm";
const TIER: &str = "sm80";

/// The family the README's step adds to `families.toml`: the shipped GemmArgs ABI and the fma
/// instruction, for the nn variants of the shipped `fma` family.
const FAMILY: &str = r#"
# Added by tests/new_kind.rs: a family on a kind from files alone.
[family.row]
doc = "The downstream example's kind fma_row_gemm (exact FMA, one column a thread)."
template = "fma_row_gemm"
contract = "fma-k256"
policy = "exact"
abi = "GemmArgs"
instruction = "fma"
variants.nn = ["f32.f32.f32", "bf16.bf16.f32", "f16.f16.f32"]
"#;

/// The tile and the route the step adds to the tier file (the route first, so it wins for
/// m <= 8 nn; `thread_m` is the kind's own parameter).
const TILE: &str = r#"
# Added by tests/new_kind.rs.
[[tile]]
family = "row"
name = "probe"
m = 8
n = 64
k = 1
thread_m = 4
"#;
const ROUTE: &str = r#"# Added by tests/new_kind.rs.
[[route]]
policy = "exact"
op = "nn"
dtype = "any"
m = { max = 8 }
kernel = "row.probe"

"#;

fn copy_tree(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap().flatten() {
        let (src, dst) = (entry.path(), to.join(entry.file_name()));
        if entry.file_type().unwrap().is_dir() {
            copy_tree(&src, &dst);
        } else {
            std::fs::copy(&src, &dst).unwrap();
        }
    }
}

/// `text` with `add` inserted before the first line that starts with `before`.
fn insert_before(text: &str, before: &str, add: &str) -> String {
    let at = text
        .find(&format!("\n{before}"))
        .unwrap_or_else(|| panic!("no line `{before}`: the README's step no longer applies"));
    format!("{}\n{add}{}", &text[..at], &text[at + 1..])
}

/// The copy: `kernels-templates/` with the kind added under `row/`, and `specs/` with the
/// family, the tile and the route.
fn repository_copy(dir: &Path) -> (PathBuf, PathBuf) {
    let templates = dir.join("kernels-templates");
    let specs = dir.join("specs");
    copy_tree(Path::new("../kernels-templates"), &templates);
    copy_tree(&gemm_aot_tests::shipped_specs(), &specs);
    copy_tree(Path::new(KIND_DIR), &templates.join("row"));

    let families = std::fs::read_to_string(specs.join("families.toml")).unwrap();
    std::fs::write(specs.join("families.toml"), families + FAMILY).unwrap();
    let tier_file = specs.join(format!("{TIER}.toml"));
    let mut tier = std::fs::read_to_string(&tier_file).unwrap();
    let list = "families = [\"";
    assert!(tier.contains(list), "{TIER}.toml has no families list");
    tier = tier.replacen(list, "families = [\"row\", \"", 1);
    tier = insert_before(&tier, "[[route]]", ROUTE);
    tier.push_str(TILE);
    std::fs::write(&tier_file, tier).unwrap();
    (templates, specs)
}

#[test]
fn a_new_kernel_kind_from_files_alone() {
    let shipped = template_files(&Templates::Shipped).unwrap();
    assert!(
        shipped.kinds().get(TEMPLATE).is_none(),
        "{TEMPLATE} is shipped now: pick a kind the shipped templates do not have"
    );
    let dir = tempfile::tempdir().unwrap();
    let (templates, specs) = repository_copy(dir.path());
    let folder = Templates::Folder(templates.clone());

    // The kind validates from the copy and is routed for small m, nn only.
    let files = template_files(&folder).unwrap_or_else(|e| panic!("{e}"));
    let kind = files.kinds().get(TEMPLATE).expect("the manifest is read");
    assert!(kind.params.iter().any(|p| p.name == "thread_m"));
    let v = gemm_spec::load_dir(
        &specs,
        files.kinds(),
        &gemm_codegen::shipped_specs::defaults(false),
    )
    .unwrap_or_else(|e| panic!("{e}"));
    let tier = v.specs.tier(TIER).unwrap();
    let bf16 = DtypeTriple::new(Dtype::Bf16, Dtype::Bf16, Dtype::F32);
    let family_at = |op, m| {
        tier.select(Policy::Exact, op, bf16, m, 4096, 4096)
            .map(|r| r.family.clone())
    };
    assert_eq!(family_at(Op::Nn, 1).as_deref(), Some("row"));
    assert_eq!(family_at(Op::Nn, 8).as_deref(), Some("row"));
    assert_ne!(family_at(Op::Nn, 9).as_deref(), Some("row"));
    assert_ne!(family_at(Op::Tn, 1).as_deref(), Some("row"));

    // Builds with nvcc, the tier only.
    let out = dir.path().join("out");
    let mut opts = BuildOptions::new(&specs, &out, "new_kind test");
    opts.tiers = vec![TIER.to_string()];
    opts.templates = folder;
    opts.compile = CompileMode::Cubins { bootstrap: true };
    let report = build(&opts, &|m| eprintln!("{m}")).unwrap_or_else(|e| panic!("{e}"));
    let res = report.resources.as_ref().unwrap();
    let probes: Vec<_> = report
        .catalog
        .kernels
        .iter()
        .filter(|k| k.template == TEMPLATE)
        .collect();
    assert_eq!(probes.len(), 3, "one kernel per variant of the family");
    let cubins = gemm_aot_tests::tier_cubins(&out, TIER).unwrap();
    let cuda = std::fs::read_dir(out.join("cuda").join(TIER))
        .unwrap()
        .flatten()
        .map(|e| std::fs::read_to_string(e.path()).unwrap_or_default())
        .collect::<Vec<_>>()
        .join("\n");
    let kernels_rs = std::fs::read_to_string(out.join("rust/kernels.rs")).unwrap();
    let dispatch_rs = std::fs::read_to_string(out.join("rust/dispatch.rs")).unwrap();
    for k in &probes {
        // The manifest's formulas: threads = (m / thread_m) * n, no shared memory.
        assert_eq!(k.threads, 8 / 4 * 64, "{}", k.name);
        assert_eq!(k.shared_bytes, 0);
        assert_eq!(res[k.id].spill_bytes(), 0, "{}", k.name);
        // The parameter reached the template's config and the Rust tables.
        let cfg = format!("struct {}_cfg {{", k.name);
        let at = cuda.find(&cfg).unwrap_or_else(|| panic!("no {cfg}"));
        let body = &cuda[at..at + cuda[at..].find("};").unwrap()];
        assert!(
            body.contains("static constexpr int THREAD_M = 4;"),
            "{body}"
        );
        assert!(
            body.contains("static constexpr int kThreads = 128;"),
            "{body}"
        );
        let entry = format!("name: \"{}\",", k.name);
        let at = kernels_rs
            .find(&entry)
            .unwrap_or_else(|| panic!("no {entry}"));
        let rest = &kernels_rs[at..];
        let entry_text = &rest[..rest.find("KernelInfo {").unwrap_or(rest.len())];
        for want in [
            format!("template: \"{TEMPLATE}\","),
            "(\"thread_m\", 4)".to_string(),
            "describe: \"4 element(s) a thread down a column, 128 threads\"".to_string(),
        ] {
            assert!(entry_text.contains(&want), "{want}\n{entry_text}");
        }
        assert!(dispatch_rs.contains(&format!("kernel: KernelId({}),", k.id)));
        // Compiled: the kernel's symbol is in one of the tier's cubins.
        assert!(
            cubins
                .iter()
                .any(|(_, c)| c.windows(k.name.len()).any(|w| w == k.name.as_bytes())),
            "{} in no cubin",
            k.name
        );
    }

    // The planner serves it like any kind: explain names it for m = 4, not for m = 9.
    let set = gemm_codegen::memory_set::kernel_set(&report.catalog);
    let tier_id = set.tier_by_name(TIER).unwrap().id;
    let query = |m| Query {
        policy: Policy::Exact,
        op: Op::Nn,
        dtype: bf16,
        m,
        n: 4096,
        k: 4096,
        sms: None,
    };
    let small = set.explain(tier_id, &query(4)).unwrap();
    assert!(small.to_string().contains(TEMPLATE), "{small}");
    let mid = set.explain(tier_id, &query(9)).unwrap();
    assert!(!mid.to_string().contains(TEMPLATE), "{mid}");
}
