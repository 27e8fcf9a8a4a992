//! The one raw launch path: a loaded function, its geometry and its argument struct's bytes,
//! enqueued with `cuLaunchKernelEx` (with the cluster attribute when the geometry has a
//! cluster). The GEMM path, the half fallback's conversions and a package's capture all launch
//! here, after the planner chose the kernel and every pointer was validated; cudarc 0.19 has no
//! launch with attributes, so this is the driver's entry directly.

use crate::error::GemmError;
use cudarc::driver::{sys, CudaContext, CudaFunction, CudaStream};
use gemm_core::ArgBytes;

/// A cluster of one block: a launch without clusters.
pub const NO_CLUSTER: (u32, u32, u32) = (1, 1, 1);

/// Where and how a kernel runs: grid, block, dynamic shared memory and cluster.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Geometry {
    pub grid: (u32, u32, u32),
    pub block: (u32, u32, u32),
    pub shared_bytes: u32,
    /// (1, 1, 1) for a launch without clusters.
    pub cluster: (u32, u32, u32),
}

/// The launch attribute asking for clusters of `cluster` blocks.
pub(crate) fn cluster_attribute(cluster: (u32, u32, u32)) -> sys::CUlaunchAttribute {
    // SAFETY: a zeroed attribute (id IGNORE, zero value) is valid; both fields are set below.
    let mut attr: sys::CUlaunchAttribute = unsafe { std::mem::zeroed() };
    attr.id = sys::CUlaunchAttributeID::CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION;
    attr.value.clusterDim = sys::CUlaunchAttributeValue_union__bindgen_ty_1 {
        x: cluster.0,
        y: cluster.1,
        z: cluster.2,
    };
    attr
}

/// Enqueues `func` on `stream` with `args` as its one by-value parameter.
///
/// # Safety
/// `args` are exactly the bytes of the kernel's argument struct, and every device pointer in
/// them was checked to lie inside a live allocation long enough for the launch, with outputs
/// overlapping no input.
pub(crate) unsafe fn launch(
    cuda: &CudaContext,
    stream: &CudaStream,
    func: &CudaFunction,
    g: Geometry,
    args: &ArgBytes,
) -> Result<(), GemmError> {
    cuda.bind_to_thread()?;
    let mut params = [args.as_ptr() as *mut std::ffi::c_void];
    let mut attr = cluster_attribute(g.cluster);
    let config = sys::CUlaunchConfig {
        gridDimX: g.grid.0,
        gridDimY: g.grid.1,
        gridDimZ: g.grid.2,
        blockDimX: g.block.0,
        blockDimY: g.block.1,
        blockDimZ: g.block.2,
        sharedMemBytes: g.shared_bytes,
        hStream: stream.cu_stream(),
        attrs: &mut attr,
        numAttrs: u32::from(g.cluster != NO_CLUSTER),
    };
    // SAFETY: `config`, its attribute and `params` outlive the call; the caller vouches for
    // the argument bytes.
    unsafe {
        sys::cuLaunchKernelEx(
            &config,
            func.cu_function(),
            params.as_mut_ptr(),
            std::ptr::null_mut(),
        )
    }
    .result()?;
    Ok(())
}
