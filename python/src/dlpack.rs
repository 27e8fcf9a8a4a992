//! DLPack capsules read without copying and without consuming them: the capsule (and so the
//! producer's memory) stays owned by the caller, who keeps it alive while the GEMM runs, as
//! for a raw pointer. Both the classic `dltensor` and the versioned `dltensor_versioned`
//! capsules are read.

use pyo3::prelude::*;
use pyo3::types::{PyCapsule, PyCapsuleMethods, PyDict};
use std::ffi::c_void;

#[repr(C)]
struct DLDevice {
    device_type: i32,
    device_id: i32,
}

#[repr(C)]
struct DLDataType {
    code: u8,
    bits: u8,
    lanes: u16,
}

#[repr(C)]
struct DLTensor {
    data: *mut c_void,
    device: DLDevice,
    ndim: i32,
    dtype: DLDataType,
    shape: *const i64,
    strides: *const i64,
    byte_offset: u64,
}

#[repr(C)]
struct DLManagedTensor {
    dl_tensor: DLTensor,
    manager_ctx: *mut c_void,
    deleter: *mut c_void,
}

#[repr(C)]
struct DLManagedTensorVersioned {
    version: [u32; 2],
    manager_ctx: *mut c_void,
    deleter: *mut c_void,
    flags: u64,
    dl_tensor: DLTensor,
}

/// The tensor a DLPack capsule describes: `address` (data + byte offset), `device_type`
/// (2 is CUDA), `device_id`, `dtype` as `(code, bits, lanes)`, `shape` and `strides` in
/// elements (compact row-major when the capsule gives none). Refuses a capsule that is not
/// a live DLPack tensor.
#[pyfunction]
pub fn dlpack_tensor<'py>(capsule: &Bound<'py, PyCapsule>) -> PyResult<Bound<'py, PyDict>> {
    let py = capsule.py();
    let tensor: &DLTensor = if let Ok(p) = capsule.pointer_checked(Some(c"dltensor")) {
        // SAFETY: a live capsule named "dltensor" holds a DLManagedTensor (the DLPack ABI).
        unsafe { &p.cast::<DLManagedTensor>().as_ref().dl_tensor }
    } else if let Ok(p) = capsule.pointer_checked(Some(c"dltensor_versioned")) {
        // SAFETY: as above, for the versioned struct (DLPack 1.0).
        unsafe { &p.cast::<DLManagedTensorVersioned>().as_ref().dl_tensor }
    } else {
        return Err(crate::errors::invalid(
            py,
            "the capsule is not an unconsumed DLPack tensor (named \"dltensor\" or \"dltensor_versioned\")".into(),
        ));
    };
    let ndim = usize::try_from(tensor.ndim).unwrap_or(0);
    // SAFETY: DLPack's shape (and strides, when not null) hold ndim elements.
    let shape: Vec<i64> = (0..ndim).map(|i| unsafe { *tensor.shape.add(i) }).collect();
    let strides: Vec<i64> = if tensor.strides.is_null() {
        let mut s = vec![1i64; ndim];
        for i in (0..ndim.saturating_sub(1)).rev() {
            s[i] = s[i + 1] * shape[i + 1];
        }
        s
    } else {
        // SAFETY: as above.
        (0..ndim)
            .map(|i| unsafe { *tensor.strides.add(i) })
            .collect()
    };
    let out = PyDict::new(py);
    out.set_item(
        "address",
        (tensor.data as u64).wrapping_add(tensor.byte_offset),
    )?;
    out.set_item("device_type", tensor.device.device_type)?;
    out.set_item("device_id", tensor.device.device_id)?;
    out.set_item(
        "dtype",
        (tensor.dtype.code, tensor.dtype.bits, tensor.dtype.lanes),
    )?;
    out.set_item("shape", shape)?;
    out.set_item("strides", strides)?;
    Ok(out)
}
