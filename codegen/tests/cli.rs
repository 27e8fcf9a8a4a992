//! The `gemm-aot` command line: output, exit codes, and nothing written on bad input.

use std::path::Path;
use std::process::Command;

fn gemm_aot(args: &[&str]) -> (bool, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_gemm-aot"))
        .args(args)
        .output()
        .expect("gemm-aot runs");
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
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
    assert!(out.contains("1. exact [nn f32.f32.f32"), "{out}");
    assert!(!out.contains("tier sm80"), "--tier filters: {out}");
}

#[test]
fn explain_names_the_route_the_kernel_and_the_launch() {
    let (ok, out, err) = gemm_aot(&[
        "explain", "--specs", "../specs", "--tier", "sm90a", "--policy", "exact", "--op", "nn",
        "--dtype", "bf16", "-m", "1", "-n", "4096", "-k", "4096",
    ]);
    assert!(ok, "{err}");
    assert!(out.contains("route 1 (sm90a.toml:"), "{out}");
    assert!(out.contains("m <= 4 -> matches"), "{out}");
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
    assert!(
        err.contains("no tier named `sm99`; the specs define sm100a, sm120, sm80, sm89, sm90a"),
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
    let specs = dir.path().join("specs");
    std::fs::create_dir(&specs).unwrap();
    for f in std::fs::read_dir("../specs").unwrap() {
        let p = f.unwrap().path();
        std::fs::copy(&p, specs.join(p.file_name().unwrap())).unwrap();
    }
    let sm80 = specs.join("sm80.toml");
    let text = std::fs::read_to_string(&sm80)
        .unwrap()
        .replace("k = 8\n", "k = 400\n");
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
    assert!(
        err.contains("sm80.toml:46: tile fma.tiled 128x128x400 needs 884736 bytes of shared memory; sm80 allows 166912"),
        "{err}"
    );
    assert!(
        !Path::new(&out).exists(),
        "nothing may be written on bad input"
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
    assert!(stdout.contains("52 kernels in 1 tiers"), "{stdout}");
    for f in [
        "rust/abi.rs",
        "rust/kernels.rs",
        "rust/dispatch.rs",
        "rust/resources.rs",
        "cuda/sm90a.cu",
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
