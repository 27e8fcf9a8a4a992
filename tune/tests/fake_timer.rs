//! The tuner on the CPU: a fake timer gives deterministic times from a table, over the shipped
//! specs (or a temp copy of them with the routes file written in and included).

use gemm_aot_tune::{
    report, rewritten_name, routes_file, tune, Options, Provenance, RecordedTimer, ShapeList,
    Timer, TimerError, TuneError, Tuning,
};
use gemm_spec::{Dtype, DtypeTriple, Op, Policy, SpecSet};
use std::path::{Path, PathBuf};

const SHAPES: &str = r#"
m = [1, 8, 16, 32, 64, 128, 256, 512, 1024, 2048, 4096]

[[model]]
name = "Test"
config = "for the tuner's tests"
layers = [
  { layer = "o_proj", n = 4096, k = 4096 },
  { layer = "up_proj", n = 14336, k = 4096 },
  { layer = "lm_head (odd)", n = 50257, k = 768 },
]
"#;

/// A time of the table: (kernel, (n, k), m range, ms).
type Rule = (&'static str, (u64, u64), (u64, u64), f64);

/// Times from a table: the first rule that matches, else 1 ms; refusals by kernel.
#[derive(Default)]
struct FakeTimer {
    rules: Vec<Rule>,
    refused: Vec<(&'static str, &'static str)>,
    fail: bool,
    /// Wall time each measurement takes (for the time limit).
    delay: std::time::Duration,
    calls: Vec<(String, u64, u64, u64, Op, DtypeTriple)>,
    /// Times for a (kernel, shape) asked again (a re-timing): the first matching rule, else
    /// the first time's.
    again: Vec<Rule>,
}

impl FakeTimer {
    fn rule(mut self, kernel: &'static str, nk: (u64, u64), m: (u64, u64), ms: f64) -> Self {
        self.rules.push((kernel, nk, m, ms));
        self
    }

    fn again(mut self, kernel: &'static str, nk: (u64, u64), m: (u64, u64), ms: f64) -> Self {
        self.again.push((kernel, nk, m, ms));
        self
    }
}

fn matching(rules: &[Rule], kernel: &str, m: u64, n: u64, k: u64) -> Option<f64> {
    rules
        .iter()
        .find(|(kk, nk, (lo, hi), _)| *kk == kernel && *nk == (n, k) && (*lo..=*hi).contains(&m))
        .map(|r| r.3)
}

impl Timer for FakeTimer {
    fn time(
        &mut self,
        kernel: &str,
        m: u64,
        n: u64,
        k: u64,
        op: Op,
        dtype: DtypeTriple,
    ) -> Result<f64, TimerError> {
        let asked_before = self
            .calls
            .iter()
            .any(|c| (c.0.as_str(), c.1, c.2, c.3, c.4, c.5) == (kernel, m, n, k, op, dtype));
        self.calls.push((kernel.to_string(), m, n, k, op, dtype));
        std::thread::sleep(self.delay);
        if self.fail {
            return Err(TimerError::Failed("the device fell off the bus".into()));
        }
        if let Some((_, why)) = self.refused.iter().find(|(kk, _)| *kk == kernel) {
            return Err(TimerError::Refused(why.to_string()));
        }
        let again = asked_before
            .then(|| matching(&self.again, kernel, m, n, k))
            .flatten();
        Ok(again
            .or_else(|| matching(&self.rules, kernel, m, n, k))
            .unwrap_or(1.0))
    }
}

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

fn shapes() -> ShapeList {
    ShapeList::parse("test-shapes.toml", SHAPES).unwrap()
}

fn load(dir: &Path) -> SpecSet {
    gemm_codegen::pipeline::load_specs(dir).unwrap_or_else(|e| panic!("{e}"))
}

fn shipped() -> SpecSet {
    load(&repo().join("specs"))
}

fn provenance() -> Provenance {
    Provenance {
        shapes: "test-shapes.toml".into(),
        date: "2026-12-01".into(),
        device: "a fake timer".into(),
        method: "a table".into(),
        file: "sm90a.tuned.toml".into(),
    }
}

fn run(specs: &SpecSet, timer: &mut FakeTimer, opts: &Options) -> Tuning {
    tune(specs, &shapes(), opts, timer).unwrap_or_else(|e| panic!("{e}"))
}

/// A temp copy of the shipped specs whose sm90a tier includes `routes` as sm90a.tuned.toml.
fn specs_with(routes: &str) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    for e in std::fs::read_dir(repo().join("specs")).unwrap() {
        let p = e.unwrap().path();
        if p.extension().is_some_and(|x| x == "toml") {
            let mut text = std::fs::read_to_string(&p).unwrap();
            // The shipped tier may list its tuned file already; that file is replaced below.
            if p.file_name().is_some_and(|f| f == "sm90a.toml")
                && !text.contains("\nroutes_files = ")
            {
                let at = text.find("\nfamilies = ").unwrap() + 1;
                let end = at + text[at..].find('\n').unwrap() + 1;
                text.insert_str(end, "routes_files = [\"sm90a.tuned.toml\"]\n");
            }
            std::fs::write(dir.path().join(p.file_name().unwrap()), text).unwrap();
        }
    }
    std::fs::write(dir.path().join("sm90a.tuned.toml"), routes).unwrap();
    dir
}

fn bf16_nn() -> DtypeTriple {
    "bf16.bf16.f32".parse().unwrap()
}

fn kernel_at(specs: &SpecSet, m: u64, n: u64, k: u64) -> String {
    specs
        .tier("sm90a")
        .unwrap()
        .select(Policy::TensorCore, Op::Nn, bf16_nn(), m, n, k)
        .unwrap()
        .kernel_ref()
}

/// A kernel 20% faster than the routed tcwide.mid64 at (4096, 4096) for m 33-64.
fn faster_mid() -> FakeTimer {
    FakeTimer::default().rule("tcwide.mid", (4096, 4096), (33, 64), 0.8)
}

#[test]
fn picks_the_fastest_and_writes_specs_that_validate() {
    let t = run(&shipped(), &mut faster_mid(), &Options::new("sm90a"));
    assert!(t.changed());
    assert_eq!(t.routes.len(), 1, "{:?}", t.routes);
    let text = routes_file(&t, &provenance()).unwrap();
    assert!(
        text.contains(
            "[[route]]\npolicy = \"tensor-core\"\nop = \"nn\"\ndtype = \"any\"\nm = { min = 33, max = 64 }\nn = { min = 4096, max = 4096 }\nk = { min = 4096, max = 4096 }\nkernel = \"tcwide.mid\"\nunaligned = \"tcmma.any\"\n"
        ),
        "{text}"
    );
    assert!(
        text.starts_with("# Routes of tier sm90a tuned by `gemm-aot tune` for test-shapes.toml"),
        "{text}"
    );
    assert!(
        text.contains("# nn n = 4096, k = 4096: Test o_proj\n"),
        "{text}"
    );
    assert!(
        text.contains(
            "tcwide.mid 0.8000 ms against 1.0000 ms for the routed tcwide.mid64 (20.0% faster)"
        ),
        "{text}"
    );
    let header: Vec<&str> = text.lines().take_while(|l| l.starts_with('#')).collect();
    assert!(
        header.len() >= 6 && header.iter().all(|l| l.len() <= 96),
        "{header:#?}"
    );
    // Deterministic.
    let again = run(&shipped(), &mut faster_mid(), &Options::new("sm90a"));
    assert_eq!(routes_file(&again, &provenance()).unwrap(), text);
    // Written into the specs and included by the tier, it validates and routes.
    let dir = specs_with(&text);
    let v = gemm_spec::load_dir(
        dir.path(),
        gemm_codegen::pipeline::template_files(&gemm_codegen::Templates::Shipped)
            .unwrap()
            .kinds(),
        &gemm_codegen::shipped_specs::defaults(false),
    )
    .unwrap_or_else(|e| panic!("{e}"));
    assert!(v.warnings.is_empty(), "{:?}", v.warnings);
    assert_eq!(kernel_at(&v.specs, 64, 4096, 4096), "tcwide.mid");
    assert_eq!(kernel_at(&v.specs, 64, 4096, 4104), "tcwide.mid64");
    assert_eq!(kernel_at(&v.specs, 16, 4096, 4096), "tcdec.dec32");
}

fn confirming(rounds: u32) -> Options {
    let mut o = Options::new("sm90a");
    o.confirm = rounds;
    o
}

#[test]
fn a_winner_timed_again_in_turns_replaces_the_routed_kernel_only_if_it_still_wins() {
    // Still 20% faster when timed again: chosen, and the rounds are in the report.
    let mut timer = faster_mid();
    let t = run(&shipped(), &mut timer, &confirming(3));
    let r = region(&t);
    assert_eq!(
        r.chosen.as_ref().map(|p| p.kernel.as_str()),
        Some("tcwide.mid")
    );
    let c = r.confirmation.as_ref().unwrap();
    assert_eq!((c.routed_ms.len(), c.chosen_ms.len()), (3, 3));
    assert!(c.confirmed && (c.gain - 0.2).abs() < 1e-9, "{c:?}");
    assert!(
        r.decision
            .contains("(confirmed: 20.0% in the median of 3 re-timings in turns)"),
        "{}",
        r.decision
    );
    let doc = report(&t, &provenance(), None);
    let in_report = doc["regions"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["n"] == 4096 && r["k"] == 4096 && r["measured_m"] == serde_json::json!([64]))
        .unwrap();
    assert_eq!(in_report["confirmation"]["kernel"], "tcwide.mid");
    assert_eq!(in_report["confirmation"]["confirmed"], true);
    assert!(
        routes_file(&t, &provenance()).unwrap().contains(
            "tcwide.mid 0.8000 ms against 1.0000 ms for the routed tcwide.mid64 (20.0% faster; 20.0% in the median of 3 re-timings in turns)"
        )
    );
    // In turns: the routed kernel first, then the winner, then the winner first.
    let again: Vec<&str> = timer
        .calls
        .iter()
        .filter(|c| (c.1, c.2, c.3) == (64, 4096, 4096))
        .map(|c| c.0.as_str())
        .collect();
    let tail = &again[again.len() - 6..];
    assert_eq!(
        tail,
        [
            "tcwide.mid64",
            "tcwide.mid",
            "tcwide.mid",
            "tcwide.mid64",
            "tcwide.mid64",
            "tcwide.mid"
        ]
    );
    // A first timing's win that is gone when timed again: the routed kernel stays, and says why.
    let mut noisy = faster_mid().again("tcwide.mid", (4096, 4096), (33, 64), 0.99);
    let t = run(&shipped(), &mut noisy, &confirming(3));
    assert!(!t.changed());
    let r = region(&t);
    assert!(r.chosen.is_none());
    let c = r.confirmation.as_ref().unwrap();
    assert!(!c.confirmed && (c.gain - 0.01).abs() < 1e-9, "{c:?}");
    assert_eq!(
        r.decision,
        "kept: tcwide.mid was 20.0% faster than the routed tcwide.mid64 in the first timing, 1.0% in the median of 3 re-timings in turns, not more than the threshold 3.0%"
    );
    assert!(routes_file(&t, &provenance()).is_none());
    // Without rounds, that first timing decides.
    let mut noisy = faster_mid().again("tcwide.mid", (4096, 4096), (33, 64), 0.99);
    let t = run(&shipped(), &mut noisy, &Options::new("sm90a"));
    assert!(t.changed() && region(&t).confirmation.is_none());
}

#[test]
fn the_median_of_the_rounds_decides_not_one_round() {
    // One slow re-timing of three: the median (0.8 / 1.0) still wins.
    let t = with_slow_retimings(&[3]);
    let r = region(&t);
    let c = r.confirmation.as_ref().unwrap();
    assert_eq!(
        c.chosen_ms.iter().filter(|&&x| x == 1.5).count(),
        1,
        "{c:?}"
    );
    assert!(c.confirmed && r.chosen.is_some(), "{c:?}");
    // Two slow rounds of three: the median (1.5 / 1.0) loses, whatever the best round says.
    let t = with_slow_retimings(&[3, 4]);
    let r = region(&t);
    let c = r.confirmation.as_ref().unwrap();
    assert_eq!(
        c.chosen_ms.iter().filter(|&&x| x == 1.5).count(),
        2,
        "{c:?}"
    );
    assert!(!c.confirmed && r.chosen.is_none(), "{c:?}");
    assert!(!t.changed());
}

/// The region of `faster_mid`'s winner (4096 x 4096, the bucket holding m = 64).
fn region(t: &Tuning) -> gemm_aot_tune::Region {
    t.regions
        .iter()
        .find(|r| (r.n, r.k) == (4096, 4096) && r.m.contains(64))
        .cloned()
        .unwrap()
}

/// `faster_mid`'s winner timed at 1.5 ms at the given timings of it (1: the first timing, 2
/// to 4: the three re-timings), a run with three rounds of confirmation over it.
fn with_slow_retimings(slow: &'static [u32]) -> Tuning {
    struct SlowRounds {
        inner: FakeTimer,
        seen: u32,
        slow: &'static [u32],
    }
    impl Timer for SlowRounds {
        fn time(
            &mut self,
            kernel: &str,
            m: u64,
            n: u64,
            k: u64,
            op: Op,
            dtype: DtypeTriple,
        ) -> Result<f64, TimerError> {
            let t = self.inner.time(kernel, m, n, k, op, dtype)?;
            if kernel == "tcwide.mid" && (m, n, k) == (64, 4096, 4096) {
                self.seen += 1;
                if self.slow.contains(&self.seen) {
                    return Ok(1.5);
                }
            }
            Ok(t)
        }
    }
    let mut timer = SlowRounds {
        inner: faster_mid(),
        seen: 0,
        slow,
    };
    tune(&shipped(), &shapes(), &confirming(3), &mut timer).unwrap()
}

#[test]
fn rerunning_over_the_written_file_writes_nothing() {
    let first = run(&shipped(), &mut faster_mid(), &Options::new("sm90a"));
    let dir = specs_with(&routes_file(&first, &provenance()).unwrap());
    let specs = load(dir.path());
    let tier = specs.tier("sm90a").unwrap();
    let out = dir.path().join("sm90a.tuned.toml");
    let mut opts = Options::new("sm90a");
    opts.rewritten = rewritten_name(dir.path(), tier, &out);
    assert_eq!(opts.rewritten.as_deref(), Some("sm90a.tuned.toml"));
    let t = run(&specs, &mut faster_mid(), &opts);
    assert!(!t.changed());
    assert_eq!(routes_file(&t, &provenance()), None);
    let region = t
        .regions
        .iter()
        .find(|r| r.n == 4096 && r.k == 4096 && r.m.min == 33)
        .unwrap();
    assert_eq!(region.decision, "kept: the routed kernel is the fastest");
    assert!(
        region.in_routes_file,
        "the earlier choice stays in the file"
    );
    // Something new beats the routing: the file is written again, the earlier choice kept.
    let mut timer = faster_mid().rule("tcwide.wide", (14336, 4096), (65, 256), 0.5);
    let t = run(&specs, &mut timer, &opts);
    assert!(t.changed());
    let text = routes_file(&t, &provenance()).unwrap();
    assert_eq!(t.routes.len(), 2, "{text}");
    assert!(
        text.contains("tcwide.mid 0.8000 ms, kept from the earlier tuning"),
        "{text}"
    );
    assert!(text.contains("kernel = \"tcwide.wide\""), "{text}");
    // Without the file as the baseline (it is not the one rewritten), it is the routing.
    let mut other = Options::new("sm90a");
    other.rewritten = None;
    let t = run(&specs, &mut faster_mid(), &other);
    assert_eq!(routes_file(&t, &provenance()), None);
}

#[test]
fn ties_and_gains_within_the_threshold_keep_the_routed_kernel() {
    // Every kernel 1 ms: all tie with the routed one.
    let t = run(
        &shipped(),
        &mut FakeTimer::default(),
        &Options::new("sm90a"),
    );
    assert!(!t.changed());
    assert!(t.routes.is_empty());
    assert!(t
        .regions
        .iter()
        .all(|r| r.decision == "kept: the routed kernel is the fastest"));
    // 2% faster: below 3%.
    let small = || FakeTimer::default().rule("tcwide.mid", (4096, 4096), (33, 64), 0.98);
    let t = run(&shipped(), &mut small(), &Options::new("sm90a"));
    assert!(!t.changed());
    let region = t
        .regions
        .iter()
        .find(|r| r.n == 4096 && r.k == 4096 && r.m.min == 33)
        .unwrap();
    assert_eq!(
        region.decision,
        "kept: the fastest other kernel, tcwide.mid, is 2.0% faster, not more than the threshold 3.0%"
    );
    // A lower threshold takes it.
    let mut opts = Options::new("sm90a");
    opts.threshold = 0.01;
    let t = run(&shipped(), &mut small(), &opts);
    assert_eq!(t.routes.len(), 1);
    assert!(matches!(
        tune(
            &shipped(),
            &shapes(),
            &Options {
                threshold: 1.0,
                ..Options::new("sm90a")
            },
            &mut FakeTimer::default()
        ),
        Err(TuneError::Threshold(_))
    ));
}

#[test]
fn kernels_of_another_contract_are_never_timed_or_chosen() {
    let mut timer = FakeTimer::default();
    for k in [
        "tcasync32.dec",
        "tcasync32.mid",
        "tcasync32.wide",
        "tcmma32.any",
        "fma.mid",
        "fma.tiled",
        "fmadecs.dec4",
    ] {
        for nk in [(4096, 4096), (14336, 4096), (50257, 768)] {
            timer = timer.rule(k, nk, (0, u64::MAX), 0.001);
        }
    }
    let specs = shipped();
    let t = run(&specs, &mut timer, &Options::new("sm90a"));
    assert!(!t.changed());
    let contracts: std::collections::BTreeSet<&str> = timer
        .calls
        .iter()
        .map(|c| {
            let family = c.0.split('.').next().unwrap();
            specs.family(family).unwrap().contract.as_str()
        })
        .collect();
    assert_eq!(contracts.into_iter().collect::<Vec<_>>(), ["tc-k16"]);
    assert!(timer
        .calls
        .iter()
        .all(|c| c.4 == Op::Nn && c.5 == bf16_nn()));
}

#[test]
fn only_the_listed_candidates_are_timed_and_only_they_can_replace_the_routing() {
    // At (4096, 4096), m 33-64: tcwide.mid 20% faster than the routed tcwide.mid64, and
    // tcwide.wide faster still.
    let timer = || faster_mid().rule("tcwide.wide", (4096, 4096), (33, 64), 0.5);
    let all = run(&shipped(), &mut timer(), &Options::new("sm90a"));
    assert!(
        all.routes.iter().any(|r| r.pick.kernel == "tcwide.wide"),
        "{:?}",
        all.routes
    );
    let mut opts = Options::new("sm90a");
    opts.only = vec!["mid".into(), "tcwidechunk.mid2xa2".into()];
    let mut only = timer();
    let t = run(&shipped(), &mut only, &opts);
    let kernels: Vec<&str> = t.routes.iter().map(|r| r.pick.kernel.as_str()).collect();
    assert_eq!(kernels, ["tcwide.mid"], "{:?}", t.routes);
    // At each shape, the routed kernel and the listed ones, nothing else.
    let specs = shipped();
    for c in &only.calls {
        assert!(
            c.0 == "tcwide.mid" || c.0 == kernel_at(&specs, c.1, c.2, c.3),
            "{c:?}"
        );
    }
    assert!(
        only.calls.len() < timer_calls(&all),
        "{} calls",
        only.calls.len()
    );
    let doc = report(&t, &provenance(), None);
    assert_eq!(
        doc["only"],
        serde_json::json!(["mid", "tcwidechunk.mid2xa2"])
    );
    // --recorded over this report takes its --only.
    let recorded = RecordedTimer::from_report(&doc.to_string(), "only.json").unwrap();
    assert_eq!(recorded.only(), ["mid", "tcwidechunk.mid2xa2"]);
    // A name the tier has no tile of is refused before anything is timed.
    opts.only = vec!["mid2xb9".into()];
    let mut none = timer();
    match tune(&shipped(), &shapes(), &opts, &mut none) {
        Err(e @ TuneError::UnknownCandidate { .. }) => {
            assert!(
                e.to_string()
                    .starts_with("--only mid2xb9: tier sm90a has no tile of that name"),
                "{e}"
            )
        }
        other => panic!("{:?}", other.map(|t| t.routes.len())),
    }
    assert!(none.calls.is_empty());
}

/// How many times a run asked of its timer (its report's measurements).
fn timer_calls(t: &Tuning) -> usize {
    t.measurements.len()
}

#[test]
fn refused_kernels_are_skipped_with_the_reason() {
    let mut timer = FakeTimer::default().rule("tcwide.mid2", (4096, 4096), (17, 64), 0.7);
    timer.refused.push(("tcwide.mid", "grid too large"));
    let t = run(&shipped(), &mut timer, &Options::new("sm90a"));
    let region = t
        .regions
        .iter()
        .find(|r| r.n == 4096 && r.k == 4096 && r.m.min == 17)
        .unwrap();
    let mid = region
        .candidates
        .iter()
        .find(|c| c.pick.kernel == "tcwide.mid")
        .unwrap();
    assert_eq!(
        mid.skipped.as_deref(),
        Some("tcwide.mid refused at m = 32: grid too large")
    );
    assert_eq!(region.chosen.as_ref().unwrap().kernel, "tcwide.mid2");
    // A routed kernel that cannot be timed keeps its region.
    let region = t
        .regions
        .iter()
        .find(|r| r.n == 4096 && r.k == 4096 && r.m.min == 129)
        .unwrap();
    assert!(
        region
            .decision
            .starts_with("kept: the routed kernel could not be timed"),
        "{}",
        region.decision
    );
}

#[test]
fn odd_shapes_time_the_tma_kernels_on_repacked_operands() {
    // With a repack conversion in the set, a TMA kernel reads aligned copies of operands off
    // 16 bytes: the kernels themselves run at an odd vocabulary, never the unaligned kernel
    // (the runtime's repack, docs/runtime.md).
    let mut timer = FakeTimer::default().rule("tcwide.mid2", (50257, 768), (0, u64::MAX), 0.5);
    let t = run(&shipped(), &mut timer, &Options::new("sm90a"));
    let odd: Vec<&String> = timer
        .calls
        .iter()
        .filter(|c| c.2 == 50257)
        .map(|c| &c.0)
        .collect();
    assert!(!odd.is_empty());
    // Every TMA candidate is timed itself (tcmma.any is a candidate of its own too).
    for tma in ["tcwide.wide", "tcwide.mid2", "tcdec.dec64"] {
        assert!(odd.iter().any(|k| *k == tma), "{tma} not timed: {odd:?}");
    }
    let region = t.regions.iter().find(|r| r.n == 50257).unwrap();
    assert_eq!(region.regime, "odd");
    assert!(
        t.changed(),
        "the faster tcwide.mid2 is routed for 50257 x 768"
    );
}

#[test]
fn adjacent_buckets_with_one_kernel_merge_and_other_ops_validate() {
    let timer = || FakeTimer::default().rule("tcwide.mid2", (4096, 4096), (17, 256), 0.5);
    let t = run(&shipped(), &mut timer(), &Options::new("sm90a"));
    assert_eq!(t.routes.len(), 1);
    assert_eq!((t.routes[0].m.min, t.routes[0].m.max), (17, Some(256)));
    let text = routes_file(&t, &provenance()).unwrap();
    assert!(text.contains("m = { min = 17, max = 256 }"), "{text}");
    let dir = specs_with(&text);
    let specs = load(dir.path());
    assert_eq!(kernel_at(&specs, 200, 4096, 4096), "tcwide.mid2");
    // TN (C an f32 gradient) and NT.
    let mut opts = Options::new("sm90a");
    opts.ops = vec![Op::Tn, Op::Nt];
    let mut timer = FakeTimer::default()
        .rule("tcwide.mid2", (4096, 4096), (17, 256), 0.5)
        .rule("tcwide.wide", (14336, 4096), (0, 16), 0.5);
    let t = run(&shipped(), &mut timer, &opts);
    assert!(t
        .measured
        .contains(&(Op::Tn, "bf16.f32.f32".parse().unwrap())));
    let text = routes_file(&t, &provenance()).unwrap();
    assert!(text.contains("op = \"tn\""), "{text}");
    assert!(text.contains("op = \"nt\""), "{text}");
    let dir = specs_with(&text);
    load(dir.path());
}

#[test]
fn a_failing_timer_stops_tuning_and_the_report_holds_everything() {
    let mut timer = FakeTimer {
        fail: true,
        ..FakeTimer::default()
    };
    let e = tune(&shipped(), &shapes(), &Options::new("sm90a"), &mut timer).unwrap_err();
    assert!(
        e.to_string()
            .contains("failed: the device fell off the bus"),
        "{e}"
    );
    let e = tune(
        &shipped(),
        &shapes(),
        &Options::new("sm99"),
        &mut FakeTimer::default(),
    )
    .unwrap_err();
    assert!(e.to_string().starts_with("no tier named sm99"), "{e}");

    let mut timer = faster_mid();
    let t = run(&shipped(), &mut timer, &Options::new("sm90a"));
    let doc = report(&t, &provenance(), Some("sm90a.tuned.toml"));
    assert_eq!(doc["tier"], "sm90a");
    assert_eq!(doc["changed"], true);
    assert_eq!(doc["written"], "sm90a.tuned.toml");
    // 3 (n, k) x 9 buckets, each timed once per kernel and m.
    assert_eq!(doc["regions"].as_array().unwrap().len(), 27);
    assert_eq!(
        doc["measurements"].as_array().unwrap().len(),
        timer.calls.len()
    );
    let chosen: Vec<&serde_json::Value> = doc["regions"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|r| !r["chosen"].is_null())
        .collect();
    assert_eq!(chosen.len(), 1);
    assert_eq!(chosen[0]["chosen"]["kernel"], "tcwide.mid");
    assert_eq!(chosen[0]["current"]["kernel"], "tcwide.mid64");
    assert_eq!(chosen[0]["m"]["min"], 33);
}

#[test]
fn a_run_stopped_by_its_time_limit_keeps_the_earlier_routes_it_did_not_reach() {
    // An earlier tuning chose for the first two shapes of the list.
    let mut timer = faster_mid().rule("tcwide.wide", (14336, 4096), (65, 256), 0.5);
    let first = run(&shipped(), &mut timer, &Options::new("sm90a"));
    let earlier = routes_file(&first, &provenance()).unwrap();
    let dir = specs_with(&earlier);
    let specs = load(dir.path());
    let mut opts = Options::new("sm90a");
    opts.rewritten = Some("sm90a.tuned.toml".into());
    // Each measurement takes 1 ms and the first shape makes dozens: the limit passes in it.
    opts.time_limit = Some(std::time::Duration::from_millis(30));
    let mut timer = FakeTimer {
        delay: std::time::Duration::from_millis(1),
        ..faster_mid().rule("tcwide.wide", (4096, 4096), (257, 1024), 0.5)
    };
    let t = run(&specs, &mut timer, &opts);
    assert_eq!(t.unreached, [(Op::Nn, 14336, 4096), (Op::Nn, 50257, 768)]);
    assert!(t.regions.iter().all(|r| (r.n, r.k) == (4096, 4096)));
    assert!(timer.calls.iter().all(|c| (c.2, c.3) == (4096, 4096)));
    assert!(t.retuned(Op::Nn, 4096, 4096) && !t.retuned(Op::Nn, 14336, 4096));
    assert!(
        !t.retuned(Op::Nt, 4096, 4096),
        "an op not tuned is not retuned"
    );
    // The file: what this run chose at 4096 x 4096, then the earlier 14336 x 4096 section.
    let text = gemm_aot_tune::routes_text::assembled(
        &routes_file(&t, &provenance()).unwrap(),
        &earlier,
        |op, n, k| t.retuned(op, n, k),
        |_| false,
        None,
    );
    let at = |heading: &str| {
        text.find(heading)
            .unwrap_or_else(|| panic!("{heading}: {text}"))
    };
    assert_eq!(text.matches("# nn n = 4096, k = 4096").count(), 1, "{text}");
    assert!(
        at("# nn n = 4096, k = 4096") < at("# nn n = 14336, k = 4096"),
        "(n, k) order"
    );
    let dir = specs_with(&text);
    let specs = load(dir.path());
    assert_eq!(kernel_at(&specs, 128, 14336, 4096), "tcwide.wide");
    assert_eq!(kernel_at(&specs, 512, 4096, 4096), "tcwide.wide");
    assert_eq!(kernel_at(&specs, 64, 4096, 4096), "tcwide.mid");
    // The report lists what was not reached.
    let doc = gemm_aot_tune::report::report(&t, &provenance(), None);
    assert_eq!(doc["unreached"][0]["n"], 14336);
}

#[test]
fn recorded_times_choose_again_without_a_gpu() {
    // A run's report, read back as a clock, gives the same choices and the same file.
    let t = run(&shipped(), &mut faster_mid(), &Options::new("sm90a"));
    let text = routes_file(&t, &provenance()).unwrap();
    let json = report(&t, &provenance(), Some("sm90a.tuned.toml")).to_string();
    let mut recorded = RecordedTimer::from_report(&json, "run.json").unwrap();
    assert_eq!(recorded.len(), t.measurements.len());
    let again = tune(&shipped(), &shapes(), &Options::new("sm90a"), &mut recorded).unwrap();
    assert_eq!(routes_file(&again, &provenance()).unwrap(), text);
    // Recorded times cannot be measured again: rounds asked for are not run.
    let again = tune(&shipped(), &shapes(), &confirming(3), &mut recorded).unwrap();
    assert_eq!(routes_file(&again, &provenance()).unwrap(), text);
    assert!(again.regions.iter().all(|r| r.confirmation.is_none()));
    // Its provenance is the recorded run's, and says where the times were read.
    let p = recorded.provenance("test-shapes.toml".into(), "sm90a.tuned.toml".into());
    assert_eq!(
        (p.date.as_str(), p.device.as_str()),
        ("2026-12-01", "a fake timer")
    );
    assert_eq!(
        p.method,
        "a table; chosen again from those times as recorded in run.json"
    );
    // Other buckets over the same measured m: the 33-64 choice stands inside 17-64's sum,
    // where the decode kernel's time at m = 32 joins it.
    let mut wide = Options::new("sm90a");
    wide.buckets = gemm_aot_tune::Buckets::from_edges(&[16, 64, 256, 1024]).unwrap();
    let t = tune(&shipped(), &shapes(), &wide, &mut recorded).unwrap();
    let region = t
        .regions
        .iter()
        .find(|r| r.n == 4096 && r.k == 4096 && r.m.min == 17)
        .unwrap();
    assert_eq!(region.measured_m, [32, 64]);
    assert!(region.current.ms.is_some(), "{:?}", region.current);
    // A time the run did not take is refused, never made up.
    let e = recorded
        .time("tcwide.mid", 3, 4096, 4096, Op::Nn, bf16_nn())
        .unwrap_err();
    assert_eq!(
        e,
        TimerError::Refused("not timed in the recorded run run.json".into())
    );
    // Not a report: named, with why.
    let e = RecordedTimer::from_report("{}", "x.json").err().unwrap();
    assert!(
        e.to_string()
            .starts_with("x.json is not a `gemm-aot tune --json` report"),
        "{e}"
    );
    let empty = r#"{"tool": "gemm-aot tune", "provenance": {"date": "d", "device": "g", "method": "m"}, "measurements": []}"#;
    let e = RecordedTimer::from_report(empty, "y.json").err().unwrap();
    assert_eq!(
        e.to_string(),
        "y.json records no times (its `measurements` list is empty)"
    );
}

/// An earlier tuning below m = 1025 (4096 x 4096 at m 33-64, 14336 x 4096 at 65-256), the
/// specs including it, and options rewriting it with --from-m 1025.
fn earlier_and_from_m_1025() -> (String, tempfile::TempDir, Options) {
    let mut timer = faster_mid().rule("tcwide.wide", (14336, 4096), (65, 256), 0.5);
    let first = run(&shipped(), &mut timer, &Options::new("sm90a"));
    let earlier = routes_file(&first, &provenance()).unwrap();
    let dir = specs_with(&earlier);
    let mut opts = Options::new("sm90a");
    opts.rewritten = Some("sm90a.tuned.toml".into());
    opts.from_m = Some(1025);
    (earlier, dir, opts)
}

/// A candidate at 4096 x 4096 and m = 4096 that is not the routed kernel there.
fn another_big_kernel(specs: &SpecSet) -> &'static str {
    if kernel_at(specs, 4096, 4096, 4096) == "tcwide.mid2" {
        "tcwide.wide"
    } else {
        "tcwide.mid2"
    }
}

#[test]
fn a_run_from_m_times_only_the_buckets_reaching_it_and_keeps_the_earlier_routes_below() {
    // An earlier tuning chose below m = 1025: 4096 x 4096 at m 33-64, 14336 x 4096 at 65-256.
    let (earlier, dir, opts) = earlier_and_from_m_1025();
    let specs = load(dir.path());
    // Now a kernel beats the routing at every m: only what reaches m = 1025 may be chosen.
    let other = another_big_kernel(&specs);
    let mut timer = FakeTimer::default().rule(other, (4096, 4096), (1, 1 << 40), 0.1);
    let t = run(&specs, &mut timer, &opts);
    assert!(!timer.calls.is_empty());
    assert!(
        timer.calls.iter().all(|c| c.1 >= 1025),
        "timed below m = 1025: {:?}",
        timer.calls.iter().map(|c| c.1).collect::<Vec<_>>()
    );
    assert!(t
        .regions
        .iter()
        .all(|r| r.m.max.is_none_or(|max| max >= 1025)));
    let text = routes_file(&t, &provenance()).unwrap();
    assert!(
        text.replace("\n# ", " ")
            .contains("Only the m ranges that reach m = 1025 were timed"),
        "{text}"
    );
    assert!(
        text.contains(
            "m 33-64: tcwide.mid, kept from the earlier tuning (not timed: below --from-m)"
        ),
        "{text}"
    );
    let dir = specs_with(&text);
    let specs = load(dir.path());
    assert_eq!(
        kernel_at(&specs, 64, 4096, 4096),
        "tcwide.mid",
        "kept below"
    );
    assert_eq!(
        kernel_at(&specs, 128, 14336, 4096),
        "tcwide.wide",
        "kept below"
    );
    assert_eq!(kernel_at(&specs, 4096, 4096, 4096), other, "chosen above");
    assert_eq!(kernel_at(&specs, 2048, 4096, 4096), other, "chosen above");
    let doc = gemm_aot_tune::report::report(&t, &provenance(), None);
    assert_eq!(doc["from_m"], 1025);
    // Without from_m the same timer reaches every bucket.
    let mut all = Options::new("sm90a");
    all.rewritten = Some("sm90a.tuned.toml".into());
    let dir = specs_with(&earlier);
    let specs = load(dir.path());
    let mut timer = FakeTimer::default().rule(other, (4096, 4096), (1, 1 << 40), 0.1);
    run(&specs, &mut timer, &all);
    assert!(timer.calls.iter().any(|c| c.1 < 1025));
}

/// An earlier tuning over buckets with an edge at 48: tcwide.mid at 4096 x 4096 for m 33-48.
fn earlier_with_an_edge_at_48() -> String {
    let mut fine = Options::new("sm90a");
    fine.buckets =
        gemm_aot_tune::Buckets::from_edges(&[16, 32, 48, 64, 128, 256, 512, 1024, 2048]).unwrap();
    let mut timer = FakeTimer::default().rule("tcwide.mid", (4096, 4096), (33, 48), 0.5);
    let first = run(&shipped(), &mut timer, &fine);
    routes_file(&first, &provenance()).unwrap()
}

#[test]
fn from_m_refuses_a_bucket_whose_earlier_routes_change_inside_it() {
    let dir = specs_with(&earlier_with_an_edge_at_48());
    let specs = load(dir.path());
    assert_eq!(kernel_at(&specs, 40, 4096, 4096), "tcwide.mid");
    assert_ne!(kernel_at(&specs, 64, 4096, 4096), "tcwide.mid");
    let mut opts = Options::new("sm90a");
    opts.rewritten = Some("sm90a.tuned.toml".into());
    opts.from_m = Some(1025);
    let e = tune(&specs, &shapes(), &opts, &mut FakeTimer::default()).unwrap_err();
    assert!(
        matches!(
            e,
            TuneError::FromMSplitBucket {
                n: 4096,
                k: 4096,
                m: 49,
                ..
            }
        ),
        "{e}"
    );
    assert!(e.to_string().contains("inside m 33-64"), "{e}");
}

/// A run rewriting [`earlier_with_an_edge_at_48`] (whose routing of 4096 x 4096 changes kernel
/// inside m 33-64) with `only`, and the decision of that bucket.
fn over_an_edge_at_48(timer: &mut FakeTimer, only: &[&str]) -> (Tuning, String) {
    let dir = specs_with(&earlier_with_an_edge_at_48());
    let specs = load(dir.path());
    let mut opts = Options::new("sm90a");
    opts.rewritten = Some("sm90a.tuned.toml".into());
    opts.only = only.iter().map(|o| o.to_string()).collect();
    let t = run(&specs, timer, &opts);
    let decision = t
        .regions
        .iter()
        .find(|r| (r.n, r.k, r.m.min) == (4096, 4096, 33))
        .unwrap()
        .decision
        .clone();
    (t, decision)
}

#[test]
fn a_bucket_whose_routing_changes_inside_it_is_written_as_one_kernel_and_said() {
    let (t, decision) = over_an_edge_at_48(&mut FakeTimer::default(), &[]);
    assert!(
        decision.starts_with("chosen: the routing changes kernel inside the bucket"),
        "{decision}"
    );
    let dir = specs_with(&routes_file(&t, &provenance()).unwrap());
    let specs = load(dir.path());
    assert_eq!(
        kernel_at(&specs, 40, 4096, 4096),
        kernel_at(&specs, 64, 4096, 4096)
    );
}

#[test]
fn with_only_a_routing_that_must_become_one_kernel_gets_the_fastest_listed_or_routed() {
    // The earlier file routes tcwide.mid at m 33-48, the tier tcwide.mid64 at 49-64: one
    // kernel must replace both. tcwide.mid64 is the fastest of the routed and the listed
    // (pp128); tcwide.wide, faster still, is neither.
    let mut timer = FakeTimer::default()
        .rule("tcwide.mid64", (4096, 4096), (33, 64), 0.7)
        .rule("tcwide.wide", (4096, 4096), (33, 64), 0.3);
    let (_, decision) = over_an_edge_at_48(&mut timer, &["pp128"]);
    assert!(
        decision.starts_with(
            "chosen: the routing changes kernel inside the bucket, which one route cannot keep; tcwide.mid64 is the fastest single kernel"
        ),
        "{decision}"
    );
    assert!(!timer
        .calls
        .iter()
        .any(|c| c.0 == "tcwide.wide" && (c.2, c.3) == (4096, 4096) && c.1 <= 64));
}

#[test]
fn a_run_over_a_shorter_list_keeps_the_earlier_sections_of_the_other_shapes() {
    // Earlier: 4096 x 4096 at m 33-64 and 14336 x 4096 at m 65-256.
    let (earlier, dir, opts) = earlier_and_from_m_1025();
    let specs = load(dir.path());
    let one = ShapeList::parse(
        "one.toml",
        "m = [1, 64, 4096]\n[[model]]\nname = \"P\"\nconfig = \"x\"\nlayers = [ { layer = \"o\", n = 4096, k = 4096 } ]\n",
    )
    .unwrap();
    let other = another_big_kernel(&specs);
    let mut timer = FakeTimer::default().rule(other, (4096, 4096), (1, 1 << 40), 0.1);
    let t = tune(&specs, &one, &opts, &mut timer).unwrap();
    assert!(t.changed());
    assert!(t.retuned(Op::Nn, 4096, 4096) && !t.retuned(Op::Nn, 14336, 4096));
    // What the command writes: the new text, then the earlier sections not retuned.
    let text = gemm_aot_tune::routes_text::assembled(
        &routes_file(&t, &provenance()).unwrap(),
        &earlier,
        |op, n, k| t.retuned(op, n, k),
        |_| false,
        None,
    );
    let dir = specs_with(&text);
    let specs = load(dir.path());
    assert_eq!(kernel_at(&specs, 128, 14336, 4096), "tcwide.wide", "{text}");
    assert_eq!(kernel_at(&specs, 64, 4096, 4096), "tcwide.mid", "{text}");
    assert_eq!(kernel_at(&specs, 4096, 4096, 4096), other, "{text}");
    // The retuned section keeps what the earlier one said of what this run did not time: the
    // m 33-64 note with its times (not the bare "kept" note the run wrote), and the layers
    // of the earlier list beside this one's.
    let heading = |text: &str| {
        text.lines()
            .find(|l| l.starts_with("# nn n = 4096, k = 4096:"))
            .unwrap_or_default()
            .to_string()
    };
    let earlier_note = earlier
        .lines()
        .find(|l| l.starts_with("# m 33-64 (timed at m = 64): tcwide.mid "))
        .unwrap_or_else(|| panic!("{earlier}"));
    assert!(
        text.contains(&format!("{earlier_note}, kept from the earlier tuning\n")),
        "{text}"
    );
    assert!(!text.contains("m 33-64: tcwide.mid, kept"), "{text}");
    let before = heading(&earlier);
    let after = heading(&text);
    assert!(
        after.starts_with(&before) && after.ends_with("; P o"),
        "{before}\n{after}"
    );
}

#[test]
fn the_tiers_own_changes_inside_a_bucket_stay_by_writing_nothing() {
    // One bucket over m <= 64 holds the tier's own cuts (decode's tiles to 16 rows, then mid).
    let coarse = gemm_aot_tune::Buckets::from_edges(&[64, 256, 1024, 2048]).unwrap();
    assert_ne!(
        kernel_at(&shipped(), 8, 4096, 4096),
        kernel_at(&shipped(), 64, 4096, 4096)
    );
    let mut opts = Options::new("sm90a");
    opts.buckets = coarse.clone();
    let t = run(&shipped(), &mut FakeTimer::default(), &opts);
    assert!(
        !t.changed(),
        "{:?}",
        t.regions.iter().map(|r| &r.decision).collect::<Vec<_>>()
    );
    // And below --from-m, with an earlier file that routes another shape only.
    let mut timer = FakeTimer::default().rule("tcwide.wide", (14336, 4096), (65, 256), 0.5);
    let mut first_opts = Options::new("sm90a");
    first_opts.buckets = coarse.clone();
    let earlier = routes_file(&run(&shipped(), &mut timer, &first_opts), &provenance()).unwrap();
    let dir = specs_with(&earlier);
    let specs = load(dir.path());
    let mut opts = Options::new("sm90a");
    opts.buckets = coarse;
    opts.rewritten = Some("sm90a.tuned.toml".into());
    opts.from_m = Some(2049);
    let other = another_big_kernel(&specs);
    let mut timer = FakeTimer::default().rule(other, (4096, 4096), (2049, 1 << 40), 0.1);
    let t = run(&specs, &mut timer, &opts);
    let text = routes_file(&t, &provenance()).unwrap();
    let dir = specs_with(&text);
    let after = load(dir.path());
    for m in [1, 8, 16, 17, 32, 64] {
        assert_eq!(
            kernel_at(&after, m, 4096, 4096),
            kernel_at(&shipped(), m, 4096, 4096),
            "m = {m}"
        );
    }
    assert_eq!(kernel_at(&after, 128, 14336, 4096), "tcwide.wide", "{text}");
    assert_eq!(kernel_at(&after, 4096, 4096, 4096), other, "{text}");
}

#[test]
fn an_earlier_route_the_tiers_own_kernel_beats_goes_with_a_note() {
    // The first run routes tcwide.mid at (4096, 4096), m 33-64, over the tier's own mid64.
    let first = run(&shipped(), &mut faster_mid(), &Options::new("sm90a"));
    let tiers_own = kernel_at(&shipped(), 64, 4096, 4096);
    assert_ne!(tiers_own, "tcwide.mid");
    let dir = specs_with(&routes_file(&first, &provenance()).unwrap());
    let specs = load(dir.path());
    assert_eq!(kernel_at(&specs, 64, 4096, 4096), "tcwide.mid");
    // Now the tier's own kernel is faster than that route by more than the threshold.
    let own: &'static str = Box::leak(tiers_own.clone().into_boxed_str());
    let mut timer = faster_mid().rule(own, (4096, 4096), (33, 64), 0.5);
    let mut opts = Options::new("sm90a");
    opts.rewritten = Some("sm90a.tuned.toml".into());
    let t = run(&specs, &mut timer, &opts);
    assert!(t.changed());
    let region = t
        .regions
        .iter()
        .find(|r| r.n == 4096 && r.k == 4096 && r.m.min == 33)
        .unwrap();
    assert!(!region.in_routes_file, "{}", region.decision);
    assert_eq!(t.dropped.len(), 1, "{:?}", t.dropped);
    let text = routes_file(&t, &provenance()).unwrap();
    let note = format!(
        "# m 33-64 (timed at m = 64): no route: the tier's own {own} 0.5000 ms against 0.8000 ms for the routed tcwide.mid (37.5% faster)"
    );
    assert!(
        text.contains(&format!("\n# nn n = 4096, k = 4096: Test o_proj\n{note}\n")),
        "{text}"
    );
    assert!(!text.contains("kernel = \"tcwide.mid\""), "{text}");
    let json = report(&t, &provenance(), None);
    assert_eq!(json["dropped"][0]["m"], "33-64", "{json}");
    assert_eq!(
        json["dropped"][0]["note"],
        note.trim_start_matches("# "),
        "{json}"
    );
    // Assembled over the earlier file, the section is the note alone.
    let earlier = routes_file(&first, &provenance()).unwrap();
    let file = gemm_aot_tune::routes_text::assembled(
        &text,
        &earlier,
        |op, n, k| t.retuned(op, n, k),
        |_| false,
        None,
    );
    assert!(
        file.contains(&format!("\n# nn n = 4096, k = 4096: Test o_proj\n{note}\n")),
        "{file}"
    );
    assert!(!file.contains("[[route]]"), "{file}");
    // The file, with only that note, validates and routes the tier's own kernel again; a run
    // over it has nothing to change.
    let dir = specs_with(&text);
    let after = load(dir.path());
    assert_eq!(kernel_at(&after, 64, 4096, 4096), tiers_own);
    let t = run(&after, &mut timer, &opts);
    assert!(!t.changed());
    assert!(t.dropped.is_empty());
}

#[test]
fn a_dropped_route_over_a_range_the_tier_splits_names_the_tiers_routing() {
    // One bucket over m <= 64, timed at m = 64 alone, where the tier runs its decode tile up to
    // 32 rows and tcwide.mid64 above: a route of tcwide.mid over the whole bucket, then the
    // tier's mid64 faster at m = 64 drops it, and the note says the tier's routing serves.
    let list = ShapeList::parse(
        "m64.toml",
        "m = [64]\n\n[[model]]\nname = \"Test\"\nconfig = \"m = 64 only\"\nlayers = [{ layer = \"o_proj\", n = 4096, k = 4096 }]\n",
    )
    .unwrap();
    let mut opts = Options::new("sm90a");
    opts.buckets = gemm_aot_tune::Buckets::from_edges(&[64, 256, 1024, 2048]).unwrap();
    let own = kernel_at(&shipped(), 64, 4096, 4096);
    assert_ne!(kernel_at(&shipped(), 8, 4096, 4096), own);
    let first = tune(&shipped(), &list, &opts, &mut faster_mid()).unwrap();
    let dir = specs_with(&routes_file(&first, &provenance()).unwrap());
    let specs = load(dir.path());
    assert_eq!(kernel_at(&specs, 8, 4096, 4096), "tcwide.mid");
    let own: &'static str = Box::leak(own.into_boxed_str());
    let mut timer = faster_mid().rule(own, (4096, 4096), (64, 64), 0.5);
    opts.rewritten = Some("sm90a.tuned.toml".into());
    let t = tune(&specs, &list, &opts, &mut timer).unwrap();
    assert_eq!(t.dropped.len(), 1, "{:?}", t.dropped);
    assert_eq!(
        t.dropped[0].note,
        format!("m <= 64 (timed at m = 64): no route: the tier's own routing ({own} at m = 64) 0.5000 ms against 0.8000 ms for the routed tcwide.mid (37.5% faster)")
    );
}

#[test]
fn a_bucket_whose_routing_changes_inside_it_goes_to_the_tiers_own_kernel_with_a_note() {
    // The earlier file routes tcwide.mid at m 33-48 only; m 33-64 is one bucket now, timed at
    // m = 64, where the tier's own kernel is the fastest: no route, and the note says the
    // earlier routing forced the choice (the gain is against the routing at the timed m).
    let dir = specs_with(&earlier_with_an_edge_at_48());
    let specs = load(dir.path());
    let own = kernel_at(&shipped(), 64, 4096, 4096);
    assert_eq!(kernel_at(&shipped(), 40, 4096, 4096), own);
    let own: &'static str = Box::leak(own.into_boxed_str());
    let mut opts = Options::new("sm90a");
    opts.rewritten = Some("sm90a.tuned.toml".into());
    let mut timer = FakeTimer::default().rule(own, (4096, 4096), (33, 64), 0.5);
    let t = run(&specs, &mut timer, &opts);
    let dropped: Vec<&str> = t
        .dropped
        .iter()
        .filter(|d| (d.n, d.k, d.m.min) == (4096, 4096, 33))
        .map(|d| d.note.as_str())
        .collect();
    assert_eq!(
        dropped,
        [format!("m 33-64 (timed at m = 64): no route: the tier's own {own} 0.5000 ms against 0.5000 ms for the routed (several) (0.0% faster; the earlier routing changed kernel inside the range, which one route cannot keep)")],
        "{:?}",
        t.dropped
    );
    let dir = specs_with(&routes_file(&t, &provenance()).unwrap());
    let after = load(dir.path());
    assert_eq!(kernel_at(&after, 40, 4096, 4096), own);
}

#[test]
fn a_run_of_one_dtype_keeps_another_dtypes_routes_in_the_sections_it_rewrites() {
    // An earlier TF32 run chose tcwide32.wide at 4096 x 4096, m 257-512.
    let mut tf32 = Options::new("sm90a");
    tf32.input = Dtype::F32;
    let mut timer = FakeTimer::default().rule("tcwide32.wide", (4096, 4096), (257, 512), 0.5);
    let first = run(&shipped(), &mut timer, &tf32);
    let earlier = routes_file(&first, &provenance()).unwrap();
    let dir = specs_with(&earlier);
    let specs = load(dir.path());
    let f32_at = |specs: &SpecSet, m| {
        let f32s: DtypeTriple = "f32.f32.f32".parse().unwrap();
        specs
            .tier("sm90a")
            .unwrap()
            .select(Policy::TensorCore, Op::Nn, f32s, m, 4096, 4096)
            .unwrap()
            .kernel_ref()
    };
    assert_eq!(f32_at(&specs, 512), "tcwide32.wide");
    // Then bf16 over the same list, rewriting that file: its section of 4096 x 4096 is new.
    let mut opts = Options::new("sm90a");
    opts.rewritten = Some("sm90a.tuned.toml".into());
    let t = run(&specs, &mut faster_mid(), &opts);
    assert!(t.retuned(Op::Nn, 4096, 4096));
    let tier = specs.tier("sm90a").unwrap();
    let tuned = t.tuned_route_lines(tier, "sm90a.tuned.toml");
    let text = gemm_aot_tune::routes_text::assembled(
        &routes_file(&t, &provenance()).unwrap(),
        &earlier,
        |op, n, k| t.retuned(op, n, k),
        |line| !tuned.contains(&line),
        None,
    );
    assert_eq!(text.matches("# nn n = 4096, k = 4096").count(), 1, "{text}");
    let dir = specs_with(&text);
    let specs = load(dir.path());
    // The TF32 choice stays; the bf16 one is there.
    assert_eq!(f32_at(&specs, 512), "tcwide32.wide", "{text}");
    assert_eq!(kernel_at(&specs, 64, 4096, 4096), "tcwide.mid", "{text}");
    // Without the lines of the other dtype's routes, the rewrite had dropped them.
    let dropped = gemm_aot_tune::routes_text::assembled(
        &routes_file(&t, &provenance()).unwrap(),
        &earlier,
        |op, n, k| t.retuned(op, n, k),
        |_| false,
        None,
    );
    assert!(!dropped.contains("tcwide32.wide"), "{dropped}");
}
