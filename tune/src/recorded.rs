//! A clock that reads the times of an earlier run from its JSON report, so that `gemm-aot tune
//! --recorded tune.json` chooses the routes again without a GPU: after the tier's own routes
//! changed (the baseline a tuned route must beat), or with other m buckets over the same
//! measured m. A time the recorded run did not take is refused, never made up: that kernel is
//! skipped as a candidate at that shape, and the report says why.

use crate::routes_text::Provenance;
use crate::timer::{Timer, TimerError};
use gemm_spec::{DtypeTriple, Op};
use serde::Deserialize;
use std::collections::HashMap;

/// Why a report cannot be read as recorded times.
#[derive(Debug, thiserror::Error)]
pub enum RecordedError {
    #[error("{source_name} is not a `gemm-aot tune --json` report: {why}")]
    NotAReport { source_name: String, why: String },
    #[error("{source_name} records no times (its `measurements` list is empty)")]
    Empty { source_name: String },
}

#[derive(Deserialize)]
struct Report {
    tool: String,
    provenance: RecordedProvenance,
    measurements: Vec<RecordedTime>,
    /// The run's --from-m (reports before it have none).
    #[serde(default)]
    from_m: Option<u64>,
    /// The run's --only (reports before it have none).
    #[serde(default)]
    only: Vec<String>,
}

#[derive(Deserialize)]
struct RecordedProvenance {
    date: String,
    device: String,
    method: String,
}

#[derive(Deserialize)]
struct RecordedTime {
    op: String,
    dtype: String,
    m: u64,
    n: u64,
    k: u64,
    kernel: String,
    ms: Option<f64>,
    refused: Option<String>,
}

/// (kernel, op, dtype, m, n, k), op and dtype as the report spells them.
type Key = (String, String, String, u64, u64, u64);

/// The times of one recorded run.
pub struct RecordedTimer {
    times: HashMap<Key, Result<f64, String>>,
    source_name: String,
    date: String,
    device: String,
    method: String,
    from_m: Option<u64>,
    only: Vec<String>,
}

impl RecordedTimer {
    /// Reads `text`, the JSON report of a run; `source_name` names it in messages.
    pub fn from_report(text: &str, source_name: &str) -> Result<RecordedTimer, RecordedError> {
        let not_a_report = |why: String| RecordedError::NotAReport {
            source_name: source_name.to_string(),
            why,
        };
        let report: Report = serde_json::from_str(text).map_err(|e| not_a_report(e.to_string()))?;
        if report.tool != "gemm-aot tune" {
            return Err(not_a_report(format!(
                "its tool is {:?}, not \"gemm-aot tune\"",
                report.tool
            )));
        }
        if report.measurements.is_empty() {
            return Err(RecordedError::Empty {
                source_name: source_name.to_string(),
            });
        }
        let times = report
            .measurements
            .into_iter()
            .map(|t| {
                let time = match (t.ms, t.refused) {
                    (Some(ms), _) => Ok(ms),
                    (None, why) => Err(why.unwrap_or_else(|| "refused".to_string())),
                };
                ((t.kernel, t.op, t.dtype, t.m, t.n, t.k), time)
            })
            .collect();
        Ok(RecordedTimer {
            from_m: report.from_m,
            only: report.only,
            times,
            source_name: source_name.to_string(),
            date: report.provenance.date,
            device: report.provenance.device,
            method: report.provenance.method,
        })
    }

    /// The recorded run's `--from-m`: the buckets below it were not timed there.
    pub fn from_m(&self) -> Option<u64> {
        self.from_m
    }

    /// The recorded run's `--only`: the candidates it timed besides the routed kernels
    /// (empty: all).
    pub fn only(&self) -> &[String] {
        &self.only
    }

    /// How many times the run recorded.
    pub fn len(&self) -> usize {
        self.times.len()
    }

    pub fn is_empty(&self) -> bool {
        self.times.is_empty()
    }

    /// The GPU the times were taken on.
    pub fn device(&self) -> &str {
        &self.device
    }

    /// The provenance of routes chosen from these times: the recorded run's date, device and
    /// method, and that they were read back from `source_name`.
    pub fn provenance(&self, shapes: String, file: String) -> Provenance {
        Provenance {
            shapes,
            date: self.date.clone(),
            device: self.device.clone(),
            method: format!(
                "{}; chosen again from those times as recorded in {}",
                self.method, self.source_name
            ),
            file,
        }
    }
}

impl Timer for RecordedTimer {
    fn time(
        &mut self,
        kernel: &str,
        m: u64,
        n: u64,
        k: u64,
        op: Op,
        dtype: DtypeTriple,
    ) -> Result<f64, TimerError> {
        let key = (
            kernel.to_string(),
            op.to_string(),
            dtype.to_string(),
            m,
            n,
            k,
        );
        match self.times.get(&key) {
            Some(Ok(ms)) => Ok(*ms),
            Some(Err(why)) => Err(TimerError::Refused(why.clone())),
            None => Err(TimerError::Refused(format!(
                "not timed in the recorded run {}",
                self.source_name
            ))),
        }
    }

    fn retimes(&self) -> bool {
        false
    }
}
