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
use crate::tier_choice::{DeviceCaps, TierChoice, TierCode, TierSelection};
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
    /// How the tier was chosen and whether it runs from cubins or PTX.
    selection: TierSelection,
    /// What the tier choice knew of the device.
    device: DeviceCaps,
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
            .field("code", &self.selection.code)
            .field("mode", &self.mode())
            .field("policy", &self.policy())
            .finish()
    }
}

impl Context {
    /// Opens device `ordinal` with a new stream, serving the runtime's own kernels
    /// ([`KernelSet::shipped`]) on the tier its compute capability picks (its cubins), or, on
    /// a device newer than every tier, the newest tier with PTX at or below it, JIT-compiled
    /// by the driver ([`TierChoice::Auto`]; [`tier_selection`](Self::tier_selection) says
    /// which). Errors (never panics) when no driver is present, no tier serves the device, or
    /// the build carries no cubins.
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
        Context::open(ordinal, kernels, TierChoice::Auto)
    }

    /// Opens device `ordinal` on the shipped kernels' tier named `tier` (`"sm80"`) instead of
    /// the one its capability picks: to run a portable tier on newer hardware (its PTX,
    /// JIT-compiled by the driver, where its cubins do not load), or to pin one. Refused with
    /// [`GemmError::TierNotRunnable`] when the device cannot run that tier (older than it, an
    /// arch-specific tier of another capability, too little shared memory) and with
    /// [`GemmError::UnknownTier`] for a name the set lacks; [`tier_selection`](Self::tier_selection)
    /// says what was loaded.
    ///
    /// ```no_run
    /// # fn main() -> Result<(), gemm_runtime::GemmError> {
    /// let ctx = gemm_runtime::Context::with_tier(0, "sm80")?;
    /// println!("{}", ctx.tier_selection()); // on an H200: tier sm80 (8.0) from its PTX (compute_80, ...)
    /// # Ok(()) }
    /// ```
    pub fn with_tier(ordinal: usize, tier: &str) -> Result<Context, GemmError> {
        Context::open(ordinal, KernelSet::shipped(), TierChoice::named(tier))
    }

    /// Opens device `ordinal` with a new stream on `kernels`, its tier picked by `choice`
    /// ([`TierChoice::Auto`]: as [`with_kernels`](Self::with_kernels); named: as
    /// [`with_tier`](Self::with_tier) on any set). Errors (never panics) when the runtime
    /// cannot serve the set, no driver is present, the choice finds no tier the device can run,
    /// or the set carries no code (cubins or PTX) for it.
    pub fn open(
        ordinal: usize,
        kernels: &'static KernelSet,
        choice: TierChoice,
    ) -> Result<Context, GemmError> {
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
        let device = DeviceCaps {
            ordinal,
            capability: (major as u32, minor as u32),
            max_shared_bytes: u32::try_from(shared).unwrap_or(0),
        };
        let selection = kernels.choose_tier(device, &choice)?;
        let tier = selection.tier;
        let code_present = match selection.code {
            TierCode::Cubin => tier.has_cubins(),
            TierCode::Ptx { .. } => kernels.ptx(tier.id).is_some_and(|p| p.has_ptx()),
        };
        if !kernels.cubins_present() || !code_present {
            return Err(GemmError::NoCubins);
        }
        let stream = cuda.new_stream()?;
        Ok(Context {
            ordinal,
            cuda,
            stream,
            kernels,
            tier,
            selection,
            device,
            modules: Arc::new(ModuleCache::new(kernels, tier, selection.code)),
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
            selection: self.selection,
            device: self.device,
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

    /// The tier serving this device, how it was chosen (by capability or by name) and whether
    /// it runs from its cubins or from its PTX, JIT-compiled by the driver (a device newer than
    /// every tier, or a tier named on newer hardware). Its `Display` says all three.
    pub fn tier_selection(&self) -> TierSelection {
        self.selection
    }

    /// The device as the tier choice saw it: ordinal, compute capability, shared memory a
    /// block (what [`KernelSet::choose_tier`] takes).
    pub fn device_caps(&self) -> DeviceCaps {
        self.device
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

    /// Sets the seed of a timing-perturbation kernel set's delays (docs/timing.md): every
    /// module of the device, loaded or loaded later, reads it from the next launch on this
    /// stream on. Seed 0 switches the delays off. Refused with [`GemmError::NotPerturbed`] for
    /// a set built without perturbation (every shipped set), where a seed would change nothing.
    /// The seed is the device's, shared by its streams: set it while no kernel of the set runs.
    pub fn set_timing_perturbation_seed(&self, seed: u32) -> Result<(), GemmError> {
        self.modules.set_perturb_seed(&self.stream, seed)
    }

    /// The seed the kernels of a timing-perturbation set read (0: no delays; always 0 for a
    /// set built without perturbation).
    pub fn timing_perturbation_seed(&self) -> u32 {
        self.modules.perturb_seed()
    }

    /// Modules this device has loaded so far, counted over all its streams (a new stream
    /// loads none: [`new_stream`](Self::new_stream) shares them).
    pub fn loaded_modules(&self) -> usize {
        self.modules.loaded_modules()
    }

    /// The loaded function of a kernel of this context's tier (module loaded on first use,
    /// once for the device).
    pub(crate) fn function(&self, kernel: KernelRef) -> Result<CudaFunction, GemmError> {
        self.modules.function(&self.cuda, &self.stream, kernel)
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
