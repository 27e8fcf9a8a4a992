//! Persistent grids: a kernel whose grid is `persistent` launches as many CTAs as can be
//! co-resident (SM count x blocks an SM, from the occupancy calculator with the kernel's
//! threads and dynamic shared memory; for clusters, the device's co-resident clusters x the
//! cluster size), capped by [`Context::set_max_persistent_ctas`], and never more than the
//! tiles need. Every CTA walks tiles in a fixed order, so the grid size changes who computes
//! a tile, never how. Recorded grids hold the value launched, so a package prepared under
//! another cap differs from its manifest (`PackageError::RecordMismatch`).

use crate::context::Context;
use crate::error::GemmError;
use crate::launch::{cluster_attribute, NO_CLUSTER};
use crate::table::{GridKind, KernelId, KernelInfo, KernelRef};
use cudarc::driver::sys;
use std::collections::HashMap;
use std::sync::{Mutex, OnceLock};

/// A context's persistent-grid state: the cap, and each kernel's co-resident CTAs.
#[derive(Default)]
pub(crate) struct Occupancy {
    cap: Mutex<Option<u32>>,
    coresident: Mutex<HashMap<KernelRef, u32>>,
    sm_count: OnceLock<u32>,
}

impl Occupancy {
    /// A fresh state with the same cap (for another stream of the context).
    pub(crate) fn with_cap_of(other: &Occupancy) -> Occupancy {
        let o = Occupancy::default();
        *o.cap.lock().unwrap_or_else(|p| p.into_inner()) = other.cap();
        o
    }

    fn cap(&self) -> Option<u32> {
        *self.cap.lock().unwrap_or_else(|p| p.into_inner())
    }
}

/// The cluster a kernel launches with ((1, 1, 1) without clusters).
pub(crate) fn kernel_cluster(kernel: &KernelInfo) -> (u32, u32, u32) {
    kernel.cluster
}

/// Most CTAs a persistent grid may have: the co-resident CTAs, or the cap if lower, rounded
/// down to whole clusters of `cluster_x` CTAs, and at least one cluster.
pub(crate) fn persistent_limit(coresident: u32, cap: Option<u32>, cluster_x: u32) -> u32 {
    let cluster_x = cluster_x.max(1);
    let limit = cap.map_or(coresident, |c| c.min(coresident));
    (limit / cluster_x).max(1).saturating_mul(cluster_x)
}

impl Context {
    /// Caps the CTAs of persistent grids (`None`: as many as can be co-resident). For tests,
    /// and for users sharing the GPU with other work. A cap below a kernel's cluster size
    /// still launches one cluster.
    pub fn set_max_persistent_ctas(&self, cap: Option<u32>) {
        *self.occupancy.cap.lock().unwrap_or_else(|p| p.into_inner()) = cap;
    }

    /// The cap on persistent grids' CTAs, if any.
    pub fn max_persistent_ctas(&self) -> Option<u32> {
        self.occupancy.cap()
    }

    /// Streaming multiprocessors of the device.
    pub fn sm_count(&self) -> Result<u32, GemmError> {
        if let Some(&n) = self.occupancy.sm_count.get() {
            return Ok(n);
        }
        let n = self
            .cuda
            .attribute(sys::CUdevice_attribute::CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT)?;
        let n = u32::try_from(n).unwrap_or(0);
        let _ = self.occupancy.sm_count.set(n);
        Ok(n)
    }

    /// CTAs of `kernel` that can be co-resident on the device (not capped): SM count x blocks
    /// an SM with its threads and dynamic shared memory, or, with clusters, the co-resident
    /// clusters x the cluster size. Cached per kernel.
    pub fn coresident_ctas(&self, kernel: KernelId) -> Result<u32, GemmError> {
        let info = self
            .kernels
            .kernel(kernel)
            .ok_or(GemmError::UnknownKernel(KernelRef::Gemm(kernel)))?;
        self.coresident(info)
    }

    /// [`coresident_ctas`](Self::coresident_ctas) of a kernel's table entry.
    pub(crate) fn coresident(&self, info: &'static KernelInfo) -> Result<u32, GemmError> {
        let kref = KernelRef::Gemm(info.id);
        if let Some(&n) = self
            .occupancy
            .coresident
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .get(&kref)
        {
            return Ok(n);
        }
        let cluster = kernel_cluster(info);
        let func = self.function(kref)?;
        self.cuda.bind_to_thread()?;
        let threads = info.block_threads;
        let smem = info.shared_bytes;
        let n = if cluster == NO_CLUSTER {
            let mut blocks: std::ffi::c_int = 0;
            // SAFETY: `func` is a loaded function of this context; `blocks` an out-pointer.
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
                .saturating_mul(self.sm_count()?)
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
                hStream: self.stream.cu_stream(),
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
        self.occupancy
            .coresident
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .insert(kref, n);
        Ok(n)
    }

    /// The grid of `info` for an `m x n` output: one block a tile, or, for a persistent
    /// kernel, [`KernelInfo::grid_for`] under [`persistent_limit`] (the co-resident CTAs,
    /// capped). Checked to be whole clusters.
    pub(crate) fn launch_grid(
        &self,
        info: &'static KernelInfo,
        m: u64,
        n: u64,
    ) -> Result<(u32, u32, u32), GemmError> {
        let cluster = kernel_cluster(info);
        let max_ctas = match info.grid {
            GridKind::Tiles => u32::MAX,
            GridKind::Persistent => persistent_limit(
                self.coresident(info)?,
                self.max_persistent_ctas(),
                cluster.0,
            ),
        };
        let grid = info
            .grid_for(m, n, max_ctas)
            .ok_or(GemmError::GridTooLarge {
                kernel: info.name,
                m,
                n,
            })?;
        let whole = |g: u32, c: u32| c >= 1 && g.is_multiple_of(c);
        if !(whole(grid.0, cluster.0) && whole(grid.1, cluster.1) && whole(grid.2, cluster.2)) {
            return Err(GemmError::ClusterShape {
                kernel: info.name,
                grid,
                cluster,
            });
        }
        Ok(grid)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn persistent_limits_are_capped_whole_clusters() {
        assert_eq!(persistent_limit(132, None, 1), 132);
        assert_eq!(persistent_limit(132, Some(66), 1), 66);
        assert_eq!(persistent_limit(132, Some(500), 1), 132);
        // Clusters of 2: rounded down to whole clusters.
        assert_eq!(persistent_limit(133, None, 2), 132);
        assert_eq!(persistent_limit(132, Some(65), 2), 64);
        // A cap below one cluster still allows one cluster.
        assert_eq!(persistent_limit(132, Some(1), 2), 2);
        assert_eq!(persistent_limit(132, Some(0), 1), 1);
        for cap in [None, Some(0), Some(1), Some(7), Some(64), Some(1000)] {
            for cs in [1u32, 2, 4] {
                let n = persistent_limit(132, cap, cs);
                assert_eq!(n % cs, 0);
                assert!(n >= cs && n <= 132);
            }
        }
    }
}
