//! The contexts of this process: one per CUDA device (opened on first use, on the device's
//! primary context, the one torch uses), and one per (device, stream) a call named, borrowing
//! the caller's stream. Kept for the life of the process, as torch keeps its streams.

use gemm_runtime::fast_hash::FastMap;
use gemm_runtime::{Context, GemmError};
use std::sync::{Arc, Mutex, OnceLock};

type Table = Mutex<FastMap<(usize, usize), Arc<Context>>>;

fn devices() -> &'static Table {
    static DEVICES: OnceLock<Table> = OnceLock::new();
    DEVICES.get_or_init(Default::default)
}

fn streams() -> &'static Table {
    static STREAMS: OnceLock<Table> = OnceLock::new();
    STREAMS.get_or_init(Default::default)
}

/// The context of `device` (its own stream).
pub fn device(device: usize) -> Result<Arc<Context>, GemmError> {
    let mut table = devices().lock().unwrap_or_else(|p| p.into_inner());
    if let Some(ctx) = table.get(&(device, 0)) {
        return Ok(ctx.clone());
    }
    let ctx = Arc::new(Context::new(device)?);
    table.insert((device, 0), ctx.clone());
    Ok(ctx)
}

/// The context of `device` whose calls go on `stream` (a `CUstream` of the device's primary
/// context, as torch's `cuda_stream` gives it; 0: the legacy default stream).
pub fn on_stream(device_ordinal: usize, stream: usize) -> Result<Arc<Context>, GemmError> {
    if let Some(ctx) = streams()
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .get(&(device_ordinal, stream))
    {
        return Ok(ctx.clone());
    }
    let base = device(device_ordinal)?;
    // SAFETY: the caller names a live stream of the device (torch's current stream, which
    // torch keeps alive; the package's documentation says so for raw handles).
    let ctx = Arc::new(unsafe { base.on_borrowed_stream(stream as *mut _) });
    streams()
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .insert((device_ordinal, stream), ctx.clone());
    Ok(ctx)
}
