//! Runs nvcc once per compile unit (a tier's family, or its conversions: one `.cu` and one
//! cubin each), in parallel, through the content cache.

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
}

/// A compiled unit.
#[derive(Clone, Debug)]
pub struct CompiledUnit {
    pub tier: String,
    pub module: String,
    pub cubin: Vec<u8>,
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
    if let Some((cubin, ptxas_log)) = cache.get(&key) {
        return Ok(CompiledUnit {
            tier: job.tier.clone(),
            module: job.module.clone(),
            cubin,
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
    let mut cmd = Command::new(&tc.nvcc);
    if let Some(dir) = &job.workdir {
        cmd.current_dir(dir);
    }
    cmd.args(&flags);
    for d in job.include_dirs.iter().chain(&tc.include_dirs) {
        cmd.arg("-I").arg(d);
    }
    cmd.arg("-o").arg(&out).arg(&job.source);
    let result = cmd.output().map_err(|e| CompileError::Spawn {
        nvcc: tc.nvcc.display().to_string(),
        detail: e.to_string(),
    })?;
    let log = format!(
        "{}{}",
        String::from_utf8_lossy(&result.stdout),
        String::from_utf8_lossy(&result.stderr)
    );
    let cubin = std::fs::read(&out).ok().filter(|_| result.status.success());
    let _ = std::fs::remove_file(&out);
    let Some(cubin) = cubin else {
        return Err(CompileError::Nvcc {
            tier: job.tier.clone(),
            source_file: job.source.display().to_string(),
            output: log,
        });
    };
    cache.put(&key, &cubin, &log);
    Ok(CompiledUnit {
        tier: job.tier.clone(),
        module: job.module.clone(),
        cubin,
        ptxas_log: log,
        seconds: Some(start.elapsed().as_secs_f64()),
    })
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
