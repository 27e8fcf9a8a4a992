//! `gemm-aot bench`: the exact family against cuBLAS, in one process, on the same buffers.
//!
//! Per shape: random inputs (never zeros); when one input set fits in L2 (60 MiB) several sets
//! rotate so neither side measures the cache; warm-up; then the two are timed alternately,
//! one launch each between CUDA events, and the medians reported: TFLOP/s, GB/s of operands
//! (each input read once, the output written once) and our ratio to cuBLAS. f32 is compared
//! with cuBLAS in pedantic compute (no TF32), halves with cuBLAS's default f32 compute.
//! Writes JSON with date, card and commit.
//!
//! `--policy tensor-core` benches the tensor-core kernels against cuBLAS's default bf16 and f16
//! GEMM on the issue's rows, with targets (see `tensor_core.rs`); `--quick` runs a subset;
//! `--m`/`--nk` run custom rows instead, of the operation `--op nn|nt|tn` (default nn).
//! `--shapes FILE` runs a list of real models' layer shapes (`bench/shapes/models.toml`) under
//! the tensor-core policy, NN at every m of the file (or `--m`), with each regime's targets, the
//! geometric mean and a plot (SVG) of ratio against m beside the JSON; under the exact policy,
//! the exact rows at the list's (n, k) and m, with their geometric mean.
//! `--tier sm80` runs a named tier instead of the device's own (its PTX, JIT-compiled, where
//! its cubins do not load: the portable tier on newer hardware).

mod overhead;
mod plot;
mod sample;
mod shapes;
mod streams;
mod tensor_core;

use clap::Parser;
use gemm_runtime::{bf16, Context, DeviceBuffer, Element, GemmRequest, Mode};
use sample::{median, Rng};
use std::time::Instant;

#[derive(Parser)]
#[command(
    name = "gemm-aot bench",
    about = "Generated kernels against cuBLAS on the H200"
)]
struct Args {
    /// Policy whose kernels are measured: `exact` (NN at --m x --nk) or `tensor-core` (the
    /// issue's NN, NT and TN rows with their targets, against cuBLAS's default half GEMM).
    #[arg(long, default_value = "exact", value_parser = ["exact", "tensor-core"])]
    policy: String,
    /// Batch sizes M [exact default: 1,8,64,256,1024,4096]. With --policy tensor-core, --m
    /// and/or --nk replace the issue's rows by rows of --op at these shapes.
    #[arg(long, value_delimiter = ',')]
    m: Option<Vec<usize>>,
    /// Tensor-core policy, with --m and/or --nk: the operation of those rows. `nn` (C = A·B),
    /// `nt` (B stored [n, k]) or `tn` (A stored [k, m]; C an f32 gradient accumulated with
    /// beta = 1), as in the issue's rows.
    #[arg(long, default_value = "nn", value_parser = ["nn", "nt", "tn"])]
    op: String,
    /// Tensor-core policy, with --m and/or --nk: beta of those rows (C = A·B + beta·C)
    /// [default: 1 for tn, as the issue's TN rows, 0 for nn and nt].
    #[arg(long)]
    beta: Option<f32>,
    /// (N, K) pairs as NxK [default: 4096x4096,14336x4096,4096x14336].
    #[arg(long, value_delimiter = ',')]
    nk: Option<Vec<String>>,
    /// Element types. exact: f32 (against pedantic SGEMM), bf16 [default f32]. tensor-core:
    /// bf16, f16, f32 (as TF32, against cuBLAS with TF32) [default bf16,f16; bf16 with --quick].
    #[arg(long, value_delimiter = ',')]
    dtype: Option<Vec<String>>,
    /// A shape list (TOML, as `bench/shapes/models.toml`): NN rows at every (n, k) of the
    /// file and every m of its `m` (or --m). Tensor-core policy: with the targets of each
    /// shape's regime, and a plot (SVG) beside the JSON. Exact: the exact rows (--dtype) and
    /// their geometric mean.
    #[arg(long, conflicts_with_all = ["nk", "quick", "launch_overhead", "streams"])]
    shapes: Option<std::path::PathBuf>,
    /// With --shapes: only the shapes whose regime (aligned, narrow-deep, odd) or one of whose
    /// layer names contains this text.
    #[arg(long, requires = "shapes")]
    filter: Option<String>,
    /// Tensor-core policy: a subset of the issue's rows (one or two of each kind), for
    /// iterating.
    #[arg(long)]
    quick: bool,
    /// Tensor-core policy: skip comparing our output with cuBLAS's after each row.
    #[arg(long)]
    no_check: bool,
    /// Timed launches per side.
    #[arg(long, default_value_t = 30)]
    reps: usize,
    /// Commit being measured (goes into the JSON).
    #[arg(long, default_value = "unknown")]
    commit: String,
    /// Where to write the JSON (a folder; the file is named from the date and card).
    #[arg(long, default_value = "bench/results")]
    out: std::path::PathBuf,
    /// Measure host launch overhead (plain call, recording observer, bare launch) instead.
    #[arg(long)]
    launch_overhead: bool,
    /// Run this tier of the shipped kernels (e.g. `sm80`) instead of the one the device's
    /// capability picks: from its PTX where its cubins do not load (Context::with_tier).
    #[arg(long)]
    tier: Option<String>,
    /// Measure aggregate decode-GEMM throughput on 1, 2, 4 and 8 streams, one thread each,
    /// under --policy (see `streams.rs`) instead.
    #[arg(long)]
    streams: bool,
    /// Run routes' own kernels only, never a route's `wave_fit` kernels
    /// (`Context::set_wave_fit(false)`): to time the wave model's choices against them.
    #[arg(long)]
    no_wave_fit: bool,
}

const L2_BYTES: usize = 60 << 20;

struct Sample {
    ours_ms: f64,
    cublas_ms: f64,
    kernel: String,
}

fn time_one<T: Element>(
    ctx: &Context,
    mode: Mode,
    (m, n, k): (usize, usize, usize),
    x: &DeviceBuffer<T>,
    w: &DeviceBuffer<T>,
    y: &mut DeviceBuffer<T>,
) -> Result<(f64, Option<&'static str>), Box<dyn std::error::Error>> {
    use cudarc::driver::sys::CUevent_flags;
    ctx.set_mode(mode);
    let start = ctx
        .stream()
        .record_event(Some(CUevent_flags::CU_EVENT_DEFAULT))?;
    // The exact bench measures the exact kernels whatever the context's default.
    let launch = ctx.gemm(
        GemmRequest::linear(x.mat(k), w.mat(n), None, y.mat_mut(n), (m, n, k))
            .with_policy(gemm_runtime::Policy::Exact),
    )?;
    let end = ctx
        .stream()
        .record_event(Some(CUevent_flags::CU_EVENT_DEFAULT))?;
    end.synchronize()?;
    let name = launch.kernel.and_then(gemm_runtime::kernel).map(|k| k.name);
    Ok((start.elapsed_ms(&end)? as f64, name))
}

fn bench_shape<T: Element>(
    ctx: &Context,
    rng: &mut Rng,
    (m, n, k): (usize, usize, usize),
    reps: usize,
) -> Result<Sample, Box<dyn std::error::Error>> {
    let set_bytes = (m * k + k * n) * std::mem::size_of::<T>();
    let sets = if set_bytes * 2 <= L2_BYTES {
        (2 * L2_BYTES / set_bytes.max(1)).clamp(2, 8)
    } else {
        1
    };
    let mut xs = Vec::new();
    let mut ws = Vec::new();
    for _ in 0..sets {
        xs.push(
            ctx.upload(
                &(0..m * k)
                    .map(|_| T::from_f32(rng.value()))
                    .collect::<Vec<T>>(),
            )?,
        );
        ws.push(
            ctx.upload(
                &(0..k * n)
                    .map(|_| T::from_f32(rng.value()))
                    .collect::<Vec<T>>(),
            )?,
        );
    }
    let mut y = ctx.alloc::<T>(m * n)?;
    let vendor = if T::DTYPE == gemm_runtime::Dtype::F32 {
        Mode::CublasPedantic
    } else {
        Mode::CublasFast
    };
    for i in 0..3 {
        let s = i % sets;
        time_one(ctx, Mode::Deterministic, (m, n, k), &xs[s], &ws[s], &mut y)?;
        time_one(ctx, vendor, (m, n, k), &xs[s], &ws[s], &mut y)?;
    }
    let (mut ours, mut theirs) = (Vec::new(), Vec::new());
    let mut kernel = String::new();
    let budget = Instant::now();
    for i in 0..reps {
        let s = i % sets;
        let (t, name) = time_one(ctx, Mode::Deterministic, (m, n, k), &xs[s], &ws[s], &mut y)?;
        ours.push(t);
        kernel = name.unwrap_or("none").to_string();
        theirs.push(time_one(ctx, vendor, (m, n, k), &xs[s], &ws[s], &mut y)?.0);
        if i >= 5 && budget.elapsed().as_secs_f64() > 3.0 {
            break;
        }
    }
    ctx.set_mode(Mode::Deterministic);
    Ok(Sample {
        ours_ms: median(&mut ours),
        cublas_ms: median(&mut theirs),
        kernel,
    })
}

/// The plot's points from the JSON rows of a shape-list run.
fn plot_points(list: &shapes::ShapeList, doc: &serde_json::Value) -> Vec<plot::Point> {
    let rows = doc["rows"].as_array().cloned().unwrap_or_default();
    rows.iter()
        .filter_map(|r| {
            let (n, k) = (r["n"].as_u64()? as usize, r["k"].as_u64()? as usize);
            let shape = list.shapes.iter().find(|s| s.n == n && s.k == k)?;
            Some(plot::Point {
                n,
                k,
                title: format!("{}: {}", shape.regime.as_str(), shape.layers.join(", ")),
                dtype: r["dtype"].as_str()?.to_string(),
                m: r["m"].as_u64()? as usize,
                ratio: r["ratio_to_cublas"].as_f64()?,
                target: r["target"].as_f64(),
            })
        })
        .collect()
}

fn parse_nk(nk: &str) -> Result<(usize, usize), String> {
    nk.split_once('x')
        .and_then(|(n, k)| Some((n.parse::<usize>().ok()?, k.parse::<usize>().ok()?)))
        .ok_or_else(|| format!("--nk takes NxK pairs, got {nk}"))
}

const DEFAULT_M: [usize; 6] = [1, 8, 64, 256, 1024, 4096];
const DEFAULT_NK: [&str; 3] = ["4096x4096", "14336x4096", "4096x14336"];

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args = Args::parse();
    let custom = args.m.is_some() || args.nk.is_some();
    if (args.op != "nn" || args.beta.is_some()) && !(args.policy == "tensor-core" && custom) {
        return Err(
            "--op and --beta apply to the --m/--nk rows of --policy tensor-core only".into(),
        );
    }
    let ctx = match &args.tier {
        Some(tier) => Context::with_tier(0, tier)?,
        None => Context::new(0)?,
    };
    println!("{}", ctx.tier_selection());
    if args.no_wave_fit {
        ctx.set_wave_fit(false);
        println!("wave fit off: routes' own kernels only");
    }
    // A named tier's results are filed apart from the device's own tier's.
    let tier_tag = args
        .tier
        .as_ref()
        .map(|t| format!("-{t}"))
        .unwrap_or_default();
    let card = {
        let cuda = cudarc::driver::CudaContext::new(0)?;
        cuda.name()?
    };
    let date = gemm_aot_tune::date::today();
    let slug: String = card
        .to_lowercase()
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '-' })
        .collect();
    std::fs::create_dir_all(&args.out)?;
    if args.launch_overhead {
        let mut doc = overhead::run(&ctx, &args.commit)?;
        doc["date"] = date.clone().into();
        doc["card"] = card.clone().into();
        let path = args.out.join(format!(
            "{date}-{slug}-{}{tier_tag}-launch-overhead.json",
            args.commit
        ));
        std::fs::write(&path, serde_json::to_string_pretty(&doc)? + "\n")?;
        println!("wrote {}", path.display());
        return Ok(());
    }
    if args.streams {
        let policy = if args.policy == "tensor-core" {
            gemm_runtime::Policy::TensorCore
        } else {
            gemm_runtime::Policy::Exact
        };
        let mut doc = streams::run(&ctx, policy, &args.commit)?;
        doc["date"] = date.clone().into();
        doc["card"] = card.clone().into();
        let path = args.out.join(format!(
            "{date}-{slug}-{}{tier_tag}-{}-streams.json",
            args.commit, args.policy
        ));
        std::fs::write(&path, serde_json::to_string_pretty(&doc)? + "\n")?;
        println!("wrote {}", path.display());
        return Ok(());
    }
    let mut m_list = args.m.clone().unwrap_or(DEFAULT_M.to_vec());
    let mut nk_list = args
        .nk
        .clone()
        .unwrap_or(DEFAULT_NK.iter().map(|s| s.to_string()).collect());
    if let Some(file) = &args.shapes {
        if args.op != "nn" || args.beta.is_some() {
            return Err("--shapes runs NN rows; leave out --op and --beta".into());
        }
        let mut list = shapes::ShapeList::load(file)?;
        if let Some(f) = &args.filter {
            list.shapes.retain(|s| {
                s.regime.as_str() == f || s.layers.iter().any(|l| l.contains(f.as_str()))
            });
            if list.shapes.is_empty() {
                return Err(format!(
                    "--filter {f:?} keeps none of the shapes of {}",
                    file.display()
                )
                .into());
            }
        }
        let m = args.m.clone().unwrap_or_else(|| list.m.clone());
        if args.policy == "exact" {
            // The exact rows below, at the list's (n, k) and m.
            nk_list = list
                .shapes
                .iter()
                .map(|s| format!("{}x{}", s.n, s.k))
                .collect();
            m_list = m;
        } else {
            let opts = tensor_core::Options {
                dtypes: args
                    .dtype
                    .clone()
                    .unwrap_or_else(|| vec!["bf16".into(), "f16".into()]),
                shapes: tensor_core::list_shapes(&list, &m),
                reps: args.reps,
                check: !args.no_check,
                quick: false,
            };
            let mut doc = tensor_core::run(&ctx, &opts)?;
            doc["shape_list"] = file.display().to_string().into();
            doc["shapes"] = list
            .shapes
            .iter()
            .map(|s| serde_json::json!({"n": s.n, "k": s.k, "regime": s.regime.as_str(), "layers": s.layers}))
            .collect();
            doc["date"] = date.clone().into();
            doc["card"] = card.clone().into();
            doc["commit"] = args.commit.clone().into();
            doc["tier"] = ctx.tier().name.into();
            let stem = format!("{date}-{slug}-{}{tier_tag}-shapes", args.commit);
            let path = args.out.join(format!("{stem}.json"));
            std::fs::write(&path, serde_json::to_string_pretty(&doc)? + "\n")?;
            println!("wrote {}", path.display());
            let points = plot_points(&list, &doc);
            let title = format!(
                "cuBLAS time / ours (tensor-core policy, NN), {card}, {date}, {}{}",
                args.commit,
                doc["geometric_mean_ratio"]
                    .as_f64()
                    .map_or(String::new(), |g| format!("; geometric mean {g:.3}"))
            );
            let svg_path = args.out.join(format!("{stem}.svg"));
            std::fs::write(&svg_path, plot::svg(&title, &points))?;
            println!("wrote {}", svg_path.display());
            return Ok(());
        }
    }
    if args.policy == "tensor-core" {
        let shapes = if custom {
            let op = match args.op.as_str() {
                "nt" => gemm_runtime::Op::Nt,
                "tn" => gemm_runtime::Op::Tn,
                _ => gemm_runtime::Op::Nn,
            };
            let mut v = Vec::new();
            for nk in &nk_list {
                let (n, k) = parse_nk(nk)?;
                for &m in &m_list {
                    v.push(tensor_core::Shape {
                        op,
                        m,
                        n,
                        k,
                        target: tensor_core::target(op, m),
                        beta: args.beta.unwrap_or_else(|| tensor_core::default_beta(op)),
                        regime: None,
                    });
                }
            }
            v
        } else {
            tensor_core::issue_shapes(args.quick)
        };
        let dtypes = args.dtype.clone().unwrap_or_else(|| {
            if args.quick {
                vec!["bf16".into()]
            } else {
                vec!["bf16".into(), "f16".into()]
            }
        });
        let opts = tensor_core::Options {
            dtypes,
            shapes,
            reps: args.reps,
            check: !args.no_check,
            quick: args.quick,
        };
        let mut doc = tensor_core::run(&ctx, &opts)?;
        doc["date"] = date.clone().into();
        doc["card"] = card.clone().into();
        doc["commit"] = args.commit.clone().into();
        doc["tier"] = ctx.tier().name.into();
        doc["tier_selection"] = ctx.tier_selection().to_string().into();
        let path = args.out.join(format!(
            "{date}-{slug}-{}{tier_tag}-tensor-core.json",
            args.commit
        ));
        std::fs::write(&path, serde_json::to_string_pretty(&doc)? + "\n")?;
        println!("wrote {}", path.display());
        return Ok(());
    }
    let mut rng = Rng(0x5eed_1234_abcd_0001);
    let mut rows = Vec::new();
    println!(
        "{:<5} {:>5} {:>6} {:>6}  {:>9} {:>9} {:>8} {:>8} {:>6}  kernel",
        "dtype", "m", "n", "k", "ours TF/s", "cuBLAS", "ours GB/s", "cuBLAS", "ratio"
    );
    let dtypes = args.dtype.clone().unwrap_or(vec!["f32".into()]);
    for dtype in &dtypes {
        for nk in &nk_list {
            let (n, k) = parse_nk(nk)?;
            for &m in &m_list {
                let (s, elem) = match dtype.as_str() {
                    "f32" => (bench_shape::<f32>(&ctx, &mut rng, (m, n, k), args.reps)?, 4),
                    "bf16" => (
                        bench_shape::<bf16>(&ctx, &mut rng, (m, n, k), args.reps)?,
                        2,
                    ),
                    other => return Err(format!("unknown dtype {other}; use f32 or bf16").into()),
                };
                let flops = 2.0 * m as f64 * n as f64 * k as f64;
                let bytes = ((m * k + k * n + m * n) * elem) as f64;
                let tf = |ms: f64| flops / (ms * 1e-3) / 1e12;
                let gb = |ms: f64| bytes / (ms * 1e-3) / 1e9;
                let ratio = s.cublas_ms / s.ours_ms;
                println!(
                    "{dtype:<5} {m:>5} {n:>6} {k:>6}  {:>9.2} {:>9.2} {:>8.0} {:>8.0} {:>6.2}  {}",
                    tf(s.ours_ms),
                    tf(s.cublas_ms),
                    gb(s.ours_ms),
                    gb(s.cublas_ms),
                    ratio,
                    s.kernel
                );
                rows.push(serde_json::json!({
                    "dtype": dtype, "m": m, "n": n, "k": k,
                    "ours_ms": s.ours_ms, "cublas_ms": s.cublas_ms,
                    "ours_tflops": tf(s.ours_ms), "cublas_tflops": tf(s.cublas_ms),
                    "ours_gbps": gb(s.ours_ms), "cublas_gbps": gb(s.cublas_ms),
                    "ratio_to_cublas": ratio, "kernel": s.kernel,
                    "cublas_mode": if dtype == "f32" { "pedantic" } else { "default" },
                }));
            }
        }
    }
    let geomean = shapes::geometric_mean(rows.iter().filter_map(|r| r["ratio_to_cublas"].as_f64()));
    let mut doc = serde_json::json!({
        "date": date, "card": card, "commit": args.commit, "tier": ctx.tier().name,
        "method": "one process; same buffers; alternating single launches timed with CUDA events; 3 warm-up pairs; median; rotating input sets when an input set fits in L2",
        "rows": rows,
    });
    let shapes_tag = if let Some(file) = &args.shapes {
        doc["shape_list"] = file.display().to_string().into();
        doc["geometric_mean_ratio"] = geomean.into();
        "-exact-shapes"
    } else {
        ""
    };
    let path = args.out.join(format!(
        "{date}-{slug}-{}{tier_tag}{shapes_tag}.json",
        args.commit
    ));
    std::fs::write(&path, serde_json::to_string_pretty(&doc)? + "\n")?;
    println!("wrote {}", path.display());
    Ok(())
}
