//! What one stream of a device holds for itself: the CUDA stream, the half fallback's f32
//! scratch (its users are stream-ordered), the cuBLAS handle, and the defaults of the calls
//! that name none (mode, policy), the cap on persistent grids and the bound on repack scratch.

use crate::scratch::Scratch;
use cudarc::driver::CudaStream;
use gemm_core::DefaultPolicy;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
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

/// One stream's own state (see the module docs).
pub(crate) struct StreamState {
    pub stream: Arc<CudaStream>,
    pub scratch: Scratch,
    pub blas: OnceLock<cudarc::cublas::CudaBlas>,
    mode: Mutex<Mode>,
    policy: Mutex<DefaultPolicy>,
    /// The cap on persistent grids' CTAs (`None`: as many as are co-resident).
    persistent_cap: Mutex<Option<u32>>,
    /// Scratch bytes one call may take for aligned copies of its operands (the repack).
    repack_limit: AtomicU64,
    /// Whether routes' `wave_fit` kernels may run (the wave model's choice) or only routes'
    /// own kernels.
    wave_fit: AtomicBool,
}

/// The default bound on one call's repack scratch: 1 GiB.
pub const DEFAULT_REPACK_LIMIT: u64 = 1 << 30;

impl StreamState {
    /// A stream with the given defaults.
    pub fn new(
        stream: Arc<CudaStream>,
        mode: Mode,
        policy: DefaultPolicy,
        persistent_cap: Option<u32>,
    ) -> StreamState {
        StreamState {
            stream,
            scratch: Scratch::default(),
            blas: OnceLock::new(),
            mode: Mutex::new(mode),
            policy: Mutex::new(policy),
            persistent_cap: Mutex::new(persistent_cap),
            repack_limit: AtomicU64::new(DEFAULT_REPACK_LIMIT),
            wave_fit: AtomicBool::new(true),
        }
    }

    pub fn wave_fit(&self) -> bool {
        self.wave_fit.load(Ordering::Relaxed)
    }

    pub fn set_wave_fit(&self, on: bool) {
        self.wave_fit.store(on, Ordering::Relaxed)
    }

    pub fn repack_limit(&self) -> u64 {
        self.repack_limit.load(Ordering::Relaxed)
    }

    pub fn set_repack_limit(&self, bytes: u64) {
        self.repack_limit.store(bytes, Ordering::Relaxed)
    }

    pub fn mode(&self) -> Mode {
        *self.mode.lock().unwrap_or_else(|p| p.into_inner())
    }

    pub fn set_mode(&self, mode: Mode) {
        *self.mode.lock().unwrap_or_else(|p| p.into_inner()) = mode;
    }

    pub fn policy(&self) -> DefaultPolicy {
        *self.policy.lock().unwrap_or_else(|p| p.into_inner())
    }

    pub fn set_policy(&self, policy: DefaultPolicy) {
        *self.policy.lock().unwrap_or_else(|p| p.into_inner()) = policy;
    }

    pub fn persistent_cap(&self) -> Option<u32> {
        *self
            .persistent_cap
            .lock()
            .unwrap_or_else(|p| p.into_inner())
    }

    pub fn set_persistent_cap(&self, cap: Option<u32>) {
        *self
            .persistent_cap
            .lock()
            .unwrap_or_else(|p| p.into_inner()) = cap;
    }
}
