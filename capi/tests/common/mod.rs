//! What the C library's tests share: where the repository and this build's `libgemm_aot.so`
//! are, found at run time (the GPU runner runs the tests from elsewhere; never a compile-time
//! path).

use std::path::PathBuf;

/// The repository root, found from the working directory (tests run in their crate's folder;
/// the GPU runner runs them from another crate's), never from a compile-time path.
pub fn repo_root() -> PathBuf {
    let mut dir = std::env::current_dir().unwrap();
    loop {
        if dir.join("capi/include/gemm_aot.h").is_file() {
            return dir;
        }
        assert!(
            dir.pop(),
            "no capi/include/gemm_aot.h above the working directory"
        );
    }
}

/// The folder of `libgemm_aot.so`: beside this test's executable (cargo's deps folder), or,
/// on the GPU machine, `.device/fronts` (python/pack-device.sh's, unpacked by
/// bench/gpu-run.sh's fronts step).
pub fn library_dir() -> PathBuf {
    let exe = std::env::current_exe().unwrap();
    let dir = exe.parent().unwrap();
    let fronts = repo_root().join(".device/fronts");
    for d in [dir, dir.parent().unwrap_or(dir), fronts.as_path()] {
        if d.join("libgemm_aot.so").is_file() {
            return d.to_path_buf();
        }
    }
    panic!(
        "no libgemm_aot.so beside {} nor in {} (run python/pack-device.sh, then the fronts step)",
        exe.display(),
        fronts.display()
    );
}
