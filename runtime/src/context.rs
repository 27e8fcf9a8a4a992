//! `Context`: one stream of a device. It is a [`Device`] (shared by every stream of the GPU:
//! the kernel set and its tier, modules, registry, tensor maps, occupancy) and the stream's own
//! [`StreamState`] (the CUDA stream, scratch, cuBLAS handle, defaults). What a call does with
//! them lives beside: validation (`request`), planning (gemm-core's planner, `launch_plan`),
//! launching (`emit`, `launcher`), the half fallback, packages; none of those is imported here.

use crate::device::Device;
use crate::error::GemmError;
use crate::registry::Registry;
use crate::stream::{Mode, StreamState};
use crate::table::{DtypeTriple, KernelId, KernelRef, Op, Policy, TierInfo};
use cudarc::driver::{CudaContext, CudaFunction, CudaStream};
use gemm_core::{DefaultPolicy, DeviceCaps, KernelSet, TierChoice, TierSelection};
use std::sync::Arc;

/// One device and stream. Every GEMM entry point validates its arguments against this
/// context's registry before anything is enqueued.
pub struct Context {
    pub(crate) device: Arc<Device>,
    pub(crate) own: StreamState,
}

impl std::fmt::Debug for Context {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Context")
            .field("ordinal", &self.device.ordinal)
            .field("kernels", &self.device.kernels.name())
            .field("tier", &self.device.tier.name)
            .field("code", &self.device.selection.code)
            .field("mode", &self.mode())
            .field("policy", &self.policy())
            .finish()
    }
}

impl Context {
    /// Opens device `ordinal` with a new stream, serving the runtime's own kernels
    /// ([`shipped`](crate::shipped)) on the tier its compute capability picks (its cubins), or,
    /// on a device newer than every tier, the newest tier with PTX at or below it, JIT-compiled
    /// by the driver ([`TierChoice::Auto`]; [`tier_selection`](Self::tier_selection) says
    /// which). Errors (never panics) when no driver is present, no tier serves the device, or
    /// the build carries no cubins.
    pub fn new(ordinal: usize) -> Result<Context, GemmError> {
        Context::with_kernels(ordinal, crate::shipped())
    }

    /// Opens device `ordinal` with a new stream, serving `kernels`: a set a downstream crate
    /// built from its own specs with `gemm_codegen::Builder` and included from its `OUT_DIR`
    /// (docs/downstream.md). Every route, kernel id and cubin of the context (and of its
    /// [`new_stream`](Self::new_stream)s) comes from that set. Errors (never panics) when the
    /// set's tables are inconsistent ([`KernelSet::check`]), no driver is present, no tier of
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
        Context::open(ordinal, crate::shipped(), TierChoice::named(tier))
    }

    /// Opens device `ordinal` with a new stream on `kernels`, its tier picked by `choice`
    /// ([`TierChoice::Auto`]: as [`with_kernels`](Self::with_kernels); named: as
    /// [`with_tier`](Self::with_tier) on any set). Errors (never panics) when the set's tables
    /// are inconsistent, no driver is present, the choice finds no tier the device can run, or
    /// the set carries no code (cubins or PTX) for it.
    pub fn open(
        ordinal: usize,
        kernels: &'static KernelSet,
        choice: TierChoice,
    ) -> Result<Context, GemmError> {
        let device = Device::open(ordinal, kernels, &choice)?;
        let stream = device.cuda.new_stream()?;
        Ok(Context {
            device: Arc::new(device),
            own: StreamState::new(stream, Mode::default(), DefaultPolicy::ByDtype, None),
        })
    }

    /// Another stream on the same device and context: cheap, one per worker thread. Shared
    /// with this context: the loaded modules and functions (nothing is loaded again), the
    /// allocation registry (the same buffers are valid on both), encoded tensor maps,
    /// occupancy. The stream's own: the half fallback's scratch, the cuBLAS handle, the default
    /// mode and policy, the cap on persistent grids and the wave-fit switch (starting as this
    /// context's). Packages
    /// remember which stream they were made for.
    pub fn new_stream(&self) -> Result<Context, GemmError> {
        let ctx = Context {
            device: self.device.clone(),
            own: StreamState::new(
                self.device.cuda.new_stream()?,
                self.mode(),
                self.policy(),
                self.max_persistent_ctas(),
            ),
        };
        ctx.set_wave_fit(self.wave_fit());
        Ok(ctx)
    }

    /// The tier serving this device (a tier of [`kernels`](Self::kernels)).
    pub fn tier(&self) -> &'static TierInfo {
        self.device.tier
    }

    /// The tier serving this device, how it was chosen (by capability or by name) and whether
    /// it runs from its cubins or from its PTX, JIT-compiled by the driver (a device newer than
    /// every tier, or a tier named on newer hardware). Its `Display` says all three.
    pub fn tier_selection(&self) -> TierSelection {
        self.device.selection
    }

    /// The device as the tier choice saw it: ordinal, compute capability, shared memory a
    /// block (what [`KernelSet::choose_tier`] takes).
    pub fn device_caps(&self) -> DeviceCaps {
        self.device.caps
    }

    /// The kernel set this context serves: its routes, and the tables its kernel ids index
    /// (a [`Launch`](crate::Launch)'s kernel is `ctx.kernels().kernel(id)`).
    pub fn kernels(&self) -> &'static KernelSet {
        self.device.kernels
    }

    /// The stream every call of this context is enqueued on.
    pub fn stream(&self) -> &Arc<CudaStream> {
        &self.own.stream
    }

    /// The default mode of calls whose request names none (default `Deterministic`); a
    /// request's own ([`GemmRequest::with_mode`](crate::GemmRequest::with_mode)) wins.
    pub fn mode(&self) -> Mode {
        self.own.mode()
    }

    /// Switches the default mode for the calls that follow and name none. Another thread
    /// using this context sees the change too: a server passes the mode per call instead.
    pub fn set_mode(&self, mode: Mode) {
        self.own.set_mode(mode);
    }

    /// The default policy of deterministic GEMMs whose request names none (initially
    /// [`DefaultPolicy::ByDtype`]: tensor-core for bf16 and f16 where routed, exact for f32).
    pub fn policy(&self) -> DefaultPolicy {
        self.own.policy()
    }

    /// The policy a call of `op` and `dtype` that names none routes under: the default
    /// resolved for the call's (op, dtype), never its shape ([`KernelSet::policy_for`]).
    pub fn policy_for(&self, op: Op, dtype: DtypeTriple) -> Policy {
        self.kernels()
            .policy_for(self.tier().id, self.policy(), op, dtype)
    }

    /// Switches the default policy of the calls that follow and name none (a [`Policy`] for
    /// every dtype, or [`DefaultPolicy::ByDtype`]); per call, use
    /// [`GemmRequest::with_policy`](crate::GemmRequest::with_policy).
    pub fn set_policy(&self, policy: impl Into<DefaultPolicy>) {
        self.own.set_policy(policy.into());
    }

    /// Waits for all work on the stream.
    pub fn synchronize(&self) -> Result<(), GemmError> {
        Ok(self.own.stream.synchronize()?)
    }

    /// Sets the seed of a timing-perturbation kernel set's delays (docs/timing.md): every
    /// module of the device, loaded or loaded later, reads it from the next launch on this
    /// stream on. Seed 0 switches the delays off. Refused with [`GemmError::NotPerturbed`] for
    /// a set built without perturbation (every shipped set), where a seed would change nothing.
    /// The seed is the device's, shared by its streams: set it while no kernel of the set runs.
    pub fn set_timing_perturbation_seed(&self, seed: u32) -> Result<(), GemmError> {
        self.device.modules.set_perturb_seed(&self.own.stream, seed)
    }

    /// The seed the kernels of a timing-perturbation set read (0: no delays; always 0 for a
    /// set built without perturbation).
    pub fn timing_perturbation_seed(&self) -> u32 {
        self.device.modules.perturb_seed()
    }

    /// Modules this device has loaded so far, counted over all its streams (a new stream
    /// loads none: [`new_stream`](Self::new_stream) shares them).
    pub fn loaded_modules(&self) -> usize {
        self.device.modules.loaded_modules()
    }

    /// Caps the CTAs of persistent grids on this stream (`None`: as many as can be
    /// co-resident). For tests, and for users sharing the GPU with other work. A cap below a
    /// kernel's cluster size still launches one cluster.
    pub fn set_max_persistent_ctas(&self, cap: Option<u32>) {
        self.own.set_persistent_cap(cap);
    }

    /// The cap on persistent grids' CTAs, if any.
    pub fn max_persistent_ctas(&self) -> Option<u32> {
        self.own.persistent_cap()
    }

    /// Whether calls on this stream may run a route's `wave_fit` kernels where the wave model
    /// says one finishes first (the default), or only routes' own kernels. Either way the same
    /// bits: every such kernel implements the route's contract. Off pins each (route, shape)
    /// to one kernel whatever the device's SM count (to compare with a trace, or to time the
    /// routes' own kernels).
    pub fn set_wave_fit(&self, on: bool) {
        self.own.set_wave_fit(on);
    }

    /// Whether routes' `wave_fit` kernels may run on this stream.
    pub fn wave_fit(&self) -> bool {
        self.own.wave_fit()
    }

    /// Streaming multiprocessors of the device.
    pub fn sm_count(&self) -> Result<u32, GemmError> {
        self.device.occupancy.sm_count(&self.device.cuda)
    }

    /// CTAs of `kernel` that can be co-resident on the device (not capped): SM count x blocks
    /// an SM with its threads and dynamic shared memory, or, with clusters, the co-resident
    /// clusters x the cluster size. Cached per kernel.
    pub fn coresident_ctas(&self, kernel: KernelId) -> Result<u32, GemmError> {
        let info = self
            .kernels()
            .kernel(kernel)
            .ok_or(GemmError::UnknownKernel(KernelRef::Gemm(kernel)))?;
        self.device.coresident(&self.own.stream, info)
    }

    /// How many tensor maps this device has cached.
    pub fn cached_tensor_maps(&self) -> usize {
        self.device.maps.len()
    }

    /// The CUDA context of the device.
    pub(crate) fn cuda(&self) -> &Arc<CudaContext> {
        &self.device.cuda
    }

    /// The device's allocation registry.
    pub(crate) fn registry(&self) -> &Arc<Registry> {
        &self.device.registry
    }

    /// The loaded function of a kernel of this context's tier (module loaded on first use,
    /// once for the device).
    pub(crate) fn function(&self, kernel: KernelRef) -> Result<CudaFunction, GemmError> {
        self.device.function(&self.own.stream, kernel)
    }
}
