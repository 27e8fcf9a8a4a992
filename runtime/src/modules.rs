//! The loaded modules and functions of one device: one module a compile unit of the tier,
//! loaded on first use from its embedded cubin, or from its PTX (JIT-compiled by the driver)
//! when the context's tier runs from PTX, and every function looked up once. Shared by
//! all the streams ([`Context::new_stream`](crate::Context::new_stream)) of a device, so a
//! new stream loads nothing and a server's workers do not each hold a copy of every cubin.

use crate::error::GemmError;
use crate::table::{KernelRef, TierInfo};
use cudarc::driver::{sys, CudaContext, CudaFunction, CudaModule, CudaStream, DriverError};
use gemm_core::fast_hash::FastMap;
use gemm_core::{KernelSet, TierCode, CONVERSIONS_MODULE};
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, Mutex, OnceLock, RwLock};

/// The `__constant__` each unit of a timing-perturbation build reads its delays from
/// (kernels-templates/common/timing_perturbation.cuh); 0 means no delays.
const PERTURB_SEED_SYMBOL: &str = "gemm_aot_perturb_seed";

pub(crate) struct ModuleCache {
    /// The set the tier and every kernel id belong to.
    set: &'static KernelSet,
    tier: &'static TierInfo,
    /// Whether the modules load from the tier's cubins or its PTX.
    code: TierCode,
    /// One slot a module of the tier (`TierInfo::modules`), loaded on first use.
    modules: Vec<OnceLock<Arc<CudaModule>>>,
    /// Read on every launch from every stream: a read lock, so workers do not serialize.
    functions: RwLock<FastMap<KernelRef, CudaFunction>>,
    /// Held while a module is loaded, so two streams asking at once load it once.
    loading: Mutex<()>,
    /// How many modules were loaded (for tests: a new stream loads none).
    loads: std::sync::atomic::AtomicUsize,
    /// The timing-perturbation seed written into every module of a perturbed set (0: none).
    perturb_seed: AtomicU32,
}

impl ModuleCache {
    pub(crate) fn new(set: &'static KernelSet, tier: &'static TierInfo, code: TierCode) -> Self {
        ModuleCache {
            set,
            tier,
            code,
            modules: tier.modules.iter().map(|_| OnceLock::new()).collect(),
            functions: RwLock::new(FastMap::default()),
            loading: Mutex::new(()),
            loads: Default::default(),
            perturb_seed: AtomicU32::new(0),
        }
    }

    /// Writes `seed` into every loaded module of a timing-perturbation set and keeps it for
    /// the modules loaded later. The copy is ordered on `stream`; kernels already running on
    /// other streams may still read the previous seed.
    pub(crate) fn set_perturb_seed(
        &self,
        stream: &Arc<CudaStream>,
        seed: u32,
    ) -> Result<(), GemmError> {
        if !self.set.timing_perturbation() {
            return Err(GemmError::NotPerturbed {
                set: self.set.name(),
            });
        }
        let _loading = self.loading.lock().unwrap_or_else(|p| p.into_inner());
        self.perturb_seed.store(seed, Ordering::Relaxed);
        for (m, info) in self.modules.iter().zip(self.tier.modules) {
            if let Some(m) = m.get() {
                write_seed(m, info.name, stream, seed)?;
            }
        }
        Ok(())
    }

    /// The seed the modules of a perturbed set read (0 for every other set).
    pub(crate) fn perturb_seed(&self) -> u32 {
        self.perturb_seed.load(Ordering::Relaxed)
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
        stream: &Arc<CudaStream>,
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
                        if self.set.timing_perturbation() {
                            write_seed(&m, info.name, stream, self.perturb_seed())?;
                        }
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

/// Writes a module's timing-perturbation seed (its `__constant__`), ordered on `stream`.
fn write_seed(
    module: &Arc<CudaModule>,
    name: &str,
    stream: &Arc<CudaStream>,
    seed: u32,
) -> Result<(), GemmError> {
    // The conversions module (conversions and row kernels: no asynchronous pipeline) has no
    // perturbation sites, so nothing to seed; a GEMM module without the symbol is an error,
    // or its kernels would run unperturbed unseen.
    let mut symbol = match module.get_global(PERTURB_SEED_SYMBOL, stream) {
        Ok(s) => s,
        Err(DriverError(sys::CUresult::CUDA_ERROR_NOT_FOUND)) if name == CONVERSIONS_MODULE => {
            return Ok(())
        }
        Err(e) => return Err(e.into()),
    };
    let bytes = seed.to_ne_bytes();
    let mut dst = symbol.slice_mut(..bytes.len());
    stream.memcpy_htod(&bytes, &mut dst)?;
    Ok(())
}
