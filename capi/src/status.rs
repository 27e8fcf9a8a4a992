//! Errors as C sees them: a status code per kind of failure, and the full message of this
//! thread's last failure (`gemm_aot_last_error`).

use crate::types::*;
use gemm_runtime::GemmError;
use std::cell::RefCell;
use std::ffi::{c_char, CString};

thread_local! {
    static LAST_ERROR: RefCell<CString> = RefCell::new(CString::default());
}

/// Keeps `message` as this thread's last error and returns `status`.
pub(crate) fn fail(status: i32, message: impl Into<String>) -> i32 {
    let text = message.into().replace('\0', " ");
    LAST_ERROR.with(|e| *e.borrow_mut() = CString::new(text).unwrap_or_default());
    status
}

/// This thread's last error message (valid until its next failing call).
pub(crate) fn last_error() -> *const c_char {
    LAST_ERROR.with(|e| e.borrow().as_ptr())
}

/// The status code of a runtime error.
pub(crate) fn status_of(e: &GemmError) -> i32 {
    match e.kind() {
        "no_driver" => GEMM_AOT_ERROR_NO_DRIVER,
        "no_cubins" | "no_tier" | "unknown_tier" | "tier_not_runnable" | "ptx_jit" => {
            GEMM_AOT_ERROR_NO_DEVICE
        }
        "no_route" | "no_row_kernel" | "columns_too_many" | "no_conversion" => {
            GEMM_AOT_ERROR_NO_ROUTE
        }
        "dimension_overflow" | "leading_dimension" | "grid_too_large" => GEMM_AOT_ERROR_SHAPE,
        "null_pointer" | "misaligned" | "out_of_bounds" | "external_overrun" => {
            GEMM_AOT_ERROR_POINTER
        }
        "overlap" => GEMM_AOT_ERROR_OVERLAP,
        "driver" | "cublas" => GEMM_AOT_ERROR_CUDA,
        _ => GEMM_AOT_ERROR_OTHER,
    }
}

/// Keeps a runtime error's message and returns its status.
pub(crate) fn fail_with(e: &GemmError) -> i32 {
    fail(status_of(e), e.to_string())
}

/// The name of a status code, as the header spells it (a static string).
pub(crate) fn status_name(status: i32) -> &'static std::ffi::CStr {
    match status {
        GEMM_AOT_OK => c"GEMM_AOT_OK",
        GEMM_AOT_ERROR_INVALID_ARGUMENT => c"GEMM_AOT_ERROR_INVALID_ARGUMENT",
        GEMM_AOT_ERROR_NO_DRIVER => c"GEMM_AOT_ERROR_NO_DRIVER",
        GEMM_AOT_ERROR_NO_DEVICE => c"GEMM_AOT_ERROR_NO_DEVICE",
        GEMM_AOT_ERROR_NO_ROUTE => c"GEMM_AOT_ERROR_NO_ROUTE",
        GEMM_AOT_ERROR_SHAPE => c"GEMM_AOT_ERROR_SHAPE",
        GEMM_AOT_ERROR_POINTER => c"GEMM_AOT_ERROR_POINTER",
        GEMM_AOT_ERROR_OVERLAP => c"GEMM_AOT_ERROR_OVERLAP",
        GEMM_AOT_ERROR_CUDA => c"GEMM_AOT_ERROR_CUDA",
        GEMM_AOT_ERROR_OTHER => c"GEMM_AOT_ERROR_OTHER",
        GEMM_AOT_ERROR_INTERNAL => c"GEMM_AOT_ERROR_INTERNAL",
        _ => c"unknown status",
    }
}
