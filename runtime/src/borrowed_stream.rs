//! A context on a stream another library owns (PyTorch's current stream, a C caller's
//! `CUstream`): the device's modules, registry and tensor maps are shared as with
//! [`Context::new_stream`], the stream is only borrowed, never destroyed.

use crate::context::Context;
use crate::stream::StreamState;
use cudarc::driver::sys::CUstream;

impl Context {
    /// A context of this device whose calls are enqueued on `stream`, a stream another
    /// library created (a null `stream` is the context's legacy default stream). Dropping the
    /// returned context leaves the stream alone. Its defaults (mode, policy, persistent cap)
    /// start as this context's; its scratch is its own.
    ///
    /// # Safety
    ///
    /// `stream` must be a live stream of this device's primary context (the one the CUDA
    /// runtime, and so PyTorch, uses), and must stay alive while the returned context, or
    /// a package made for it, is used. Ordering work on the stream with its owner's other
    /// streams is the caller's business, as for any stream.
    pub unsafe fn on_borrowed_stream(&self, stream: CUstream) -> Context {
        // SAFETY: the caller promises a live stream of this context (see above).
        let stream = unsafe { self.device.cuda.wrap_borrowed_stream(stream) };
        let ctx = Context {
            device: self.device.clone(),
            own: StreamState::new(
                stream,
                self.mode(),
                self.policy(),
                self.max_persistent_ctas(),
            ),
        };
        ctx.set_wave_fit(self.wave_fit());
        ctx
    }

    /// The raw handle of this context's stream (for a caller handing it to another library).
    pub fn raw_stream(&self) -> CUstream {
        self.own.stream.cu_stream()
    }
}
