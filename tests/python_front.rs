//! The Python package as a user gets it: `pip install ./python` into a fresh virtual
//! environment (maturin from PyPI, the kernels compiled or taken from the cache as for the
//! runtime), then `python/tests/test_no_gpu.py` against the installed wheel: import, version,
//! every refusal reachable without a device, the error when no driver is present. numpy,
//! from PyPI, supplies DLPack producers. Then, each in its own process over a stand-in torch,
//! `python/tests/test_policy_no_gpu.py` (how `mm` picks the policy and output path) and
//! `python/tests/test_fast_path_no_gpu.py` (the native fast path makes the Python path's call
//! or declines it), with the tensors read attribute by attribute and through DLPack exports.
//! The GPU tests (`python/tests/test_gpu.py`) run on the GPU machine against a wheel built
//! here.

use std::path::{Path, PathBuf};
use std::process::Command;

/// Set in the copy `new_tier` tests: the package is tested once, by the real workspace.
const NESTED: &str = "GEMM_AOT_NEW_TIER_COPY";

fn work_dir() -> PathBuf {
    let base = option_env!("CARGO_TARGET_TMPDIR")
        .map(PathBuf::from)
        .filter(|p| p.is_dir())
        .unwrap_or_else(std::env::temp_dir);
    base.join("python-front")
}

fn run(what: &str, cmd: &mut Command) -> String {
    let out = cmd
        .output()
        .unwrap_or_else(|e| panic!("{what} could not start: {e}"));
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(out.status.success(), "{what} failed:\n{text}");
    text
}

fn python() -> String {
    std::env::var("PYTHON").unwrap_or_else(|_| "python3".into())
}

#[test]
fn the_wheel_installs_and_refuses_without_a_device() {
    if std::env::var_os(NESTED).is_some() {
        eprintln!("SKIPPED: this is new_tier's copy of the workspace");
        return;
    }
    let root = std::fs::canonicalize("..").unwrap();
    let work = work_dir();
    std::fs::create_dir_all(&work).unwrap();
    let venv = work.join("venv");
    let py = venv.join("bin/python");
    if !py.is_file() {
        run(
            "python3 -m venv",
            Command::new(python()).args(["-m", "venv"]).arg(&venv),
        );
    }
    let pip = |args: &[&str]| {
        let mut cmd = Command::new(&py);
        cmd.args(["-m", "pip", "--disable-pip-version-check"])
            .args(args);
        cmd
    };
    run(
        "pip install numpy",
        &mut pip(&["install", "--quiet", "numpy"]),
    );
    // The build a user's `pip install ./python` makes, with its own target folder (kept
    // between runs, so a second run is incremental) and none of this test's cargo settings.
    let mut install = pip(&["install", "--quiet", "--force-reinstall", "--no-deps"]);
    install
        .arg(root.join("python"))
        .env("CARGO_TARGET_DIR", work.join("target"));
    for var in [
        "CARGO_BUILD_TARGET_DIR",
        "CARGO_MANIFEST_DIR",
        "CARGO_PKG_NAME",
        "RUSTC_WRAPPER",
    ] {
        install.env_remove(var);
    }
    run("pip install ./python", &mut install);
    let tests = root.join("python/tests");
    let text = run(
        "python/tests/test_no_gpu.py",
        Command::new(&py)
            .current_dir(&work)
            .args(["-m", "unittest", "-v", "test_no_gpu"])
            .env("PYTHONPATH", &tests)
            .env("GEMM_AOT_EXPECTED_VERSION", env!("CARGO_PKG_VERSION")),
    );
    println!("{text}");
    assert!(text.contains("OK"), "{text}");
    // Its own process: it puts a stand-in torch first on the path.
    let text = run(
        "python/tests/test_policy_no_gpu.py",
        Command::new(&py)
            .current_dir(&work)
            .args(["-m", "unittest", "-v", "test_policy_no_gpu"])
            .env("PYTHONPATH", &tests),
    );
    println!("{text}");
    assert!(text.contains("OK"), "{text}");
    // Its own process too: it registers the stand-in's dtypes with the native fast path, once
    // a process, so once with attribute reads and once with DLPack exports.
    for reads in ["attributes", "dlpack"] {
        let text = run(
            &format!("python/tests/test_fast_path_no_gpu.py ({reads})"),
            Command::new(&py)
                .current_dir(&work)
                .args(["-m", "unittest", "-v", "test_fast_path_no_gpu"])
                .env("PYTHONPATH", &tests)
                .env("GEMM_AOT_FAST_PATH_READS", reads),
        );
        println!("{text}");
        assert!(text.contains("OK"), "{text}");
    }
    assert_not_from_source(&py, &root);
}

/// The tests imported the installed wheel, not the source folder.
fn assert_not_from_source(py: &Path, root: &Path) {
    let out = Command::new(py)
        .current_dir(std::env::temp_dir())
        .args(["-c", "import gemm_aot; print(gemm_aot.__file__)"])
        .output()
        .unwrap();
    let file = String::from_utf8_lossy(&out.stdout);
    assert!(
        !file.contains(&*root.join("python").to_string_lossy()) && file.contains("site-packages"),
        "gemm_aot came from {file}"
    );
}
