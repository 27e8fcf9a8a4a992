//! The tensor reader: C functions (`gemm_aot/csrc/tensor_reader.cpp`, built with the native
//! dispatch against the torch installed) that read a plain torch tensor's address, sizes,
//! strides, dtype and device off its `at::Tensor`, and torch's current CUDA stream, with no
//! Python call. The fast path otherwise exports each tensor through DLPack (0.22 us a tensor
//! on the device's host, three a call) and asks torch for the stream from Python. The Python
//! layer (`gemm_aot/_fastpath.py`) installs the reader only after its reads matched the
//! attribute reads ([`torch_view`]); until then, and where it cannot be built, the fast path
//! reads as before.

use crate::dispatch_abi::RawView;
use crate::torch_fast::View;
use pyo3::prelude::*;
use std::sync::atomic::{AtomicU8, Ordering};
use std::sync::OnceLock;

/// `gemm_aot_read_tensor(obj, host, out)`: 0 read, 1 not a tensor the fast path takes.
type ReadFn = unsafe extern "C" fn(*mut pyo3::ffi::PyObject, i32, *mut RawView) -> i32;
/// `gemm_aot_current_stream(device, out)`: 0 read, 1 no CUDA in this torch.
type StreamFn = unsafe extern "C" fn(i64, *mut u64) -> i32;

pub(crate) struct Reader {
    read: ReadFn,
    stream: Option<StreamFn>,
    /// Whether `stream` answered as torch does: [`UNCHECKED`], [`AGREED`] or [`DISAGREED`].
    stream_checked: AtomicU8,
}

/// The stream function has not been compared with torch's answer yet.
const UNCHECKED: u8 = 0;
/// It gave torch's answer (at installation, or on a call whose stream is not the default): it
/// is used.
const AGREED: u8 = 1;
/// It did not: the stream is asked of torch from Python.
const DISAGREED: u8 = 2;

static INSTALLED: OnceLock<Reader> = OnceLock::new();

/// The installed reader, if any.
pub(crate) fn installed() -> Option<&'static Reader> {
    INSTALLED.get()
}

impl Reader {
    /// The reader at these addresses (`stream` 0: none).
    ///
    /// # Safety
    /// `read` is the address of `gemm_aot_read_tensor` and `stream`, unless 0, of
    /// `gemm_aot_current_stream`, in a library that stays loaded for the process's life.
    unsafe fn at(read: usize, stream: usize, verified: bool) -> Option<Reader> {
        if read == 0 {
            return None;
        }
        // SAFETY: the caller's contract: the addresses are these functions'.
        unsafe {
            Some(Reader {
                read: std::mem::transmute::<usize, ReadFn>(read),
                stream: (stream != 0).then(|| std::mem::transmute::<usize, StreamFn>(stream)),
                stream_checked: AtomicU8::new(if verified { AGREED } else { UNCHECKED }),
            })
        }
    }

    /// `t`, a tensor whose type is exactly `torch.Tensor` or `torch.nn.Parameter` (the
    /// caller checks), as a view; `None` where the fast path declines it (as its other reads
    /// decline). With `host`, a CPU tensor reads as on device 0.
    pub(crate) fn view(&self, t: &Bound<'_, PyAny>, host: bool) -> Option<View> {
        let mut raw = RawView {
            ptr: 0,
            nd: 0,
            dtype: -1,
            device: -1,
            shape: [0; 4],
            stride: [0; 4],
        };
        // SAFETY: `t` is a live tensor object and the GIL is held (the `Bound`); `raw` is a
        // live RawView, the C struct's layout.
        let status = unsafe { (self.read)(t.as_ptr(), i32::from(host), &mut raw) };
        if status != 0 {
            return None;
        }
        // SAFETY: `raw` is live. Read off torch's own `at::Tensor`: `in_storage` holds.
        unsafe { crate::dispatch_abi::view(&raw) }
    }

    /// torch's current stream on `device` as the stream function reads it, where there is one
    /// and it has agreed with `torch_answer` (torch's own accessor, called from Python): at
    /// installation ([`torch_set_reader`]'s `verified`), or on the first call whose current
    /// stream is not the legacy default (0, which a function stuck on the default stream would
    /// also answer). Until then, and after a disagreement, it returns `None` (having called
    /// `torch_answer` only for the check): the caller then asks torch itself.
    pub(crate) fn stream(
        &self,
        device: usize,
        torch_answer: impl FnOnce() -> Option<usize>,
    ) -> Option<usize> {
        let f = self.stream?;
        let read = || {
            let mut out = 0u64;
            // SAFETY: `out` is live; the function never throws.
            let status = unsafe { f(i64::try_from(device).ok()?, &mut out) };
            (status == 0).then_some(out as usize)
        };
        match self.stream_checked.load(Ordering::Acquire) {
            AGREED => read(),
            DISAGREED => None,
            _ => {
                let (ours, torch) = (read(), torch_answer());
                if torch == Some(0) && ours == Some(0) {
                    return None; // nothing told apart yet: checked on a later call
                }
                let agreed = ours.is_some() && ours == torch;
                self.stream_checked
                    .store(if agreed { AGREED } else { DISAGREED }, Ordering::Release);
                None
            }
        }
    }

    /// Whether the stream function is in use (it agreed with torch on its first call).
    fn stream_in_use(&self) -> bool {
        self.stream.is_some() && self.stream_checked.load(Ordering::Acquire) == AGREED
    }
}

/// Installs the reader at these addresses (`stream` 0: views only; `verified`: its stream
/// function already gave torch's answer on two streams); a second installation keeps the
/// first. Whether one is installed now.
///
/// The addresses must be `gemm_aot_read_tensor`'s and `gemm_aot_current_stream`'s in the
/// loaded native dispatch library, which `gemm_aot/_dispatch.py` never unloads: any other
/// address is undefined behaviour. Only `gemm_aot/_fastpath.py` calls it.
#[pyfunction]
#[pyo3(signature = (read, stream=0, verified=false))]
pub fn torch_set_reader(read: usize, stream: usize, verified: bool) -> bool {
    // SAFETY: the function's documented contract.
    if let Some(r) = unsafe { Reader::at(read, stream, verified) } {
        let _ = INSTALLED.set(r);
    }
    INSTALLED.get().is_some()
}

/// Whether the reader is installed, and whether its stream function is in use (it gave
/// torch's answer at installation or on a call since).
#[pyfunction]
pub fn torch_reader_installed() -> (bool, bool) {
    match INSTALLED.get() {
        Some(r) => (true, r.stream_in_use()),
        None => (false, false),
    }
}

/// What a view reads: (address, shape, strides, dtype, device, in_storage).
type ViewTuple = (u64, Vec<usize>, Vec<usize>, &'static str, usize, bool);

fn tuple(v: &View) -> ViewTuple {
    (
        v.ptr,
        v.shape[..v.nd].to_vec(),
        v.stride[..v.nd].to_vec(),
        v.dtype.as_str(),
        v.device,
        v.in_storage,
    )
}

/// `t` as one read makes it (`None`: declined), for the reader's check and the tests: `how`
/// is "fast" (what the fast path reads now), "reader" (the reader at `read`, else the
/// installed one; plain tensors only) or "attributes". With `host`, a CPU tensor reads as on
/// device 0. The same contract as [`torch_set_reader`] holds for `read`.
#[pyfunction]
#[pyo3(signature = (t, how, host=false, read=0))]
pub fn torch_view(
    py: Python<'_>,
    t: &Bound<'_, PyAny>,
    how: &str,
    host: bool,
    read: usize,
) -> PyResult<Option<ViewTuple>> {
    use crate::torch_fast::{read_view, ReadBy};
    let Some(refs) = crate::torch_fast::TORCH.get(py) else {
        return Err(pyo3::exceptions::PyRuntimeError::new_err(
            "torch is not registered with the fast path yet",
        ));
    };
    let by = match how {
        "fast" => ReadBy::Fast,
        "attributes" => ReadBy::Attributes,
        "reader" => {
            // SAFETY: the function's documented contract.
            let given = unsafe { Reader::at(read, 0, false) };
            return Ok(match given.as_ref().or(INSTALLED.get()) {
                Some(r) if crate::torch_fast::is_plain(refs, t) => {
                    r.view(t, host).as_ref().map(tuple)
                }
                _ => None,
            });
        }
        other => {
            return Err(pyo3::exceptions::PyValueError::new_err(format!(
                "how {other:?} is none of \"fast\", \"reader\", \"attributes\""
            )))
        }
    };
    Ok(read_view(refs, t, host, by).as_ref().map(tuple))
}
