//! The `gemm-aot` command line: output, exit codes, and nothing written on bad input.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::SystemTime;

fn gemm_aot(args: &[&str]) -> (bool, String, String) {
    gemm_aot_env(args, &[])
}

fn gemm_aot_env(args: &[&str], env: &[(&str, &Path)]) -> (bool, String, String) {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_gemm-aot"));
    cmd.args(args);
    for (k, v) in env {
        cmd.env(k, v);
    }
    let out = cmd.output().expect("gemm-aot runs");
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// The catalog of `specs` restricted to `tiers`, as `gemm-aot build --tier` makes it.
fn catalog(
    specs: &Path,
    tiers: &[&str],
) -> (gemm_codegen::KernelCatalog, Vec<gemm_spec::SpecWarning>) {
    let templates =
        gemm_codegen::pipeline::template_files(&gemm_codegen::Templates::Shipped).unwrap();
    let tiers: Vec<String> = tiers.iter().map(|t| t.to_string()).collect();
    gemm_codegen::pipeline::validate_and_catalog(specs, &tiers, &templates, false).unwrap()
}

/// The tiers the shipped specs define, in the order the tool lists them.
fn shipped_tiers() -> Vec<String> {
    let v = gemm_codegen::pipeline::load_specs(Path::new("../specs"))
        .expect("the shipped specs validate");
    v.tiers.iter().map(|t| t.name.clone()).collect()
}

/// A copy of the shipped specs in `dir/specs`.
fn copy_specs(dir: &Path) -> PathBuf {
    let specs = dir.join("specs");
    std::fs::create_dir_all(&specs).unwrap();
    for f in std::fs::read_dir("../specs").unwrap() {
        let p = f.unwrap().path();
        if p.is_file() {
            std::fs::copy(&p, specs.join(p.file_name().unwrap())).unwrap();
        }
    }
    specs
}

/// Every file under `dir` with its bytes and modification time.
fn snapshot(dir: &Path) -> BTreeMap<PathBuf, (Vec<u8>, SystemTime)> {
    let mut all = BTreeMap::new();
    let mut todo = vec![dir.to_path_buf()];
    while let Some(d) = todo.pop() {
        for e in std::fs::read_dir(&d).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                todo.push(p);
            } else {
                let t = std::fs::metadata(&p).unwrap().modified().unwrap();
                let rel = p.strip_prefix(dir).unwrap().to_path_buf();
                all.insert(rel, (std::fs::read(&p).unwrap(), t));
            }
        }
    }
    all
}

/// Names in `dir` starting with a dot: staging or backup folders a build left behind.
fn leftovers(dir: &Path) -> Vec<String> {
    std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with('.'))
        .collect()
}

/// A stand-in for nvcc (POSIX sh): it writes a fake cubin, reports 32 registers for every
/// entry point of the source, prints a ptxas and a front-end warning, and fails when the
/// source contains `$FAKE_NVCC_FAIL`.
fn fake_nvcc(dir: &Path) -> PathBuf {
    let path = dir.join("fake-nvcc");
    std::fs::write(
        &path,
        r#"#!/bin/sh
if [ "$1" = "--version" ]; then echo "Cuda compilation tools, release 0.0, fake nvcc for tests"; exit 0; fi
out=""; src=""; keep=""
while [ $# -gt 0 ]; do
  case "$1" in
    -o) out="$2"; shift ;;
    -keep-dir) keep="$2"; shift ;;
    -arch) shift ;;
    -I|-gencode|-Xptxas) shift ;;
    *.cu) src="$1" ;;
  esac
  shift
done
if [ -n "$FAKE_NVCC_FAIL" ] && grep -q "$FAKE_NVCC_FAIL" "$src"; then
  echo "$src(1): error: fake failure" >&2; exit 1
fi
echo "$src(1): warning #177-D: fake front-end warning" >&2
first=1
for k in $(sed -n 's/.*__launch_bounds__([^)]*) \([A-Za-z0-9_]*\)(.*/\1/p' "$src"); do
  if [ $first = 1 ]; then
    echo "ptxas warning : Value of threads per SM for entry $k is out of range. .minnctapersm will be ignored"
    first=0
  fi
  echo "ptxas info    : Compiling entry function '$k' for 'sm_xx'"
  echo "ptxas info    : Function properties for $k"
  echo "    0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads"
  echo "ptxas info    : Used 32 registers, used 1 barriers, 360 bytes cmem[0]"
done
printf 'fake cubin of %s\n' "$src" > "$out"
# -keep leaves the unit's PTX in the keep folder, as nvcc does (`<stem>.ptx`).
if [ -n "$keep" ]; then printf 'fake ptx of %s\n' "$src" > "$keep/$(basename "$src" .cu).ptx"; fi
"#,
    )
    .unwrap();
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
    path
}

#[test]
fn list_shows_kernels_and_routes() {
    let (ok, out, err) = gemm_aot(&["list", "--specs", "../specs", "--tier", "sm90a"]);
    assert!(ok, "{err}");
    assert!(
        out.contains("tier sm90a (sm90a.toml): compute capability 9.0"),
        "{out}"
    );
    assert!(
        out.contains("gemm_sm90a_fmadecs_nn_bf16_bf16_f32_dec4_m4n32k256"),
        "{out}"
    );
    assert!(out.contains(". exact [nn f32.f32.f32"), "{out}");
    assert!(!out.contains("tier sm80"), "--tier filters: {out}");
}

#[test]
fn explain_names_the_route_the_kernel_and_the_launch() {
    let (ok, out, err) = gemm_aot(&[
        "explain", "--specs", "../specs", "--tier", "sm90a", "--policy", "exact", "--op", "nn",
        "--dtype", "bf16", "-m", "1", "-n", "4096", "-k", "4096",
    ]);
    assert!(ok, "{err}");
    // Route numbers count the tier's routes files first; the exact route is the tier's own.
    assert!(
        out.lines().any(|l| l.trim_start().starts_with("route ")
            && l.contains("(sm90a.toml:")
            && l.contains("m <= 4 -> matches")),
        "{out}"
    );
    assert!(
        out.contains("kernel gemm_sm90a_fmadecs_nn_bf16_bf16_f32_dec4_m4n32k256"),
        "{out}"
    );
    assert!(out.contains("contract fma-k256"), "{out}");
    assert!(out.contains("grid (1, 128, 1)"), "{out}");

    let (ok, out, _) = gemm_aot(&[
        "explain",
        "--specs",
        "../specs",
        "--tier",
        "sm90a",
        "--policy",
        "exact",
        "--op",
        "nn",
        "--dtype",
        "f32.f32.f32",
        "-m",
        "1000",
        "-n",
        "333",
        "-k",
        "17",
    ]);
    assert!(ok);
    assert!(out.contains("no: m = 1000 is not <= 256"), "{out}");
    assert!(out.contains("any shape (catch-all) -> matches"), "{out}");
    assert!(out.contains("grid (8, 3, 1)"), "{out}");
}

#[test]
fn explain_rejects_unknown_tiers_and_unrouted_requests() {
    let (ok, _, err) = gemm_aot(&[
        "explain", "--specs", "../specs", "--tier", "sm99", "--policy", "exact", "--op", "nn",
        "--dtype", "f32", "-m", "1", "-n", "1", "-k", "1",
    ]);
    assert!(!ok);
    let known = shipped_tiers().join(", ");
    assert!(
        err.contains(&format!("no tier named `sm99`; the specs define {known}")),
        "{err}"
    );
    let (ok, _, err) = gemm_aot(&[
        "explain",
        "--specs",
        "../specs",
        "--tier",
        "sm90a",
        "--policy",
        "tensor-core",
        "--op",
        "tn",
        "--dtype",
        "bf16",
        "-m",
        "1",
        "-n",
        "1",
        "-k",
        "1",
    ]);
    assert!(!ok);
    assert!(
        err.contains("tier sm90a does not route tensor-core tn bf16.bf16.f32"),
        "{err}"
    );
}

#[test]
fn explain_shows_the_half_fallback_for_a_half_combination_without_a_route() {
    let (ok, out, err) = gemm_aot(&[
        "explain", "--specs", "../specs", "--tier", "sm90a", "--policy", "exact", "--op", "tn",
        "--dtype", "bf16", "-m", "8", "-n", "64", "-k", "64",
    ]);
    assert!(ok, "{err}");
    assert!(
        out.contains("no route for bf16.bf16.f32: the half fallback"),
        "{out}"
    );
    assert!(
        out.contains("kernel gemm_sm90a_fmadect_tn_f32_f32_f32_dec16"),
        "{out}"
    );
}

#[test]
fn a_bad_spec_fails_the_build_and_writes_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let specs = copy_specs(dir.path());
    let sm80 = specs.join("sm80.toml");
    let text = std::fs::read_to_string(&sm80)
        .unwrap()
        .replace("k = 8\n", "k = 256\n");
    std::fs::write(&sm80, text).unwrap();
    let out = dir.path().join("out");
    let (ok, _, err) = gemm_aot(&[
        "build",
        "--specs",
        specs.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
    ]);
    assert!(!ok);
    // (k = 256 divides the contract's chunk, so only the shared-memory rule fails.)
    assert!(
        err.contains("sm80.toml:")
            && err.contains(
                "tile fma.tiled 128x128x256 needs 589824 bytes of shared memory; sm80 allows 166912"
            ),
        "{err}"
    );
    assert!(
        !Path::new(&out).exists(),
        "nothing may be written on bad input"
    );
    assert!(
        leftovers(dir.path()).is_empty(),
        "{:?}",
        leftovers(dir.path())
    );
}

#[test]
fn build_without_cubins_writes_once_then_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    let args = [
        "build",
        "--specs",
        "../specs",
        "--out",
        out.to_str().unwrap(),
        "--no-cubins",
        "--tier",
        "sm90a",
    ];
    let (ok, stdout, err) = gemm_aot(&args);
    assert!(ok, "{err}");
    let (plan, _) = catalog(Path::new("../specs"), &["sm90a"]);
    let kernels = format!("{} kernels in 1 tiers", plan.kernels.len());
    assert!(stdout.contains(&kernels), "{stdout}");
    for f in [
        "rust/abi.rs",
        "rust/kernels.rs",
        "rust/dispatch.rs",
        "rust/resources.rs",
        "cuda/sm90a/fma.cu",
        "cuda/sm90a/conversions.cu",
        "cuda/include/gemm_abi.h",
        "report.json",
    ] {
        let text = std::fs::read_to_string(out.join(f)).unwrap();
        assert!(
            text.contains("@generated") || f.ends_with(".json"),
            "{f} lacks @generated"
        );
    }
    let (ok, stdout, _) = gemm_aot(&args);
    assert!(ok);
    assert!(stdout.contains("0 files written"), "{stdout}");
}

#[test]
fn a_typo_in_the_command_suggests_the_closest_one() {
    let (ok, _, err) = gemm_aot(&["biuld"]);
    assert!(!ok);
    assert!(
        err.contains("unknown command `biuld`: did you mean `build`?"),
        "{err}"
    );
    let (ok, _, err) = gemm_aot(&["expalin", "--tier", "sm90a"]);
    assert!(!ok);
    assert!(err.contains("did you mean `explain`?"), "{err}");
    let (ok, _, err) = gemm_aot(&["frobnicate"]);
    assert!(!ok);
    assert!(
        err.contains(
            "unknown command `frobnicate` (commands: build, explain, list, toolchain, bench"
        ),
        "{err}"
    );
    // Flags: clap's own suggestions.
    let (ok, _, err) = gemm_aot(&["build", "--no-cubin"]);
    assert!(!ok);
    assert!(err.contains("--no-cubins"), "{err}");
}

fn explain(dims: [&str; 3]) -> String {
    let (ok, out, err) = gemm_aot(&[
        "explain", "--specs", "../specs", "--tier", "sm90a", "--policy", "exact", "--op", "nn",
        "--dtype", "f32", "-m", dims[0], "-n", dims[1], "-k", dims[2],
    ]);
    assert!(ok, "{err}");
    out
}

#[test]
fn explain_says_when_the_runtime_refuses_the_shape() {
    // Over i32: refused before routing.
    let out = explain(["3000000000", "64", "64"]);
    assert!(
        out.contains(
            "refused: m = 3000000000 does not fit the kernels' i32 dimensions (max 2147483647)"
        ),
        "{out}"
    );
    assert!(!out.contains("route 1") && !out.contains("grid ("), "{out}");
    let out = explain(["1", "64", "2147483648"]);
    assert!(
        out.contains("refused: k = 2147483648 does not fit"),
        "{out}"
    );

    // In i32, but more columns than the narrowest one-block-a-tile kernel can put on grid.y
    // (65535 tiles): refused before routing, for every m alike.
    for m in ["1", "17", "4096"] {
        let out = explain([m, "2147483647", "64"]);
        assert!(
            out.contains(
                "refused: n = 2147483647 is more than tier sm90a launches for every batch size"
            ),
            "{out}"
        );
        assert!(out.contains("GemmError::ColumnsTooMany"), "{out}");
        assert!(
            !out.contains("-> matches") && !out.contains("  grid ("),
            "{out}"
        );
    }

    // An empty output launches nothing; k = 0 runs the epilogue only.
    let out = explain(["0", "64", "64"]);
    assert!(
        out.contains("no launch: the output has no elements (m = 0, n = 64)"),
        "{out}"
    );
    let out = explain(["1", "64", "0"]);
    assert!(out.contains("  grid (1, "), "{out}");
    assert!(out.contains("k = 0: only the epilogue runs"), "{out}");

    // The largest shape that launches.
    let out = explain(["2147483647", "65535", "64"]);
    assert!(out.contains("  grid ("), "{out}");
    assert!(!out.contains("refused"), "{out}");
}

#[test]
fn no_cubins_keeps_existing_cubins_and_says_so() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    let build = |tier: &str| {
        gemm_aot(&[
            "build",
            "--specs",
            "../specs",
            "--out",
            out.to_str().unwrap(),
            "--no-cubins",
            "--tier",
            tier,
        ])
    };
    let (ok, stdout, err) = build("sm90a");
    assert!(ok, "{err}");
    // One placeholder a compile unit of the tier: its families, then its conversions.
    let specs = gemm_codegen::pipeline::load_specs(std::path::Path::new("../specs")).unwrap();
    let units: Vec<String> = specs
        .tier("sm90a")
        .unwrap()
        .families
        .iter()
        .map(|f| format!("sm90a/{f}"))
        .chain(["sm90a/conversions".to_string()])
        .collect();
    let said = format!(
        "--no-cubins: generated sources and Rust only; cubins/ left as it was (0 files), empty placeholder for {}",
        units.join(", ")
    );
    assert!(stdout.contains(&said), "{said}\n{stdout}");
    assert_eq!(
        std::fs::read(out.join("cubins/sm90a/fma.cubin")).unwrap(),
        b""
    );
    // Cubins from an earlier compiled build (stand-ins here) are neither truncated nor removed.
    std::fs::write(out.join("cubins/sm90a/fma.cubin"), b"compiled sm90a").unwrap();
    std::fs::create_dir_all(out.join("cubins/sm80")).unwrap();
    std::fs::write(out.join("cubins/sm80/fma.cubin"), b"compiled sm80").unwrap();
    let (ok, stdout, err) = build("sm80");
    assert!(ok, "{err}");
    // Kept: sm90a's placeholders and the stand-in for sm80/fma; placeholders for sm80's other units.
    let sm80: Vec<String> = specs
        .tier("sm80")
        .unwrap()
        .families
        .iter()
        .filter(|f| *f != "fma")
        .map(|f| format!("sm80/{f}"))
        .chain(["sm80/conversions".to_string()])
        .collect();
    let said = format!(
        "cubins/ left as it was ({} files), empty placeholder for {} (no cubin yet); the Rust says no cubins are present",
        units.len() + 1,
        sm80.join(", ")
    );
    assert!(stdout.contains(&said), "{said}\n{stdout}");
    assert_eq!(
        std::fs::read(out.join("cubins/sm90a/fma.cubin")).unwrap(),
        b"compiled sm90a"
    );
    assert_eq!(
        std::fs::read(out.join("cubins/sm80/fma.cubin")).unwrap(),
        b"compiled sm80"
    );
    // The rest of the output is sm80's alone: sm90a's sources are gone, the Rust names sm80 only.
    assert!(out.join("cuda/sm80/fma.cu").exists());
    assert!(!out.join("cuda/sm90a").exists());
    let kernels = std::fs::read_to_string(out.join("rust/kernels.rs")).unwrap();
    assert!(kernels.contains("cubin!(\"sm80\", \"fma\")") && !kernels.contains("cubin!(\"sm90a\""));
    let resources = std::fs::read_to_string(out.join("rust/resources.rs")).unwrap();
    assert!(
        resources.contains("CUBINS_PRESENT: bool = false"),
        "{resources}"
    );
    assert!(
        leftovers(dir.path()).is_empty(),
        "{:?}",
        leftovers(dir.path())
    );
}

#[test]
fn a_folder_that_is_not_an_output_is_never_replaced() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("notes.txt"), "mine").unwrap();
    let (ok, _, err) = gemm_aot(&[
        "build",
        "--specs",
        "../specs",
        "--out",
        dir.path().to_str().unwrap(),
        "--no-cubins",
    ]);
    assert!(!ok);
    assert!(
        err.contains("is not a gemm-aot output folder (it holds notes.txt"),
        "{err}"
    );
    assert_eq!(
        std::fs::read(dir.path().join("notes.txt")).unwrap(),
        b"mine"
    );
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 1);
}

#[cfg(unix)]
#[test]
fn a_failed_nvcc_leaves_the_old_output_and_a_removed_tier_disappears() {
    let dir = tempfile::tempdir().unwrap();
    let nvcc = fake_nvcc(dir.path());
    let cache = dir.path().join("cache");
    let specs = copy_specs(dir.path());
    let out = dir.path().join("out");
    let env = [
        ("NVCC", nvcc.as_path()),
        ("GEMM_AOT_CACHE", cache.as_path()),
    ];
    let args = [
        "build",
        "--specs",
        specs.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
        "--tier",
        "sm80",
        "--tier",
        "sm90a",
        "--no-bootstrap",
    ];

    // A good build: both tiers compiled, every warning line shown and attributed.
    let (ok, stdout, err) = gemm_aot_env(&args, &env);
    assert!(ok, "{err}");
    assert!(stdout.contains("in 2 tiers"), "{stdout}");
    for tier in ["sm80", "sm90a"] {
        assert!(
            err.contains(&format!(
                "warning: tier {tier}: cuda/{tier}/fma.cu(1): warning #177-D: fake front-end warning"
            )),
            "{err}"
        );
        let ptxas = format!("warning: tier {tier}, kernel gemm_{tier}_");
        assert!(
            err.contains(&ptxas) && err.contains(".minnctapersm will be ignored"),
            "{err}"
        );
    }
    let report: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("report.json")).unwrap()).unwrap();
    let warnings = report["warnings"].as_array().unwrap();
    // A front-end and a ptxas warning from each compile unit (one a family, and conversions).
    let (plan, _) = catalog(&specs, &["sm80", "sm90a"]);
    let units: usize = plan.modules.iter().map(Vec::len).sum();
    assert_eq!(warnings.len(), 2 * units, "{warnings:?}");
    assert!(warnings
        .iter()
        .any(|w| w["tier"] == "sm80" && w["kernel"].is_string()));
    let good = snapshot(&out);
    assert!(good.contains_key(Path::new("cubins/sm80/fma.cubin")));
    // sm80 embeds PTX beside each cubin; sm90a (wgmma, arch-specific) has none.
    assert!(good.contains_key(Path::new("cubins/sm80/fma.ptx")));
    assert!(!good
        .keys()
        .any(|p| p.starts_with("cubins/sm90a") && p.extension().is_some_and(|e| e == "ptx")));

    // A no-change rebuild writes nothing and keeps every file's time.
    let (ok, stdout, err) = gemm_aot_env(&args, &env);
    assert!(ok, "{err}");
    assert!(stdout.contains("0 files written"), "{stdout}");
    assert_eq!(snapshot(&out), good);

    // nvcc fails on one tier (a fresh cache, so nvcc runs): nothing changes.
    let cache2 = dir.path().join("cache2");
    let fail_env = [
        ("NVCC", nvcc.as_path()),
        ("GEMM_AOT_CACHE", cache2.as_path()),
        ("FAKE_NVCC_FAIL", Path::new("tier sm90a")),
    ];
    let (ok, _, err) = gemm_aot_env(&args, &fail_env);
    assert!(!ok);
    assert!(
        err.contains("nvcc failed on tier sm90a (cuda/sm90a/fma.cu)")
            && err.contains("cuda/sm90a/fma.cu(1): error: fake failure"),
        "{err}"
    );
    assert_eq!(
        snapshot(&out),
        good,
        "a failed build must leave the output byte for byte"
    );
    assert!(
        leftovers(dir.path()).is_empty(),
        "{:?}",
        leftovers(dir.path())
    );

    // A tier gone from the specs (with the tiers built on it): its source and cubin leave the
    // output.
    std::fs::remove_file(specs.join("sm80.toml")).unwrap();
    for f in std::fs::read_dir(&specs).unwrap() {
        let p = f.unwrap().path();
        if std::fs::read_to_string(&p).is_ok_and(|t| t.contains("base = \"sm80\"")) {
            std::fs::remove_file(&p).unwrap();
        }
    }
    let (ok, stdout, err) = gemm_aot_env(
        &[
            "build",
            "--specs",
            specs.to_str().unwrap(),
            "--out",
            out.to_str().unwrap(),
            "--tier",
            "sm90a",
            "--no-bootstrap",
        ],
        &env,
    );
    assert!(ok, "{err}");
    assert!(stdout.contains("removed"), "{stdout}");
    assert!(!out.join("cubins/sm80").exists());
    assert!(!out.join("cuda/sm80").exists());
    let now = snapshot(&out);
    assert_eq!(
        now[Path::new("cubins/sm90a/fma.cubin")],
        good[Path::new("cubins/sm90a/fma.cubin")],
        "unchanged files keep their bytes and time"
    );
    assert!(
        leftovers(dir.path()).is_empty(),
        "{:?}",
        leftovers(dir.path())
    );
}

/// With the real compiler: a kernel over its tier's register budget fails the ptxas check,
/// and the previous good output stays as it was. (130 registers: above every tile's
/// accumulators, which validation checks first, below what ptxas gives the plain-load kernels.)
#[test]
fn a_failed_resource_check_leaves_the_old_output() {
    let dir = tempfile::tempdir().unwrap();
    let specs = copy_specs(dir.path());
    let out = dir.path().join("out");
    let args = [
        "build",
        "--specs",
        specs.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
        "--tier",
        "sm80",
    ];
    let (ok, _, err) = gemm_aot(&args);
    assert!(ok, "{err}");
    let good = snapshot(&out);
    assert!(good[Path::new("cubins/sm80/fma.cubin")]
        .0
        .starts_with(b"\x7fELF"));
    let sm80 = specs.join("sm80.toml");
    let text = std::fs::read_to_string(&sm80).unwrap().replace(
        "max_registers_per_thread = 255",
        "max_registers_per_thread = 130",
    );
    std::fs::write(&sm80, text).unwrap();
    let (ok, _, err) = gemm_aot(&args);
    assert!(!ok);
    assert!(err.contains("registers a thread; sm80 allows 130"), "{err}");
    assert_eq!(snapshot(&out), good);
    assert!(
        leftovers(dir.path()).is_empty(),
        "{:?}",
        leftovers(dir.path())
    );
}
