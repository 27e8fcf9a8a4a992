//! The common row-kernel call from torch (softmax, log_softmax, mean along the last
//! dimension: RMSNorm's mean and attention's softmax under the mode), read and launched on
//! the native side as [`crate::torch_fast`] does for GEMMs. Declined (`None`, nothing
//! allocated or enqueued) unless the input's last stride is 1, its leading dimensions
//! collapse into one without a copy and it has rows and columns; `gemm_aot/_rows.py` takes the
//! rest with its messages.

use crate::torch_fast::{current_stream, dtype_of, is_current, view, View, TORCH};
use gemm_runtime::Dtype;
use gemm_runtime::{RawMatrix, RawRows, RowOp};
use pyo3::intern;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyTuple};

/// `(rows, ld)` of `v` viewed as `[rows, cols]` (torch's `view(-1, cols)`), `None` when its
/// leading dimensions do not collapse (or the last dimension is not contiguous).
fn as_rows(v: &View) -> Option<(usize, usize)> {
    let nd = v.nd;
    if nd == 0 {
        return None;
    }
    let cols = v.shape[nd - 1];
    if cols > 1 && v.stride[nd - 1] != 1 {
        return None;
    }
    // Leading dimensions of more than one element, outermost first: each one's stride must be
    // the next one's stride times its size; the innermost's stride is the rows' stride.
    let mut rows = 1usize;
    let mut inner: Option<(usize, usize)> = None;
    for i in (0..nd - 1).rev() {
        let (size, stride) = (v.shape[i], v.stride[i]);
        rows = rows.checked_mul(size)?;
        if size == 1 {
            continue;
        }
        match inner {
            None => inner = Some((size, stride)),
            Some((s, st)) if stride == st.checked_mul(s)? => inner = Some((size, stride)),
            Some(_) => return None,
        }
    }
    // The innermost merged dimension's stride is what torch's view gives the rows.
    let ld = if rows > 1 { innermost_stride(v)? } else { cols };
    Some((rows, ld))
}

/// The stride of the innermost leading dimension with more than one element.
fn innermost_stride(v: &View) -> Option<usize> {
    (0..v.nd - 1)
        .rev()
        .find(|&i| v.shape[i] > 1)
        .map(|i| v.stride[i])
}

/// The row call for `op` of `v` along its last dimension into a new contiguous output of
/// `to` (its address left 0), `None` when declined: leading dimensions that do not collapse,
/// no rows or no columns.
pub(crate) fn plan_rows(v: &View, op: RowOp, to: Dtype) -> Option<RawRows> {
    let (rows, ld_src) = as_rows(v)?;
    let cols = v.shape[v.nd - 1];
    if rows == 0 || cols == 0 {
        return None;
    }
    let out_cols = if op == RowOp::Mean { 1 } else { cols };
    Some(RawRows {
        op,
        from: v.dtype,
        to,
        src: RawMatrix {
            ptr: v.ptr,
            ld: ld_src,
        },
        dst: RawMatrix {
            ptr: 0,
            ld: out_cols,
        },
        rows,
        cols,
    })
}

/// `op` of torch tensor `x` along its last dimension into a new tensor of `dtype` (`None`:
/// x's); `keepdim` for mean. Returns the output, or `None` when declined.
#[pyfunction]
#[pyo3(signature = (op, x, dtype=None, keepdim=false))]
pub fn torch_rows<'py>(
    py: Python<'py>,
    op: &str,
    x: &Bound<'py, PyAny>,
    dtype: Option<&Bound<'py, PyAny>>,
    keepdim: bool,
) -> PyResult<Option<Bound<'py, PyAny>>> {
    let Some(refs) = TORCH.get(py) else {
        return Ok(None);
    };
    let Some(op) = RowOp::parse(op) else {
        return Ok(None);
    };
    let Some(v) = view(refs, x) else {
        return Ok(None);
    };
    let to = match dtype {
        Some(d) => match dtype_of(refs, d) {
            Some(t) => t,
            None => return Ok(None),
        },
        None => v.dtype,
    };
    let Some(mut call) = plan_rows(&v, op, to) else {
        return Ok(None);
    };
    if !is_current(refs, py, v.device) {
        return Ok(None);
    }
    let lead = &v.shape[..v.nd - 1];
    let shape: Vec<usize> = match op {
        RowOp::Mean if keepdim => lead.iter().copied().chain([1]).collect(),
        RowOp::Mean => lead.to_vec(),
        _ => v.shape[..v.nd].to_vec(),
    };
    // new_empty keeps x's dtype unless told another.
    let kw = PyDict::new(py);
    if let Some(d) = dtype {
        kw.set_item(intern!(py, "dtype"), d)?;
    }
    let out = x.call_method(
        intern!(py, "new_empty"),
        (PyTuple::new(py, shape)?,),
        Some(&kw),
    )?;
    call.dst.ptr = out.call_method0(intern!(py, "data_ptr"))?.extract()?;
    call.check().map_err(|e| crate::errors::to_py(py, &e))?;
    let stream = current_stream(refs, py, v.device)?;
    let ctx =
        crate::contexts::on_stream(v.device, stream).map_err(|e| crate::errors::to_py(py, &e))?;
    py.detach(|| ctx.rows_raw(&call))
        .map_err(|e| crate::errors::to_py(py, &e))?;
    Ok(Some(out))
}
