//! What a `gemm_aot_context` holds: the opened device, and one borrowed-stream context per
//! `CUstream` a call has named (made on first use, kept until the context is closed).

use gemm_runtime::fast_hash::FastMap;
use gemm_runtime::{Context, GemmError};
use std::ffi::CString;
use std::sync::{Arc, Mutex};

pub(crate) struct Opened {
    device: Context,
    /// The tier's name, NUL-terminated for `gemm_aot_tier`.
    pub tier: CString,
    streams: Mutex<FastMap<usize, Arc<Context>>>,
}

impl Opened {
    pub fn open(ordinal: usize) -> Result<Opened, GemmError> {
        let device = Context::new(ordinal)?;
        let tier = CString::new(device.tier().name).unwrap_or_default();
        Ok(Opened {
            device,
            tier,
            streams: Mutex::new(FastMap::default()),
        })
    }

    /// The context whose calls go on `stream` (null: the legacy default stream).
    ///
    /// # Safety
    ///
    /// `stream` is a live stream of the device's primary context, alive while calls name it.
    pub unsafe fn on(&self, stream: *mut std::ffi::c_void) -> Arc<Context> {
        let mut streams = self.streams.lock().unwrap_or_else(|p| p.into_inner());
        streams
            .entry(stream as usize)
            .or_insert_with(|| {
                // SAFETY: the caller's promise, passed on.
                Arc::new(unsafe { self.device.on_borrowed_stream(stream.cast()) })
            })
            .clone()
    }
}
