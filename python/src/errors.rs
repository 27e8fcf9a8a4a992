//! Runtime errors as Python exceptions: `gemm_aot._errors.from_native(kind, message)` picks
//! the `GemmError` subclass for the runtime's error kind (a refusal is also a `ValueError`,
//! a missing driver or device a `RuntimeError`).

use gemm_runtime::GemmError;
use pyo3::prelude::*;

fn exception(py: Python<'_>, kind: &str, message: String) -> PyErr {
    let made = py
        .import("gemm_aot._errors")
        .and_then(|m| m.getattr("from_native"))
        .and_then(|f| f.call1((kind, message.clone())));
    match made {
        Ok(e) => PyErr::from_value(e),
        Err(e) => e,
    }
}

/// The exception of a runtime error.
pub fn to_py(py: Python<'_>, e: &GemmError) -> PyErr {
    exception(py, e.kind(), e.to_string())
}

/// The exception of a runtime error in a batch's entry (`None`: a single call).
pub fn in_batch(py: Python<'_>, e: &GemmError, entry: Option<usize>) -> PyErr {
    match entry {
        Some(i) => exception(py, e.kind(), format!("batch entry {i}: {e}")),
        None => to_py(py, e),
    }
}

/// An argument the native module itself refuses (an unknown op, dtype, policy or mode).
pub fn invalid(py: Python<'_>, message: String) -> PyErr {
    exception(py, "invalid_argument", message)
}
