//! [`Device`]: what every stream of one GPU shares: the CUDA context, the kernel set and the
//! tier of it serving the device (and how it was chosen), the loaded modules and functions,
//! the allocation registry, the encoded tensor maps and the occupancy of each kernel. Opened
//! once; each [`Context`](crate::Context) is one stream on it.

use crate::error::GemmError;
use crate::modules::ModuleCache;
use crate::occupancy::Occupancy;
use crate::registry::Registry;
use crate::table::{KernelInfo, KernelRef, TierInfo};
use crate::tensor_map_cache::TensorMapCache;
use cudarc::driver::{CudaContext, CudaFunction, CudaStream};
use gemm_core::{DeviceCaps, KernelSet, TierChoice, TierCode, TierSelection};
use std::sync::Arc;

/// One GPU as the runtime serves it (see the module docs).
pub(crate) struct Device {
    pub ordinal: usize,
    pub cuda: Arc<CudaContext>,
    /// The tables every lookup goes through.
    pub kernels: &'static KernelSet,
    /// The tier of `kernels` serving the device.
    pub tier: &'static TierInfo,
    /// How the tier was chosen and whether it runs from cubins or PTX.
    pub selection: TierSelection,
    /// What the tier choice knew of the device.
    pub caps: DeviceCaps,
    pub modules: ModuleCache,
    pub registry: Arc<Registry>,
    pub maps: TensorMapCache,
    pub occupancy: Occupancy,
}

impl Device {
    /// Opens device `ordinal` on `kernels`, its tier picked by `choice`. Errors (never panics)
    /// when the set is inconsistent, no driver is present, the choice finds no tier the device
    /// can run, or the set carries no code (cubins or PTX) for it.
    pub fn open(
        ordinal: usize,
        kernels: &'static KernelSet,
        choice: &TierChoice,
    ) -> Result<Device, GemmError> {
        kernels.check()?;
        // SAFETY: only probes whether the driver library can be opened.
        if !unsafe { cudarc::driver::sys::is_culib_present() } {
            return Err(GemmError::NoDriver);
        }
        let cuda = CudaContext::new(ordinal)?;
        let (major, minor) = cuda.compute_capability()?;
        let shared = cuda.attribute(
            cudarc::driver::sys::CUdevice_attribute::CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN,
        )?;
        let caps = DeviceCaps {
            ordinal,
            capability: (major as u32, minor as u32),
            max_shared_bytes: u32::try_from(shared).unwrap_or(0),
        };
        let selection = kernels.choose_tier(caps, choice)?;
        let tier = selection.tier;
        let code_present = match selection.code {
            TierCode::Cubin => tier.has_cubins(),
            TierCode::Ptx { .. } => kernels.ptx(tier.id).is_some_and(|p| p.has_ptx()),
        };
        if !kernels.cubins_present() || !code_present {
            return Err(GemmError::NoCubins);
        }
        Ok(Device {
            ordinal,
            cuda,
            kernels,
            tier,
            selection,
            caps,
            modules: ModuleCache::new(kernels, tier, selection.code),
            registry: Arc::new(Registry::new()),
            maps: TensorMapCache::default(),
            occupancy: Occupancy::default(),
        })
    }

    /// The loaded function of a kernel of the tier (its module loaded on first use, once for
    /// the device; `stream` orders a perturbation seed's copy).
    pub fn function(
        &self,
        stream: &Arc<CudaStream>,
        kernel: KernelRef,
    ) -> Result<CudaFunction, GemmError> {
        self.modules.function(&self.cuda, stream, kernel)
    }

    /// CTAs of `info` that can be co-resident on the device (not capped), cached per kernel.
    pub fn coresident(
        &self,
        stream: &Arc<CudaStream>,
        info: &'static KernelInfo,
    ) -> Result<u32, GemmError> {
        // Known: no function lookup (the wave model asks for every candidate of a route).
        if let Some(n) = self.occupancy.cached(info) {
            return Ok(n);
        }
        let func = self.function(stream, KernelRef::Gemm(info.id))?;
        self.occupancy.coresident(&self.cuda, stream, info, &func)
    }
}
