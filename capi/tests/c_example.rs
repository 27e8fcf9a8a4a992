//! `examples/c/gemm_example.c`, compiled with the system's C compiler against the header and
//! `libgemm_aot.so` of this build, and run. Without a driver (CI) it must build with every
//! warning as an error and exit 2 naming the missing driver; on the GPU it must pass its own
//! checks (a float64 reference, a row alone against the batch, a refusal).

mod common;
use common::{library_dir, repo_root};
use std::path::{Path, PathBuf};
use std::process::Command;

fn build_example(out: &Path) -> PathBuf {
    let root = repo_root();
    let lib = library_dir();
    let exe = out.join("gemm_example");
    let cc = std::env::var("CC").unwrap_or_else(|_| "cc".into());
    let status = Command::new(&cc)
        .args([
            "-std=c11",
            "-O2",
            "-Wall",
            "-Wextra",
            "-Werror",
            "-pedantic",
        ])
        .arg("-I")
        .arg(root.join("capi/include"))
        .arg(root.join("examples/c/gemm_example.c"))
        .arg("-o")
        .arg(&exe)
        .arg(format!("-L{}", lib.display()))
        .arg(format!("-Wl,-rpath,{}", lib.display()))
        .args(["-lgemm_aot", "-ldl", "-lm"])
        .status()
        .unwrap_or_else(|e| panic!("{cc} could not be started: {e}"));
    assert!(status.success(), "{cc} failed on examples/c/gemm_example.c");
    exe
}

fn run(exe: &Path) -> (Option<i32>, String) {
    let out = Command::new(exe).output().unwrap();
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    println!("{text}");
    (out.status.code(), text)
}

/// Whether libcuda can be loaded here.
fn driver_present() -> bool {
    // SAFETY: only probes whether the driver library can be opened.
    unsafe { gemm_runtime::cudarc::driver::sys::is_culib_present() }
}

#[test]
fn the_c_example_builds_and_says_when_there_is_no_driver() {
    if driver_present() {
        eprintln!("SKIPPED: a driver is present; the_c_example_passes_on_the_gpu runs the example");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let exe = build_example(dir.path());
    let (code, text) = run(&exe);
    assert_eq!(code, Some(2), "exit status without a driver:\n{text}");
    assert!(
        text.contains("GEMM_AOT_ERROR_NO_DRIVER") && text.contains("no CUDA driver found"),
        "the example must name the missing driver:\n{text}"
    );
}

#[test]
#[ignore = "needs a CUDA device"]
fn the_c_example_passes_on_the_gpu() {
    let dir = tempfile::tempdir().unwrap();
    let exe = build_example(dir.path());
    let (code, text) = run(&exe);
    assert_eq!(code, Some(0), "the example failed:\n{text}");
    assert!(
        text.contains("same bits as in the batch of 33") && text.contains("\nok\n"),
        "{text}"
    );
}
