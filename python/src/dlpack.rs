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
    let Some(tensor) = tensor_of(capsule) else {
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

/// The tensor of a live, unconsumed DLPack capsule (classic or versioned); `None` for any
/// other capsule.
fn tensor_of<'a>(capsule: &'a Bound<'_, PyCapsule>) -> Option<&'a DLTensor> {
    if let Ok(p) = capsule.pointer_checked(Some(c"dltensor")) {
        // SAFETY: a live capsule named "dltensor" holds a DLManagedTensor (the DLPack ABI),
        // alive as long as the capsule.
        Some(unsafe { &p.cast::<DLManagedTensor>().as_ref().dl_tensor })
    } else if let Ok(p) = capsule.pointer_checked(Some(c"dltensor_versioned")) {
        // SAFETY: as above, for the versioned struct (DLPack 1.0).
        Some(unsafe { &p.cast::<DLManagedTensorVersioned>().as_ref().dl_tensor })
    } else {
        None
    }
}

/// What the torch fast path reads of a tensor exported as a DLPack capsule: address (data
/// plus byte offset), `(device_type, device_id)`, `(code, bits, lanes)`, and up to `N`
/// dimensions' shape and strides in elements; `None` for another capsule, more than `N`
/// dimensions, or no strides given.
pub(crate) struct Exported<const N: usize> {
    pub address: u64,
    pub device: (i32, i32),
    pub dtype: (u8, u8, u16),
    pub nd: usize,
    pub shape: [i64; N],
    pub strides: [i64; N],
}

pub(crate) fn exported<const N: usize>(capsule: &Bound<'_, PyCapsule>) -> Option<Exported<N>> {
    let t = tensor_of(capsule)?;
    let nd = usize::try_from(t.ndim).ok().filter(|&nd| nd <= N)?;
    if nd > 0 && (t.shape.is_null() || t.strides.is_null()) {
        return None;
    }
    let (mut shape, mut strides) = ([0i64; N], [0i64; N]);
    for i in 0..nd {
        // SAFETY: DLPack's shape and strides hold ndim elements while the capsule lives.
        unsafe {
            shape[i] = *t.shape.add(i);
            strides[i] = *t.strides.add(i);
        }
    }
    Some(Exported {
        address: (t.data as u64).wrapping_add(t.byte_offset),
        device: (t.device.device_type, t.device.device_id),
        dtype: (t.dtype.code, t.dtype.bits, t.dtype.lanes),
        nd,
        shape,
        strides,
    })
}
