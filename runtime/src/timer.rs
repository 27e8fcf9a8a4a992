//! GPU time on a context's stream, measured between two CUDA events created with the flags
//! timing needs (`CU_EVENT_DEFAULT`: cudarc's own default disables timing), so a caller needs
//! neither its own cudarc nor the flag's spelling.

use crate::context::Context;
use crate::error::GemmError;
use cudarc::driver::{sys, CudaEvent};
use std::time::Duration;

/// A start and a stop event on one stream. [`start`](Self::start) and
/// [`stop`](Self::stop) record them; [`elapsed`](Self::elapsed) waits for the stop event
/// and gives the GPU time between the two.
pub struct Timer {
    start: CudaEvent,
    stop: CudaEvent,
    stream: std::sync::Arc<cudarc::driver::CudaStream>,
}

impl Timer {
    /// Records the start event on the stream.
    pub fn start(&self) -> Result<(), GemmError> {
        Ok(self.start.record(&self.stream)?)
    }

    /// Records the stop event on the stream.
    pub fn stop(&self) -> Result<(), GemmError> {
        Ok(self.stop.record(&self.stream)?)
    }

    /// GPU time from start to stop; waits for the stop event.
    pub fn elapsed(&self) -> Result<Duration, GemmError> {
        let ms = self.start.elapsed_ms(&self.stop)?;
        Ok(Duration::from_secs_f64(f64::from(ms.max(0.0)) / 1e3))
    }
}

impl Context {
    /// A timer on this context's stream (two timing events).
    pub fn timer(&self) -> Result<Timer, GemmError> {
        let flags = Some(sys::CUevent_flags::CU_EVENT_DEFAULT);
        Ok(Timer {
            start: self.cuda().new_event(flags)?,
            stop: self.cuda().new_event(flags)?,
            stream: self.stream().clone(),
        })
    }

    /// Runs `work` between a start and a stop event on this stream and returns its result
    /// with the GPU time between them (waiting for the stop event). The time covers what
    /// `work` enqueued on this stream, not host time. `work` may fail with any error a
    /// [`GemmError`] converts into (e.g. [`PackageError`](crate::PackageError), for a
    /// replay).
    pub fn time<T, E: From<GemmError>>(
        &self,
        work: impl FnOnce(&Context) -> Result<T, E>,
    ) -> Result<(T, Duration), E> {
        let timer = self.timer()?;
        timer.start()?;
        let value = work(self)?;
        timer.stop()?;
        Ok((value, timer.elapsed()?))
    }
}
