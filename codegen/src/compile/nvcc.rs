//! Runs nvcc once per compile unit (a tier's family, or its conversions: one `.cu` and one
//! cubin each, and for tiers that embed PTX the unit's PTX too), in parallel, through the
//! content cache.

use super::cache::{content_key, CubinCache};
use super::toolchain::Toolchain;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;
use std::time::Instant;
use thiserror::Error;

/// One compile unit: its source and the folders its `#include`s resolve in.
#[derive(Clone, Debug)]
pub struct CompileJob {
    pub tier: String,
    /// The unit's name within the tier (a family, or `conversions`).
    pub module: String,
    pub gencode: String,
    /// The `.cu` file; relative paths here and in `include_dirs` are relative to `workdir`.
    pub source: PathBuf,
    pub include_dirs: Vec<PathBuf>,
    /// The folder nvcc runs in (default: the current one). With relative paths, the file
    /// names in nvcc's messages do not depend on where the output is built.
    pub workdir: Option<PathBuf>,
    /// The source and everything it includes, for the cache key (path and text of each file).
    pub inputs: Vec<String>,
    /// The virtual architecture (`compute_80`) to also emit PTX for, so a driver can JIT the
    /// unit on devices newer than the tier's target; `None` for no PTX.
    pub ptx: Option<String>,
}

/// A compiled unit.
#[derive(Clone, Debug)]
pub struct CompiledUnit {
    pub tier: String,
    pub module: String,
    pub cubin: Vec<u8>,
    /// The unit's PTX, when the job asked for it.
    pub ptx: Option<Vec<u8>>,
    pub ptxas_log: String,
    /// Seconds nvcc ran; `None` when the cubin came from the cache.
    pub seconds: Option<f64>,
}

#[derive(Debug, Error)]
pub enum CompileError {
    #[error("nvcc failed on tier {tier} ({source_file}):\n{output}")]
    Nvcc {
        tier: String,
        source_file: String,
        output: String,
    },
    #[error("could not run {nvcc}: {detail}")]
    Spawn { nvcc: String, detail: String },
}

/// The nvcc flags of a tier, minus include folders and file names (part of the cache key).
pub fn flags(gencode: &str) -> Vec<String> {
    [
        "-cubin",
        "-O3",
        "-std=c++17",
        "-gencode",
        gencode,
        "-Xptxas",
        "-v",
        "-Xptxas",
        "-warn-spills",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect()
}

fn compile_one(
    tc: &Toolchain,
    cache: &CubinCache,
    job: &CompileJob,
    scratch: &Path,
) -> Result<CompiledUnit, CompileError> {
    let flags = flags(&job.gencode);
    let mut parts: Vec<&[u8]> = vec![tc.version.as_bytes()];
    let ptx_part = format!("ptx {}", job.ptx.as_deref().unwrap_or("none"));
    parts.push(ptx_part.as_bytes());
    let flag_text = flags.join(" ");
    parts.push(flag_text.as_bytes());
    // The `@generated` line names the command that wrote a file; it does not change the code,
    // so it stays out of the key (the CLI and the runtime's build share cubins).
    let stripped: Vec<String> = job
        .inputs
        .iter()
        .map(|i| {
            i.lines()
                .filter(|l| !l.starts_with("// @generated"))
                .collect::<Vec<_>>()
                .join("\n")
        })
        .collect();
    for i in &stripped {
        parts.push(i.as_bytes());
    }
    let key = content_key(&parts);
    if let Some((cubin, ptx, ptxas_log)) = cache.get(&key, job.ptx.is_some()) {
        return Ok(CompiledUnit {
            tier: job.tier.clone(),
            module: job.module.clone(),
            cubin,
            ptx,
            ptxas_log,
            seconds: None,
        });
    }
    // Absolute: nvcc may run in another folder (`workdir`).
    let scratch = std::path::absolute(scratch).unwrap_or_else(|_| scratch.to_path_buf());
    let out = scratch.join(format!(
        "{}.{}.{}.cubin",
        job.tier,
        job.module,
        std::process::id()
    ));
    let start = Instant::now();
    let nvcc = |extra: &[String], out: &Path| -> Result<(bool, String), CompileError> {
        let mut cmd = Command::new(&tc.nvcc);
        if let Some(dir) = &job.workdir {
            cmd.current_dir(dir);
        }
        cmd.args(extra);
        for d in job.include_dirs.iter().chain(&tc.include_dirs) {
            cmd.arg("-I").arg(d);
        }
        cmd.arg("-o").arg(out).arg(&job.source);
        let result = cmd.output().map_err(|e| CompileError::Spawn {
            nvcc: tc.nvcc.display().to_string(),
            detail: e.to_string(),
        })?;
        let log = format!(
            "{}{}",
            String::from_utf8_lossy(&result.stdout),
            String::from_utf8_lossy(&result.stderr)
        );
        Ok((result.status.success(), log))
    };
    let failed = |output: String| CompileError::Nvcc {
        tier: job.tier.clone(),
        source_file: job.source.display().to_string(),
        output,
    };
    // The PTX of the tier's own virtual architecture is an intermediate of the cubin's
    // compile: nvcc keeps it (-keep) instead of running the front end twice. Another one
    // (compute_100 for an sm_100a tier) needs a compile of its own.
    let keep_dir = scratch.join(format!(
        "{}.{}.{}.keep",
        job.tier,
        job.module,
        std::process::id()
    ));
    let kept = job
        .ptx
        .as_deref()
        .filter(|arch| gencode_arch(&job.gencode) == Some(*arch));
    let mut cubin_flags = flags.clone();
    if kept.is_some() {
        let _ = std::fs::create_dir_all(&keep_dir);
        cubin_flags.extend(["-keep".to_string(), "-keep-dir".to_string()]);
        cubin_flags.push(keep_dir.display().to_string());
    }
    let (ok, log) = nvcc(&cubin_flags, &out)?;
    let cubin = std::fs::read(&out).ok().filter(|_| ok);
    let _ = std::fs::remove_file(&out);
    let kept_ptx = job
        .source
        .file_stem()
        .map(|s| keep_dir.join(format!("{}.ptx", s.to_string_lossy())));
    let ptx = match (&job.ptx, kept, &kept_ptx) {
        (None, _, _) => None,
        (Some(_), Some(_), Some(path)) => std::fs::read(path).ok(),
        (Some(arch), _, _) => {
            let ptx_out = scratch.join(format!(
                "{}.{}.{}.ptx",
                job.tier,
                job.module,
                std::process::id()
            ));
            let ptx_flags = ptx_flags(arch);
            let (ok, ptx_log) = nvcc(&ptx_flags, &ptx_out)?;
            let ptx = std::fs::read(&ptx_out).ok().filter(|_| ok);
            let _ = std::fs::remove_file(&ptx_out);
            if ptx.is_none() {
                return Err(failed(ptx_log));
            }
            ptx
        }
    };
    let _ = std::fs::remove_dir_all(&keep_dir);
    let Some(cubin) = cubin else {
        return Err(failed(log));
    };
    if job.ptx.is_some() && ptx.is_none() {
        return Err(failed(format!("{log}\nnvcc wrote no PTX")));
    }
    cache.put(&key, &cubin, ptx.as_deref(), &log);
    Ok(CompiledUnit {
        tier: job.tier.clone(),
        module: job.module.clone(),
        cubin,
        ptx,
        ptxas_log: log,
        seconds: Some(start.elapsed().as_secs_f64()),
    })
}

/// `compute_80` from `arch=compute_80,code=sm_80`.
fn gencode_arch(gencode: &str) -> Option<&str> {
    gencode
        .split(',')
        .find_map(|part| part.trim().strip_prefix("arch="))
}

/// The nvcc flags that emit a unit's PTX for virtual architecture `arch` alone.
pub fn ptx_flags(arch: &str) -> Vec<String> {
    ["-ptx", "-O3", "-std=c++17", "-arch", arch]
        .iter()
        .map(|s| s.to_string())
        .collect()
}

/// Compiles every job on up to `jobs` threads; `done` is told each unit as it finishes.
/// Returns results in job order, or every error.
pub fn compile_all(
    tc: &Toolchain,
    cache: &CubinCache,
    jobs: &[CompileJob],
    scratch: &Path,
    threads: usize,
    done: &(dyn Fn(&CompiledUnit) + Sync),
) -> Result<Vec<CompiledUnit>, Vec<CompileError>> {
    let next = AtomicUsize::new(0);
    let results: Mutex<Vec<Option<Result<CompiledUnit, CompileError>>>> =
        Mutex::new((0..jobs.len()).map(|_| None).collect());
    std::thread::scope(|s| {
        for _ in 0..threads.clamp(1, jobs.len().max(1)) {
            s.spawn(|| loop {
                let i = next.fetch_add(1, Ordering::SeqCst);
                let Some(job) = jobs.get(i) else { break };
                let r = compile_one(tc, cache, job, scratch);
                if let Ok(t) = &r {
                    done(t);
                }
                if let Ok(mut all) = results.lock() {
                    all[i] = Some(r);
                }
            });
        }
    });
    let all = results.into_inner().unwrap_or_default();
    let mut ok = Vec::new();
    let mut errs = Vec::new();
    for r in all.into_iter().flatten() {
        match r {
            Ok(t) => ok.push(t),
            Err(e) => errs.push(e),
        }
    }
    if errs.is_empty() {
        Ok(ok)
    } else {
        Err(errs)
    }
}
