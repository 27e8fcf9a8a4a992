//! Finding nvcc, and installing the project's own pinned copy when there is none.
//!
//! Discovery order: `NVCC` (path to nvcc), `CUDA_HOME/bin/nvcc`, `nvcc` on `PATH`, then the copy
//! this module bootstraps from the CUDA 13.0 compiler wheels on PyPI into the cache
//! (`GEMM_AOT_CACHE`, else `$XDG_CACHE_HOME/gemm-aot`, else `~/.cache/gemm-aot`). Each wheel's
//! SHA-256 is checked against the pin below before anything is unpacked.

use std::path::{Path, PathBuf};
use std::process::Command;
use thiserror::Error;

/// One pinned wheel of the CUDA 13.0 compiler.
#[derive(Clone, Copy, Debug)]
pub struct PinnedWheel {
    pub package: &'static str,
    pub version: &'static str,
    pub file: &'static str,
    pub sha256: &'static str,
}

/// The compiler wheels, pinned to 13.0.x to match the GPU machine's driver (linux x86_64).
pub const PINNED_WHEELS: [PinnedWheel; 5] = [
    PinnedWheel {
        package: "nvidia-cuda-nvcc",
        version: "13.0.88",
        file: "nvidia_cuda_nvcc-13.0.88-py3-none-manylinux2014_x86_64.manylinux_2_17_x86_64.whl",
        sha256: "56fe502eb77625a12f25172caa3cdddb4e4c8ba2c8c17dba44b164761b380f03",
    },
    PinnedWheel {
        package: "nvidia-cuda-crt",
        version: "13.0.88",
        file: "nvidia_cuda_crt-13.0.88-py3-none-manylinux2014_x86_64.manylinux_2_17_x86_64.whl",
        sha256: "2c8043c7c9e02492716426e9919fc78d2c5b3b2a7a768a88e952676b08aa55a4",
    },
    PinnedWheel {
        package: "nvidia-nvvm",
        version: "13.0.88",
        file: "nvidia_nvvm-13.0.88-py3-none-manylinux2010_x86_64.manylinux_2_12_x86_64.whl",
        sha256: "c5f41ffeb6466944a026dfa5317d7d85355c119bbec279205d22f1869d1054e0",
    },
    PinnedWheel {
        package: "nvidia-cuda-cccl",
        version: "13.0.85",
        file: "nvidia_cuda_cccl-13.0.85-py3-none-manylinux2014_x86_64.manylinux_2_17_x86_64.whl",
        sha256: "e0da7ad981f3a8aff08241b5bfc1af868742a63e2762f53a5171c492ef242649",
    },
    PinnedWheel {
        package: "nvidia-cuda-runtime",
        version: "13.0.96",
        file: "nvidia_cuda_runtime-13.0.96-py3-none-manylinux2014_x86_64.manylinux_2_17_x86_64.whl",
        sha256: "7f82250d7782aa23b6cfe765ecc7db554bd3c2870c43f3d1821f1d18aebf0548",
    },
];

/// Name of the folder the bootstrapped toolchain lives in, under `<cache>/toolchain/`.
pub const BOOTSTRAP_DIR: &str = "cuda-13.0.88";

#[derive(Debug, Error)]
pub enum ToolchainError {
    #[error("{var} is set to {path}, but there is no runnable nvcc there: point it at an nvcc executable or unset it")]
    BadOverride { var: &'static str, path: String },
    #[error("no nvcc found (NVCC, CUDA_HOME, PATH) and bootstrapping is off: run `cargo run -p gemm-codegen --bin gemm-aot -- toolchain install`, or set NVCC=/path/to/nvcc")]
    NotFound,
    #[error("no nvcc found, and bootstrapping one needs Python 3 with pip, which failed: {detail}. Install them (e.g. `apt-get install python3 python3-pip`), or install CUDA 13.0 and set NVCC=/path/to/nvcc")]
    NoPython { detail: String },
    #[error("the pinned CUDA compiler wheels exist for linux x86_64 only; this is {os} {arch}: install CUDA 13.0 and set NVCC=/path/to/nvcc")]
    Unsupported {
        os: &'static str,
        arch: &'static str,
    },
    #[error(
        "downloading the CUDA compiler wheels with pip failed (is PyPI reachable?):\n{output}"
    )]
    Download { output: String },
    #[error("wheel {file} has SHA-256 {actual}, but the pin is {expected}: refusing to install it (nothing was unpacked)")]
    HashMismatch {
        file: String,
        expected: String,
        actual: String,
    },
    #[error("pip did not produce {file}: the pinned wheel may have been removed from PyPI")]
    MissingWheel { file: String },
    #[error("unpacking {file} failed: {detail}")]
    Unpack { file: String, detail: String },
    #[error("{action} {path}: {source}")]
    Io {
        action: &'static str,
        path: String,
        source: std::io::Error,
    },
    #[error("`{nvcc} --version` failed: {detail}")]
    Version { nvcc: String, detail: String },
}

fn io<'a>(
    action: &'static str,
    path: &'a Path,
) -> impl FnOnce(std::io::Error) -> ToolchainError + 'a {
    move |source| ToolchainError::Io {
        action,
        path: path.display().to_string(),
        source,
    }
}

/// Where the nvcc in use came from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Origin {
    NvccVar,
    CudaHome,
    Path,
    Bootstrapped,
}

/// A usable nvcc and what to add to its command line.
#[derive(Clone, Debug)]
pub struct Toolchain {
    pub nvcc: PathBuf,
    pub origin: Origin,
    /// Extra include folders (CCCL's `<nv/target>` lives in `include/cccl` since CUDA 13).
    pub include_dirs: Vec<PathBuf>,
    /// The full `nvcc --version` text; part of every cubin's cache key.
    pub version: String,
}

impl Toolchain {
    fn at(nvcc: PathBuf, origin: Origin) -> Result<Toolchain, ToolchainError> {
        let out =
            Command::new(&nvcc)
                .arg("--version")
                .output()
                .map_err(|e| ToolchainError::Version {
                    nvcc: nvcc.display().to_string(),
                    detail: e.to_string(),
                })?;
        if !out.status.success() {
            return Err(ToolchainError::Version {
                nvcc: nvcc.display().to_string(),
                detail: String::from_utf8_lossy(&out.stderr).into_owned(),
            });
        }
        let version = String::from_utf8_lossy(&out.stdout).trim().to_string();
        let mut include_dirs = Vec::new();
        if let Some(root) = nvcc.parent().and_then(Path::parent) {
            let cccl = root.join("include").join("cccl");
            if cccl.is_dir() {
                include_dirs.push(cccl);
            }
        }
        Ok(Toolchain {
            nvcc,
            origin,
            include_dirs,
            version,
        })
    }

    /// `release 13.0, V13.0.88` out of the version text.
    pub fn release(&self) -> &str {
        self.version
            .lines()
            .find_map(|l| l.split("compilation tools, ").nth(1))
            .unwrap_or("unknown release")
    }
}

fn on_path(exe: &str) -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .map(|d| d.join(exe))
        .find(|p| p.is_file())
}

fn bootstrapped_nvcc(cache: &Path) -> PathBuf {
    cache
        .join("toolchain")
        .join(BOOTSTRAP_DIR)
        .join("nvidia/cu13/bin/nvcc")
}

/// Finds nvcc without installing anything.
pub fn find(cache: &Path) -> Result<Toolchain, ToolchainError> {
    if let Some(v) = std::env::var_os("NVCC").filter(|v| !v.is_empty()) {
        let p = PathBuf::from(&v);
        return Toolchain::at(p, Origin::NvccVar).map_err(|_| ToolchainError::BadOverride {
            var: "NVCC",
            path: v.to_string_lossy().into_owned(),
        });
    }
    if let Some(v) = std::env::var_os("CUDA_HOME").filter(|v| !v.is_empty()) {
        let p = PathBuf::from(&v).join("bin").join("nvcc");
        return Toolchain::at(p, Origin::CudaHome).map_err(|_| ToolchainError::BadOverride {
            var: "CUDA_HOME",
            path: v.to_string_lossy().into_owned(),
        });
    }
    if let Some(p) = on_path("nvcc") {
        return Toolchain::at(p, Origin::Path);
    }
    let own = bootstrapped_nvcc(cache);
    if own.is_file() {
        return Toolchain::at(own, Origin::Bootstrapped);
    }
    Err(ToolchainError::NotFound)
}

/// Finds nvcc, bootstrapping the pinned wheels into `cache` when none is found.
pub fn find_or_bootstrap(cache: &Path, say: &dyn Fn(&str)) -> Result<Toolchain, ToolchainError> {
    match find(cache) {
        Err(ToolchainError::NotFound) => {
            bootstrap(cache, say)?;
            Toolchain::at(bootstrapped_nvcc(cache), Origin::Bootstrapped)
        }
        other => other,
    }
}

fn sha256_file(path: &Path) -> Result<String, ToolchainError> {
    use sha2::{Digest, Sha256};
    use std::io::Read;
    let mut f = std::fs::File::open(path).map_err(io("open", path))?;
    let mut h = Sha256::new();
    let mut buf = vec![0u8; 1 << 20];
    loop {
        let n = f.read(&mut buf).map_err(io("read", path))?;
        if n == 0 {
            break;
        }
        h.update(&buf[..n]);
    }
    Ok(super::cache::hex(&h.finalize()))
}

fn python() -> Result<String, ToolchainError> {
    let py = std::env::var("PYTHON").unwrap_or_else(|_| "python3".into());
    let out = Command::new(&py)
        .args(["-m", "pip", "--version"])
        .output()
        .map_err(|e| ToolchainError::NoPython {
            detail: format!("`{py}` could not be run ({e})"),
        })?;
    if !out.status.success() {
        return Err(ToolchainError::NoPython {
            detail: format!(
                "`{py} -m pip --version` failed: {}",
                String::from_utf8_lossy(&out.stderr).trim()
            ),
        });
    }
    Ok(py)
}

/// Checks every wheel in `dir` against its pin; returns nothing unless all match.
pub fn verify_wheels(dir: &Path) -> Result<(), ToolchainError> {
    for w in &PINNED_WHEELS {
        let path = dir.join(w.file);
        if !path.is_file() {
            return Err(ToolchainError::MissingWheel {
                file: w.file.to_string(),
            });
        }
        let actual = sha256_file(&path)?;
        if actual != w.sha256 {
            return Err(ToolchainError::HashMismatch {
                file: w.file.to_string(),
                expected: w.sha256.to_string(),
                actual,
            });
        }
    }
    Ok(())
}

/// Downloads, verifies and unpacks the pinned wheels into `<cache>/toolchain/cuda-13.0.88`.
/// Concurrent callers (parallel builds) serialize on a lock file; the folder appears atomically.
pub fn bootstrap(cache: &Path, say: &dyn Fn(&str)) -> Result<(), ToolchainError> {
    if !(cfg!(target_os = "linux") && cfg!(target_arch = "x86_64")) {
        return Err(ToolchainError::Unsupported {
            os: std::env::consts::OS,
            arch: std::env::consts::ARCH,
        });
    }
    let root = cache.join("toolchain");
    std::fs::create_dir_all(&root).map_err(io("create", &root))?;
    let lock_path = root.join(".lock");
    let lock = std::fs::File::create(&lock_path).map_err(io("create", &lock_path))?;
    lock.lock().map_err(io("lock", &lock_path))?;
    let done = root.join(BOOTSTRAP_DIR);
    if bootstrapped_nvcc(cache).is_file() {
        return Ok(());
    }
    let py = python()?;
    let staging = root.join(format!(".staging-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&staging);
    let wheels = staging.join("wheels");
    let unpacked = staging.join("root");
    std::fs::create_dir_all(&wheels).map_err(io("create", &wheels))?;
    say("downloading the pinned CUDA 13.0 compiler wheels from PyPI (about 100 MB)");
    let mut cmd = Command::new(&py);
    cmd.args([
        "-m",
        "pip",
        "download",
        "--no-deps",
        "--only-binary=:all:",
        "--disable-pip-version-check",
        "--quiet",
    ]);
    for plat in [
        "manylinux2014_x86_64",
        "manylinux_2_17_x86_64",
        "manylinux2010_x86_64",
        "manylinux_2_12_x86_64",
    ] {
        cmd.args(["--platform", plat]);
    }
    cmd.arg("-d").arg(&wheels);
    for w in &PINNED_WHEELS {
        cmd.arg(format!("{}=={}", w.package, w.version));
    }
    let out = cmd.output().map_err(io("run pip for", &wheels))?;
    if !out.status.success() {
        let _ = std::fs::remove_dir_all(&staging);
        return Err(ToolchainError::Download {
            output: format!(
                "{}{}",
                String::from_utf8_lossy(&out.stdout),
                String::from_utf8_lossy(&out.stderr)
            ),
        });
    }
    say("checking SHA-256 of each wheel against the pins");
    if let Err(e) = verify_wheels(&wheels) {
        let _ = std::fs::remove_dir_all(&staging);
        return Err(e);
    }
    say("unpacking");
    for w in &PINNED_WHEELS {
        let out = Command::new(&py)
            .args(["-m", "zipfile", "-e"])
            .arg(wheels.join(w.file))
            .arg(&unpacked)
            .output()
            .map_err(io("run python zipfile for", &unpacked))?;
        if !out.status.success() {
            let _ = std::fs::remove_dir_all(&staging);
            return Err(ToolchainError::Unpack {
                file: w.file.to_string(),
                detail: String::from_utf8_lossy(&out.stderr).into_owned(),
            });
        }
    }
    // zip does not keep the executable bit.
    #[cfg(unix)]
    for sub in ["nvidia/cu13/bin", "nvidia/cu13/nvvm/bin"] {
        let dir = unpacked.join(sub);
        for entry in std::fs::read_dir(&dir).map_err(io("list", &dir))? {
            let p = entry.map_err(io("list", &dir))?.path();
            if p.is_file() {
                use std::os::unix::fs::PermissionsExt;
                std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o755))
                    .map_err(io("chmod", &p))?;
            }
        }
    }
    let _ = std::fs::remove_dir_all(&done);
    std::fs::rename(&unpacked, &done).map_err(io("move into place", &done))?;
    let _ = std::fs::remove_dir_all(&staging);
    say("CUDA 13.0 compiler installed");
    Ok(())
}
