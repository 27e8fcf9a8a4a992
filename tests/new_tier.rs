//! Adding a GPU generation takes a spec file only. The README's steps ("Adding a tier"): copy
//! `specs/sm89.toml` (a tier on `base = "sm80"` with what differs) to `specs/sm86.toml` and
//! change its `name`, `gencode` and `compute_capability`. Two tests do exactly that, at the
//! first 8.x capability the hardware table knows and no shipped tier claims (8.6 today; an
//! added sm86 moves them to the next), so adding a tier at any capability keeps them green:
//!
//! - `a_new_tier_from_a_spec_file_alone`: the new tier validates, compiles with nvcc and
//!   dispatches like the tier it was copied from;
//! - `the_workspace_tests_pass_with_a_new_tier`: in a copy of the repository with the new file,
//!   `cargo test --workspace` passes (without nvcc: `GEMM_AOT_NO_CUBINS=1`; the nvcc tests are
//!   skipped by name there, the first test and `compile_tiers` cover them).

use gemm_codegen::{build, BuildOptions, CompileMode};
use gemm_spec::{Dtype, DtypeTriple, Op, Policy};
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

/// The minor of the first 8.x capability `specs/hardware.toml` has an entry for and no tier
/// file of `specs` claims, below sm89's.
fn free_minor(specs: &Path) -> u32 {
    let text = |f: &str| std::fs::read_to_string(specs.join(f)).unwrap();
    let hardware = text("hardware.toml");
    let claimed: Vec<u32> = std::fs::read_dir(specs)
        .unwrap()
        .flatten()
        .map(|e| std::fs::read_to_string(e.path()).unwrap_or_default())
        .filter(|t| t.lines().any(|l| l.trim() == "[tier]"))
        .flat_map(|t| {
            (0..10).filter(move |m| t.contains(&format!("compute_capability = [8, {m}]")))
        })
        .collect();
    (1..9)
        .filter(|m| hardware.contains(&format!("compute_capability = [8, {m}]")))
        .find(|m| !claimed.contains(m))
        .expect("a free 8.x capability below 8.9 in the hardware table")
}

/// sm89.toml with the README's three edits, done by text replacement, for 8.`minor`.
fn tier_from_sm89(sm89: &str, minor: u32) -> String {
    let edits = [
        (
            "name = \"sm89\"".to_string(),
            format!("name = \"sm8{minor}\""),
        ),
        (
            "arch=compute_89,code=sm_89".to_string(),
            format!("arch=compute_8{minor},code=sm_8{minor}"),
        ),
        (
            "compute_capability = [8, 9]".to_string(),
            format!("compute_capability = [8, {minor}]"),
        ),
    ];
    let mut new = sm89.to_string();
    for (old, replacement) in &edits {
        assert!(
            new.contains(old.as_str()),
            "sm89.toml has no `{old}`: the README's step no longer applies as written"
        );
        new = new.replace(old.as_str(), replacement);
    }
    new
}

#[test]
fn a_new_tier_from_a_spec_file_alone() {
    let dir = tempfile::tempdir().unwrap();
    let specs = dir.path().join("specs");
    gemm_aot_tests::copy_specs(&gemm_aot_tests::shipped_specs(), &specs).unwrap();
    let before = gemm_aot_tests::load(&specs)
        .expect("shipped specs validate")
        .specs;
    let minor = free_minor(&specs);
    let name = format!("sm8{minor}");
    let sm89_text = std::fs::read_to_string(specs.join("sm89.toml")).unwrap();
    std::fs::write(
        specs.join(format!("{name}.toml")),
        tier_from_sm89(&sm89_text, minor),
    )
    .unwrap();

    // Validates, and serves its capability (and the minors above it up to the next tier); the
    // other capabilities keep their tiers.
    let v = gemm_aot_tests::load(&specs).expect("the new tier validates");
    assert!(v.warnings.is_empty(), "{:?}", v.warnings);
    let tier = v.specs.tier(&name).expect("the new tier is a tier");
    let sm89 = v.specs.tier("sm89").unwrap();
    let serving = |cc| v.specs.tier_for_capability(cc).map(|t| t.name.as_str());
    assert_eq!(serving((8, minor)), Some(name.as_str()));
    assert_eq!(serving((8, 9)), Some("sm89"));
    for below in 0..minor {
        assert_eq!(
            serving((8, below)),
            before
                .tier_for_capability((8, below))
                .map(|t| t.name.as_str()),
            "8.{below} keeps its tier"
        );
    }

    // Compiles (only the new tier; the others are covered by compile_tiers).
    let out = dir.path().join("out");
    let mut opts = BuildOptions::new(&specs, &out, "new_tier test");
    opts.tiers = vec![name.clone()];
    opts.compile = CompileMode::Cubins { bootstrap: true };
    let report = build(&opts, &|m| eprintln!("{m}")).unwrap_or_else(|e| panic!("{e}"));
    let res = report.resources.as_ref().unwrap();
    let (sm89_plan, _) = gemm_aot_tests::catalog_tiers(&specs, &["sm89"]);
    assert_eq!(report.catalog.kernels.len(), sm89_plan.kernels.len());
    assert!(report
        .catalog
        .kernels
        .iter()
        .all(|k| k.tier == name && res[k.id].spill_bytes() == 0));
    let cubins = gemm_aot_tests::tier_cubins(&out, &name).unwrap();
    assert!(!cubins.is_empty());
    for (path, cubin) in &cubins {
        assert_eq!(&cubin[..4], b"\x7fELF", "{}", path.display());
    }

    // Dispatches as sm89 does, at every route boundary of NN bf16; the generated Rust routes
    // to its kernels and maps devices of its capability to the tier.
    let bf16 = DtypeTriple::new(Dtype::Bf16, Dtype::Bf16, Dtype::F32);
    let routes = sm89.routes_for(Policy::Exact, Op::Nn, bf16);
    assert!(!routes.is_empty(), "sm89 routes exact NN bf16");
    let mut ms: Vec<u64> = vec![0, 1, 4096];
    for r in &routes {
        ms.extend(r.m.max.map(|max| [max, max + 1]).into_iter().flatten());
    }
    for m in ms {
        let pick = |t: &gemm_spec::Tier| {
            let r = t
                .select(Policy::Exact, Op::Nn, bf16, m, 4096, 4096)
                .unwrap();
            (r.family.clone(), r.tile.clone())
        };
        assert_eq!(pick(tier), pick(sm89), "m = {m}");
    }
    let small = tier
        .select(Policy::Exact, Op::Nn, bf16, 1, 4096, 4096)
        .unwrap();
    let thin = report
        .catalog
        .kernels
        .iter()
        .find(|k| {
            k.op == Op::Nn
                && k.dtype == bf16
                && k.family == small.family
                && k.tile.name == small.tile
        })
        .unwrap();
    let sm89_thin = sm89_plan
        .kernels
        .iter()
        .find(|k| {
            k.op == Op::Nn
                && k.dtype == bf16
                && k.family == small.family
                && k.tile.name == small.tile
        })
        .unwrap();
    assert_eq!(
        thin.name,
        sm89_thin
            .name
            .replace("gemm_sm89_", &format!("gemm_{name}_"))
    );
    assert!(cubins.iter().any(|(_, c)| c
        .windows(thin.name.len())
        .any(|w| w == thin.name.as_bytes())));
    let dispatch = std::fs::read_to_string(out.join("rust/dispatch.rs")).unwrap();
    assert!(
        dispatch.contains("(0, Policy::Exact, Op::Nn, Dtype::Bf16, Dtype::Bf16, Dtype::F32) => {"),
        "{dispatch}"
    );
    assert!(dispatch.contains(&format!("kernel: KernelId({}),", thin.id)));
    let kernels = std::fs::read_to_string(out.join("rust/kernels.rs")).unwrap();
    assert!(
        kernels.contains(&format!("compute_capability: (8, {minor}),")),
        "{kernels}"
    );
    assert!(kernels.contains(&format!("name: \"{name}\"")));
}

// ---------------------------------------------------------------------------------------------
// The README's steps in a copy of the repository, then `cargo test --workspace` there.

/// Set in the copy's `cargo test`, so that this test does not run itself again there.
const NESTED: &str = "GEMM_AOT_NEW_TIER_COPY";

/// Tests skipped in the copy, by name: they run nvcc (the copy builds with
/// `GEMM_AOT_NO_CUBINS=1`); `a_new_tier_from_a_spec_file_alone` and `compile_tiers` run them
/// with the new tier in the outer `cargo test`.
const NVCC_TESTS: &[&str] = &[
    "every_shipped_tier_compiles_without_spills",
    "a_kernel_over_its_register_budget_fails_the_build_by_name",
    "the_tiny_fixture_compiles_with_its_own_abi_struct",
    "a_new_tier_from_a_spec_file_alone",
];

/// The files of the working tree that git tracks or would track (not target/, not ignored
/// output), relative to `root`. Without git: every file but the ignored folders.
fn repository_files(root: &Path) -> Vec<PathBuf> {
    let git = Command::new("git")
        .arg("-C")
        .arg(root)
        .args([
            "ls-files",
            "-z",
            "--cached",
            "--others",
            "--exclude-standard",
        ])
        .output();
    if let Some(out) = git
        .ok()
        .filter(|o| o.status.success() && !o.stdout.is_empty())
    {
        return String::from_utf8_lossy(&out.stdout)
            .split('\0')
            .filter(|p| !p.is_empty())
            .map(PathBuf::from)
            .filter(|p| root.join(p).is_file())
            .collect();
    }
    fn walk(root: &Path, rel: &Path, out: &mut Vec<PathBuf>) {
        for entry in std::fs::read_dir(root.join(rel)).unwrap().flatten() {
            let name = entry.file_name();
            let rel = rel.join(&name);
            let skip = [".git", "target", "gemm-out", ".device", "gpu-out"];
            if rel.components().count() == 1 && skip.iter().any(|s| name == *s) {
                continue;
            }
            if entry.file_type().is_ok_and(|t| t.is_dir()) {
                walk(root, &rel, out);
            } else if entry.file_type().is_ok_and(|t| t.is_file()) {
                out.push(rel);
            }
        }
    }
    let mut out = Vec::new();
    walk(root, Path::new(""), &mut out);
    out
}

/// Writes `bytes` to `path` unless it holds them already (an unchanged file keeps its mtime,
/// so cargo's next build in the copy is incremental).
fn put(path: &Path, bytes: &[u8]) {
    if std::fs::read(path).is_ok_and(|old| old == bytes) {
        return;
    }
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, bytes).unwrap();
}

/// Makes `copy` hold exactly `files` of `root` plus `extra` (relative path, contents).
fn sync(root: &Path, copy: &Path, files: &[PathBuf], extra: &[(PathBuf, String)]) {
    let mut keep = BTreeSet::new();
    for f in files {
        put(&copy.join(f), &std::fs::read(root.join(f)).unwrap());
        keep.insert(f.clone());
    }
    for (f, text) in extra {
        put(&copy.join(f), text.as_bytes());
        keep.insert(f.clone());
    }
    let mut present = Vec::new();
    fn all(dir: &Path, rel: &Path, out: &mut Vec<PathBuf>) {
        for entry in std::fs::read_dir(dir.join(rel)).unwrap().flatten() {
            let rel = rel.join(entry.file_name());
            if entry.file_type().is_ok_and(|t| t.is_dir()) {
                all(dir, &rel, out);
            } else {
                out.push(rel);
            }
        }
    }
    all(copy, Path::new(""), &mut present);
    for f in present.iter().filter(|f| !keep.contains(*f)) {
        std::fs::remove_file(copy.join(f)).unwrap();
    }
}

/// A folder that outlives the test, so that the copy's builds are incremental: under this
/// build's target folder (cargo's `CARGO_TARGET_TMPDIR`), else the system's temporary folder.
fn work_dir() -> PathBuf {
    let base = option_env!("CARGO_TARGET_TMPDIR")
        .map(PathBuf::from)
        .filter(|p| p.is_dir())
        .unwrap_or_else(std::env::temp_dir);
    base.join("gemm-aot-new-tier")
}

fn cargo_test(copy: &Path, target: &Path, offline: bool) -> (bool, String) {
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let mut cmd = Command::new(cargo);
    cmd.current_dir(copy)
        .args(["test", "--workspace", "--locked"])
        .args(offline.then_some("--offline"))
        .arg("--target-dir")
        .arg(target)
        .arg("--");
    for t in NVCC_TESTS {
        cmd.args(["--skip", t]);
    }
    for var in [
        "CARGO_TARGET_DIR",
        "CARGO_BUILD_TARGET_DIR",
        "GEMM_AOT_SPECS",
        "CARGO_MANIFEST_DIR",
        "CARGO_PKG_NAME",
        "INSTA_WORKSPACE_ROOT",
        "INSTA_UPDATE",
    ] {
        cmd.env_remove(var);
    }
    // No debug info and no incremental state: the copy's build is a second workspace build
    // on the same disk, and this keeps it a fraction of the size.
    cmd.env("GEMM_AOT_NO_CUBINS", "1")
        .env("CARGO_PROFILE_DEV_DEBUG", "0")
        .env("CARGO_INCREMENTAL", "0")
        .env(NESTED, "1")
        .env("CARGO_TERM_COLOR", "never");
    let out = cmd.output().expect("cargo runs");
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stderr),
        String::from_utf8_lossy(&out.stdout)
    );
    (out.status.success(), text)
}

#[test]
fn the_workspace_tests_pass_with_a_new_tier() {
    if std::env::var_os(NESTED).is_some() {
        eprintln!("SKIPPED: this is the copy's own run");
        return;
    }
    let root = std::fs::canonicalize("..").unwrap();
    let sm89 = root.join("specs/sm89.toml");
    let minor = free_minor(&root.join("specs"));
    let name = format!("sm8{minor}");
    let started = Instant::now();
    let work = work_dir();
    let copy = work.join("repo");
    let target = work.join("target");
    let files = repository_files(&root);
    assert!(files.iter().any(|f| f == Path::new("Cargo.toml")));
    let new = tier_from_sm89(&std::fs::read_to_string(&sm89).unwrap(), minor);
    sync(
        &root,
        &copy,
        &files,
        &[(PathBuf::from(format!("specs/{name}.toml")), new)],
    );

    // Offline first (the outer build fetched every crate); online if something is missing.
    let (mut ok, mut log) = cargo_test(&copy, &target, true);
    if !ok && log.contains("offline") && !log.contains("test result:") {
        (ok, log) = cargo_test(&copy, &target, false);
    }
    let tail: Vec<&str> = log.lines().rev().take(150).collect();
    let tail = tail.into_iter().rev().collect::<Vec<_>>().join("\n");
    assert!(
        ok,
        "cargo test --workspace fails in {} with specs/{name}.toml added:\n{tail}",
        copy.display()
    );
    let results = log
        .lines()
        .filter(|l| l.starts_with("test result:"))
        .count();
    assert!(results > 5, "{tail}");
    assert!(!log.contains("test result: FAILED"), "{tail}");

    // The copy's runtime was generated with the new tier.
    let tables: Vec<PathBuf> = std::fs::read_dir(target.join("debug/build"))
        .unwrap()
        .flatten()
        .map(|e| {
            e.path()
                .join("out/gemm-aot-shipped_kernels/rust/kernels.rs")
        })
        .filter(|p| p.is_file())
        .collect();
    let newest = tables
        .iter()
        .max_by_key(|p| std::fs::metadata(p).and_then(|m| m.modified()).ok())
        .expect("the copy built gemm-runtime");
    let kernels = std::fs::read_to_string(newest).unwrap();
    assert!(
        kernels.contains(&format!("name: \"{name}\",")),
        "{}",
        newest.display()
    );
    eprintln!(
        "the copy's cargo test --workspace passed ({results} test binaries, {:.1} s); skipped \
         there, as they need nvcc: {}",
        started.elapsed().as_secs_f64(),
        NVCC_TESTS.join(", ")
    );
}
