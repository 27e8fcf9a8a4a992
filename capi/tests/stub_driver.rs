//! The C call's whole host path (validation, routing, tensor maps, the argument struct, the
//! launch call) without a GPU: `bench/c/host_cost.c` over `bench/debug/stub_driver.c`, a
//! stand-in `libcuda.so.1` that launches nothing and counts launches. Every call must succeed
//! and launch exactly one kernel. The same pair, under callgrind, is
//! `bench/debug/host_profile.sh`.

mod common;
use common::{library_dir, repo_root};
use std::path::Path;
use std::process::Command;

/// Compiles `args` with the system's C compiler (every warning an error).
fn cc(args: &[&std::ffi::OsStr], what: &str) {
    let cc = std::env::var("CC").unwrap_or_else(|_| "cc".into());
    let status = Command::new(&cc)
        .args(["-O2", "-Wall", "-Werror"])
        .args(args)
        .status()
        .unwrap_or_else(|e| panic!("{cc} could not be started: {e}"));
    assert!(status.success(), "{cc} failed on {what}");
}

fn os(p: &Path) -> &std::ffi::OsStr {
    p.as_os_str()
}

#[test]
fn every_c_call_over_the_stub_driver_launches_once() {
    if !gemm_runtime::shipped().cubins_present() {
        // A build without kernels (GEMM_AOT_NO_CUBINS, as the new-tier test's copy builds)
        // opens no context, stub or not.
        eprintln!("SKIPPED: this build carries no cubins; the C call cannot open a context");
        return;
    }
    let root = repo_root();
    let lib = library_dir();
    let dir = tempfile::tempdir().unwrap();
    let stub = dir.path().join("libcuda.so.1");
    let source = root.join("bench/debug/stub_driver.c");
    let o = std::ffi::OsStr::new;
    cc(
        &[o("-shared"), o("-fPIC"), o("-o"), os(&stub), os(&source)],
        "bench/debug/stub_driver.c",
    );
    std::os::unix::fs::symlink("libcuda.so.1", dir.path().join("libcuda.so")).unwrap();
    let exe = dir.path().join("host_cost");
    let include = root.join("capi/include");
    let program = root.join("bench/c/host_cost.c");
    let link = format!("-L{}", lib.display());
    let rpath = format!("-Wl,-rpath,{}", lib.display());
    cc(
        &[
            o("-std=c11"),
            o("-I"),
            os(&include),
            os(&program),
            o("-o"),
            os(&exe),
            o(&link),
            o(&rpath),
            o("-lgemm_aot"),
            o("-ldl"),
            o("-lm"),
        ],
        "bench/c/host_cost.c",
    );
    let out = Command::new(&exe)
        .env("LD_LIBRARY_PATH", dir.path())
        .env("STUB_DRIVER_REPORT", "1")
        .output()
        .unwrap();
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    println!("{text}");
    assert_eq!(
        out.status.code(),
        Some(0),
        "host_cost over the stub:\n{text}"
    );
    assert!(text.contains("host cost: "), "{text}");
    // host_cost.c: a warm-up round and 7 timed rounds of 2000 calls, one launch each.
    assert!(
        text.contains("stub driver: 16000 launches"),
        "every call must launch exactly once:\n{text}"
    );
}
