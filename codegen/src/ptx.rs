//! Which tiers also embed PTX, and for which virtual architecture. A cubin runs only on its
//! target's major version; PTX lets a driver JIT the same kernels for later devices (forward
//! compatibility). PTX that uses an arch-specific instruction (wgmma on sm_90a) runs on no
//! other device, so a tier embeds PTX only when none of its families needs one, and then for
//! the plain virtual architecture of its capability (`compute_100` for an `sm_100a` tier whose
//! families are portable), which every later device can JIT.

use gemm_spec::{SpecSet, Tier};
use std::path::PathBuf;

/// The virtual architecture (`compute_80`) whose PTX `tier` embeds, or `None` when one of its
/// families is built on an arch-specific instruction.
pub fn ptx_target(specs: &SpecSet, tier: &Tier) -> Option<String> {
    let arch_specific = tier.families.iter().any(|f| {
        specs
            .families
            .get(f)
            .and_then(|fam| specs.instructions.get(&fam.instruction))
            .is_some_and(|i| i.arch_specific)
    });
    (!arch_specific).then(|| format!("compute_{}{}", tier.cc.0, tier.cc.1))
}

/// `cubins/<tier>/<module>.ptx`, next to the unit's cubin, relative to the output folder.
pub fn unit_ptx_path(tier: &str, module: &str) -> PathBuf {
    PathBuf::from(format!("cubins/{tier}/{module}.ptx"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn specs() -> SpecSet {
        let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/../specs");
        crate::pipeline::load_specs(std::path::Path::new(dir)).unwrap_or_else(|e| panic!("{e}"))
    }

    // Derived from the shipped specs: a tier whose families all use instructions without
    // `arch_specific` gets compute_<major><minor>; a tier with one such family gets none.
    #[test]
    fn portable_tiers_embed_ptx_of_their_capability() {
        let s = specs();
        assert!(!s.tiers.is_empty());
        // Where a tier has PTX, it is for the plain virtual architecture of its own capability.
        let mut with = 0;
        for t in &s.tiers {
            if let Some(target) = ptx_target(&s, t) {
                assert_eq!(
                    target,
                    format!("compute_{}{}", t.cc.0, t.cc.1),
                    "tier {}",
                    t.name
                );
                with += 1;
            }
        }
        assert!(with > 0, "no shipped tier embeds PTX");
        // Which tiers: sm80 (mma.sync, cp.async) does; sm90a (wgmma, arch-specific) does not.
        let sm80 = s.tier("sm80").map(|t| ptx_target(&s, t));
        assert_eq!(sm80, Some(Some("compute_80".to_string())));
        let sm90a = s.tier("sm90a").map(|t| ptx_target(&s, t));
        assert_eq!(sm90a, Some(None), "wgmma PTX runs on sm_90a alone");
    }
}
