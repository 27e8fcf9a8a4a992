//! What the tuner asks of a clock: the time of one kernel at one shape. The GPU binary's timer
//! launches the named kernel through gemm-runtime (CUDA events, warm-up, median); tests use a
//! table. The tuner never asks for a kernel at a shape where it would not run itself (a TMA
//! or cp.async kernel whose operands it cannot take is timed as its unaligned kernel).

use gemm_spec::{DtypeTriple, Op};

/// Why a time could not be had.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum TimerError {
    /// The kernel cannot run this shape (its launch limits refuse it): the candidate is
    /// skipped for the m range, and the report says why.
    #[error("refused: {0}")]
    Refused(String),
    /// The measurement failed (the device, an allocation, a kernel missing from the set):
    /// tuning stops.
    #[error("{0}")]
    Failed(String),
}

/// A clock for kernels.
pub trait Timer {
    /// Milliseconds of one launch of `kernel` (`family.tile`, a tile of the tier being tuned)
    /// at `op` and `dtype` with C of `m x n` and reduction `k`.
    fn time(
        &mut self,
        kernel: &str,
        m: u64,
        n: u64,
        k: u64,
        op: Op,
        dtype: DtypeTriple,
    ) -> Result<f64, TimerError>;

    /// Whether asking again measures again (a GPU's clock does; a recorded run's times give
    /// the same number each time, so the tuner's confirming re-timings are skipped with it).
    fn retimes(&self) -> bool {
        true
    }
}
