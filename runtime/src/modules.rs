//! The loaded modules and functions of one device: one module a compile unit of the tier,
//! loaded from its embedded cubin on first use, and every function looked up once. Shared by
//! all the streams ([`Context::new_stream`](crate::Context::new_stream)) of a device, so a
//! new stream loads nothing and a server's workers do not each hold a copy of every cubin.

use crate::error::GemmError;
use crate::kernel_set::KernelSet;
use crate::table::{KernelRef, TierInfo};
use cudarc::driver::{CudaContext, CudaFunction, CudaModule};
use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock, RwLock};

pub(crate) struct ModuleCache {
    /// The set the tier and every kernel id belong to.
    set: &'static KernelSet,
    tier: &'static TierInfo,
    /// One slot a module of the tier (`TierInfo::modules`), loaded on first use.
    modules: Vec<OnceLock<Arc<CudaModule>>>,
    /// Read on every launch from every stream: a read lock, so workers do not serialize.
    functions: RwLock<HashMap<KernelRef, CudaFunction>>,
    /// Held while a module is loaded, so two streams asking at once load it once.
    loading: Mutex<()>,
    /// How many modules were loaded (for tests: a new stream loads none).
    loads: std::sync::atomic::AtomicUsize,
}

impl ModuleCache {
    pub(crate) fn new(set: &'static KernelSet, tier: &'static TierInfo) -> Self {
        ModuleCache {
            set,
            tier,
            modules: tier.modules.iter().map(|_| OnceLock::new()).collect(),
            functions: RwLock::new(HashMap::new()),
            loading: Mutex::new(()),
            loads: Default::default(),
        }
    }

    /// Modules loaded so far.
    pub(crate) fn loaded_modules(&self) -> usize {
        self.loads.load(std::sync::atomic::Ordering::Relaxed)
    }

    /// The loaded function of a kernel of the tier (its module loaded on first use).
    pub(crate) fn function(
        &self,
        cuda: &Arc<CudaContext>,
        kernel: KernelRef,
    ) -> Result<CudaFunction, GemmError> {
        if let Some(f) = self
            .functions
            .read()
            .unwrap_or_else(|p| p.into_inner())
            .get(&kernel)
        {
            return Ok(f.clone());
        }
        let (name, shared_bytes, module, cluster) = match kernel {
            KernelRef::Gemm(id) => self
                .set
                .kernel(id)
                .map(|k| (k.name, k.shared_bytes, k.module, k.cluster)),
            KernelRef::Conversion(id) => self
                .set
                .conversion(id)
                .map(|c| (c.name, 0, c.module, (1, 1, 1))),
        }
        .ok_or(GemmError::UnknownKernel(kernel))?;
        let (Some(slot), Some(info)) = (
            self.modules.get(module as usize),
            self.tier.modules.get(module as usize),
        ) else {
            return Err(GemmError::UnknownKernel(kernel));
        };
        let module = match slot.get() {
            Some(m) => m.clone(),
            None => {
                let _loading = self.loading.lock().unwrap_or_else(|p| p.into_inner());
                match slot.get() {
                    Some(m) => m.clone(),
                    None => {
                        let m =
                            cuda.load_module(cudarc::nvrtc::Ptx::from_binary(info.cubin.to_vec()))?;
                        self.loads
                            .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                        let _ = slot.set(m.clone());
                        m
                    }
                }
            }
        };
        let f = module.load_function(name)?;
        if shared_bytes > 48 * 1024 {
            f.set_attribute(
                cudarc::driver::sys::CUfunction_attribute::CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                shared_bytes as i32,
            )?;
        }
        // Clusters of more than 8 CTAs (the portable limit) must be allowed explicitly.
        if cluster.0 * cluster.1 * cluster.2 > 8 {
            f.set_attribute(
                cudarc::driver::sys::CUfunction_attribute::CU_FUNC_ATTRIBUTE_NON_PORTABLE_CLUSTER_SIZE_ALLOWED,
                1,
            )?;
        }
        self.functions
            .write()
            .unwrap_or_else(|p| p.into_inner())
            .entry(kernel)
            .or_insert_with(|| f.clone());
        Ok(f)
    }
}
