//! `Context`: one device, one stream, the tier serving the device, its modules (one a compile
//! unit, each loaded lazily from its embedded cubin), the allocation registry and the mode.

use crate::buffer::{DeviceBuffer, ExternalSpan};
use crate::element::Element;
use crate::error::GemmError;
use crate::registry::Registry;
use crate::scratch::Scratch;
use crate::table::{self, KernelRef, Policy, TierInfo};
use cudarc::driver::{CudaContext, CudaFunction, CudaModule, CudaStream, DevicePtr};
use std::collections::HashMap;
use std::marker::PhantomData;
use std::sync::{Arc, Mutex, OnceLock};

/// Where GEMMs run.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Mode {
    /// The generated kernels only; batch-invariant and reproducible. Never calls cuBLAS.
    #[default]
    Deterministic,
    /// cuBLAS with its default math (TF32 allowed for f32). Not batch-invariant.
    CublasFast,
    /// cuBLAS with pedantic f32 compute (no TF32, no reduced precision). Not batch-invariant.
    CublasPedantic,
}

/// One device and stream. Every GEMM entry point validates its arguments against this
/// context's registry before anything is enqueued.
pub struct Context {
    pub(crate) ordinal: usize,
    pub(crate) cuda: Arc<CudaContext>,
    pub(crate) stream: Arc<CudaStream>,
    pub(crate) tier: &'static TierInfo,
    /// One slot a module of the tier (`TierInfo::modules`), loaded on first use.
    modules: Vec<OnceLock<Arc<CudaModule>>>,
    functions: Mutex<HashMap<KernelRef, CudaFunction>>,
    pub(crate) registry: Arc<Registry>,
    mode: Mutex<Mode>,
    policy: Mutex<Policy>,
    pub(crate) blas: OnceLock<cudarc::cublas::CudaBlas>,
    /// f32 scratch of the half fallback, per stream (its users are stream-ordered).
    pub(crate) scratch: Scratch,
    /// Encoded tensor maps, shared by the context's streams.
    pub(crate) tensor_maps: Arc<crate::tensor_map::TensorMapCache>,
    /// Persistent grids: the cap and each kernel's co-resident CTAs.
    pub(crate) occupancy: crate::persistent::Occupancy,
}

impl std::fmt::Debug for Context {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Context")
            .field("ordinal", &self.ordinal)
            .field("tier", &self.tier.name)
            .field("mode", &self.mode())
            .field("policy", &self.policy())
            .finish()
    }
}

impl Context {
    /// Opens device `ordinal` with a new stream. Errors (never panics) when no driver is
    /// present, no tier serves the device, or the build carries no cubins.
    pub fn new(ordinal: usize) -> Result<Context, GemmError> {
        // SAFETY: only probes whether the driver library can be opened.
        if !unsafe { cudarc::driver::sys::is_culib_present() } {
            return Err(GemmError::NoDriver);
        }
        let cuda = CudaContext::new(ordinal)?;
        let (major, minor) = cuda.compute_capability()?;
        let (major, minor) = (major as u32, minor as u32);
        let tier = table::tier_for_capability((major, minor)).ok_or_else(|| GemmError::NoTier {
            ordinal,
            major,
            minor,
            tiers: crate::TIERS
                .iter()
                .map(|t| {
                    format!(
                        "{} ({}.{})",
                        t.name, t.compute_capability.0, t.compute_capability.1
                    )
                })
                .collect::<Vec<_>>()
                .join(", "),
        })?;
        if !crate::CUBINS_PRESENT || !tier.has_cubins() {
            return Err(GemmError::NoCubins);
        }
        let stream = cuda.new_stream()?;
        Ok(Context {
            ordinal,
            cuda,
            stream,
            tier,
            modules: tier.modules.iter().map(|_| OnceLock::new()).collect(),
            functions: Mutex::new(HashMap::new()),
            registry: Arc::new(Registry::new()),
            mode: Mutex::new(Mode::default()),
            policy: Mutex::new(Policy::Exact),
            blas: OnceLock::new(),
            scratch: Scratch::default(),
            tensor_maps: Arc::default(),
            occupancy: Default::default(),
        })
    }

    /// Another stream on the same device and context. The allocation registry is shared (the
    /// same buffers are valid on both); mode and policy start as this context's; packages
    /// remember which stream they were made for. The cap on persistent grids starts as this
    /// context's; encoded tensor maps are shared.
    pub fn new_stream(&self) -> Result<Context, GemmError> {
        Ok(Context {
            ordinal: self.ordinal,
            cuda: self.cuda.clone(),
            stream: self.cuda.new_stream()?,
            tier: self.tier,
            modules: self.tier.modules.iter().map(|_| OnceLock::new()).collect(),
            functions: Mutex::new(HashMap::new()),
            registry: self.registry.clone(),
            mode: Mutex::new(self.mode()),
            policy: Mutex::new(self.policy()),
            blas: OnceLock::new(),
            scratch: Scratch::default(),
            tensor_maps: self.tensor_maps.clone(),
            occupancy: crate::persistent::Occupancy::with_cap_of(&self.occupancy),
        })
    }

    /// The tier serving this device.
    pub fn tier(&self) -> &'static TierInfo {
        self.tier
    }

    /// The stream every call of this context is enqueued on.
    pub fn stream(&self) -> &Arc<CudaStream> {
        &self.stream
    }

    /// The current mode (default `Deterministic`).
    pub fn mode(&self) -> Mode {
        *self.mode.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Switches the mode for the calls that follow.
    pub fn set_mode(&self, mode: Mode) {
        *self.mode.lock().unwrap_or_else(|p| p.into_inner()) = mode;
    }

    /// The policy deterministic GEMMs route under (default `Exact`).
    pub fn policy(&self) -> Policy {
        *self.policy.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Switches the policy deterministic calls route under.
    pub fn set_policy(&self, policy: Policy) {
        *self.policy.lock().unwrap_or_else(|p| p.into_inner()) = policy;
    }

    /// Waits for all work on the stream.
    pub fn synchronize(&self) -> Result<(), GemmError> {
        Ok(self.stream.synchronize()?)
    }

    /// A zeroed buffer of `len` elements.
    pub fn alloc<T: Element>(&self, len: usize) -> Result<DeviceBuffer<T>, GemmError> {
        let slice = self.stream.alloc_zeros::<T>(len.max(1))?;
        Ok(self.wrap(slice, len))
    }

    /// A buffer holding a copy of `host`.
    pub fn upload<T: Element>(&self, host: &[T]) -> Result<DeviceBuffer<T>, GemmError> {
        let mut slice = self.stream.alloc_zeros::<T>(host.len().max(1))?;
        if !host.is_empty() {
            self.stream
                .memcpy_htod(host, &mut slice.slice_mut(..host.len()))?;
        }
        Ok(self.wrap(slice, host.len()))
    }

    /// Overwrites the whole buffer with `host` (same length).
    pub fn write<T: Element>(
        &self,
        buf: &mut DeviceBuffer<T>,
        host: &[T],
    ) -> Result<(), GemmError> {
        let n = host.len().min(buf.len());
        self.stream
            .memcpy_htod(&host[..n], &mut buf.slice.slice_mut(..n))?;
        Ok(())
    }

    /// Copies the buffer back (synchronizing the stream).
    pub fn download<T: Element>(&self, buf: &DeviceBuffer<T>) -> Result<Vec<T>, GemmError> {
        let n = buf.len();
        let mut host = vec![T::default(); n];
        if n > 0 {
            self.stream.memcpy_dtoh(&buf.slice.slice(..n), &mut host)?;
        }
        self.stream.synchronize()?;
        Ok(host)
    }

    /// Registers a fresh allocation; `len` may be below the slice's length (empty buffers
    /// still allocate one element so they have an address).
    fn wrap<T: Element>(&self, slice: cudarc::driver::CudaSlice<T>, len: usize) -> DeviceBuffer<T> {
        let base = {
            let (ptr, _sync) = slice.device_ptr(&self.stream);
            ptr
        };
        let span = self
            .registry
            .register(base, (len * std::mem::size_of::<T>()) as u64);
        DeviceBuffer {
            slice,
            len,
            span,
            registry: self.registry.clone(),
        }
    }

    /// Registers `len` elements at device address `ptr` from another allocator.
    pub fn register_external<T: Element>(&self, ptr: u64, len: usize) -> ExternalSpan<T> {
        ExternalSpan {
            span: self
                .registry
                .register(ptr, (len * std::mem::size_of::<T>()) as u64),
            _p: PhantomData,
        }
    }

    /// How many allocations and external spans are registered and live.
    pub fn live_allocations(&self) -> usize {
        self.registry.live_count()
    }

    /// Ends an external registration: views of it are refused from now on.
    pub fn unregister<T: Element>(&self, span: ExternalSpan<T>) {
        self.registry.release(&span.span);
    }

    /// The loaded function of a kernel of this context's tier (module loaded on first use).
    pub(crate) fn function(&self, kernel: KernelRef) -> Result<CudaFunction, GemmError> {
        let mut cache = self.functions.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(f) = cache.get(&kernel) {
            return Ok(f.clone());
        }
        let (name, shared_bytes, module, cluster) = match kernel {
            KernelRef::Gemm(id) => {
                table::kernel(id).map(|k| (k.name, k.shared_bytes, k.module, k.cluster))
            }
            KernelRef::Conversion(id) => {
                table::conversion(id).map(|c| (c.name, 0, c.module, (1, 1, 1)))
            }
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
                let m = self
                    .cuda
                    .load_module(cudarc::nvrtc::Ptx::from_binary(info.cubin.to_vec()))?;
                let _ = slot.set(m.clone());
                m
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
        cache.insert(kernel, f.clone());
        Ok(f)
    }

    /// The fallback's scratch, at least `elements` f32 long (grown unless a graph froze it),
    /// held by this caller until the guard drops.
    pub(crate) fn scratch_for(
        &self,
        elements: usize,
    ) -> Result<crate::scratch::ScratchGuard<'_>, GemmError> {
        self.scratch.lock_for(elements, |n| self.alloc::<f32>(n))
    }
}
