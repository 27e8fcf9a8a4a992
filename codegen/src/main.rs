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
    ///
    /// The output is assembled in a staging folder beside --out and replaces it only when every
    /// step succeeded (validation, generation, nvcc for every tier, resource checks): a failed
    /// build leaves the old output byte for byte. The new output is complete, so files of tiers
    /// no longer built are removed; files whose bytes did not change keep their time, and a
    /// rebuild that changes nothing touches nothing.
    Build {
        /// Spec folder.
        #[arg(long, default_value = "specs")]
        specs: PathBuf,
        /// Output folder (cuda/, cubins/, rust/, report.json); a folder holding anything else
        /// is never replaced.
        #[arg(long, default_value = "gemm-out")]
        out: PathBuf,
        /// Build only these tiers (repeatable; default all). Every spec is still validated, but
        /// the output then holds only these tiers: their sources, cubins, Rust tables and
        /// report; other tiers' files are removed from it.
        #[arg(long = "tier")]
        tiers: Vec<String>,
        /// Generate sources, Rust and report only; skip nvcc. cubins/ is left as it was (a tier
        /// without a cubin gets an empty one) and the Rust says no cubins are present.
        #[arg(long)]
        no_cubins: bool,
        /// Fail instead of bootstrapping nvcc when none is found.
        #[arg(long)]
        no_bootstrap: bool,
        /// Parallel nvcc processes (default: the number of cores).
        #[arg(long)]
        jobs: Option<usize>,
        /// A test build: seeded delays at every pipeline step of the asynchronous templates
        /// (docs/timing.md). Its tables say so and the runtime sets the seed; never ship it.
        #[arg(long)]
        perturb_timing: bool,
        /// A templates folder (headers and kind manifests) to use instead of the generator's own
        /// copy of kernels-templates/: kernel kinds from files alone.
        #[arg(long, conflicts_with = "extra_templates")]
        templates: Option<PathBuf>,
        /// A folder of kernel kinds (templates and their manifests) added to the generator's own.
        #[arg(long)]
        extra_templates: Option<PathBuf>,
        /// Add the shipped instructions, contracts, ABIs, conversions and families beside the
        /// folder's own files (a folder then needs only its tiers and what it adds).
        #[arg(long)]
        shipped_definitions: bool,
    },
    /// Show which route serves a GEMM, why earlier routes did not, and the kernel it launches.
    Explain {
        #[arg(long, default_value = "specs")]
        specs: PathBuf,
        /// A templates folder (headers and kind manifests) to use instead of the generator's own
        /// copy of kernels-templates/: kernel kinds from files alone.
        #[arg(long, conflicts_with = "extra_templates")]
        templates: Option<PathBuf>,
        /// A folder of kernel kinds (templates and their manifests) added to the generator's own.
        #[arg(long)]
        extra_templates: Option<PathBuf>,
        /// Add the shipped instructions, contracts, ABIs, conversions and families beside the
        /// folder's own files (a folder then needs only its tiers and what it adds).
        #[arg(long)]
        shipped_definitions: bool,
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
        /// SMs of the device: names the kernel a route's `wave_fit` picks there (one CTA of
        /// each kernel an SM; 132 on an H100 SXM or H200).
        #[arg(long)]
        sms: Option<u32>,
    },
    /// List the kernels and routes of the specs.
    List {
        #[arg(long, default_value = "specs")]
        specs: PathBuf,
        /// A templates folder (headers and kind manifests) to use instead of the generator's own
        /// copy of kernels-templates/: kernel kinds from files alone.
        #[arg(long, conflicts_with = "extra_templates")]
        templates: Option<PathBuf>,
        /// A folder of kernel kinds (templates and their manifests) added to the generator's own.
        #[arg(long)]
        extra_templates: Option<PathBuf>,
        /// Add the shipped instructions, contracts, ABIs, conversions and families beside the
        /// folder's own files (a folder then needs only its tiers and what it adds).
        #[arg(long)]
        shipped_definitions: bool,
        #[arg(long = "tier")]
        tiers: Vec<String>,
    },
    /// Other commands run `gemm-aot-<command>` from beside this binary or PATH: `bench` is
    /// `gemm-aot-bench` (crate bench/), `tune` is `gemm-aot-tune` (crate tune/); both need the
    /// runtime and a GPU.
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

/// The templates the command line names.
fn templates_of(folder: Option<PathBuf>, extra: Option<PathBuf>) -> gemm_codegen::Templates {
    match (folder, extra) {
        (Some(f), _) => gemm_codegen::Templates::Folder(f),
        (None, Some(e)) => gemm_codegen::Templates::ShippedAnd(e),
        (None, None) => gemm_codegen::Templates::Shipped,
    }
}

fn parse_dtype(s: &str) -> Result<DtypeTriple, String> {
    if let Ok(d) = s.parse::<gemm_spec::Dtype>() {
        return Ok(DtypeTriple::new(d, d, gemm_spec::Dtype::F32));
    }
    s.parse::<DtypeTriple>().map_err(|e| e.to_string())
}

/// The commands, built in and forwarded.
const COMMANDS: [&str; 6] = ["build", "explain", "list", "toolchain", "bench", "tune"];

/// The command closest to a typo, when one is close (at most a third of its letters off, or
/// the typo is a prefix of it).
fn closest_command(typo: &str) -> Option<&'static str> {
    COMMANDS
        .iter()
        .map(|c| (gemm_spec::spelling::edit_distance(typo, c), *c))
        .filter(|(d, c)| *d <= (c.len() / 3).max(1) || (typo.len() >= 2 && c.starts_with(typo)))
        .min()
        .map(|(_, c)| c)
}

fn unknown_command(typo: &str) -> String {
    let known = COMMANDS.join(", ");
    match closest_command(typo) {
        Some(c) => format!("unknown command `{typo}`: did you mean `{c}`? (commands: {known})"),
        None => format!("unknown command `{typo}` (commands: {known}; see `gemm-aot --help`)"),
    }
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
            perturb_timing,
            templates,
            extra_templates,
            shipped_definitions,
        } => {
            let mut opts = BuildOptions::new(&specs, &out, "gemm-aot build");
            opts.tiers = tiers;
            opts.templates = templates_of(templates, extra_templates);
            opts.shipped_definitions = shipped_definitions;
            opts.instrumentation.timing_perturbation = perturb_timing;
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
            for w in &report.compile_warnings {
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
            for k in &report.catalog.kernels {
                let r = report.resources.as_ref().and_then(|r| r.get(k.id).copied());
                let unit = report
                    .tiers
                    .iter()
                    .find(|t| t.tier == k.tier)
                    .and_then(|t| t.units.get(k.module));
                let compile = match (unit.and_then(|u| u.seconds), &report.resources) {
                    (_, None) => "not compiled".to_string(),
                    (Some(s), _) => format!(
                        "{s:.1} s ({}/{}.cu)",
                        k.tier,
                        unit.map_or("", |u| u.module.as_str())
                    ),
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
            if let Some(nc) = &report.no_cubins {
                let mut line = format!(
                    "--no-cubins: generated sources and Rust only; cubins/ left as it was ({} files)",
                    nc.kept
                );
                if !nc.placeholders.is_empty() {
                    line += &format!(
                        ", empty placeholder for {} (no cubin yet)",
                        nc.placeholders.join(", ")
                    );
                }
                println!("{line}; the Rust says no cubins are present");
            }
            let removed = if report.files_removed > 0 {
                format!(", {} removed", report.files_removed)
            } else {
                String::new()
            };
            println!(
                "{} kernels in {} tiers; {} files written, {} unchanged{removed}, in {}; {:.1} s",
                report.catalog.kernels.len(),
                report.tiers.len(),
                report.files_written,
                report.files_unchanged,
                out.display(),
                start.elapsed().as_secs_f64()
            );
            if !report.compile_warnings.is_empty() {
                println!(
                    "{} compiler warning(s), on stderr and in report.json",
                    report.compile_warnings.len()
                );
            }
            Ok(())
        }
        Command::Explain {
            specs,
            templates,
            extra_templates,
            shipped_definitions,
            tier,
            policy,
            op,
            dtype,
            m,
            n,
            k,
            sms,
        } => {
            let files =
                gemm_codegen::pipeline::template_files(&templates_of(templates, extra_templates))
                    .map_err(|e| e.to_string())?;
            let (catalog, _) = gemm_codegen::pipeline::validate_and_catalog(
                &specs,
                &[],
                &files,
                shipped_definitions,
            )
            .map_err(|e| e.to_string())?;
            let q = Query {
                policy: policy.parse::<Policy>().map_err(|e| e.to_string())?,
                op: op.parse::<Op>().map_err(|e| e.to_string())?,
                dtype: parse_dtype(&dtype)?,
                m,
                n,
                k,
                sms,
            };
            print!(
                "{}",
                explain::explain(&catalog, &tier, &q).map_err(|e| e.to_string())?
            );
            Ok(())
        }
        Command::List {
            specs,
            templates,
            extra_templates,
            shipped_definitions,
            tiers,
        } => {
            let files =
                gemm_codegen::pipeline::template_files(&templates_of(templates, extra_templates))
                    .map_err(|e| e.to_string())?;
            let (plan, warnings) = gemm_codegen::pipeline::validate_and_catalog(
                &specs,
                &tiers,
                &files,
                shipped_definitions,
            )
            .map_err(|e| e.to_string())?;
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
            let command = argv.first().map(String::as_str).unwrap_or("");
            let status = match std::process::Command::new(&exe)
                .args(argv.get(1..).unwrap_or_default())
                .status()
            {
                Ok(status) => status,
                Err(e)
                    if e.kind() == std::io::ErrorKind::NotFound
                        && !matches!(command, "bench" | "tune") =>
                {
                    return Err(unknown_command(command));
                }
                Err(e) => {
                    return Err(format!("`{name}` could not be run ({e}); build it with `cargo build --release -p {name}` (bench and tune need the runtime and a GPU)"));
                }
            };
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn typos_get_the_closest_command() {
        assert_eq!(closest_command("biuld"), Some("build"));
        assert_eq!(closest_command("buid"), Some("build"));
        assert_eq!(closest_command("expalin"), Some("explain"));
        assert_eq!(closest_command("lst"), Some("list"));
        assert_eq!(closest_command("tool"), Some("toolchain"));
        assert_eq!(closest_command("bnech"), Some("bench"));
        assert_eq!(closest_command("frobnicate"), None);
    }
}
