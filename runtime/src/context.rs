//! `Context`: one stream of a device, with what the device's streams share (the kernel set and
//! the tier of it serving the device, its loaded modules and functions, the allocation
//! registry, encoded tensor maps)
//! and what is the stream's own (the half fallback's scratch, the cuBLAS handle, the default
//! mode and policy of calls that name none).

use crate::error::GemmError;
use crate::kernel_set::KernelSet;
use crate::modules::ModuleCache;
use crate::registry::Registry;
use crate::scratch::Scratch;
use crate::table::{Dtype, DtypeTriple, KernelRef, Op, Policy, TierInfo};
use cudarc::driver::{CudaContext, CudaFunction, CudaStream};
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

/// What a call that names no policy routes under (`Context::set_policy`).
///
/// The default, [`ByDtype`](Self::ByDtype), is decided by the call's (op, dtype) alone, never by
/// its shape, so it keeps every row independent of the batch like any fixed policy.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum DefaultPolicy {
    /// bf16 and f16 inputs: `TensorCore` where the context's tier routes that (op, dtype)
    /// under it natively, else `Exact`. f32 inputs: `Exact` (TF32 only when a call or
    /// `set_policy` asks for it).
    #[default]
    ByDtype,
    /// This policy for every call that names none.
    Always(Policy),
}

impl From<Policy> for DefaultPolicy {
    fn from(p: Policy) -> Self {
        DefaultPolicy::Always(p)
    }
}

impl std::fmt::Display for DefaultPolicy {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            DefaultPolicy::ByDtype => {
                f.write_str("by dtype (tensor-core for half inputs where routed, exact otherwise)")
            }
            DefaultPolicy::Always(p) => write!(f, "{p}"),
        }
    }
}

/// One device and stream. Every GEMM entry point validates its arguments against this
/// context's registry before anything is enqueued.
pub struct Context {
    pub(crate) ordinal: usize,
    pub(crate) cuda: Arc<CudaContext>,
    pub(crate) stream: Arc<CudaStream>,
    /// The tables every lookup of this context goes through.
    pub(crate) kernels: &'static KernelSet,
    /// The tier of `kernels` serving the device.
    pub(crate) tier: &'static TierInfo,
    /// The device's modules and functions, shared by all its streams.
    modules: Arc<ModuleCache>,
    pub(crate) registry: Arc<Registry>,
    mode: Mutex<Mode>,
    policy: Mutex<DefaultPolicy>,
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
            .field("kernels", &self.kernels.name())
            .field("tier", &self.tier.name)
            .field("mode", &self.mode())
            .field("policy", &self.policy())
            .finish()
    }
}

impl Context {
    /// Opens device `ordinal` with a new stream, serving the runtime's own kernels
    /// ([`KernelSet::shipped`]). Errors (never panics) when no driver is present, no tier
    /// serves the device, or the build carries no cubins.
    pub fn new(ordinal: usize) -> Result<Context, GemmError> {
        Context::with_kernels(ordinal, KernelSet::shipped())
    }

    /// Opens device `ordinal` with a new stream, serving `kernels`: a set a downstream crate
    /// built from its own specs with `gemm_codegen::Builder` and included from its `OUT_DIR`
    /// (docs/downstream.md). Every route, kernel id and cubin of the context (and of its
    /// [`new_stream`](Self::new_stream)s) comes from that set. Errors (never panics) when the
    /// runtime cannot serve the set ([`KernelSet::check`]), no driver is present, no tier of
    /// the set serves the device, or the set carries no cubins.
    ///
    /// ```ignore
    /// include!(concat!(env!("OUT_DIR"), "/gemm_kernels.rs")); // pub static KERNELS: KernelSet
    /// let ctx = gemm_runtime::Context::with_kernels(0, &KERNELS)?;
    /// ```
    pub fn with_kernels(ordinal: usize, kernels: &'static KernelSet) -> Result<Context, GemmError> {
        kernels.check()?;
        // SAFETY: only probes whether the driver library can be opened.
        if !unsafe { cudarc::driver::sys::is_culib_present() } {
            return Err(GemmError::NoDriver);
        }
        let cuda = CudaContext::new(ordinal)?;
        let (major, minor) = cuda.compute_capability()?;
        let (major, minor) = (major as u32, minor as u32);
        let tier =
            kernels
                .tier_for_capability((major, minor))
                .ok_or_else(|| GemmError::NoTier {
                    ordinal,
                    major,
                    minor,
                    tiers: kernels
                        .tiers()
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
        if !kernels.cubins_present() || !tier.has_cubins() {
            return Err(GemmError::NoCubins);
        }
        let stream = cuda.new_stream()?;
        Ok(Context {
            ordinal,
            cuda,
            stream,
            kernels,
            tier,
            modules: Arc::new(ModuleCache::new(kernels, tier)),
            registry: Arc::new(Registry::new()),
            mode: Mutex::new(Mode::default()),
            policy: Mutex::new(DefaultPolicy::ByDtype),
            blas: OnceLock::new(),
            scratch: Scratch::default(),
            tensor_maps: Arc::default(),
            occupancy: Default::default(),
        })
    }

    /// Another stream on the same device and context: cheap, one per worker thread. Shared
    /// with this context: the loaded modules and functions (nothing is loaded again), the
    /// allocation registry (the same buffers are valid on both), encoded tensor maps. The
    /// stream's own: the half fallback's scratch, the cuBLAS handle, the default mode and
    /// policy (starting as this context's), the cap on persistent grids (starting as this
    /// context's). Packages remember which stream they were made for.
    pub fn new_stream(&self) -> Result<Context, GemmError> {
        Ok(Context {
            ordinal: self.ordinal,
            cuda: self.cuda.clone(),
            stream: self.cuda.new_stream()?,
            kernels: self.kernels,
            tier: self.tier,
            modules: self.modules.clone(),
            registry: self.registry.clone(),
            mode: Mutex::new(self.mode()),
            policy: Mutex::new(self.policy()),
            blas: OnceLock::new(),
            scratch: Scratch::default(),
            tensor_maps: self.tensor_maps.clone(),
            occupancy: crate::persistent::Occupancy::with_cap_of(&self.occupancy),
        })
    }

    /// The tier serving this device (a tier of [`kernels`](Self::kernels)).
    pub fn tier(&self) -> &'static TierInfo {
        self.tier
    }

    /// The kernel set this context serves: its routes, and the tables its kernel ids index
    /// (a [`Launch`](crate::Launch)'s kernel is `ctx.kernels().kernel(id)`).
    pub fn kernels(&self) -> &'static KernelSet {
        self.kernels
    }

    /// The stream every call of this context is enqueued on.
    pub fn stream(&self) -> &Arc<CudaStream> {
        &self.stream
    }

    /// The default mode of calls whose request names none (default `Deterministic`); a
    /// request's own ([`GemmRequest::with_mode`](crate::GemmRequest::with_mode)) wins.
    pub fn mode(&self) -> Mode {
        *self.mode.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Switches the default mode for the calls that follow and name none. Another thread
    /// using this context sees the change too: a server passes the mode per call instead.
    pub fn set_mode(&self, mode: Mode) {
        *self.mode.lock().unwrap_or_else(|p| p.into_inner()) = mode;
    }

    /// The default policy of deterministic GEMMs whose request names none (initially
    /// [`DefaultPolicy::ByDtype`]: tensor-core for bf16 and f16 where routed, exact for f32).
    pub fn policy(&self) -> DefaultPolicy {
        *self.policy.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// The policy a call of `op` and `dtype` that names none routes under: the default
    /// resolved for the call's (op, dtype), never its shape.
    pub fn policy_for(&self, op: Op, dtype: DtypeTriple) -> Policy {
        match self.policy() {
            DefaultPolicy::Always(p) => p,
            DefaultPolicy::ByDtype => {
                let half = matches!(dtype.ab, Dtype::Bf16 | Dtype::F16);
                // Every routed (policy, op, dtype) has a catch-all route, so one probe is exact.
                let routed = self
                    .kernels
                    .dispatch(self.tier.id, Policy::TensorCore, op, dtype, 1, 1, 1)
                    .is_some();
                if half && routed {
                    Policy::TensorCore
                } else {
                    Policy::Exact
                }
            }
        }
    }

    /// Switches the default policy of the calls that follow and name none (a [`Policy`] for
    /// every dtype, or [`DefaultPolicy::ByDtype`]); per call, use
    /// [`GemmRequest::with_policy`](crate::GemmRequest::with_policy).
    pub fn set_policy(&self, policy: impl Into<DefaultPolicy>) {
        *self.policy.lock().unwrap_or_else(|p| p.into_inner()) = policy.into();
    }

    /// Waits for all work on the stream.
    pub fn synchronize(&self) -> Result<(), GemmError> {
        Ok(self.stream.synchronize()?)
    }

    /// Modules this device has loaded so far, counted over all its streams (a new stream
    /// loads none: [`new_stream`](Self::new_stream) shares them).
    pub fn loaded_modules(&self) -> usize {
        self.modules.loaded_modules()
    }

    /// The loaded function of a kernel of this context's tier (module loaded on first use,
    /// once for the device).
    pub(crate) fn function(&self, kernel: KernelRef) -> Result<CudaFunction, GemmError> {
        self.modules.function(&self.cuda, kernel)
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
