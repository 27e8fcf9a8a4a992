//! `gemm-aot-tune` (`gemm-aot tune ...`): on a GPU machine, times the candidate kernels of each
//! (n, k) and m range of a shape list for one tier, and writes the fastest as a routes file
//! the tier includes (docs/tuning.md). The choices and every time go to `--json`.

mod gpu_timer;

use clap::Parser;
use gemm_aot_tune::{
    check_only, date, report, rewritten_name, routes_file, tune, Buckets, Options, Provenance,
    RecordedTimer, ShapeList,
};
use gemm_spec::{Dtype, Op, Policy};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

#[derive(Parser, Debug)]
#[command(
    name = "gemm-aot tune",
    about = "Time the candidate kernels of each (n, k) and m range of a shape list on this GPU and write the fastest as a routes file"
)]
struct Cli {
    /// The tier to tune (the device must run it).
    #[arg(long)]
    tier: String,
    /// The shape list (the format of bench/shapes/models.toml).
    #[arg(long)]
    shapes: PathBuf,
    /// The routes file to write (default: <specs>/<tier>.tuned.toml). Written only when a
    /// kernel beats the routing; when the tier includes it, its routes are the earlier tuning.
    #[arg(long)]
    out: Option<PathBuf>,
    /// Write every time and choice to this JSON file.
    #[arg(long)]
    json: Option<PathBuf>,
    /// How much faster (0.03: 3%) a kernel must be than the routed one to replace it.
    #[arg(long, default_value_t = 0.03)]
    threshold: f64,
    /// Timed launches a measurement (the median is kept).
    #[arg(long, default_value_t = 20)]
    reps: usize,
    /// The spec folder the tier is read from.
    #[arg(long, default_value = "specs")]
    specs: PathBuf,
    /// Ops to tune, each at the list's (n, k): nn (y = x·W), nt, tn.
    #[arg(long, value_delimiter = ',', default_value = "nn")]
    op: Vec<String>,
    /// Operand type timed: bf16, f16 or f32 (f32 is the exact policy's own, and TF32 under the
    /// tensor-core policy); C the same for nn and nt, f32 for tn.
    #[arg(long, default_value = "bf16")]
    dtype: String,
    /// The policy whose routes are tuned.
    #[arg(long, default_value = "tensor-core")]
    policy: String,
    /// Upper edges of the m buckets (one kernel is chosen per (n, k) and bucket).
    #[arg(
        long,
        value_delimiter = ',',
        default_value = "16,32,64,128,256,512,1024,2048"
    )]
    buckets: Vec<u64>,
    /// CUDA device ordinal.
    #[arg(long, default_value_t = 0)]
    device: usize,
    /// Start no (op, n, k) after this many seconds: what was measured is written, and the
    /// shapes not reached keep their routes from the earlier file (a GPU session's limit).
    #[arg(long)]
    time_limit: Option<f64>,
    /// Time only the m buckets that reach this m (a prefill's, say): the buckets below it keep
    /// their routes from the earlier file untimed.
    #[arg(long)]
    from_m: Option<u64>,
    /// Rounds of timing a winner again against the routed kernel, in turns, before it replaces
    /// it (0: none): the median of the rounds must still beat the threshold. Ignored with
    /// --recorded, whose times cannot be measured again.
    #[arg(long, default_value_t = 3)]
    confirm: u32,
    /// Time only these candidates (tile names such as mid2, or family.tile; default: every
    /// candidate of a region's contract). The routed kernels are timed and stay candidates
    /// whatever this says: new tiles against the routing in a short session.
    #[arg(long, value_delimiter = ',')]
    only: Vec<String>,
    /// Time nothing: read the times from this earlier run's --json report and choose again
    /// (after the tier's own routes or the buckets changed; no GPU needed). A kernel that run
    /// did not time is skipped.
    #[arg(long, conflicts_with_all = ["time_limit", "device", "reps"])]
    recorded: Option<PathBuf>,
}

fn options(cli: &Cli, rewritten: Option<String>) -> Result<Options, String> {
    let ops = cli
        .op
        .iter()
        .map(|o| o.parse::<Op>().map_err(|e| e.to_string()))
        .collect::<Result<Vec<_>, _>>()?;
    Ok(Options {
        tier: cli.tier.clone(),
        policy: cli.policy.parse::<Policy>().map_err(|e| e.to_string())?,
        ops,
        input: cli.dtype.parse::<Dtype>().map_err(|e| e.to_string())?,
        buckets: Buckets::from_edges(&cli.buckets).map_err(|e| e.to_string())?,
        threshold: cli.threshold,
        rewritten,
        progress: true,
        time_limit: match cli.time_limit {
            Some(s) if !(s.is_finite() && s >= 0.0) => {
                return Err(format!(
                    "--time-limit {s}: give a number of seconds, 0 or more"
                ))
            }
            s => s.map(std::time::Duration::from_secs_f64),
        },
        from_m: cli.from_m,
        confirm: cli.confirm,
        only: cli.only.clone(),
    })
}

/// The name the tier should list the file under: relative to the spec folder when it lies in
/// it, else its file name.
fn listed_name(specs: &Path, out: &Path) -> String {
    let rel = specs
        .canonicalize()
        .ok()
        .zip(out.parent().and_then(|p| p.canonicalize().ok()))
        .and_then(|(s, dir)| dir.strip_prefix(s).ok().map(Path::to_path_buf));
    let file = out
        .file_name()
        .map(|f| f.to_string_lossy().into_owned())
        .unwrap_or_default();
    match rel {
        Some(dir) if !dir.as_os_str().is_empty() => {
            format!("{}/{file}", dir.to_string_lossy().replace('\\', "/"))
        }
        _ => file,
    }
}

fn write(path: &Path, text: &str) -> Result<(), String> {
    std::fs::write(path, text).map_err(|e| format!("cannot write {}: {e}", path.display()))
}

/// Where the times come from: this GPU, or an earlier run's report.
/// How a recorded report is named in messages and in the provenance comment of the routes
/// file it chooses (a file that is committed): relative to the working folder when it lies
/// inside it, else by its file name alone, so no path of the machine that ran the tuner lands
/// in the specs.
fn provenance_name(path: &std::path::Path) -> String {
    let inside = std::env::current_dir()
        .ok()
        .and_then(|cwd| path.strip_prefix(cwd).ok().map(|p| p.to_path_buf()));
    match inside {
        Some(rel) => rel.display().to_string(),
        None if path.is_relative() && !path.starts_with("..") => path.display().to_string(),
        None => path.file_name().map_or_else(
            || path.display().to_string(),
            |f| f.to_string_lossy().into_owned(),
        ),
    }
}

enum Clock<'s> {
    Gpu(Box<gpu_timer::GpuTimer<'s>>),
    Recorded(RecordedTimer),
}

impl<'s> Clock<'s> {
    fn open(cli: &Cli, specs: &'s gemm_spec::SpecSet) -> Result<Clock<'s>, String> {
        match &cli.recorded {
            Some(path) => {
                let text = std::fs::read_to_string(path)
                    .map_err(|e| format!("cannot read {}: {e}", path.display()))?;
                let r = RecordedTimer::from_report(&text, &provenance_name(path))
                    .map_err(|e| e.to_string())?;
                eprintln!("reading {} recorded times from {}", r.len(), path.display());
                Ok(Clock::Recorded(r))
            }
            None => Ok(Clock::Gpu(Box::new(gpu_timer::GpuTimer::open(
                cli.device, specs, &cli.tier, cli.reps,
            )?))),
        }
    }

    fn device_name(&self) -> String {
        match self {
            Clock::Gpu(g) => g.device_name(),
            Clock::Recorded(r) => r.device().to_string(),
        }
    }

    fn timer(&mut self) -> &mut (dyn gemm_aot_tune::Timer + 's) {
        match self {
            Clock::Gpu(g) => g.as_mut(),
            Clock::Recorded(r) => r,
        }
    }
}

fn run(cli: Cli) -> Result<(), String> {
    let specs = gemm_codegen::pipeline::load_specs(&cli.specs).map_err(|e| e.to_string())?;
    let tier = specs.tier(&cli.tier).ok_or_else(|| {
        let known: Vec<&str> = specs.tiers.iter().map(|t| t.name.as_str()).collect();
        format!(
            "no tier named {} in {}; it defines {}",
            cli.tier,
            cli.specs.display(),
            known.join(", ")
        )
    })?;
    let shapes = ShapeList::load(&cli.shapes).map_err(|e| e.to_string())?;
    let out = cli
        .out
        .clone()
        .unwrap_or_else(|| cli.specs.join(format!("{}.tuned.toml", cli.tier)));
    let rewritten = rewritten_name(&cli.specs, tier, &out);
    if rewritten.is_none() && out.exists() {
        eprintln!(
            "note: tier {} does not include {} (routes_files); it is timed against the tier's routing and replaced if a kernel beats it",
            cli.tier,
            out.display()
        );
    }
    let mut opts = options(&cli, rewritten.clone())?;
    if opts.from_m.is_some() && rewritten.is_none() {
        return Err(format!(
            "--from-m keeps the routes below it from the routes file being rewritten, but tier {} does not include {} (routes_files): the routes below it would be lost",
            cli.tier,
            out.display()
        ));
    }
    check_only(&specs, &opts).map_err(|e| e.to_string())?;
    let mut clock = Clock::open(&cli, &specs)?;
    if let Clock::Recorded(r) = &clock {
        match (opts.from_m, r.from_m()) {
            (None, Some(m)) => {
                eprintln!(
                    "note: the recorded run timed only from m = {m} (--from-m): so does this one"
                );
                opts.from_m = Some(m);
            }
            (Some(a), Some(b)) if a < b => {
                return Err(format!(
                "--from-m {a}: the recorded run timed only from m = {b}; give --from-m {b} or more"
            ))
            }
            _ => {}
        }
        if opts.only.is_empty() && !r.only().is_empty() {
            eprintln!(
                "note: the recorded run timed only {} besides the routed kernels (--only): so does this one",
                r.only().join(",")
            );
            opts.only = r.only().to_vec();
        }
    }
    let device = clock.device_name();
    eprintln!(
        "tuning tier {} on {device}: {} (n, k) x {} m ranges of {}",
        cli.tier,
        shapes.shapes.len(),
        opts.buckets.labels().len(),
        cli.shapes.display()
    );
    let tuning = tune(&specs, &shapes, &opts, clock.timer()).map_err(|e| e.to_string())?;
    let file = rewritten
        .clone()
        .unwrap_or_else(|| listed_name(&cli.specs, &out));
    let shapes_name = cli.shapes.display().to_string();
    let provenance = match &clock {
        Clock::Recorded(r) => r.provenance(shapes_name, file),
        Clock::Gpu(_) => Provenance {
            shapes: shapes_name,
            date: date::today(),
            device,
            method: format!(
                "CUDA events, {} warm-up launches, median of up to {} launches, 2-8 rotating input sets",
                4, cli.reps
            ),
            file,
        },
    };
    if !tuning.unreached.is_empty() {
        let names: Vec<String> = tuning
            .unreached
            .iter()
            .map(|(op, n, k)| format!("{op} {n}x{k}"))
            .collect();
        eprintln!(
            "gemm-aot tune: the time limit passed before {} (op, n, k), which keep their earlier routes: {}",
            names.len(),
            names.join(", ")
        );
    }
    for r in tuning.regions.iter().filter(|r| r.chosen.is_some()) {
        println!(
            "{} n = {}, k = {}, m {}: {}",
            r.op,
            r.n,
            r.k,
            r.m.label(),
            r.decision
        );
    }
    // Rewriting the tier's file: the routes of ops not tuned now stay (NN, NT and TN may be
    // tuned in separate runs into one file).
    let earlier = rewritten
        .as_ref()
        .and_then(|_| std::fs::read_to_string(&out).ok())
        .unwrap_or_default();
    let retuned = |op, n, k| tuning.retuned(op, n, k);
    let kept_ops = gemm_aot_tune::routes_text::kept_ops(&earlier, retuned);
    let written = match routes_file(&tuning, &provenance) {
        Some(text) => {
            let note = (!kept_ops.is_empty()).then(|| {
                let ops: Vec<String> = kept_ops.iter().map(|o| o.to_string()).collect();
                let tuned = opts
                    .ops
                    .iter()
                    .map(|o| o.to_string())
                    .collect::<Vec<_>>()
                    .join(", ");
                let stopped = if tuning.unreached.is_empty() {
                    String::new()
                } else {
                    format!(
                        ", and stopped at its time limit before {} (n, k)",
                        tuning.unreached.len()
                    )
                };
                format!(
                    "This run tuned {tuned} over its shape list{stopped}; the other sections ({} routes) are the earlier file's, verbatim, and their comments carry their own times; so are the routes of another dtype or policy inside the sections it rewrote. Sections are in (op, n, k) order, whichever run wrote them.",
                    ops.join(", "),
                )
            });
            // The routes of the earlier file this run did not tune (another dtype's) stay.
            let tuned_lines = rewritten
                .as_deref()
                .map(|file| tuning.tuned_route_lines(tier, file))
                .unwrap_or_default();
            let text = gemm_aot_tune::routes_text::assembled(
                &text,
                &earlier,
                retuned,
                |line| !tuned_lines.contains(&line),
                note.as_deref(),
            );
            write(&out, &text)?;
            println!(
                "wrote {}: {} routes; include it with routes_files = [\"{}\"] in tier {} (docs/tuning.md)",
                out.display(),
                tuning.routes.len(),
                provenance.file,
                cli.tier
            );
            Some(out.display().to_string())
        }
        None => {
            println!(
                "no kernel beats the routing by more than {:.1}% anywhere: {} not written",
                100.0 * cli.threshold,
                out.display()
            );
            None
        }
    };
    if let Some(json) = &cli.json {
        let doc = report(&tuning, &provenance, written.as_deref());
        let text = serde_json::to_string_pretty(&doc).map_err(|e| e.to_string())? + "\n";
        write(json, &text)?;
        println!("wrote {}", json.display());
    }
    Ok(())
}

fn main() -> ExitCode {
    match run(Cli::parse()) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("gemm-aot tune: error: {e}");
            ExitCode::FAILURE
        }
    }
}

#[cfg(test)]
mod tests {
    use super::provenance_name;
    use std::path::Path;

    #[test]
    fn a_recorded_report_is_named_without_the_machines_paths() {
        let cwd = std::env::current_dir().unwrap();
        assert_eq!(
            provenance_name(&cwd.join("bench/results/run/tune_nn.json")),
            "bench/results/run/tune_nn.json"
        );
        assert_eq!(
            provenance_name(Path::new("runs/tune_nn.json")),
            "runs/tune_nn.json"
        );
        assert_eq!(
            provenance_name(Path::new("/elsewhere/rp/combined_nn.json")),
            "combined_nn.json"
        );
        assert_eq!(
            provenance_name(Path::new("../rp/combined_nn.json")),
            "combined_nn.json"
        );
    }
}
