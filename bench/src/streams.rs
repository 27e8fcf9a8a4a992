//! `--streams`: aggregate throughput of small decode GEMMs launched from N threads, each with
//! its own stream of one device (`Context::new_stream`), for N = 1, 2, 4 and 8. The weights
//! are uploaded once and shared by every stream; each worker has its own input and output.
//! Per N: every worker warms up, waits at a barrier, enqueues `LAUNCHES` GEMMs and drains its
//! stream; the wall time runs from the first worker's start to the last worker's drain. Each
//! worker's output is compared bit for bit with the one-stream output, and the device's module
//! count is checked not to grow with the streams (they share the loaded modules).

use gemm_runtime::{bf16, Context, DeviceBuffer, GemmRequest, Policy};
use std::sync::Barrier;
use std::time::{Duration, Instant};

const STREAMS: [usize; 4] = [1, 2, 4, 8];
const LAUNCHES: usize = 2000;
const WARMUP: usize = 50;
/// (m, out_features, in_features): decode steps of a small and a mid-size layer.
const SHAPES: [(usize, usize, usize); 3] = [(1, 1024, 1024), (8, 2048, 2048), (16, 4096, 4096)];

type BoxError = Box<dyn std::error::Error + Send + Sync>;

/// One worker's timing: when it started enqueueing, when its stream was drained, and how
/// long the enqueueing alone took.
struct Worker {
    start: Instant,
    end: Instant,
    enqueue: Duration,
    output: Vec<f32>,
}

fn worker(
    ctx: &Context,
    w: &DeviceBuffer<bf16>,
    x_host: &[bf16],
    (m, n, k): (usize, usize, usize),
    policy: Policy,
    barrier: &Barrier,
) -> Result<Worker, BoxError> {
    let x = ctx.upload(x_host)?;
    let mut y = ctx.alloc::<f32>(m * n)?;
    let mut launch = || {
        ctx.gemm(
            GemmRequest::linear(x.mat(k), w.mat(n), None, y.mat_mut(n), (m, n, k))
                .with_policy(policy),
        )
        .map(|_| ())
    };
    for _ in 0..WARMUP {
        launch()?;
    }
    ctx.synchronize()?;
    barrier.wait();
    let start = Instant::now();
    for _ in 0..LAUNCHES {
        launch()?;
    }
    let enqueue = start.elapsed();
    ctx.synchronize()?;
    let end = Instant::now();
    Ok(Worker {
        start,
        end,
        enqueue,
        output: ctx.download(&y)?,
    })
}

pub fn run(
    ctx: &Context,
    policy: Policy,
    commit: &str,
) -> Result<serde_json::Value, Box<dyn std::error::Error>> {
    let mut rng = crate::sample::Rng(0x57ea_0001);
    let mut rows = Vec::new();
    println!(
        "{:>3} {:>5} {:>5} {:>7}  {:>10} {:>8} {:>11}  kernel",
        "m", "n", "k", "streams", "GEMMs/s", "speedup", "enqueue us"
    );
    for &(m, n, k) in &SHAPES {
        let x_host: Vec<bf16> = (0..m * k).map(|_| bf16::from_f32(rng.value())).collect();
        let w_host: Vec<bf16> = (0..k * n).map(|_| bf16::from_f32(rng.value())).collect();
        let w = ctx.upload(&w_host)?;
        let probe = {
            let x = ctx.upload(&x_host)?;
            let mut y = ctx.alloc::<f32>(m * n)?;
            ctx.gemm(
                GemmRequest::linear(x.mat(k), w.mat(n), None, y.mat_mut(n), (m, n, k))
                    .with_policy(policy),
            )?
        };
        let kernel = probe
            .kernel
            .and_then(gemm_runtime::kernel)
            .map_or("?", |k| k.name);
        let mut reference: Option<Vec<f32>> = None;
        let mut single_rate = 0.0;
        for &streams in &STREAMS {
            let modules_before = ctx.loaded_modules();
            let contexts = (0..streams)
                .map(|_| ctx.new_stream())
                .collect::<Result<Vec<_>, _>>()?;
            let barrier = Barrier::new(streams);
            let workers: Vec<Result<Worker, BoxError>> = std::thread::scope(|s| {
                let handles: Vec<_> = contexts
                    .iter()
                    .map(|c| {
                        let (w, x, b) = (&w, &x_host, &barrier);
                        s.spawn(move || worker(c, w, x, (m, n, k), policy, b))
                    })
                    .collect();
                handles
                    .into_iter()
                    .map(|h| h.join().unwrap_or_else(|_| Err("worker panicked".into())))
                    .collect()
            });
            let workers = workers
                .into_iter()
                .collect::<Result<Vec<_>, _>>()
                .map_err(|e| e.to_string())?;
            if ctx.loaded_modules() != modules_before {
                return Err(format!(
                    "{streams} new streams loaded {} modules; they should share the device's",
                    ctx.loaded_modules() - modules_before
                )
                .into());
            }
            for wk in &workers {
                let bits: Vec<u32> = wk.output.iter().map(|v| v.to_bits()).collect();
                match &reference {
                    None => reference = Some(wk.output.clone()),
                    Some(r) if r.iter().map(|v| v.to_bits()).eq(bits.iter().copied()) => {}
                    Some(_) => return Err("a stream's output differs from the first".into()),
                }
            }
            let first = workers.iter().map(|w| w.start).min().ok_or("no worker")?;
            let last = workers.iter().map(|w| w.end).max().ok_or("no worker")?;
            let wall = last.duration_since(first).as_secs_f64();
            let total = (streams * LAUNCHES) as f64;
            let rate = total / wall;
            if streams == 1 {
                single_rate = rate;
            }
            let enqueue_us = workers
                .iter()
                .map(|w| w.enqueue.as_secs_f64() * 1e6 / LAUNCHES as f64)
                .sum::<f64>()
                / streams as f64;
            let speedup = rate / single_rate;
            println!(
                "{m:>3} {n:>5} {k:>5} {streams:>7}  {rate:>10.0} {speedup:>7.2}x {enqueue_us:>11.2}  {kernel}"
            );
            rows.push(serde_json::json!({
                "m": m, "n": n, "k": k, "streams": streams, "launches_per_stream": LAUNCHES,
                "wall_ms": wall * 1e3, "gemms_per_s": rate, "speedup_vs_1": speedup,
                "enqueue_us_per_launch": enqueue_us, "kernel": kernel,
            }));
        }
    }
    Ok(serde_json::json!({
        "commit": commit, "policy": policy.to_string(), "tier": ctx.tier().name,
        "dtype": "bf16 in, f32 out",
        "method": "N threads, one stream each (Context::new_stream), shared weights; per N: warm-up, barrier, LAUNCHES GEMMs a stream, drain; wall from the first start to the last drain; outputs compared bitwise across streams",
        "rows": rows,
    }))
}
