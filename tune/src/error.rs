//! Why tuning could not run or had to stop.

use crate::timer::TimerError;
use gemm_spec::{DtypeTriple, Op, Policy};

#[derive(Debug, thiserror::Error)]
pub enum TuneError {
    #[error("no tier named {tier} in the specs; they define {known}")]
    UnknownTier { tier: String, known: String },
    #[error("tier {tier} has no {policy} route for {op} {dtype}: tune another policy, op or input type (--policy, --op, --dtype)")]
    NotRouted {
        tier: String,
        policy: Policy,
        op: Op,
        dtype: DtypeTriple,
    },
    #[error("threshold {0} must be at least 0 and below 1 (0.03 asks a kernel to be 3% faster)")]
    Threshold(f64),
    #[error("no op to tune: name at least one (--op nn)")]
    NoOps,
    #[error("--only {name}: tier {tier} has no tile of that name (give a tile name such as mid2, or family.tile, as `gemm-aot list --tier {tier}` shows them)")]
    UnknownCandidate { name: String, tier: String },
    #[error("--from-m keeps whole m ranges untimed, but the routes of {op} n = {n}, k = {k} change kernel inside m {bucket} ({first}, then {other} at m = {m}): pass --buckets with that edge, or tune without --from-m")]
    FromMSplitBucket {
        op: Op,
        n: u64,
        k: u64,
        bucket: String,
        m: u64,
        first: String,
        other: String,
    },
    #[error("timing {kernel} at {op} {dtype}, m = {m}, n = {n}, k = {k} failed: {source}")]
    Timer {
        kernel: String,
        op: Op,
        dtype: DtypeTriple,
        m: u64,
        n: u64,
        k: u64,
        source: TimerError,
    },
}
