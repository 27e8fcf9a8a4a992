//! `gemm-aot`: the command-line face of the generator.

use clap::{Parser, Subcommand};
use gemm_codegen::compile::{cache::cache_root, toolchain};
use gemm_codegen::explain::{self, Query};
use gemm_codegen::{build, BuildOptions, CompileMode};
use gemm_spec::{DtypeTriple, Op, Policy};
use std::path::PathBuf;
use std::process::ExitCode;

#[derive(Parser)]
#[command(
    name = "gemm-aot",
    version,
    about = "Ahead-of-time compiler for batch-invariant GEMM kernels"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Validate the specs, generate CUDA and Rust, compile every tier, print the kernel table.
    Build {
        /// Spec folder.
        #[arg(long, default_value = "specs")]
        specs: PathBuf,
        /// Output folder (cuda/, cubins/, rust/, report.json).
        #[arg(long, default_value = "gemm-out")]
        out: PathBuf,
        /// Build only these tiers (repeatable); default all.
        #[arg(long = "tier")]
        tiers: Vec<String>,
        /// Generate sources only; skip nvcc.
        #[arg(long)]
        no_cubins: bool,
        /// Fail instead of bootstrapping nvcc when none is found.
        #[arg(long)]
        no_bootstrap: bool,
        /// Parallel nvcc processes (default: the number of cores).
        #[arg(long)]
        jobs: Option<usize>,
    },
    /// Show which route serves a GEMM, why earlier routes did not, and the kernel it launches.
    Explain {
        #[arg(long, default_value = "specs")]
        specs: PathBuf,
        #[arg(long)]
        tier: String,
        /// exact or tensor-core.
        #[arg(long)]
        policy: String,
        /// nn, tn or nt.
        #[arg(long)]
        op: String,
        /// A dtype triple `ab.c.acc` (e.g. bf16.bf16.f32), or one dtype `x` meaning x.x.f32.
        #[arg(long)]
        dtype: String,
        #[arg(short)]
        m: u64,
        #[arg(short)]
        n: u64,
        #[arg(short)]
        k: u64,
    },
    /// List the kernels and routes of the specs.
    List {
        #[arg(long, default_value = "specs")]
        specs: PathBuf,
        #[arg(long = "tier")]
        tiers: Vec<String>,
    },
    /// Other commands run `gemm-aot-<command>` from beside this binary or PATH; `bench` is
    /// `gemm-aot-bench` (crate bench/, which needs the runtime and a GPU).
    #[command(external_subcommand)]
    External(Vec<String>),
    /// Show or install the CUDA compiler gemm-aot uses.
    Toolchain {
        #[command(subcommand)]
        action: ToolchainAction,
    },
}

#[derive(Subcommand)]
enum ToolchainAction {
    /// Which nvcc would be used, and from where.
    Status,
    /// Download, verify and unpack the pinned CUDA 13.0 compiler wheels into the cache.
    Install,
}

fn parse_dtype(s: &str) -> Result<DtypeTriple, String> {
    if let Ok(d) = s.parse::<gemm_spec::Dtype>() {
        return Ok(DtypeTriple::new(d, d, gemm_spec::Dtype::F32));
    }
    s.parse::<DtypeTriple>().map_err(|e| e.to_string())
}

fn run(cli: Cli) -> Result<(), String> {
    let say = |m: &str| eprintln!("gemm-aot: {m}");
    match cli.command {
        Command::Build {
            specs,
            out,
            tiers,
            no_cubins,
            no_bootstrap,
            jobs,
        } => {
            let mut opts = BuildOptions::new(&specs, &out, "gemm-aot build");
            opts.tiers = tiers;
            opts.progress = true;
            opts.compile = if no_cubins {
                CompileMode::NoCubins
            } else {
                CompileMode::Cubins {
                    bootstrap: !no_bootstrap,
                }
            };
            if let Some(j) = jobs {
                opts.jobs = j.max(1);
            }
            let start = std::time::Instant::now();
            let report = build(&opts, &say).map_err(|e| e.to_string())?;
            for w in &report.warnings {
                eprintln!("{w}");
            }
            if let Some(tc) = &report.toolchain {
                println!(
                    "nvcc: {} ({:?}, {})",
                    tc.nvcc.display(),
                    tc.origin,
                    tc.release()
                );
            }
            println!(
                "{:<7} {:<48} {:>5} {:>7} {:>6}  compile",
                "tier", "kernel", "regs", "smem", "spills"
            );
            for k in &report.plan.kernels {
                let r = report.resources.as_ref().map(|r| r[k.id]);
                let tier = report.tiers.iter().find(|t| t.tier == k.tier);
                let compile = match (tier.and_then(|t| t.seconds), &report.resources) {
                    (_, None) => "not compiled".to_string(),
                    (Some(s), _) => format!("{s:.1} s (tier)"),
                    (None, _) => "cached".to_string(),
                };
                let (regs, spills) = r.map_or(("-".into(), "-".into()), |r| {
                    (r.registers.to_string(), r.spill_bytes().to_string())
                });
                println!(
                    "{:<7} {:<48} {:>5} {:>7} {:>6}  {compile}",
                    k.tier,
                    k.name,
                    regs,
                    k.shared_bytes + r.map_or(0, |r| r.static_shared_bytes as u64),
                    spills
                );
            }
            println!(
                "{} kernels in {} tiers; {} files written, {} unchanged, in {}; {:.1} s",
                report.plan.kernels.len(),
                report.tiers.len(),
                report.files_written,
                report.files_unchanged,
                out.display(),
                start.elapsed().as_secs_f64()
            );
            Ok(())
        }
        Command::Explain {
            specs,
            tier,
            policy,
            op,
            dtype,
            m,
            n,
            k,
        } => {
            let (plan, _) = gemm_codegen::pipeline::plan(&specs, &[]).map_err(|e| e.to_string())?;
            let q = Query {
                policy: policy.parse::<Policy>().map_err(|e| e.to_string())?,
                op: op.parse::<Op>().map_err(|e| e.to_string())?,
                dtype: parse_dtype(&dtype)?,
                m,
                n,
                k,
            };
            print!(
                "{}",
                explain::explain(&plan, &tier, &q).map_err(|e| e.to_string())?
            );
            Ok(())
        }
        Command::List { specs, tiers } => {
            let (plan, warnings) =
                gemm_codegen::pipeline::plan(&specs, &tiers).map_err(|e| e.to_string())?;
            for w in &warnings {
                eprintln!("{w}");
            }
            print!("{}", explain::list(&plan));
            Ok(())
        }
        Command::External(argv) => {
            let name = format!(
                "gemm-aot-{}",
                argv.first().map(String::as_str).unwrap_or("")
            );
            let beside = std::env::current_exe()
                .ok()
                .and_then(|p| p.parent().map(|d| d.join(&name)))
                .filter(|p| p.is_file());
            let exe = beside.unwrap_or_else(|| PathBuf::from(&name));
            let status = std::process::Command::new(&exe)
                .args(&argv[1..])
                .status()
                .map_err(|e| {
                    format!("`{name}` could not be run ({e}); for `bench`, build it with `cargo build --release -p gemm-aot-bench`")
                })?;
            if status.success() {
                Ok(())
            } else {
                Err(format!("{name} failed ({status})"))
            }
        }
        Command::Toolchain { action } => {
            let cache = cache_root();
            let tc = match action {
                ToolchainAction::Status => toolchain::find(&cache),
                ToolchainAction::Install => toolchain::find_or_bootstrap(&cache, &say),
            }
            .map_err(|e| e.to_string())?;
            println!("nvcc: {}", tc.nvcc.display());
            println!("from: {:?}", tc.origin);
            println!("release: {}", tc.release());
            println!("cache: {}", cache.display());
            Ok(())
        }
    }
}

fn main() -> ExitCode {
    match run(Cli::parse()) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("gemm-aot: error: {e}");
            ExitCode::FAILURE
        }
    }
}
