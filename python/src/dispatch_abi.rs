//! The C ABI of the mode's native dispatch (`gemm_aot/csrc/dispatch.cpp`): torch's
//! dispatcher calls that C++ kernel for `aten::mm` and the rest with no Python in between, and
//! it hands each tensor here as a [`RawView`]. The planning is the fast path's
//! ([`crate::torch_fast::plan_views`], [`crate::rows_fast::plan_rows`]), so the call and its
//! bits are the ones the Python overrides make. Anything the fast path would decline — and any
//! runtime error — returns [`DECLINED`] with nothing enqueued, and the C++ kernel hands the call
//! to the Python override, which words the error.
//!
//! A trace ([`dispatch_trace`]) records each planned call; with `launch` off it records
//! instead of launching, which lets tests drive the C++ kernels with CPU tensors.

use crate::rows_fast::plan_rows;
use crate::torch_fast::{plan_views, View};
use gemm_runtime::{Dtype, RowOp};
use pyo3::prelude::*;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Mutex;

/// The version of this ABI; `dispatch.cpp` refuses a table of another.
pub const ABI: u32 = 1;
/// The call was planned and enqueued (or, tracing without launching, recorded).
pub const SERVED: i32 = 0;
/// Not the fast path's call, or the runtime refused it: nothing enqueued.
pub const DECLINED: i32 = 1;
/// `flags` bit: the tensors are host tensors (a test's CPU dispatch key), never launched.
pub const HOST: u32 = 1;

/// One tensor as the C++ side reads it (`at::Tensor`'s pointer, sizes, strides).
#[repr(C)]
pub struct RawView {
    pub ptr: u64,
    pub nd: i32,
    /// 0 f32, 1 bf16, 2 f16 (anything else is declined in C++).
    pub dtype: i32,
    pub device: i64,
    pub shape: [i64; 4],
    pub stride: [i64; 4],
}

/// What `dispatch.cpp` calls, by address.
#[repr(C)]
pub struct DispatchApi {
    pub abi: u32,
    pub gemm: unsafe extern "C" fn(
        a: *const RawView,
        b: *const RawView,
        out: *const RawView,
        bias: *const RawView,
        batched: i32,
        stream: u64,
        flags: u32,
    ) -> i32,
    pub rows: unsafe extern "C" fn(
        op: i32,
        x: *const RawView,
        to: i32,
        out: u64,
        stream: u64,
        flags: u32,
    ) -> i32,
}

static API: DispatchApi = DispatchApi {
    abi: ABI,
    gemm,
    rows,
};

fn dtype(code: i32) -> Option<Dtype> {
    match code {
        0 => Some(Dtype::F32),
        1 => Some(Dtype::Bf16),
        2 => Some(Dtype::F16),
        _ => None,
    }
}

/// The view, `None` for more than 4 dimensions, a negative stride or size, or another dtype.
///
/// # Safety
/// `v` is null or points to a live `RawView`.
pub(crate) unsafe fn view(v: *const RawView) -> Option<View> {
    // SAFETY: the caller's contract.
    let v = unsafe { v.as_ref() }?;
    let nd = usize::try_from(v.nd).ok().filter(|&n| n <= 4)?;
    let mut out = View {
        ptr: v.ptr,
        nd,
        shape: [0; 4],
        stride: [0; 4],
        dtype: dtype(v.dtype)?,
        device: usize::try_from(v.device).ok()?,
        // The dispatcher's own `at::Tensor`.
        in_storage: true,
    };
    for i in 0..nd {
        out.shape[i] = usize::try_from(v.shape[i]).ok()?;
        out.stride[i] = usize::try_from(v.stride[i]).ok()?;
    }
    Some(out)
}

/// One traced call.
enum Traced {
    Gemm(crate::torch_fast::Plan),
    Rows(gemm_runtime::RawRows),
}

struct Trace {
    launch: bool,
    calls: Vec<Traced>,
}

static TRACE: Mutex<Option<Trace>> = Mutex::new(None);
/// Whether a trace is on: the calls take `TRACE`'s lock only then.
static TRACING: AtomicBool = AtomicBool::new(false);

/// Records `call` when tracing; whether to launch it (host tensors never are).
fn traced(call: impl FnOnce() -> Traced, flags: u32) -> bool {
    if !TRACING.load(Ordering::Acquire) {
        return flags & HOST == 0;
    }
    let mut t = TRACE.lock().unwrap_or_else(|p| p.into_inner());
    if let Some(t) = t.as_mut() {
        t.calls.push(call());
        return t.launch && flags & HOST == 0;
    }
    flags & HOST == 0
}

/// Whether a trace that does not launch is on (host tensors are served only then).
fn dry_run() -> bool {
    TRACING.load(Ordering::Acquire)
        && TRACE
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .as_ref()
            .is_some_and(|t| !t.launch)
}

/// `mm`/`bmm` (`batched` 1) of `a` and `b` into `out`, with `bias` (null: none), on `stream`.
///
/// # Safety
/// Each pointer is null (bias only) or points to a live `RawView` whose addresses are the
/// tensors' own on the current device, and `stream` is that device's live stream.
unsafe extern "C" fn gemm(
    a: *const RawView,
    b: *const RawView,
    out: *const RawView,
    bias: *const RawView,
    batched: i32,
    stream: u64,
    flags: u32,
) -> i32 {
    // A panic must not unwind into C++ (it would abort the process): the call is declined.
    std::panic::catch_unwind(|| {
        // SAFETY: the caller's contract, for each.
        let (va, vb, vo) = match unsafe { (view(a), view(b), view(out)) } {
            (Some(a), Some(b), Some(o)) => (a, b, o),
            _ => return DECLINED,
        };
        let vbias = if bias.is_null() {
            None
        } else {
            // SAFETY: as above.
            match unsafe { view(bias) } {
                Some(v) => Some(v),
                None => return DECLINED,
            }
        };
        let Some(p) = plan_views(&va, &vb, Some(&vo), vbias.as_ref(), batched != 0) else {
            return DECLINED;
        };
        if flags & HOST != 0 && !dry_run() {
            return DECLINED;
        }
        let stride_c = p.c_batch.unwrap_or(0);
        let launch = traced(|| Traced::Gemm(p.clone()), flags);
        if !launch {
            return SERVED;
        }
        match p.launch(stride_c, stream as usize) {
            Ok(true) => SERVED,
            _ => DECLINED,
        }
    })
    .unwrap_or(DECLINED)
}

/// Row op `op` (0 softmax, 1 log_softmax, 2 mean) of `x` along its last dimension into a new
/// contiguous output of dtype `to` at `out`, on `stream`.
///
/// # Safety
/// As [`gemm`]'s; `out` holds the output's elements.
unsafe extern "C" fn rows(
    op: i32,
    x: *const RawView,
    to: i32,
    out: u64,
    stream: u64,
    flags: u32,
) -> i32 {
    // As in gemm: no unwinding into C++.
    std::panic::catch_unwind(|| {
        let op = match op {
            0 => RowOp::Softmax,
            1 => RowOp::LogSoftmax,
            2 => RowOp::Mean,
            _ => return DECLINED,
        };
        // SAFETY: the caller's contract.
        let (Some(v), Some(to)) = (unsafe { view(x) }, dtype(to)) else {
            return DECLINED;
        };
        let Some(mut call) = plan_rows(&v, op, to) else {
            return DECLINED;
        };
        call.dst.ptr = out;
        if call.check().is_err() || (flags & HOST != 0 && !dry_run()) {
            return DECLINED;
        }
        if !traced(|| Traced::Rows(call), flags) {
            return SERVED;
        }
        let ran = crate::contexts::on_stream(v.device, stream as usize)
            .and_then(|ctx| ctx.rows_raw(&call));
        if ran.is_ok() {
            SERVED
        } else {
            DECLINED
        }
    })
    .unwrap_or(DECLINED)
}

/// The address of the dispatch table `dispatch.cpp` calls (valid for the life of the process).
#[pyfunction]
pub fn dispatch_api() -> usize {
    &API as *const DispatchApi as usize
}

/// Starts (`enabled`) or stops a trace of the native dispatch's calls and returns what was
/// recorded since the last call: for a GEMM the tuple `torch_plan` gives, for a row op
/// `("rows", op, from, to, rows, cols, ld_src, ld_dst)`. With `launch` off, calls are
/// recorded and not launched (their outputs are left as allocated): for tests.
#[pyfunction]
#[pyo3(signature = (enabled, launch=true))]
pub fn dispatch_trace(py: Python<'_>, enabled: bool, launch: bool) -> PyResult<Vec<Py<PyAny>>> {
    let mut t = TRACE.lock().unwrap_or_else(|p| p.into_inner());
    let calls = t.take().map(|t| t.calls).unwrap_or_default();
    if enabled {
        *t = Some(Trace {
            launch,
            calls: Vec::new(),
        });
    }
    TRACING.store(enabled, Ordering::Release);
    drop(t);
    calls
        .into_iter()
        .map(|c| {
            Ok(match c {
                Traced::Gemm(p) => crate::torch_fast::describe(&p)
                    .into_pyobject(py)?
                    .into_any()
                    .unbind(),
                Traced::Rows(r) => (
                    "rows",
                    r.op.as_str(),
                    r.from.as_str(),
                    r.to.as_str(),
                    [r.rows, r.cols, r.src.ld, r.dst.ld],
                )
                    .into_pyobject(py)?
                    .into_any()
                    .unbind(),
            })
        })
        .collect()
}
