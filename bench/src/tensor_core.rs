//! `--policy tensor-core`: the tensor-core kernels (policy tensor-core, contract tc-k16)
//! against cuBLAS's default half GEMM (`cublasGemmEx`, bf16 or f16 in, f32 compute,
//! `CUBLAS_GEMM_DEFAULT`, the handle's default math: tensor cores allowed), which the runtime
//! calls in `Mode::CublasFast`.
//!
//! One process, the same buffers for both sides. Per row: random inputs (never zeros), input
//! sets rotating so neither side reads its inputs from L2 (60 MiB); warm-up; then the two sides timed
//! alternately between CUDA events, medians reported; a sample is a group of
//! launches of at least 0.2 ms (1 to 32, the same count on both sides), so a 10 us kernel is not
//! timed by event resolution. Each timed launch is
//! preceded, untimed, by the same side's launch on the previous input set (at least two sets
//! always rotate, up to eight while a set is small against L2), so the host's
//! enqueue time (validation and tensor maps on our side, heuristics on cuBLAS's) hides behind
//! GPU work and the events time the kernel alone. Afterwards both sides' outputs on one input
//! set are compared (relative Frobenius difference), so a fast wrong kernel shows.
//!
//! The rows are those of the issue "Tensor-core policy on Hopper" with its targets (ratio =
//! cuBLAS time / ours): NN at M = 4096 and 8192 (>= 0.95), 1024 (0.90), 64 and 256 (0.80) at
//! four (N, K); decode M = 1, 8, 16 (1.0, reporting GB/s of the weight streamed); NT and TN
//! at M >= 1024 (0.85). NN and NT write the input type, TN accumulates into an f32 gradient
//! (beta = 1). `--dtype f32` runs the same rows as TF32 (contract tc-tf32-k8) against cuBLAS
//! with `CUBLAS_COMPUTE_32F_FAST_TF32`, target 0.80 wherever the half row has a target.

use crate::sample::{median, Rng};
use crate::shapes::{geometric_mean, Regime, DECODE_WEIGHT_MIN_BYTES, DECODE_WEIGHT_TBPS};
use gemm_runtime::{
    bf16, f16, kernel, Context, DeviceBuffer, Dtype, Element, GemmError, GemmRequest, Launch, Mode,
    Op, Policy, PreparedWeight,
};
use std::error::Error;
use std::time::Instant;

const L2_BYTES: usize = 60 << 20;
const TC: Policy = Policy::TensorCore;

/// One row of the bench.
#[derive(Clone, Copy, Debug)]
pub struct Shape {
    pub op: Op,
    pub m: usize,
    pub n: usize,
    pub k: usize,
    /// The issue's target for cuBLAS time / ours, where it sets one.
    pub target: Option<f64>,
    /// C = A·B + beta·C: 1 for TN (the gradient accumulates), 0 for NN and NT in the issue's
    /// rows; `--beta` sets it for custom rows.
    pub beta: f32,
    /// The row's regime when it comes from a shape list (`--shapes`), which sets its target.
    pub regime: Option<Regime>,
}

/// The issue's beta for an operation: 1 for TN (dW += X^T·dY), 0 otherwise.
pub fn default_beta(op: Op) -> f32 {
    if op == Op::Tn {
        1.0
    } else {
        0.0
    }
}

const NN_NK: [(usize, usize); 4] = [(4096, 4096), (14336, 4096), (4096, 14336), (8192, 8192)];
const DECODE_NK: [(usize, usize); 2] = [(14336, 4096), (4096, 14336)];

/// The issue's target for a row: 0.95 for NN at m >= 4096, 0.90 at 1024, 0.80 at 64 to 256,
/// 1.0 for decode (m <= 16), 0.85 for NT and TN at m >= 1024.
pub fn target(op: Op, m: usize) -> Option<f64> {
    match op {
        Op::Nn if m >= 4096 => Some(0.95),
        Op::Nn if m >= 1024 => Some(0.90),
        Op::Nn if (64..=256).contains(&m) => Some(0.80),
        Op::Nn if m <= 16 => Some(1.0),
        Op::Nt | Op::Tn if m >= 1024 => Some(0.85),
        _ => None,
    }
}

fn row(op: Op, (m, n, k): (usize, usize, usize)) -> Shape {
    Shape {
        op,
        m,
        n,
        k,
        target: target(op, m),
        beta: default_beta(op),
        regime: None,
    }
}

/// The rows of a shape list: NN (y = x·W) at every m of `m` for each (n, k), with the
/// targets of the shape's regime.
pub fn list_shapes(list: &crate::shapes::ShapeList, m: &[usize]) -> Vec<Shape> {
    let mut v = Vec::new();
    for s in &list.shapes {
        for &m in m {
            v.push(Shape {
                op: Op::Nn,
                m,
                n: s.n,
                k: s.k,
                target: s.regime.target(m),
                beta: 0.0,
                regime: Some(s.regime),
            });
        }
    }
    v
}

/// The issue's rows; `quick` keeps one or two of each kind.
pub fn issue_shapes(quick: bool) -> Vec<Shape> {
    let mut v = Vec::new();
    if quick {
        v.push(row(Op::Nn, (4096, 4096, 4096)));
        v.push(row(Op::Nn, (8192, 14336, 4096)));
        v.push(row(Op::Nn, (1024, 4096, 4096)));
        v.push(row(Op::Nn, (64, 4096, 4096)));
        v.push(row(Op::Nn, (1, 14336, 4096)));
        v.push(row(Op::Nn, (16, 4096, 14336)));
        v.push(row(Op::Nt, (4096, 14336, 4096)));
        v.push(row(Op::Tn, (4096, 14336, 4096)));
        return v;
    }
    for m in [4096, 8192] {
        for (n, k) in NN_NK {
            v.push(row(Op::Nn, (m, n, k)));
        }
    }
    for m in [1024, 256, 64] {
        for (n, k) in NN_NK {
            v.push(row(Op::Nn, (m, n, k)));
        }
    }
    for (n, k) in DECODE_NK {
        for m in [1, 8, 16] {
            v.push(row(Op::Nn, (m, n, k)));
        }
    }
    // NT: dX = dY·W^T of the up projection (n = 4096 in, k = 14336 out) and the down
    // projection (n = 14336, k = 4096), 4096 tokens.
    v.push(row(Op::Nt, (4096, 14336, 4096)));
    v.push(row(Op::Nt, (4096, 4096, 14336)));
    // TN: dW += X^T·dY (m = in_features, n = out_features, k = 4096 tokens) of the up and the
    // down projection.
    v.push(row(Op::Tn, (4096, 14336, 4096)));
    v.push(row(Op::Tn, (14336, 4096, 4096)));
    v
}

/// What the bench measured for one row and dtype.
struct Sample {
    ours_ms: f64,
    cublas_ms: f64,
    launch: Launch,
    sets: usize,
    /// Launches a timed sample averaged.
    group: usize,
    timed: usize,
    rel_diff: Option<f64>,
    /// Ours with B repacked on every call, where the row used a prepared weight.
    per_call_ms: Option<f64>,
    /// Whether our side read a prepared weight.
    prepared: bool,
}

/// Input sets of one operand type, kept across rows and grown when a row needs more; a row
/// takes views of the first elements.
struct Pool<A: Element> {
    a: Vec<DeviceBuffer<A>>,
    b: Vec<DeviceBuffer<A>>,
    /// The current row's B of each set as prepared weights (an odd row's weight, copied once
    /// into aligned rows, as a user does for a weight that does not change); our side reads
    /// these while `use_prepared` is set.
    prepared: Vec<PreparedWeight<A>>,
    use_prepared: bool,
}

impl<A: Element> Pool<A> {
    fn new() -> Self {
        Pool {
            a: Vec::new(),
            b: Vec::new(),
            prepared: Vec::new(),
            use_prepared: false,
        }
    }

    fn ensure(
        ctx: &Context,
        rng: &mut Rng,
        bufs: &mut Vec<DeviceBuffer<A>>,
        sets: usize,
        len: usize,
    ) -> Result<(), GemmError> {
        for i in 0..sets {
            if i < bufs.len() && bufs[i].len() >= len {
                continue;
            }
            let buf = Self::random(ctx, rng, len)?;
            if i < bufs.len() {
                bufs[i] = buf;
            } else {
                bufs.push(buf);
            }
        }
        Ok(())
    }

    /// `len` random values (never zeros): a random block of up to 2^22 + 7 elements, written
    /// again and again (a 2 GB weight would take seconds to draw on the host; the odd block
    /// length shifts the pattern against every row length).
    fn random(ctx: &Context, rng: &mut Rng, len: usize) -> Result<DeviceBuffer<A>, GemmError> {
        let block = len.min((1 << 22) + 7);
        let host: Vec<A> = (0..block).map(|_| A::from_f32(rng.value())).collect();
        let mut buf = ctx.alloc::<A>(len)?;
        let mut at = 0;
        while at < len {
            let n = block.min(len - at);
            ctx.write_at(&mut buf, at, &host[..n])?;
            at += n;
        }
        Ok(buf)
    }
}

impl<A: Element> Pool<A> {
    /// Set `set`'s A, B and, while in use, B's prepared weight.
    fn operands(
        &self,
        set: usize,
    ) -> (
        &DeviceBuffer<A>,
        &DeviceBuffer<A>,
        Option<&PreparedWeight<A>>,
    ) {
        let prepared = self.prepared.get(set).filter(|_| self.use_prepared);
        (&self.a[set], &self.b[set], prepared)
    }
}

fn stored(s: &Shape) -> ((usize, usize), (usize, usize)) {
    // A holds m x k elements stored [m, k] (nn, nt) or [k, m] (tn); B k x n.
    let a = s.m * s.k;
    let (lda, ldb) = match s.op {
        Op::Nn => (s.k, s.n),
        Op::Nt => (s.k, s.k),
        Op::Tn => (s.m, s.n),
    };
    ((a, lda), (s.k * s.n, ldb))
}

fn launch<A: Element, C: Element>(
    ctx: &Context,
    mode: Mode,
    s: &Shape,
    (a, b, prepared): (
        &DeviceBuffer<A>,
        &DeviceBuffer<A>,
        Option<&PreparedWeight<A>>,
    ),
    c: &mut DeviceBuffer<C>,
) -> Result<Launch, GemmError> {
    ctx.set_mode(mode);
    let ((_, lda), (_, ldb)) = stored(s);
    let beta = s.beta;
    // cuBLAS always reads the weight as the user stores it.
    let b = match prepared.filter(|_| mode == Mode::Deterministic) {
        Some(p) => p.mat(),
        None => b.mat(ldb),
    };
    ctx.gemm(
        GemmRequest::new(s.op, (s.m, s.n, s.k), a.mat(lda), b, c.mat_mut(s.n))
            .with_beta(beta)
            .with_policy(TC),
    )
}

/// Milliseconds of one launch of `mode` on set `set`, the previous set's launch enqueued first
/// (untimed) so the stream is busy while this one is enqueued.
fn time_one<A: Element, C: Element>(
    ctx: &Context,
    mode: Mode,
    s: &Shape,
    pool: &Pool<A>,
    (set, sets, group): (usize, usize, usize),
    c: &mut DeviceBuffer<C>,
) -> Result<(f64, Launch), Box<dyn Error>> {
    use cudarc::driver::sys::CUevent_flags;
    let prev = (set + sets - 1) % sets;
    launch(ctx, mode, s, pool.operands(prev), c)?;
    let start = ctx
        .stream()
        .record_event(Some(CUevent_flags::CU_EVENT_DEFAULT))?;
    let mut l = launch(ctx, mode, s, pool.operands(set), c)?;
    for j in 1..group {
        l = launch(ctx, mode, s, pool.operands((set + j) % sets), c)?;
    }
    let end = ctx
        .stream()
        .record_event(Some(CUevent_flags::CU_EVENT_DEFAULT))?;
    end.synchronize()?;
    Ok((start.elapsed_ms(&end)? as f64 / group as f64, l))
}

/// A timed sample covers at least this many milliseconds of launches: one launch of a 10 us
/// kernel between two events is decided by event resolution and launch jitter.
const GROUP_MS: f64 = 0.2;

/// Relative Frobenius difference of our output and cuBLAS's on set 0 (over its first rows) (C zeroed first; a
/// beta != 0 then gives the product).
fn compare<A: Element, C: Element>(
    ctx: &Context,
    s: &Shape,
    pool: &Pool<A>,
) -> Result<f64, Box<dyn Error>> {
    let mut ours = ctx.alloc::<C>(s.m * s.n)?;
    let mut theirs = ctx.alloc::<C>(s.m * s.n)?;
    launch(ctx, Mode::Deterministic, s, pool.operands(0), &mut ours)?;
    launch(ctx, Mode::CublasFast, s, pool.operands(0), &mut theirs)?;
    ctx.set_mode(Mode::Deterministic);
    // The first rows, at most 2^24 elements: a wrong kernel is wrong everywhere, and a 2 GB
    // output would take seconds to read back.
    let len = (s.m * s.n).min(1 << 24);
    let (mut x, mut y) = (vec![C::default(); len], vec![C::default(); len]);
    ctx.read_at(&ours, 0, &mut x)?;
    ctx.read_at(&theirs, 0, &mut y)?;
    let (mut num, mut den) = (0.0f64, 0.0f64);
    for (p, q) in x.iter().zip(&y) {
        let (p, q) = (p.to_f32() as f64, q.to_f32() as f64);
        num += (p - q) * (p - q);
        den += q * q;
    }
    Ok(if den == 0.0 {
        num.sqrt()
    } else {
        (num / den).sqrt()
    })
}

fn bench_row<A: Element, C: Element>(
    ctx: &Context,
    rng: &mut Rng,
    pool: &mut Pool<A>,
    s: &Shape,
    reps: usize,
    check: bool,
) -> Result<Sample, Box<dyn Error>> {
    let ((a_len, _), (b_len, _)) = stored(s);
    let set_bytes = (a_len + b_len) * std::mem::size_of::<A>();
    // At least two sets (the untimed launch before each timed one reads the other), and
    // enough that the sets touched between two uses of one set stream three times L2's worth.
    let sets = (3 * L2_BYTES).div_ceil(set_bytes.max(1)).clamp(2, 8);
    Pool::ensure(ctx, rng, &mut pool.a, sets, a_len)?;
    Pool::ensure(ctx, rng, &mut pool.b, sets, b_len)?;
    // An odd row's weight whose leading dimension TMA cannot take is prepared once a set
    // (outside the timing, as a user prepares a weight that does not change); the per-call
    // repack is timed too.
    let ((_, _), (_, ldb)) = stored(s);
    pool.prepared.clear();
    pool.use_prepared = s.regime == Some(Regime::Odd)
        && s.op == Op::Nn
        && !(ldb * std::mem::size_of::<A>()).is_multiple_of(16);
    if pool.use_prepared {
        for set in 0..sets {
            let w = ctx.prepare_weight(pool.b[set].mat(ldb), s.k, s.n)?;
            pool.prepared.push(w);
        }
    }
    let mut c = ctx.alloc::<C>(s.m * s.n)?;
    let result = (|| -> Result<Sample, Box<dyn Error>> {
        let mut one = f64::MAX;
        for i in 0..4 {
            let t = time_one(
                ctx,
                Mode::Deterministic,
                s,
                pool,
                (i % sets, sets, 1),
                &mut c,
            )?
            .0;
            let u = time_one(ctx, Mode::CublasFast, s, pool, (i % sets, sets, 1), &mut c)?.0;
            one = one.min(t.min(u));
        }
        // Both sides time groups of the same size, of at least GROUP_MS.
        let group = ((GROUP_MS / one.max(1e-4)).ceil() as usize).clamp(1, 32);
        let (mut ours, mut theirs) = (Vec::new(), Vec::new());
        let mut last = None;
        let budget = Instant::now();
        for i in 0..reps {
            let set = ((i * group) % sets, sets, group);
            let (t, l) = time_one(ctx, Mode::Deterministic, s, pool, set, &mut c)?;
            ours.push(t);
            last = Some(l);
            theirs.push(time_one(ctx, Mode::CublasFast, s, pool, set, &mut c)?.0);
            if i >= 5 && budget.elapsed().as_secs_f64() > 3.0 {
                break;
            }
        }
        let launch = last.ok_or("no timed launch (--reps 0?)")?;
        // Ours again without the prepared weight: B repacked on every call.
        let per_call_ms = if pool.use_prepared {
            pool.use_prepared = false;
            let mut t = Vec::new();
            for i in 0..reps.clamp(1, 10) {
                t.push(
                    time_one(
                        ctx,
                        Mode::Deterministic,
                        s,
                        pool,
                        ((i * group) % sets, sets, group),
                        &mut c,
                    )?
                    .0,
                );
            }
            pool.use_prepared = true;
            Some(median(&mut t))
        } else {
            None
        };
        let rel_diff = if check {
            Some(compare::<A, C>(ctx, s, pool)?)
        } else {
            None
        };
        Ok(Sample {
            ours_ms: median(&mut ours),
            cublas_ms: median(&mut theirs),
            launch,
            sets,
            group,
            timed: ours.len(),
            rel_diff,
            per_call_ms,
            prepared: pool.use_prepared,
        })
    })();
    ctx.set_mode(Mode::Deterministic);
    result
}

/// About a second of large GEMMs before the first row, so the first rows are not timed on an
/// idle GPU's clocks.
fn warm_up(ctx: &Context) -> Result<(), Box<dyn Error>> {
    let n = 4096;
    let x = ctx.alloc::<bf16>(n * n)?;
    let mut y = ctx.alloc::<bf16>(n * n)?;
    let start = Instant::now();
    while start.elapsed().as_secs_f64() < 1.0 {
        for _ in 0..20 {
            ctx.gemm(
                GemmRequest::new(Op::Nn, (n, n, n), x.mat(n), x.mat(n), y.mat_mut(n))
                    .with_policy(TC),
            )?;
        }
        ctx.synchronize()?;
    }
    Ok(())
}

/// Options of the tensor-core bench (from the command line).
pub struct Options {
    pub dtypes: Vec<String>,
    pub shapes: Vec<Shape>,
    pub reps: usize,
    pub check: bool,
    pub quick: bool,
}

/// Runs every row in every dtype, prints a table and returns the JSON document's rows and
/// summary.
pub fn run(ctx: &Context, opts: &Options) -> Result<serde_json::Value, Box<dyn Error>> {
    let tier = ctx.tier().name;
    let mut rng = Rng(0x5eed_7c16_abcd_0002);
    let mut rows = Vec::new();
    let (mut met, mut missed, mut skipped) = (0usize, 0usize, 0usize);
    let (mut bw_met, mut bw_missed) = (0usize, 0usize);
    let mut list_ratios = Vec::new();
    println!(
        "tensor-core policy against cuBLAS's default GEMM (tier {tier}); ratio = cuBLAS time / ours"
    );
    println!(
        "{:<5} {:<3} {:>5} {:>6} {:>6}  {:>9} {:>9} {:>8} {:>8} {:>9} {:>9} {:>6} {:>6} {:<6} {:>9}  kernel",
        "dtype",
        "op",
        "m",
        "n",
        "k",
        "ours TF/s",
        "cuBLAS",
        "ours GB/s",
        "cuBLAS",
        "W GB/s",
        "cuBLAS",
        "ratio",
        "target",
        "",
        "vs cuBLAS"
    );
    warm_up(ctx)?;
    let mut pool_bf16 = Pool::<bf16>::new();
    let mut pool_f16 = Pool::<f16>::new();
    let mut pool_f32 = Pool::<f32>::new();
    for dtype in &opts.dtypes {
        let ab = match dtype.as_str() {
            "bf16" => Dtype::Bf16,
            "f16" => Dtype::F16,
            // f32 inputs run as TF32 (contract tc-tf32-k8), against cuBLAS with TF32.
            "f32" => Dtype::F32,
            other => {
                return Err(format!(
                    "unknown dtype {other} for the tensor-core bench; use bf16, f16 or f32 (TF32)"
                )
                .into())
            }
        };
        for s in &opts.shapes {
            // NN and NT write the input type; TN accumulates into an f32 gradient.
            let c_dtype = if s.op == Op::Tn { Dtype::F32 } else { ab };
            let triple = gemm_runtime::DtypeTriple::new(ab, c_dtype, Dtype::F32);
            if ctx
                .route(TC, s.op, triple, s.m as u64, s.n as u64, s.k as u64)
                .is_none()
            {
                println!(
                    "{dtype:<5} {:<3} {:>5} {:>6} {:>6}  skipped: tier {tier} has no tensor-core route for {triple}",
                    s.op.to_string(),
                    s.m,
                    s.n,
                    s.k
                );
                skipped += 1;
                continue;
            }
            // TF32's own target wherever the half row has one: 0.80 of cuBLAS with TF32 on
            // the tuned rows, 0.90 on a shape list's.
            let tf32_target = if s.regime.is_some() { 0.90 } else { 0.80 };
            let s = &Shape {
                target: if ab == Dtype::F32 {
                    s.target.map(|_| tf32_target)
                } else {
                    s.target
                },
                ..*s
            };
            let sample = match (ab, c_dtype) {
                (Dtype::F32, _) => {
                    bench_row::<f32, f32>(ctx, &mut rng, &mut pool_f32, s, opts.reps, opts.check)?
                }
                (Dtype::Bf16, Dtype::F32) => {
                    bench_row::<bf16, f32>(ctx, &mut rng, &mut pool_bf16, s, opts.reps, opts.check)?
                }
                (Dtype::Bf16, _) => bench_row::<bf16, bf16>(
                    ctx,
                    &mut rng,
                    &mut pool_bf16,
                    s,
                    opts.reps,
                    opts.check,
                )?,
                (_, Dtype::F32) => {
                    bench_row::<f16, f32>(ctx, &mut rng, &mut pool_f16, s, opts.reps, opts.check)?
                }
                _ => bench_row::<f16, f16>(ctx, &mut rng, &mut pool_f16, s, opts.reps, opts.check)?,
            };
            let (m, n, k) = (s.m, s.n, s.k);
            let c_size = if c_dtype == Dtype::F32 { 4 } else { 2 };
            let flops = 2.0 * m as f64 * n as f64 * k as f64;
            // Each operand read once, C written once (and read once more when beta != 0).
            let c_passes = if s.beta != 0.0 { 2 } else { 1 };
            let ab_size = if ab == Dtype::F32 { 4 } else { 2 };
            let bytes = ((m * k + k * n) * ab_size + m * n * c_size * c_passes) as f64;
            let weight = (k * n * ab_size) as f64;
            let tf = |ms: f64| flops / (ms * 1e-3) / 1e12;
            let gb = |b: f64, ms: f64| b / (ms * 1e-3) / 1e9;
            let ratio = sample.cublas_ms / sample.ours_ms;
            let verdict = s.target.map(|t| ratio >= t);
            match verdict {
                Some(true) => met += 1,
                Some(false) => missed += 1,
                None => {}
            }
            // A shape list's decode rows of a weight >= 100 MB also stream >= 3.6 TB/s.
            let weight_tbps = gb(weight, sample.ours_ms) / 1e3;
            let bandwidth_verdict =
                (s.regime.is_some() && m <= 16 && k * n * ab_size >= DECODE_WEIGHT_MIN_BYTES)
                    .then_some(weight_tbps >= DECODE_WEIGHT_TBPS);
            match bandwidth_verdict {
                Some(true) => bw_met += 1,
                Some(false) => bw_missed += 1,
                None => {}
            }
            if s.regime.is_some() {
                list_ratios.push(ratio);
            }
            let info = sample.launch.kernel.and_then(kernel);
            let kernel_name = info.map_or("none", |k| k.name);
            println!(
                "{dtype:<5} {:<3} {m:>5} {n:>6} {k:>6}  {:>9.2} {:>9.2} {:>8.0} {:>8.0} {:>9.0} {:>9.0} {:>6.3} {:>6} {:<6} {:>9}  {}{}",
                s.op.to_string(),
                tf(sample.ours_ms),
                tf(sample.cublas_ms),
                gb(bytes, sample.ours_ms),
                gb(bytes, sample.cublas_ms),
                gb(weight, sample.ours_ms),
                gb(weight, sample.cublas_ms),
                ratio,
                s.target.map_or(String::new(), |t| format!("{t:.2}")),
                match verdict {
                    Some(true) => "met",
                    Some(false) => "missed",
                    None => "",
                },
                sample
                    .rel_diff
                    .map_or("-".to_string(), |d| format!("{d:.1e}")),
                kernel_name,
                match (sample.launch.unaligned, sample.launch.repacked, sample.prepared) {
                    (true, _, _) => " (unaligned)".to_string(),
                    (_, Some(r), true) => format!(
                        " (prepared B{}; per call {:.3})",
                        if r.a { ", A repacked" } else { "" },
                        sample.per_call_ms.map_or(0.0, |t| sample.cublas_ms / t)
                    ),
                    (_, None, true) => format!(
                        " (prepared B; per call {:.3})",
                        sample.per_call_ms.map_or(0.0, |t| sample.cublas_ms / t)
                    ),
                    (_, Some(r), false) => format!(
                        " (repacked{}{})",
                        if r.a { " A" } else { "" },
                        if r.b { " B" } else { "" }
                    ),
                    _ => String::new(),
                }
            );
            if let Some(d) = sample.rel_diff {
                // Both round the same f32-accumulated products to the output type: they may
                // differ by a rounding of the output (bf16 2^-8), never by more.
                if d > 1e-2 {
                    println!(
                        "  warning: {dtype} {} {m}x{n}x{k}: our output differs from cuBLAS's by {d:.2e} (relative)",
                        s.op
                    );
                }
            }
            rows.push(serde_json::json!({
                "policy": TC.as_str(), "op": s.op.to_string(),
                "dtype": dtype, "c_dtype": c_dtype.to_string(),
                "m": m, "n": n, "k": k,
                "ours_ms": sample.ours_ms, "cublas_ms": sample.cublas_ms,
                "ours_tflops": tf(sample.ours_ms), "cublas_tflops": tf(sample.cublas_ms),
                "ours_gbps": gb(bytes, sample.ours_ms), "cublas_gbps": gb(bytes, sample.cublas_ms),
                "ours_weight_gbps": gb(weight, sample.ours_ms),
                "cublas_weight_gbps": gb(weight, sample.cublas_ms),
                "ratio_to_cublas": ratio, "target": s.target, "met": verdict,
                "kernel": kernel_name, "unaligned": sample.launch.unaligned,
                "repacked_a": sample.launch.repacked.map(|r| r.a),
                "repacked_b": sample.launch.repacked.map(|r| r.b),
                "repack_scratch_bytes": sample.launch.repacked.map(|r| r.scratch_bytes),
                "prepared_weight": sample.prepared,
                "ours_per_call_repack_ms": sample.per_call_ms,
                "ratio_per_call_repack": sample.per_call_ms.map(|t| sample.cublas_ms / t),
                "grid": [sample.launch.grid.0, sample.launch.grid.1, sample.launch.grid.2],
                "cluster": [sample.launch.cluster.0, sample.launch.cluster.1, sample.launch.cluster.2],
                "input_sets": sample.sets, "timed_pairs": sample.timed, "launches_a_sample": sample.group,
                "rel_diff_vs_cublas": sample.rel_diff,
                "beta": s.beta,
                "regime": s.regime.map(Regime::as_str),
                "weight_tbps": weight_tbps,
                "weight_tbps_target": bandwidth_verdict.map(|_| DECODE_WEIGHT_TBPS),
                "weight_tbps_met": bandwidth_verdict,
                "cublas_mode": if ab == Dtype::F32 {
                    "cublasGemmEx, CUBLAS_COMPUTE_32F_FAST_TF32, CUBLAS_GEMM_DEFAULT"
                } else {
                    "default (cublasGemmEx, f32 compute, CUBLAS_GEMM_DEFAULT)"
                },
            }));
        }
    }
    let summary = format!(
        "tensor-core bench: {met} of {} targets met, {missed} missed{}",
        met + missed,
        if skipped > 0 {
            format!(", {skipped} rows skipped (no tensor-core route)")
        } else {
            String::new()
        }
    );
    println!("{summary}");
    let geomean = geometric_mean(list_ratios.iter().copied());
    if let Some(g) = geomean {
        println!(
            "shape list: geometric mean of the ratios {g:.3} over {} rows (target 1.0); decode weight bandwidth >= {DECODE_WEIGHT_TBPS} TB/s: {bw_met} met, {bw_missed} missed",
            list_ratios.len()
        );
    }
    Ok(serde_json::json!({
        "geometric_mean_ratio": geomean,
        "geometric_mean_target": geomean.map(|_| 1.0),
        "bandwidth_targets_met": bw_met, "bandwidth_targets_missed": bw_missed,
        "policy": TC.as_str(),
        "quick": opts.quick,
        "method": "one process; same buffers; alternating samples timed with CUDA events, each a group of launches of at least 0.2 ms (1-32 launches, the same count for both sides, rotating input sets), preceded (untimed) by the same side's launch on the previous input set so enqueue time is hidden; 4 warm-up pairs; median; 2-8 input sets rotating (together at least 3x L2 where 8 allow); outputs of both sides compared on one set",
        "rows": rows,
        "targets_met": met, "targets_missed": missed, "rows_skipped": skipped,
        "summary": summary,
    }))
}
