//! The functions of the C ABI. Each one is `extern "C"`, catches panics (a bug becomes
//! `GEMM_AOT_ERROR_INTERNAL`, never an unwind into C), returns a `GEMM_AOT_*` status and keeps
//! the message of a failure for `gemm_aot_last_error`. A refused call enqueues nothing and
//! writes no output. The header generator (tests/header.rs) writes every function here, with
//! its doc comment, into `include/gemm_aot.h`.

use crate::context::Opened;
use crate::status::{fail, fail_with, last_error, status_name, status_of};
use crate::types::*;
use gemm_runtime::{
    BatchFailure, Dtype, Launch, Mode, Op, Policy, RawGemm, RawMatrix, RawRows, RowOp,
};
use std::ffi::{c_char, c_void};
use std::panic::{catch_unwind, AssertUnwindSafe};

/// Runs `f`, turning a panic into `GEMM_AOT_ERROR_INTERNAL` with its message.
fn guarded(f: impl FnOnce() -> i32) -> i32 {
    match catch_unwind(AssertUnwindSafe(f)) {
        Ok(status) => status,
        Err(panic) => {
            let what = panic
                .downcast_ref::<&str>()
                .map(|s| s.to_string())
                .or_else(|| panic.downcast_ref::<String>().cloned())
                .unwrap_or_else(|| "a panic without a message".into());
            fail(
                GEMM_AOT_ERROR_INTERNAL,
                format!("internal error (a bug in gemm-aot, please report it): {what}"),
            )
        }
    }
}

fn invalid(message: String) -> i32 {
    fail(GEMM_AOT_ERROR_INVALID_ARGUMENT, message)
}

fn op_of(v: i32) -> Result<Op, i32> {
    match v {
        GEMM_AOT_OP_NN => Ok(Op::Nn),
        GEMM_AOT_OP_NT => Ok(Op::Nt),
        GEMM_AOT_OP_TN => Ok(Op::Tn),
        _ => Err(invalid(format!(
            "op = {v} is none of GEMM_AOT_OP_NN (0), GEMM_AOT_OP_NT (1), GEMM_AOT_OP_TN (2)"
        ))),
    }
}

fn dtype_of(what: &str, v: i32) -> Result<Dtype, i32> {
    match v {
        GEMM_AOT_F32 => Ok(Dtype::F32),
        GEMM_AOT_BF16 => Ok(Dtype::Bf16),
        GEMM_AOT_F16 => Ok(Dtype::F16),
        _ => Err(invalid(format!(
            "{what} = {v} is none of GEMM_AOT_F32 (0), GEMM_AOT_BF16 (1), GEMM_AOT_F16 (2)"
        ))),
    }
}

fn policy_of(v: i32) -> Result<Option<Policy>, i32> {
    match v {
        GEMM_AOT_POLICY_DEFAULT => Ok(None),
        GEMM_AOT_POLICY_EXACT => Ok(Some(Policy::Exact)),
        GEMM_AOT_POLICY_TENSOR_CORE => Ok(Some(Policy::TensorCore)),
        _ => Err(invalid(format!(
            "policy = {v} is none of GEMM_AOT_POLICY_DEFAULT (0), GEMM_AOT_POLICY_EXACT (1), GEMM_AOT_POLICY_TENSOR_CORE (2)"
        ))),
    }
}

fn mode_of(v: i32) -> Result<Mode, i32> {
    match v {
        GEMM_AOT_MODE_DETERMINISTIC => Ok(Mode::Deterministic),
        GEMM_AOT_MODE_CUBLAS => Ok(Mode::CublasFast),
        _ => Err(invalid(format!(
            "mode = {v} is none of GEMM_AOT_MODE_DETERMINISTIC (0), GEMM_AOT_MODE_CUBLAS (1)"
        ))),
    }
}

fn size(what: &str, v: u64) -> Result<usize, i32> {
    usize::try_from(v).map_err(|_| {
        fail(
            GEMM_AOT_ERROR_SHAPE,
            format!("{what} = {v} does not fit this machine's addresses"),
        )
    })
}

/// The context of `ctx` whose calls go on `stream`; a NULL context is refused.
///
/// # Safety
///
/// `ctx` is NULL or an open context; `stream` is a live stream of its device's primary
/// context (NULL: the legacy default stream).
unsafe fn stream_context(
    ctx: *mut gemm_aot_context,
    stream: *mut c_void,
) -> Result<std::sync::Arc<gemm_runtime::Context>, i32> {
    // SAFETY: NULL or an open context (the caller's promise).
    let Some(ctx) = (unsafe { ctx.as_ref() }) else {
        return Err(invalid(
            "the context is NULL: open one with gemm_aot_open".into(),
        ));
    };
    // SAFETY: the caller's promise of a live stream.
    Ok(unsafe { ctx.inner.on(stream) })
}

/// The runtime's call for `args` (NULL refused), every enum and size checked.
///
/// # Safety
///
/// `args` is NULL or readable.
unsafe fn raw_call(args: *const gemm_aot_gemm_args) -> Result<RawGemm, i32> {
    // SAFETY: NULL or readable (the caller's promise).
    let Some(args) = (unsafe { args.as_ref() }) else {
        return Err(invalid("args is NULL".into()));
    };
    let mat = |ptr: *const c_void, ld: u64, what: &str| -> Result<RawMatrix, i32> {
        Ok(RawMatrix {
            ptr: ptr as u64,
            ld: size(what, ld)?,
        })
    };
    Ok(RawGemm {
        op: op_of(args.op)?,
        m: size("m", args.m)?,
        n: size("n", args.n)?,
        k: size("k", args.k)?,
        ab: dtype_of("ab_dtype", args.ab_dtype)?,
        c_dtype: dtype_of("c_dtype", args.c_dtype)?,
        a: mat(args.a, args.lda, "lda")?,
        b: mat(args.b, args.ldb, "ldb")?,
        c: mat(args.c.cast_const(), args.ldc, "ldc")?,
        bias: (!args.bias.is_null()).then_some(args.bias as u64),
        beta: args.beta,
        policy: policy_of(args.policy)?,
        mode: Some(mode_of(args.mode)?),
    })
}

fn launch_of(l: &Launch) -> gemm_aot_launch {
    gemm_aot_launch {
        kernel: l.kernel.map_or(-1, |k| k.0 as i64),
        route: u32::from(l.rule),
        grid: [l.grid.0, l.grid.1, l.grid.2],
        repacked: u32::from(l.repacked.is_some()),
        unaligned: u32::from(l.unaligned),
    }
}

/// Runs `calls` on `ctx`'s context for `stream` (each checked before the first is launched),
/// writing the last launch to `launch`.
///
/// # Safety
///
/// As `gemm_aot_gemm`'s.
unsafe fn run(
    ctx: *mut gemm_aot_context,
    stream: *mut c_void,
    calls: &[RawGemm],
    launch: *mut gemm_aot_launch,
) -> i32 {
    let failed = |f: BatchFailure| {
        let status = status_of(&f.error);
        match calls.len() {
            1 => fail(status, f.error.to_string()),
            _ => fail(status, f.to_string()),
        }
    };
    // The argument checks need no device, so they come before the context's.
    for (entry, call) in calls.iter().enumerate() {
        if let Err(error) = call.check() {
            return failed(BatchFailure { entry, error });
        }
    }
    // SAFETY: the caller's promises, passed on.
    let on = match unsafe { stream_context(ctx, stream) } {
        Ok(on) => on,
        Err(status) => return status,
    };
    match on.gemm_raw_batch(calls) {
        Ok(last) => {
            // SAFETY: null or a writable gemm_aot_launch (the caller's promise).
            if let Some(out) = unsafe { launch.as_mut() } {
                *out = last.as_ref().map_or(
                    gemm_aot_launch {
                        kernel: -1,
                        ..Default::default()
                    },
                    launch_of,
                );
            }
            GEMM_AOT_OK
        }
        Err(f) => failed(f),
    }
}

/// The library's version, as `"0.1.0"` (a static string).
#[no_mangle]
pub extern "C" fn gemm_aot_version() -> *const c_char {
    concat!(env!("CARGO_PKG_VERSION"), "\0").as_ptr().cast()
}

/// The name of a status code, as `"GEMM_AOT_ERROR_OVERLAP"` (a static string).
#[no_mangle]
pub extern "C" fn gemm_aot_status_name(status: i32) -> *const c_char {
    status_name(status).as_ptr()
}

/// The message of this thread's last failed call, naming what was wrong and the values
/// involved; `""` before any failure. Valid until this thread's next failing call.
#[no_mangle]
pub extern "C" fn gemm_aot_last_error() -> *const c_char {
    last_error()
}

/// Opens CUDA device `device` (an ordinal) on its primary context, the one the CUDA runtime
/// and PyTorch use, and writes the context to `*out`. Fails with `GEMM_AOT_ERROR_NO_DRIVER`
/// without a driver and `GEMM_AOT_ERROR_NO_DEVICE` when no tier serves the device.
///
/// # Safety
///
/// `out` is NULL (refused) or writable.
#[no_mangle]
pub unsafe extern "C" fn gemm_aot_open(device: i32, out: *mut *mut gemm_aot_context) -> i32 {
    guarded(|| {
        if out.is_null() {
            return invalid("out is NULL: pass the address of a gemm_aot_context pointer".into());
        }
        let Ok(ordinal) = usize::try_from(device) else {
            return invalid(format!("device = {device} is negative"));
        };
        match Opened::open(ordinal) {
            Ok(inner) => {
                let ctx = Box::new(gemm_aot_context { inner });
                // SAFETY: checked non-null above; writable by the caller's promise.
                unsafe { *out = Box::into_raw(ctx) };
                GEMM_AOT_OK
            }
            Err(e) => fail_with(&e),
        }
    })
}

/// Closes a context from `gemm_aot_open` (NULL is ignored). Wait for its work first: the
/// kernels it launched must have finished.
///
/// # Safety
///
/// `ctx` is NULL or a context from `gemm_aot_open` not closed before, used by no other thread.
#[no_mangle]
pub unsafe extern "C" fn gemm_aot_close(ctx: *mut gemm_aot_context) {
    if !ctx.is_null() {
        // SAFETY: from Box::into_raw in gemm_aot_open, closed once (the caller's promise).
        let _ = catch_unwind(AssertUnwindSafe(|| drop(unsafe { Box::from_raw(ctx) })));
    }
}

/// The name of the tier serving the context's device, as `"sm90a"` (valid while the context
/// is open); NULL for a NULL context.
///
/// # Safety
///
/// `ctx` is NULL or an open context.
#[no_mangle]
pub unsafe extern "C" fn gemm_aot_tier(ctx: *const gemm_aot_context) -> *const c_char {
    // SAFETY: NULL or an open context (the caller's promise).
    match unsafe { ctx.as_ref() } {
        Some(ctx) => ctx.inner.tier.as_ptr(),
        None => std::ptr::null(),
    }
}

/// One GEMM on `stream` (a `CUstream` of the device's primary context; NULL: the legacy
/// default stream). Checked in full before anything is enqueued; on success the kernel runs
/// asynchronously on `stream`, and `*launch` (when not NULL) says what ran.
///
/// # Safety
///
/// `ctx` is an open context; `args` is NULL (refused) or readable; its pointers are device
/// memory of the context's device holding what the shape and leading dimensions say, alive
/// until the kernel ends; `stream` is live; `launch` is NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn gemm_aot_gemm(
    ctx: *mut gemm_aot_context,
    args: *const gemm_aot_gemm_args,
    stream: *mut c_void,
    launch: *mut gemm_aot_launch,
) -> i32 {
    guarded(|| {
        // SAFETY: NULL or readable (the caller's promise).
        match unsafe { raw_call(args) } {
            // SAFETY: the caller's promises, passed on.
            Ok(call) => unsafe { run(ctx, stream, &[call], launch) },
            Err(status) => status,
        }
    })
}

/// A linear layer as PyTorch stores it: `y[batch, out] = x[batch, in] · w[out, in]^T
/// (+ bias[out])`, every matrix contiguous, x and w of `dtype`, y and the bias of
/// `out_dtype`, the context's default policy.
///
/// # Safety
///
/// As `gemm_aot_gemm`'s; `bias` is NULL or `out_features` elements.
#[no_mangle]
pub unsafe extern "C" fn gemm_aot_linear(
    ctx: *mut gemm_aot_context,
    x: *const c_void,
    w: *const c_void,
    bias: *const c_void,
    y: *mut c_void,
    batch: u64,
    out_features: u64,
    in_features: u64,
    dtype: i32,
    out_dtype: i32,
    stream: *mut c_void,
) -> i32 {
    let args = gemm_aot_gemm_args {
        op: GEMM_AOT_OP_NT,
        ab_dtype: dtype,
        c_dtype: out_dtype,
        policy: GEMM_AOT_POLICY_DEFAULT,
        mode: GEMM_AOT_MODE_DETERMINISTIC,
        m: batch,
        n: out_features,
        k: in_features,
        a: x,
        lda: in_features,
        b: w,
        ldb: in_features,
        bias,
        c: y,
        ldc: out_features,
        beta: 0.0,
    };
    // SAFETY: the caller's promises, passed on.
    unsafe { gemm_aot_gemm(ctx, &args, stream, std::ptr::null_mut()) }
}

/// `count` GEMMs of one shape, entry i's matrices at `args`' pointers plus i times
/// `stride_a`, `stride_b` and `stride_c` elements (the bias is shared). Every entry is
/// checked before the first is launched; they run in order on `stream`.
///
/// # Safety
///
/// As `gemm_aot_gemm`'s, for every entry.
#[no_mangle]
pub unsafe extern "C" fn gemm_aot_bmm(
    ctx: *mut gemm_aot_context,
    args: *const gemm_aot_gemm_args,
    count: u64,
    stride_a: u64,
    stride_b: u64,
    stride_c: u64,
    stream: *mut c_void,
    launch: *mut gemm_aot_launch,
) -> i32 {
    guarded(|| {
        // SAFETY: NULL or readable (the caller's promise).
        let first = match unsafe { raw_call(args) } {
            Ok(call) => call,
            Err(status) => return status,
        };
        let Ok(count) = usize::try_from(count) else {
            return fail(
                GEMM_AOT_ERROR_SHAPE,
                format!("count = {count} is too large"),
            );
        };
        let calls = match first.strided(count, (stride_a, stride_b, stride_c)) {
            Ok(calls) => calls,
            Err(e) => return fail_with(&e),
        };
        // SAFETY: the caller's promises, passed on.
        unsafe { run(ctx, stream, &calls, launch) }
    })
}

/// A row kernel on `stream`: for each of `rows` rows of `cols` elements of `src_dtype` at
/// `src` (row stride `ld_src`), `op` (`GEMM_AOT_ROW_*`) into `dst` (`dst_dtype`, the input's
/// type or f32; row stride `ld_dst`; one element a row for `GEMM_AOT_ROW_MEAN`). One block
/// reduces a row in a fixed tree (contract row-t256), so a row's result does not depend on
/// how many rows there are.
///
/// # Safety
///
/// As `gemm_aot_gemm`'s, for `src` and `dst`.
#[no_mangle]
pub unsafe extern "C" fn gemm_aot_rows(
    ctx: *mut gemm_aot_context,
    op: i32,
    src_dtype: i32,
    dst_dtype: i32,
    src: *const c_void,
    ld_src: u64,
    dst: *mut c_void,
    ld_dst: u64,
    rows: u64,
    cols: u64,
    stream: *mut c_void,
) -> i32 {
    guarded(|| {
        let op = match op {
            GEMM_AOT_ROW_SOFTMAX => RowOp::Softmax,
            GEMM_AOT_ROW_LOG_SOFTMAX => RowOp::LogSoftmax,
            GEMM_AOT_ROW_MEAN => RowOp::Mean,
            _ => {
                return invalid(format!(
                    "op = {op} is none of GEMM_AOT_ROW_SOFTMAX (0), GEMM_AOT_ROW_LOG_SOFTMAX (1), GEMM_AOT_ROW_MEAN (2)"
                ))
            }
        };
        let call = (|| {
            Ok::<_, i32>(RawRows {
                op,
                from: dtype_of("src_dtype", src_dtype)?,
                to: dtype_of("dst_dtype", dst_dtype)?,
                src: RawMatrix {
                    ptr: src as u64,
                    ld: size("ld_src", ld_src)?,
                },
                dst: RawMatrix {
                    ptr: dst as u64,
                    ld: size("ld_dst", ld_dst)?,
                },
                rows: size("rows", rows)?,
                cols: size("cols", cols)?,
            })
        })();
        let call = match call {
            Ok(c) => c,
            Err(status) => return status,
        };
        if let Err(e) = call.check() {
            return fail_with(&e);
        }
        // SAFETY: the caller's promises, passed on.
        let on = match unsafe { stream_context(ctx, stream) } {
            Ok(on) => on,
            Err(status) => return status,
        };
        match on.rows_raw(&call) {
            Ok(()) => GEMM_AOT_OK,
            Err(e) => fail_with(&e),
        }
    })
}
