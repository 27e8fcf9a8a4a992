//! The tuning loop. For every op, (n, k) of the shape list and m bucket, it times the routed
//! kernel and every candidate (the tier's kernels of the region's policy and contract) at the
//! bucket's batch sizes, sums each kernel's times over them, and picks the fastest when it
//! beats the routed kernel by more than the threshold; ties and small gains keep the routed
//! kernel. The routes file then names, per region, the kernel the region ends with wherever
//! that differs from the routing without the file being rewritten, so a rerun keeps what an
//! earlier run chose unless something beats it.

use crate::buckets::{Bucket, Buckets};
use crate::error::TuneError;
use crate::shapes::{regime, NkShape, ShapeList};
use crate::tier_view::{measured_dtype, Dtypes, Pick, TierView};
use crate::timer::{Timer, TimerError};
use gemm_spec::{Dtype, DtypeTriple, Op, Policy, SpecSet, Tier};
use serde::Serialize;
use std::collections::{HashMap, HashSet};

macro_rules! kept {
    () => {
        "kept from the earlier tuning"
    };
}
/// How a note ends for a route the run kept: the routed kernel was timed and nothing beat it,
/// or (below) the range was not timed.
pub const KEPT: &str = kept!();
/// How a route's note ends when the run kept it untimed below `--from-m`; the file's assembly
/// puts the earlier file's own notes of that m range in its place (`routes_text::assembled`).
pub const KEPT_BELOW_FROM_M: &str = concat!(kept!(), " (not timed: below --from-m)");

/// What to tune.
#[derive(Clone, Debug)]
pub struct Options {
    pub tier: String,
    /// The policy whose routes are tuned (default tensor-core).
    pub policy: Policy,
    /// The ops timed, each at its own (n, k) of the list (default nn: `y = x·W`).
    pub ops: Vec<Op>,
    /// The operand type timed (default bf16); C is the same type for nn and nt, f32 for tn.
    /// The routes it writes cover every dtype their kernel builds that the region routes
    /// under the same contract.
    pub input: Dtype,
    pub buckets: Buckets,
    /// How much faster (0.03: 3%) a kernel must be than the routed one to replace it.
    pub threshold: f64,
    /// The routes file being rewritten, as the tier's routes name it (one of its
    /// `routes_files`), when the tier includes it: its routes are an earlier tuning, kept
    /// unless beaten, and the routing without them is the baseline.
    pub rewritten: Option<String>,
    /// Print a line to stderr as each (op, n, k) starts (the command-line tool does).
    pub progress: bool,
    /// Start no (op, n, k) once this long has passed since the run began: the ones not
    /// reached are listed in [`Tuning::unreached`] and keep their earlier routes, so a run cut
    /// to a GPU session's time still writes what it measured.
    pub time_limit: Option<std::time::Duration>,
    /// Time only the m buckets that reach this m or above (a prefill's tuning, say): a bucket
    /// wholly below it keeps the route it has (an earlier tuning's, written again) untimed;
    /// one whose earlier routes change kernel inside it is an error
    /// ([`TuneError::FromMSplitBucket`]).
    pub from_m: Option<u64>,
    /// Rounds of re-timing a winner against the routed kernel, alternating which goes first,
    /// before it replaces it (0: none). The median of the rounds' ratios must still beat the
    /// threshold: one timing of a long kernel can be off by more than the threshold (an
    /// H100's LM-head times moved 6-11% between two runs). Skipped where the timer cannot
    /// measure again (`--recorded`).
    pub confirm: u32,
    /// Time only these candidates (tile names such as `mid2`, or `family.tile`; empty: every
    /// candidate of the region's contract): a short GPU session's comparison of new tiles
    /// against the routing. The routed kernels are timed and stay candidates whatever this
    /// says, so only a listed kernel or a routed one can be chosen. A name no tile of the tier
    /// has is an error.
    pub only: Vec<String>,
}

impl Options {
    /// The defaults for `tier`: tensor-core, nn, bf16, the default buckets, 3%.
    pub fn new(tier: impl Into<String>) -> Options {
        Options {
            tier: tier.into(),
            policy: Policy::TensorCore,
            ops: vec![Op::Nn],
            input: Dtype::Bf16,
            buckets: Buckets::default(),
            threshold: 0.03,
            rewritten: None,
            progress: false,
            time_limit: None,
            from_m: None,
            confirm: 0,
            only: Vec::new(),
        }
    }
}

/// One time asked of the timer.
#[derive(Clone, Debug, Serialize)]
pub struct Measurement {
    pub op: String,
    pub dtype: String,
    pub m: u64,
    pub n: u64,
    pub k: u64,
    pub kernel: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ms: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub refused: Option<String>,
}

/// One kernel's time at one m of a bucket: the kernel that ran (its unaligned kernel where
/// it cannot take the operands).
#[derive(Clone, Debug, Serialize)]
pub struct AtM {
    pub m: u64,
    pub runs: String,
    pub ms: f64,
}

/// A kernel timed over a bucket.
#[derive(Clone, Debug, Serialize)]
pub struct Timed {
    #[serde(flatten)]
    pub pick: Pick,
    /// Summed over the bucket's measured m; `None` when skipped.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ms: Option<f64>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub at: Vec<AtM>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub skipped: Option<String>,
}

/// The decision for one (op, n, k, bucket).
#[derive(Clone, Debug, Serialize)]
pub struct Region {
    pub op: String,
    pub dtype: String,
    pub n: u64,
    pub k: u64,
    pub regime: &'static str,
    pub layers: Vec<String>,
    pub m: Bucket,
    pub measured_m: Vec<u64>,
    pub contract: String,
    /// The routes that serve it now, at each measured m.
    pub routed: Vec<Pick>,
    /// The routed kernel(s), timed.
    pub current: Timed,
    pub candidates: Vec<Timed>,
    /// The kernel that replaces the routed one, when one beats it by the threshold.
    pub chosen: Option<Pick>,
    /// 1 - chosen time / routed time.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub gain: Option<f64>,
    pub decision: String,
    /// The re-timings of the first timing's winner against the routed kernel, where asked.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub confirmation: Option<Confirmation>,
    /// Whether the routes file names the region (its kernel differs from the baseline).
    pub in_routes_file: bool,
}

/// Rounds of timing the first timing's winner and the routed kernel again, alternating which
/// goes first (summed over the bucket's measured m, as the first timing).
#[derive(Clone, Debug, Serialize)]
pub struct Confirmation {
    pub kernel: String,
    pub routed_ms: Vec<f64>,
    pub chosen_ms: Vec<f64>,
    /// 1 - the median over the rounds of the winner's time / the routed time.
    pub gain: f64,
    /// Whether that gain still beats the threshold (else the routed kernel is kept).
    pub confirmed: bool,
}

/// A route the routes file holds: one op, one (n, k), one m range (adjacent buckets with the
/// same kernel merged).
#[derive(Clone, Debug)]
pub struct TunedRoute {
    pub op: Op,
    pub n: u64,
    pub k: u64,
    pub m: Bucket,
    pub pick: Pick,
    pub dtypes: Dtypes,
    /// One line per bucket: times and why.
    pub notes: Vec<String>,
}

/// An m range of one (n, k) where an earlier file's route gave way to the tier's own kernel:
/// the file needs no route there, and says so in a note under the section's heading (the
/// report holds the region's times too).
#[derive(Debug, Clone)]
pub struct DroppedRoute {
    pub op: Op,
    pub n: u64,
    pub k: u64,
    pub m: Bucket,
    pub note: String,
}

/// What a run measured and decided, and the routes file it makes.
#[derive(Debug)]
pub struct Tuning {
    pub tier: String,
    pub policy: Policy,
    /// The triple timed for each op.
    pub measured: Vec<(Op, DtypeTriple)>,
    pub threshold: f64,
    pub buckets: Buckets,
    pub shapes: Vec<NkShape>,
    pub regions: Vec<Region>,
    pub measurements: Vec<Measurement>,
    pub routes: Vec<TunedRoute>,
    /// The earlier file's routes the tier's own kernels beat: no route, a note.
    pub dropped: Vec<DroppedRoute>,
    /// The (op, n, k) not started because the time limit had passed.
    pub unreached: Vec<(Op, u64, u64)>,
    /// The `from_m` of the run: the buckets below it were not timed.
    pub from_m: Option<u64>,
    /// The candidates the run was limited to (empty: all).
    pub only: Vec<String>,
}

impl Tuning {
    /// Whether this run decided the routes of `op` at (n, k): an op it tuned, at a shape of
    /// its list that it reached. Sections of an earlier file for anything else are kept.
    pub fn retuned(&self, op: Op, n: u64, k: u64) -> bool {
        self.measured.iter().any(|(o, _)| *o == op)
            && self.shapes.iter().any(|s| (s.n, s.k) == (n, k))
            && !self.unreached.contains(&(op, n, k))
    }
}

impl Tuning {
    /// The lines of the `[[route]]`s of routes file `file` (as the tier names it) that serve
    /// what this run tuned: its policy and its (op, dtype)s. The others (another dtype's, say)
    /// are kept where the file is rewritten (`routes_text::assembled`).
    pub fn tuned_route_lines(&self, tier: &Tier, file: &str) -> HashSet<usize> {
        self.measured
            .iter()
            .flat_map(|&(op, dtype)| tier.routes_for(self.policy, op, dtype))
            .filter(|r| r.location.file == file)
            .map(|r| r.location.line)
            .collect()
    }

    /// Whether any region's kernel changes: only then is a routes file written.
    pub fn changed(&self) -> bool {
        self.regions.iter().any(|r| r.chosen.is_some())
    }
}

/// A time's key: the kernel that runs, op, dtypes, m, n, k.
type Key = (String, Op, DtypeTriple, u64, u64, u64);

/// The timer behind a cache: each (kernel, shape) is timed once per run, and every time is
/// logged for the report.
struct Clock<'t> {
    timer: &'t mut dyn Timer,
    cache: HashMap<Key, Result<f64, String>>,
    log: Vec<Measurement>,
}

impl Clock<'_> {
    fn time(
        &mut self,
        kernel: &str,
        op: Op,
        dtype: DtypeTriple,
        (m, n, k): (u64, u64, u64),
    ) -> Result<Result<f64, String>, TuneError> {
        let key = (kernel.to_string(), op, dtype, m, n, k);
        if let Some(t) = self.cache.get(&key) {
            return Ok(t.clone());
        }
        let t = self.measure(kernel, op, dtype, (m, n, k))?;
        self.log.push(Measurement {
            op: op.to_string(),
            dtype: dtype.to_string(),
            m,
            n,
            k,
            kernel: kernel.to_string(),
            ms: t.as_ref().ok().copied(),
            refused: t.as_ref().err().cloned(),
        });
        self.cache.insert(key, t.clone());
        Ok(t)
    }
}

impl Clock<'_> {
    /// One time from the timer, uncached and unlogged: `Ok(Err(why))` when it refuses the
    /// kernel; a failure, or a value that is no time, stops the run.
    fn measure(
        &mut self,
        kernel: &str,
        op: Op,
        dtype: DtypeTriple,
        (m, n, k): (u64, u64, u64),
    ) -> Result<Result<f64, String>, TuneError> {
        let fail = |source| TuneError::Timer {
            kernel: kernel.to_string(),
            op,
            dtype,
            m,
            n,
            k,
            source,
        };
        match self.timer.time(kernel, m, n, k, op, dtype) {
            Ok(ms) if ms.is_finite() && ms >= 0.0 => Ok(Ok(ms)),
            Ok(ms) => Err(fail(TimerError::Failed(format!(
                "the timer gave {ms} ms, not a time"
            )))),
            Err(TimerError::Refused(why)) => Ok(Err(why)),
            Err(e @ TimerError::Failed(_)) => Err(fail(e)),
        }
    }

    /// `picks[i]`'s time at `ms[i]`, summed, measured again (not the cache's, not logged as a
    /// measurement); `None` when the timer refuses one now.
    fn retime(
        &mut self,
        view: &TierView<'_>,
        (op, dtype): (Op, DtypeTriple),
        picks: &[&Pick],
        (n, k): (u64, u64),
        ms: &[u64],
    ) -> Result<Option<f64>, TuneError> {
        let mut total = 0.0;
        for (&m, pick) in ms.iter().zip(picks) {
            let kernel = view.runs(pick, op, dtype, m, n, k);
            match self.measure(kernel, op, dtype, (m, n, k))? {
                Ok(t) => total += t,
                Err(_) => return Ok(None),
            }
        }
        Ok(Some(total))
    }
}

/// The routed kernels' and the winner's times in each round of a confirmation, and 1 - the
/// median of the rounds' ratios (winner / routed).
struct Rounds {
    routed_ms: Vec<f64>,
    chosen_ms: Vec<f64>,
    gain: f64,
}

/// `rounds` rounds of the routed kernels (`routed[i]` at `ms[i]`) and `chosen` timed again,
/// the routed first in even rounds and last in odd ones; `None` when one is refused.
fn confirm(
    view: &TierView<'_>,
    clock: &mut Clock<'_>,
    od: (Op, DtypeTriple),
    (routed, chosen): (&[Pick], &Pick),
    (nk, ms): ((u64, u64), &[u64]),
    rounds: u32,
) -> Result<Option<Rounds>, TuneError> {
    let routed: Vec<&Pick> = routed.iter().collect();
    let chosen: Vec<&Pick> = ms.iter().map(|_| chosen).collect();
    let (mut a, mut b, mut ratios) = (Vec::new(), Vec::new(), Vec::new());
    for round in 0..rounds {
        let (r, c) = if round % 2 == 0 {
            let r = clock.retime(view, od, &routed, nk, ms)?;
            (r, clock.retime(view, od, &chosen, nk, ms)?)
        } else {
            let c = clock.retime(view, od, &chosen, nk, ms)?;
            (clock.retime(view, od, &routed, nk, ms)?, c)
        };
        let (Some(r), Some(c)) = (r, c) else {
            return Ok(None);
        };
        a.push(r);
        b.push(c);
        ratios.push(if r > 0.0 { c / r } else { 1.0 });
    }
    ratios.sort_by(f64::total_cmp);
    let mid = ratios.len() / 2;
    let median = if ratios.len() % 2 == 1 {
        ratios[mid]
    } else {
        (ratios[mid - 1] + ratios[mid]) / 2.0
    };
    Ok(Some(Rounds {
        routed_ms: a,
        chosen_ms: b,
        gain: 1.0 - median,
    }))
}

/// Tunes `opts.tier` of `specs` for `shapes` with `timer`.
pub fn tune(
    specs: &SpecSet,
    shapes: &ShapeList,
    opts: &Options,
    timer: &mut dyn Timer,
) -> Result<Tuning, TuneError> {
    if !(0.0..1.0).contains(&opts.threshold) {
        return Err(TuneError::Threshold(opts.threshold));
    }
    if opts.ops.is_empty() {
        return Err(TuneError::NoOps);
    }
    let view = TierView::new(specs, &opts.tier, opts.policy, opts.rewritten.as_deref())?;
    check_only(specs, opts)?;
    let mut clock = Clock {
        timer,
        cache: HashMap::new(),
        log: Vec::new(),
    };
    let mut measured = Vec::new();
    let mut regions = Vec::new();
    let mut routes = Vec::new();
    let mut dropped = Vec::new();
    let mut unreached = Vec::new();
    let started = std::time::Instant::now();
    for &op in &opts.ops {
        let dtype = measured_dtype(op, opts.input);
        if !view.serves(op, dtype) {
            return Err(TuneError::NotRouted {
                tier: opts.tier.clone(),
                policy: opts.policy,
                op,
                dtype,
            });
        }
        measured.push((op, dtype));
        for (i, shape) in shapes.shapes.iter().enumerate() {
            if opts
                .time_limit
                .is_some_and(|limit| started.elapsed() >= limit)
            {
                unreached.push((op, shape.n, shape.k));
                continue;
            }
            if opts.progress {
                eprintln!(
                    "[{}/{}] {op} n = {}, k = {}",
                    i + 1,
                    shapes.shapes.len(),
                    shape.n,
                    shape.k
                );
            }
            let mut planned: Vec<TunedRoute> = Vec::new();
            for bucket in opts.buckets.iter() {
                let ms = bucket.measured_at(&shapes.m);
                let below = opts
                    .from_m
                    .is_some_and(|from| bucket.max.is_some_and(|max| max < from));
                if below {
                    if let Some(r) = kept_untimed(&view, (op, dtype), shape, *bucket, &ms)? {
                        merge_into(&mut planned, r);
                    }
                    continue;
                }
                let Some((region, in_file)) =
                    tune_region(&view, &mut clock, (op, dtype), shape, *bucket, &ms, opts)?
                else {
                    continue;
                };
                regions.push(region);
                match in_file {
                    InFile::Route(r) => merge_into(&mut planned, r),
                    InFile::Dropped(note) => dropped.push(DroppedRoute {
                        op,
                        n: shape.n,
                        k: shape.k,
                        m: *bucket,
                        note,
                    }),
                    InFile::Nothing => {}
                }
            }
            routes.extend(planned);
        }
    }
    Ok(Tuning {
        tier: opts.tier.clone(),
        policy: opts.policy,
        measured,
        threshold: opts.threshold,
        buckets: opts.buckets.clone(),
        shapes: shapes.shapes.clone(),
        regions,
        measurements: clock.log,
        routes,
        dropped,
        unreached,
        from_m: opts.from_m,
        only: opts.only.clone(),
    })
}

/// Refuses an `only` name no tile of the tier has (before a device is opened, by the
/// command-line tool; [`tune`] checks again).
pub fn check_only(specs: &SpecSet, opts: &Options) -> Result<(), TuneError> {
    let view = TierView::new(specs, &opts.tier, opts.policy, opts.rewritten.as_deref())?;
    match opts.only.iter().find(|o| {
        !view.tier.tiles.iter().any(|t| {
            listed_in(
                std::slice::from_ref(*o),
                &format!("{}.{}", t.family, t.name),
            )
        })
    }) {
        Some(name) => Err(TuneError::UnknownCandidate {
            name: name.clone(),
            tier: opts.tier.clone(),
        }),
        None => Ok(()),
    }
}

/// Whether the tile `kernel` (`family.tile`) is one `only` names (by `family.tile` or by
/// tile name); every kernel when `only` is empty.
fn listed_in(only: &[String], kernel: &str) -> bool {
    only.is_empty()
        || only.iter().any(|o| {
            o == kernel
                || kernel
                    .split_once('.')
                    .is_some_and(|(_, tile)| tile == o.as_str())
        })
}

/// What one tuned region puts in the routes file.
enum InFile {
    /// A route: its kernel is not the tier's own at every m of the region.
    Route(TunedRoute),
    /// No route where the earlier file had one: the tier's own kernel won; the note says so.
    Dropped(String),
    /// Nothing: the tier's own routing, as before.
    Nothing,
}

/// The m of `bucket` it is looked at: every one, an open last bucket up to four times its
/// start or its largest measured m, whichever is more.
fn bucket_ms(bucket: Bucket, ms: &[u64]) -> std::ops::RangeInclusive<u64> {
    let lo = bucket.min.max(1);
    lo..=bucket
        .max
        .unwrap_or_else(|| (4 * lo).max(ms.last().copied().unwrap_or(lo)))
}

/// Whether the rewritten routes file routes some m of `bucket` (its routing there is not
/// the tier's without the file).
fn file_routes_some(
    view: &TierView<'_>,
    (op, dtype): (Op, DtypeTriple),
    (n, k): (u64, u64),
    bucket: Bucket,
    ms: &[u64],
) -> bool {
    bucket_ms(bucket, ms).any(|m| {
        view.current(op, dtype, m, n, k).map(Pick::of)
            != view.base(op, dtype, m, n, k).map(Pick::of)
    })
}

/// The first m of `bucket` whose routing is not `pick` (and what it is there: `None`, no
/// route), or `None` when every m of it ([`bucket_ms`]) runs `pick`.
fn first_change(
    view: &TierView<'_>,
    (op, dtype): (Op, DtypeTriple),
    (n, k): (u64, u64),
    bucket: Bucket,
    ms: &[u64],
    pick: &Pick,
) -> Option<(u64, Option<Pick>)> {
    bucket_ms(bucket, ms).find_map(|m| {
        let here = view.current(op, dtype, m, n, k).map(Pick::of);
        (here.as_ref() != Some(pick)).then_some((m, here))
    })
}

/// A bucket below `--from-m`, untimed: the route to write when the rewritten file routes some
/// of it (an earlier tuning's choice, kept), `None` when nothing need be written (the tier's
/// own routing there, or no route). An earlier file's routing that changes kernel inside the
/// bucket (a file tuned over other buckets) cannot be kept as one route of this run's buckets:
/// an error, rather than a choice lost.
fn kept_untimed(
    view: &TierView<'_>,
    (op, dtype): (Op, DtypeTriple),
    shape: &NkShape,
    bucket: Bucket,
    ms: &[u64],
) -> Result<Option<TunedRoute>, TuneError> {
    let (n, k) = (shape.n, shape.k);
    let (lo, Some(_)) = (bucket.min.max(1), bucket.max) else {
        return Ok(None);
    };
    let Some(first) = view.current(op, dtype, lo, n, k) else {
        return Ok(None);
    };
    let Some(contract) = view.contract_of(&first.kernel_ref()).map(str::to_string) else {
        return Ok(None);
    };
    let pick = Pick::of(first);
    if !file_routes_some(view, (op, dtype), (n, k), bucket, ms) {
        return Ok(None); // the tier's own routing there: kept by writing nothing
    }
    if let Some((m, other)) = first_change(view, (op, dtype), (n, k), bucket, ms, &pick) {
        return Err(TuneError::FromMSplitBucket {
            op,
            n,
            k,
            bucket: bucket.label(),
            m,
            first: pick.kernel.clone(),
            other: other.map_or_else(|| "no route".to_string(), |p| p.kernel),
        });
    }
    Ok(Some(TunedRoute {
        op,
        n,
        k,
        m: bucket,
        dtypes: view.dtypes(
            &pick,
            op,
            (ms.first().copied().unwrap_or(lo), n, k),
            &contract,
        ),
        notes: vec![format!(
            "m {}: {}, {KEPT_BELOW_FROM_M}",
            bucket.label(),
            pick.kernel
        )],
        pick,
    }))
}

/// Appends `r`, or widens the last route when it is the same kernel on the adjacent bucket.
fn merge_into(planned: &mut Vec<TunedRoute>, r: TunedRoute) {
    if let Some(last) = planned.last_mut() {
        let adjacent = last.m.max.is_some_and(|max| max + 1 == r.m.min);
        if adjacent && last.pick == r.pick && last.dtypes == r.dtypes {
            last.m.max = r.m.max;
            last.notes.extend(r.notes);
            return;
        }
    }
    planned.push(r);
}

/// Sums `pick`'s times over `ms` (the kernel that runs each m); `Err` with why when the timer
/// refuses one.
fn time_over(
    view: &TierView<'_>,
    clock: &mut Clock<'_>,
    (op, dtype): (Op, DtypeTriple),
    pick: &Pick,
    (n, k): (u64, u64),
    ms: &[u64],
) -> Result<Result<(f64, Vec<AtM>), String>, TuneError> {
    let mut total = 0.0;
    let mut at = Vec::with_capacity(ms.len());
    for &m in ms {
        let runs = view.runs(pick, op, dtype, m, n, k);
        match clock.time(runs, op, dtype, (m, n, k))? {
            Ok(t) => {
                total += t;
                at.push(AtM {
                    m,
                    runs: runs.to_string(),
                    ms: t,
                });
            }
            Err(why) => return Ok(Err(format!("{runs} refused at m = {m}: {why}"))),
        }
    }
    Ok(Ok((total, at)))
}

fn timed(pick: Pick, t: Result<(f64, Vec<AtM>), String>) -> Timed {
    match t {
        Ok((ms, at)) => Timed {
            pick,
            ms: Some(ms),
            at,
            skipped: None,
        },
        Err(why) => Timed {
            pick,
            ms: None,
            at: Vec::new(),
            skipped: Some(why),
        },
    }
}

/// One region: its measurements, its decision, and what the routes file needs for it (a route,
/// or a note where an earlier route gave way to the tier's own kernel). `None` when no route
/// serves it (no region to tune).
fn tune_region(
    view: &TierView<'_>,
    clock: &mut Clock<'_>,
    (op, dtype): (Op, DtypeTriple),
    shape: &NkShape,
    bucket: Bucket,
    ms: &[u64],
    opts: &Options,
) -> Result<Option<(Region, InFile)>, TuneError> {
    let (n, k) = (shape.n, shape.k);
    let Some(&first_m) = ms.first() else {
        return Ok(None);
    };
    let Some(currents) = ms
        .iter()
        .map(|&m| view.current(op, dtype, m, n, k))
        .collect::<Option<Vec<_>>>()
    else {
        return Ok(None);
    };
    let Some(first) = currents.first() else {
        return Ok(None);
    };
    // Every m of one (n, k) reaches one contract (validation proved it): the first route's.
    let Some(contract) = view.contract_of(&first.kernel_ref()).map(str::to_string) else {
        return Ok(None);
    };
    let routed: Vec<Pick> = currents.iter().map(|r| Pick::of(r)).collect();
    // One kernel over the whole bucket, not only at the measured m, where the rewritten file
    // routes some of it: an earlier file tuned over other buckets may change kernel between
    // them, and writing nothing would give its choices up. (A change of the tier's own routes
    // inside the bucket is kept by writing nothing.)
    let from_file = file_routes_some(view, (op, dtype), (n, k), bucket, ms);
    let constant = routed
        .first()
        .filter(|r0| routed.iter().all(|p| p == *r0))
        .filter(|r0| {
            !from_file || first_change(view, (op, dtype), (n, k), bucket, ms, r0).is_none()
        })
        .cloned();
    // The routed kernels, each at its own m.
    let mut current_total = Ok((0.0, Vec::new()));
    for (&m, pick) in ms.iter().zip(&routed) {
        let t = time_over(view, clock, (op, dtype), pick, (n, k), &[m])?;
        current_total = match (current_total, t) {
            (Ok((a, mut at_a)), Ok((b, at_b))) => {
                at_a.extend(at_b);
                Ok((a + b, at_a))
            }
            (Err(e), _) | (_, Err(e)) => Err(e),
        };
    }
    let mut listed = view.candidates(op, dtype, &contract, first, k);
    // With --only, the listed kernels and the routed ones (so that where the routing must
    // become one kernel, below, the fastest of both is it).
    listed.retain(|c| {
        listed_in(&opts.only, &c.pick.kernel) || routed.iter().any(|r| r.kernel == c.pick.kernel)
    });
    // Every kernel one m needs, timed together: the GPU timer keeps one shape's buffers
    // while it times every kernel on them. The sums below read the clock's cache.
    for (&m, pick) in ms.iter().zip(&routed) {
        let picks = listed
            .iter()
            .filter(|c| c.skipped.is_none())
            .map(|c| &c.pick);
        for p in std::iter::once(pick).chain(picks) {
            // A refusal is kept in the cache, and read where the sums are made.
            let _ = clock.time(view.runs(p, op, dtype, m, n, k), op, dtype, (m, n, k))?;
        }
    }
    let current_label = constant.clone().unwrap_or_else(|| Pick {
        kernel: "(several)".into(),
        unaligned: None,
    });
    let current = timed(current_label, current_total);
    let mut candidates = Vec::new();
    for c in listed {
        let t = match c.skipped {
            Some(why) => Err(why),
            None => time_over(view, clock, (op, dtype), &c.pick, (n, k), ms)?,
        };
        candidates.push(timed(c.pick, t));
    }
    // The fastest; on a tie the routed kernel, then the tier's tile order.
    let best = candidates
        .iter()
        .filter_map(|c| c.ms.map(|t| (t, Some(&c.pick) != constant.as_ref(), c)))
        .min_by(|a, b| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)))
        .map(|(_, _, c)| c);
    let pct = |x: f64| format!("{:.1}%", 100.0 * x);
    let (chosen, gain, decision) = match (current.ms, best) {
        (None, _) => (
            None,
            None,
            format!(
                "kept: the routed kernel could not be timed ({})",
                current.skipped.clone().unwrap_or_default()
            ),
        ),
        (_, None) => (None, None, "kept: no candidate could be timed".to_string()),
        (Some(_), Some(b)) if Some(&b.pick) == constant.as_ref() => (
            None,
            None,
            "kept: the routed kernel is the fastest".to_string(),
        ),
        (Some(cur), Some(b)) => {
            let t = b.ms.unwrap_or(f64::INFINITY);
            let gain = if cur > 0.0 { 1.0 - t / cur } else { 0.0 };
            if t < cur * (1.0 - opts.threshold) {
                (
                    Some(b.pick.clone()),
                    Some(gain),
                    format!(
                        "chosen: {} is {} faster than the routed {}",
                        b.pick.kernel,
                        pct(gain),
                        current.pick.kernel
                    ),
                )
            } else {
                (
                    None,
                    None,
                    format!(
                        "kept: the fastest other kernel, {}, is {} faster, not more than the threshold {}",
                        b.pick.kernel,
                        pct(gain),
                        pct(opts.threshold)
                    ),
                )
            }
        }
    };
    // The first timing's winner timed again against the routed kernels, in turns: it
    // replaces them only if the rounds' median still beats the threshold. Not where the
    // rewritten file's routing changes kernel inside the bucket: one kernel replaces that
    // routing whatever the rounds say (below).
    let mut confirmation: Option<Confirmation> = None;
    let must_replace = constant.is_none() && from_file;
    let (chosen, gain, decision) = match (&chosen, gain) {
        (Some(pick), Some(first)) if opts.confirm > 0 && clock.timer.retimes() && !must_replace => {
            match confirm(
                view,
                clock,
                (op, dtype),
                (&routed, pick),
                ((n, k), ms),
                opts.confirm,
            )? {
                Some(Rounds {
                    routed_ms,
                    chosen_ms,
                    gain: again,
                }) => {
                    let ok = again > opts.threshold;
                    let rounds = routed_ms.len();
                    confirmation = Some(Confirmation {
                        kernel: pick.kernel.clone(),
                        routed_ms,
                        chosen_ms,
                        gain: again,
                        confirmed: ok,
                    });
                    if ok {
                        let d = format!(
                            "{decision} (confirmed: {} in the median of {rounds} re-timings in turns)",
                            pct(again)
                        );
                        (chosen.clone(), Some(first), d)
                    } else {
                        let d = format!(
                            "kept: {} was {} faster than the routed {} in the first timing, {} in the median of {rounds} re-timings in turns, not more than the threshold {}",
                            pick.kernel,
                            pct(first),
                            current.pick.kernel,
                            pct(again),
                            pct(opts.threshold)
                        );
                        (None, None, d)
                    }
                }
                None => (
                    None,
                    None,
                    format!(
                        "kept: {} or the routed kernel was refused when timed again",
                        pick.kernel
                    ),
                ),
            }
        }
        _ => (chosen, gain, decision),
    };
    // A routing of the rewritten file that changes kernel inside the bucket (an earlier file
    // tuned over other buckets) cannot be written back as one route: the fastest single
    // kernel replaces it, rather than the region falling back to the routing without the
    // file unsaid. (The tier's own changes inside a bucket stay by writing nothing.)
    let forced = chosen.is_none() && constant.is_none() && from_file && best.is_some();
    let (chosen, gain, decision) = match (&chosen, &constant, best) {
        (None, None, Some(b)) if from_file => (
            Some(b.pick.clone()),
            Some(match (current.ms, b.ms) {
                (Some(cur), Some(t)) if cur > 0.0 => 1.0 - t / cur,
                _ => 0.0,
            }),
            format!(
                "chosen: the routing changes kernel inside the bucket, which one route cannot keep; {} is the fastest single kernel ({})",
                b.pick.kernel, decision
            ),
        ),
        _ => (chosen, gain, decision),
    };
    // The kernel the region ends with, and whether that is not what it has without the file.
    let end = chosen.clone().or(constant);
    let differs = end.as_ref().is_some_and(|e| {
        ms.iter()
            .any(|&m| view.base(op, dtype, m, n, k).map(Pick::of).as_ref() != Some(e))
    });
    let ms_of = |p: &Pick| {
        candidates
            .iter()
            .find(|c| &c.pick == p)
            .and_then(|c| c.ms)
            .map_or("not timed".to_string(), |t| format!("{t:.4} ms"))
    };
    let current_ms = current.ms.map_or("-".into(), |t| format!("{t:.4} ms"));
    let route = match (&end, differs) {
        (Some(pick), true) => {
            let again = confirmation.as_ref().map_or(String::new(), |c| {
                format!(
                    "; {} in the median of {} re-timings in turns",
                    pct(c.gain),
                    c.routed_ms.len()
                )
            });
            let note = match (&chosen, gain) {
                (Some(_), Some(g)) => format!(
                    "m {} (timed at m = {}): {} {} against {} for the routed {} ({} faster{again})",
                    bucket.label(),
                    join(ms),
                    pick.kernel,
                    ms_of(pick),
                    current_ms,
                    current.pick.kernel,
                    pct(g)
                ),
                _ => format!(
                    "m {} (timed at m = {}): {} {}, {KEPT}",
                    bucket.label(),
                    join(ms),
                    pick.kernel,
                    ms_of(pick)
                ),
            };
            Some(TunedRoute {
                op,
                n,
                k,
                m: bucket,
                pick: pick.clone(),
                dtypes: view.dtypes(pick, op, (first_m, n, k), &contract),
                notes: vec![note],
            })
        }
        _ => None,
    };
    // A choice that needs no route is the tier's own kernel beating a route of the earlier
    // file (only such a route makes the routed kernel differ from the tier's own): the file
    // loses that route, and keeps a note of why. The note names the tier's kernel as the
    // range's where the tier runs it at every m of the range, else the tier's routing.
    let in_file = match (route, &chosen, gain) {
        (Some(r), _, _) => InFile::Route(r),
        (None, Some(pick), Some(g)) => {
            let everywhere = bucket_ms(bucket, ms)
                .all(|m| view.base(op, dtype, m, n, k).map(Pick::of).as_ref() == Some(pick));
            let whose = if everywhere {
                format!("the tier's own {}", pick.kernel)
            } else {
                format!(
                    "the tier's own routing ({} at m = {})",
                    pick.kernel,
                    join(ms)
                )
            };
            let forced = if forced {
                "; the earlier routing changed kernel inside the range, which one route cannot keep"
            } else {
                ""
            };
            InFile::Dropped(format!(
                "m {} (timed at m = {}): no route: {whose} {} against {} for the routed {} ({} faster{forced})",
                bucket.label(),
                join(ms),
                ms_of(pick),
                current_ms,
                current.pick.kernel,
                pct(g)
            ))
        }
        _ => InFile::Nothing,
    };
    let region = Region {
        op: op.to_string(),
        dtype: dtype.to_string(),
        n,
        k,
        regime: regime(n, k),
        layers: shape.layers.clone(),
        m: bucket,
        measured_m: ms.to_vec(),
        contract,
        routed,
        current,
        candidates,
        chosen,
        gain,
        decision,
        confirmation,
        in_routes_file: matches!(in_file, InFile::Route(_)),
    };
    Ok(Some((region, in_file)))
}

fn join(ms: &[u64]) -> String {
    ms.iter().map(u64::to_string).collect::<Vec<_>>().join(", ")
}
