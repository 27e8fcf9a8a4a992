//! Occupancy of one device: how many CTAs of a kernel can be co-resident (SM count x blocks
//! an SM, from the occupancy calculator with the kernel's threads and dynamic shared memory;
//! for clusters, the device's co-resident clusters x the cluster size), cached per kernel. A
//! persistent kernel's grid is [`gemm_core::persistent_limit`] of it: who computes a tile
//! depends on the grid, never how.

use crate::error::GemmError;
use crate::launcher::{cluster_attribute, NO_CLUSTER};
use crate::table::{KernelInfo, KernelRef};
use cudarc::driver::{sys, CudaContext, CudaFunction, CudaStream};
use gemm_core::fast_hash::FastMap;
use std::sync::{Mutex, OnceLock};

/// A device's co-resident CTAs per kernel, and its SM count.
#[derive(Default)]
pub(crate) struct Occupancy {
    coresident: Mutex<FastMap<KernelRef, u32>>,
    sm_count: OnceLock<u32>,
}

impl Occupancy {
    /// Streaming multiprocessors of the device.
    pub(crate) fn sm_count(&self, cuda: &CudaContext) -> Result<u32, GemmError> {
        if let Some(&n) = self.sm_count.get() {
            return Ok(n);
        }
        let n =
            cuda.attribute(sys::CUdevice_attribute::CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT)?;
        let n = u32::try_from(n).unwrap_or(0);
        let _ = self.sm_count.set(n);
        Ok(n)
    }

    /// The co-resident CTAs of `info` if already computed.
    pub(crate) fn cached(&self, info: &'static KernelInfo) -> Option<u32> {
        self.coresident
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .get(&KernelRef::Gemm(info.id))
            .copied()
    }

    /// CTAs of `info` (loaded as `func`) that can be co-resident on the device, not capped.
    pub(crate) fn coresident(
        &self,
        cuda: &CudaContext,
        stream: &CudaStream,
        info: &'static KernelInfo,
        func: &CudaFunction,
    ) -> Result<u32, GemmError> {
        let kref = KernelRef::Gemm(info.id);
        if let Some(&n) = self
            .coresident
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .get(&kref)
        {
            return Ok(n);
        }
        let cluster = info.cluster;
        cuda.bind_to_thread()?;
        let threads = info.block_threads;
        let smem = info.shared_bytes;
        let n = if cluster == NO_CLUSTER {
            let mut blocks: std::ffi::c_int = 0;
            // SAFETY: `func` is a loaded function of this device; `blocks` an out-pointer.
            unsafe {
                sys::cuOccupancyMaxActiveBlocksPerMultiprocessor(
                    &mut blocks,
                    func.cu_function(),
                    threads as std::ffi::c_int,
                    smem as usize,
                )
            }
            .result()?;
            u32::try_from(blocks)
                .unwrap_or(0)
                .saturating_mul(self.sm_count(cuda)?)
        } else {
            let mut attr = cluster_attribute(cluster);
            let config = sys::CUlaunchConfig {
                gridDimX: cluster.0,
                gridDimY: cluster.1,
                gridDimZ: cluster.2,
                blockDimX: threads,
                blockDimY: 1,
                blockDimZ: 1,
                sharedMemBytes: smem,
                hStream: stream.cu_stream(),
                attrs: &mut attr,
                numAttrs: 1,
            };
            let mut clusters: std::ffi::c_int = 0;
            // SAFETY: as above; `config` and its attribute outlive the call.
            unsafe {
                sys::cuOccupancyMaxActiveClusters(&mut clusters, func.cu_function(), &config)
            }
            .result()?;
            u32::try_from(clusters)
                .unwrap_or(0)
                .saturating_mul(cluster.0 * cluster.1 * cluster.2)
        };
        if n == 0 {
            return Err(GemmError::Unschedulable {
                kernel: info.name,
                threads,
                shared_bytes: smem,
                cluster,
            });
        }
        self.coresident
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .insert(kref, n);
        Ok(n)
    }
}
