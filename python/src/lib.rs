//! `gemm_aot._native`: the Python package's native module. It holds one runtime context per
//! CUDA device and one borrowed-stream context per (device, stream) a call names, and runs
//! GEMMs over raw device addresses ([`gemm_runtime::RawGemm`]): the Python layer
//! (`gemm_aot/__init__.py`) turns torch tensors and DLPack capsules into those, except for
//! the common torch call, which [`torch_fast`] reads and launches itself. Every
//! refusal the runtime can make without a device comes before the device is opened; errors
//! reach Python as `gemm_aot.GemmError` subclasses carrying the runtime's `kind`.

mod contexts;
mod dispatch_abi;
mod dlpack;
mod errors;
mod rows_fast;
mod tensor_reader;
mod torch_fast;

use gemm_runtime::{Dtype, Mode, Op, Policy, RawGemm, RawMatrix, RawRows, RowOp};
use pyo3::prelude::*;
use pyo3::types::PyDict;

fn op_of(s: &str) -> Result<Op, String> {
    match s {
        "nn" => Ok(Op::Nn),
        "nt" => Ok(Op::Nt),
        "tn" => Ok(Op::Tn),
        _ => Err(format!("op {s:?} is none of \"nn\", \"nt\", \"tn\"")),
    }
}

fn dtype_of(s: &str) -> Result<Dtype, String> {
    match s {
        "f32" => Ok(Dtype::F32),
        "bf16" => Ok(Dtype::Bf16),
        "f16" => Ok(Dtype::F16),
        _ => Err(format!(
            "dtype {s:?} has no route: gemm_aot serves \"bf16\", \"f16\" and \"f32\""
        )),
    }
}

fn policy_of(s: Option<&str>) -> Result<Option<Policy>, String> {
    match s {
        None => Ok(None),
        Some("exact") => Ok(Some(Policy::Exact)),
        Some("tensor-core") | Some("tensor_core") => Ok(Some(Policy::TensorCore)),
        Some(other) => Err(format!(
            "policy {other:?} is none of None, \"exact\", \"tensor-core\""
        )),
    }
}

fn mode_of(s: Option<&str>) -> Result<Option<Mode>, String> {
    match s {
        None | Some("deterministic") => Ok(Some(Mode::Deterministic)),
        Some("cublas") => Ok(Some(Mode::CublasFast)),
        Some("cublas-pedantic") => Ok(Some(Mode::CublasPedantic)),
        Some(other) => Err(format!(
            "mode {other:?} is none of None, \"deterministic\", \"cublas\", \"cublas-pedantic\""
        )),
    }
}

/// The package's version.
#[pyfunction]
fn version() -> &'static str {
    env!("CARGO_PKG_VERSION")
}

/// Whether a CUDA driver can be loaded here.
#[pyfunction]
fn driver_present() -> bool {
    // SAFETY: only probes whether the driver library can be opened.
    unsafe { gemm_runtime::cudarc::driver::sys::is_culib_present() }
}

/// The name of the tier serving `device` (opens it).
#[pyfunction]
fn tier(py: Python<'_>, device: usize) -> PyResult<String> {
    let ctx = contexts::device(device).map_err(|e| errors::to_py(py, &e))?;
    Ok(ctx.tier().name.to_string())
}

/// One GEMM, or `count` of them strided, over raw device addresses on `stream` (a
/// `CUstream` of `device`'s primary context, 0 for the legacy default stream). Returns what
/// the last call launched. Arguments as `gemm_runtime::RawGemm` names them.
#[pyfunction]
#[pyo3(signature = (
    device, stream, op, m, n, k, ab, c_dtype, a, lda, b, ldb, c, ldc,
    bias=None, beta=0.0, policy=None, mode=None, count=1, strides=(0, 0, 0)
))]
#[allow(clippy::too_many_arguments)]
fn gemm<'py>(
    py: Python<'py>,
    device: usize,
    stream: usize,
    op: &str,
    m: usize,
    n: usize,
    k: usize,
    ab: &str,
    c_dtype: &str,
    a: u64,
    lda: usize,
    b: u64,
    ldb: usize,
    c: u64,
    ldc: usize,
    bias: Option<u64>,
    beta: f32,
    policy: Option<&str>,
    mode: Option<&str>,
    count: usize,
    strides: (u64, u64, u64),
) -> PyResult<Bound<'py, PyDict>> {
    let bad = |m: String| errors::invalid(py, m);
    let call = RawGemm {
        op: op_of(op).map_err(bad)?,
        m,
        n,
        k,
        ab: dtype_of(ab).map_err(bad)?,
        c_dtype: dtype_of(c_dtype).map_err(bad)?,
        a: RawMatrix { ptr: a, ld: lda },
        b: RawMatrix { ptr: b, ld: ldb },
        c: RawMatrix { ptr: c, ld: ldc },
        bias,
        beta,
        policy: policy_of(policy).map_err(bad)?,
        mode: mode_of(mode).map_err(bad)?,
    };
    let calls = call
        .strided(count, strides)
        .map_err(|e| errors::to_py(py, &e))?;
    // The checks that need no device first: a bad call never opens one.
    for (entry, call) in calls.iter().enumerate() {
        call.check()
            .map_err(|e| errors::in_batch(py, &e, (count > 1).then_some(entry)))?;
    }
    let ctx = contexts::on_stream(device, stream).map_err(|e| errors::to_py(py, &e))?;
    let launched = py.detach(|| ctx.gemm_raw_batch(&calls));
    let last =
        launched.map_err(|f| errors::in_batch(py, &f.error, (count > 1).then_some(f.entry)))?;
    let out = PyDict::new(py);
    if let Some(l) = last {
        out.set_item("kernel", l.kernel.map(|k| k.0))?;
        out.set_item("route", l.rule)?;
        out.set_item("grid", l.grid)?;
        out.set_item("repacked", l.repacked.is_some())?;
        out.set_item("unaligned", l.unaligned)?;
        out.set_item("policy", l.policy.as_str())?;
    }
    Ok(out)
}

/// One row kernel (softmax, log_softmax, mean along each row; contract row-t256) over raw
/// device addresses on `stream`: `rows` rows of `cols` elements of `src_dtype` at `src`
/// (row stride `ld_src`) into `dst` (`dst_dtype`, row stride `ld_dst`).
#[pyfunction]
#[allow(clippy::too_many_arguments)]
fn rows(
    py: Python<'_>,
    device: usize,
    stream: usize,
    op: &str,
    src_dtype: &str,
    dst_dtype: &str,
    src: u64,
    ld_src: usize,
    dst: u64,
    ld_dst: usize,
    rows: usize,
    cols: usize,
) -> PyResult<()> {
    let bad = |m: String| errors::invalid(py, m);
    let op = RowOp::parse(op).ok_or_else(|| {
        bad(format!(
            "row op {op:?} is none of \"softmax\", \"log_softmax\", \"mean\""
        ))
    })?;
    let call = RawRows {
        op,
        from: dtype_of(src_dtype).map_err(bad)?,
        to: dtype_of(dst_dtype).map_err(bad)?,
        src: RawMatrix {
            ptr: src,
            ld: ld_src,
        },
        dst: RawMatrix {
            ptr: dst,
            ld: ld_dst,
        },
        rows,
        cols,
    };
    call.check().map_err(|e| errors::to_py(py, &e))?;
    let ctx = contexts::on_stream(device, stream).map_err(|e| errors::to_py(py, &e))?;
    py.detach(|| ctx.rows_raw(&call))
        .map_err(|e| errors::to_py(py, &e))
}

#[pymodule]
fn _native(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(version, m)?)?;
    m.add_function(wrap_pyfunction!(driver_present, m)?)?;
    m.add_function(wrap_pyfunction!(tier, m)?)?;
    m.add_function(wrap_pyfunction!(gemm, m)?)?;
    m.add_function(wrap_pyfunction!(rows, m)?)?;
    m.add_function(wrap_pyfunction!(dlpack::dlpack_tensor, m)?)?;
    m.add_function(wrap_pyfunction!(torch_fast::torch_register, m)?)?;
    m.add_function(wrap_pyfunction!(torch_fast::torch_mm, m)?)?;
    m.add_function(wrap_pyfunction!(torch_fast::torch_plan, m)?)?;
    m.add_function(wrap_pyfunction!(torch_fast::torch_plan_in_storage, m)?)?;
    m.add_function(wrap_pyfunction!(rows_fast::torch_rows, m)?)?;
    m.add_function(wrap_pyfunction!(tensor_reader::torch_set_reader, m)?)?;
    m.add_function(wrap_pyfunction!(tensor_reader::torch_reader_installed, m)?)?;
    m.add_function(wrap_pyfunction!(tensor_reader::torch_view, m)?)?;
    m.add_function(wrap_pyfunction!(dispatch_abi::dispatch_api, m)?)?;
    m.add_function(wrap_pyfunction!(dispatch_abi::dispatch_trace, m)?)?;
    Ok(())
}
