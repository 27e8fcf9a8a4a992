//! The loaded modules and functions of one device: one module a compile unit of the tier,
//! loaded on first use from its embedded cubin, or from its PTX (JIT-compiled by the driver)
//! when the context's tier runs from PTX, and every function looked up once. Shared by
//! all the streams ([`Context::new_stream`](crate::Context::new_stream)) of a device, so a
//! new stream loads nothing and a server's workers do not each hold a copy of every cubin.

use crate::error::GemmError;
use crate::kernel_set::KernelSet;
use crate::table::{KernelRef, TierInfo};
use crate::tier_choice::TierCode;
use cudarc::driver::{CudaContext, CudaFunction, CudaModule};
use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock, RwLock};

pub(crate) struct ModuleCache {
    /// The set the tier and every kernel id belong to.
    set: &'static KernelSet,
    tier: &'static TierInfo,
    /// Whether the modules load from the tier's cubins or its PTX.
    code: TierCode,
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
    pub(crate) fn new(set: &'static KernelSet, tier: &'static TierInfo, code: TierCode) -> Self {
        ModuleCache {
            set,
            tier,
            code,
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

    /// Loads module `index` of the tier from its cubin, or JIT-compiles its PTX.
    fn load(
        &self,
        cuda: &Arc<CudaContext>,
        index: usize,
        name: &'static str,
        cubin: &'static [u8],
    ) -> Result<Arc<CudaModule>, GemmError> {
        let TierCode::Ptx { target } = self.code else {
            return Ok(cuda.load_module(cudarc::nvrtc::Ptx::from_binary(cubin.to_vec()))?);
        };
        let unit = self
            .set
            .ptx(self.tier.id)
            .and_then(|p| p.modules.get(index))
            .filter(|u| u.name == name && !u.ptx.is_empty())
            .ok_or(GemmError::NoCubins)?;
        // cuModuleLoadData takes PTX as NUL-terminated text (passed as an image: no CString,
        // so no panic on a stray NUL; the driver would refuse the text instead).
        let mut text = Vec::with_capacity(unit.ptx.len() + 1);
        text.extend_from_slice(unit.ptx.as_bytes());
        text.push(0);
        cuda.load_module(cudarc::nvrtc::Ptx::from_binary(text))
            .map_err(|source| GemmError::PtxJit {
                tier: self.tier.name,
                module: name,
                target,
                source,
            })
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
        let (name, shared_bytes, index, cluster) = match kernel {
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
            self.modules.get(index as usize),
            self.tier.modules.get(index as usize),
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
                        let m = self.load(cuda, index as usize, info.name, info.cubin)?;
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
