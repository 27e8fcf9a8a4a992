//! Which tier of a kernel set a device runs, and from which code: the tier whose rule takes
//! the device's capability (its cubin); on a device newer than every tier, the newest tier with
//! PTX at or below the device's capability, JIT-compiled by the driver (forward
//! compatibility); or a tier named by an override, refused when the device cannot run it.
//! A pure function of the device's capability, the set and the choice, so it is tested
//! without a device.

use crate::kernel_set::KernelSet;
use crate::table::TierInfo;
use thiserror::Error;

/// How a context picks the tier it serves.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub enum TierChoice {
    /// The tier whose rule takes the device's compute capability, from its cubins; on a device
    /// newer than every tier (no tier's rule takes it), the newest tier with PTX at or below
    /// the device's capability, JIT-compiled by the driver.
    #[default]
    Auto,
    /// The tier of this name, for testing a tier on newer hardware or pinning one: from its
    /// cubins when the device can load them, else from its PTX. Refused when the device cannot
    /// run it or the set has no tier of this name.
    Named(String),
}

impl TierChoice {
    /// [`TierChoice::Named`].
    pub fn named(tier: impl Into<String>) -> TierChoice {
        TierChoice::Named(tier.into())
    }
}

/// What code of its tier a context loads.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TierCode {
    /// The tier's cubins, compiled ahead of time for the device's architecture.
    Cubin,
    /// The tier's PTX for virtual architecture `target` (`compute_80`), JIT-compiled by the
    /// driver when each module is first loaded (cached by the driver across runs).
    Ptx {
        /// The PTX's virtual architecture.
        target: &'static str,
    },
}

/// The tier a context serves and how it runs.
#[derive(Clone, Copy, Debug)]
pub struct TierSelection {
    /// The tier: its routes and kernel ids are the context's.
    pub tier: &'static TierInfo,
    /// Loaded from its cubins or JIT-compiled from its PTX.
    pub code: TierCode,
    /// Chosen by name ([`TierChoice::Named`]) rather than from the device's capability.
    pub named: bool,
}

impl std::fmt::Display for TierSelection {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let (major, minor) = self.tier.compute_capability;
        write!(f, "tier {} ({major}.{minor}) ", self.tier.name)?;
        match self.code {
            TierCode::Cubin => f.write_str("from its cubins")?,
            TierCode::Ptx { target } => write!(f, "from its PTX ({target}, JIT by the driver)")?,
        }
        f.write_str(if self.named {
            ", named by override"
        } else {
            ", chosen by capability"
        })
    }
}

/// Why a device cannot run a tier named by an override.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum NotRunnable {
    /// The device's compute capability is below the tier's: its code uses what the device
    /// lacks.
    DeviceOlder,
    /// The tier's cubins are for exactly its capability (`sm_90a`) and it carries no PTX
    /// (its families use an arch-specific instruction).
    ArchSpecific,
    /// The device is of another major version than the tier's cubins, and the tier carries no
    /// PTX.
    NoPtx,
    /// The tier's kernels may use more shared memory per block than the device offers.
    SharedMemory {
        /// The tier's budget.
        tier_bytes: u32,
        /// The device's opt-in maximum per block.
        device_bytes: u32,
    },
}

impl std::fmt::Display for NotRunnable {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            NotRunnable::DeviceOlder => {
                f.write_str("the device is older than the tier: name a tier at or below its capability")
            }
            NotRunnable::ArchSpecific => f.write_str(
                "its cubins run on that capability alone and it has no PTX (an arch-specific instruction)",
            ),
            NotRunnable::NoPtx => f.write_str(
                "its cubins do not load on this major version and the set carries no PTX for it",
            ),
            NotRunnable::SharedMemory {
                tier_bytes,
                device_bytes,
            } => write!(
                f,
                "its kernels may use {tier_bytes} bytes of shared memory a block, the device offers {device_bytes}"
            ),
        }
    }
}

/// What the choice needs to know of a device.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DeviceCaps {
    /// The device's ordinal (for the errors).
    pub ordinal: usize,
    /// Its (major, minor) compute capability.
    pub capability: (u32, u32),
    /// Its opt-in maximum of shared memory a block, in bytes.
    pub max_shared_bytes: u32,
}

/// Why no tier of a set serves a device.
#[derive(Clone, Debug, PartialEq, Eq, Error)]
#[allow(missing_docs)] // the fields are the values the variant's message names
pub enum TierChoiceError {
    /// No tier's rule takes the device and no tier's PTX runs on it.
    #[error("device {ordinal} has compute capability {major}.{minor}; no tier serves it (tiers: {tiers})")]
    NoTier {
        ordinal: usize,
        major: u32,
        minor: u32,
        tiers: String,
    },
    /// The set has no tier of the name.
    #[error("no tier named `{name}`; the kernel set has {tiers}")]
    UnknownTier { name: String, tiers: String },
    /// The device cannot run the named tier.
    #[error("tier {tier} (compute capability {}.{}) cannot run on a device of {}.{}: {reason}", tier_capability.0, tier_capability.1, device_capability.0, device_capability.1)]
    TierNotRunnable {
        tier: &'static str,
        tier_capability: (u32, u32),
        device_capability: (u32, u32),
        reason: NotRunnable,
    },
}

impl KernelSet {
    /// The tier a device runs under `choice`, and from which code (see [`TierChoice`]). Needs
    /// no device: whether cubins or PTX text are embedded is checked when a context opens.
    pub fn choose_tier(
        &self,
        device: DeviceCaps,
        choice: &TierChoice,
    ) -> Result<TierSelection, TierChoiceError> {
        match choice {
            TierChoice::Auto => self.auto_tier(device),
            TierChoice::Named(name) => self.named_tier(device, name),
        }
    }

    fn auto_tier(&self, device: DeviceCaps) -> Result<TierSelection, TierChoiceError> {
        if let Some(tier) = self.tier_for_capability(device.capability) {
            return Ok(TierSelection {
                tier,
                code: TierCode::Cubin,
                named: false,
            });
        }
        // No tier's rule takes the device: it is newer than every tier of its major version
        // (or of a major version no tier has). The newest tier with PTX that fits runs JIT.
        self.tiers()
            .iter()
            .filter(|t| t.compute_capability <= device.capability)
            .filter(|t| t.max_shared_bytes <= device.max_shared_bytes)
            .filter_map(|t| self.ptx(t.id).map(|p| (t, p)))
            .max_by_key(|(t, _)| t.compute_capability)
            .map(|(tier, p)| TierSelection {
                tier,
                code: TierCode::Ptx { target: p.target },
                named: false,
            })
            .ok_or_else(|| TierChoiceError::NoTier {
                ordinal: device.ordinal,
                major: device.capability.0,
                minor: device.capability.1,
                tiers: self.tier_list(),
            })
    }

    fn named_tier(&self, device: DeviceCaps, name: &str) -> Result<TierSelection, TierChoiceError> {
        let tier = self
            .tier_by_name(name)
            .ok_or_else(|| TierChoiceError::UnknownTier {
                name: name.to_string(),
                tiers: self.tier_list(),
            })?;
        let refuse = |reason| TierChoiceError::TierNotRunnable {
            tier: tier.name,
            tier_capability: tier.compute_capability,
            device_capability: device.capability,
            reason,
        };
        let (cc, dev) = (tier.compute_capability, device.capability);
        if dev < cc {
            return Err(refuse(NotRunnable::DeviceOlder));
        }
        if tier.max_shared_bytes > device.max_shared_bytes {
            return Err(refuse(NotRunnable::SharedMemory {
                tier_bytes: tier.max_shared_bytes,
                device_bytes: device.max_shared_bytes,
            }));
        }
        // A cubin loads on its exact target (sm_XYa), or on any later minor of its major.
        let cubin_loads = if tier.arch_specific {
            dev == cc
        } else {
            dev.0 == cc.0
        };
        let code = match (cubin_loads, self.ptx(tier.id)) {
            (true, _) => TierCode::Cubin,
            (false, Some(p)) => TierCode::Ptx { target: p.target },
            (false, None) if tier.arch_specific => return Err(refuse(NotRunnable::ArchSpecific)),
            (false, None) => return Err(refuse(NotRunnable::NoPtx)),
        };
        Ok(TierSelection {
            tier,
            code,
            named: true,
        })
    }
}
