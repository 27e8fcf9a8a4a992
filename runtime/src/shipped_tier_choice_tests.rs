//! The tier choice over the shipped set's tiers, for every tier the specs define (so a new
//! tier is covered without editing these tests), on devices made up around each tier.

use super::*;
use crate::table::TierId;
use crate::GemmError;
use gemm_core::{DeviceCaps, NotRunnable, TierChoice, TierCode, TierSelection};

/// The tier choice as a context makes it, with its errors as the context returns them.
fn choose(dev: DeviceCaps, choice: &TierChoice) -> Result<TierSelection, GemmError> {
    set().choose_tier(dev, choice).map_err(GemmError::from)
}

fn set() -> &'static KernelSet {
    crate::shipped()
}

fn device(capability: (u32, u32)) -> DeviceCaps {
    DeviceCaps {
        ordinal: 0,
        capability,
        max_shared_bytes: u32::MAX,
    }
}

fn named(t: &TierInfo, dev: DeviceCaps) -> Result<TierSelection, GemmError> {
    choose(dev, &TierChoice::named(t.name))
}

fn refusal(r: Result<TierSelection, GemmError>) -> NotRunnable {
    match r {
        Err(GemmError::TierNotRunnable { reason, .. }) => reason,
        other => panic!("expected TierNotRunnable, got {other:?}"),
    }
}

/// The newest tier with PTX at or below `cc`, as the issue states the rule.
fn newest_ptx_tier(cc: (u32, u32)) -> Option<&'static TierInfo> {
    set()
        .tiers()
        .iter()
        .filter(|t| t.compute_capability <= cc && set().ptx(t.id).is_some())
        .max_by_key(|t| t.compute_capability)
}

#[test]
fn every_tier_runs_its_cubin_on_its_own_capability_by_name_and_by_capability() {
    assert!(!set().tiers().is_empty());
    for t in set().tiers() {
        let dev = device(t.compute_capability);
        let s = named(t, dev).unwrap();
        assert!(std::ptr::eq(s.tier, t));
        assert_eq!(s.code, TierCode::Cubin, "{}", t.name);
        assert!(s.named);
        let auto = choose(dev, &TierChoice::Auto).unwrap();
        assert_eq!(auto.code, TierCode::Cubin);
        assert!(!auto.named);
        let native = set().tier_for_capability(t.compute_capability).unwrap();
        assert!(std::ptr::eq(auto.tier, native), "{}", t.name);
    }
}

#[test]
fn a_named_tier_is_refused_on_an_older_device_or_with_less_shared_memory() {
    for t in set().tiers() {
        let (major, minor) = t.compute_capability;
        let older = if minor > 0 {
            (major, minor - 1)
        } else {
            (major - 1, 9)
        };
        assert_eq!(
            refusal(named(t, device(older))),
            NotRunnable::DeviceOlder,
            "{}",
            t.name
        );
        let small = DeviceCaps {
            max_shared_bytes: t.max_shared_bytes - 1,
            ..device(t.compute_capability)
        };
        assert!(matches!(
            refusal(named(t, small)),
            NotRunnable::SharedMemory { tier_bytes, .. } if tier_bytes == t.max_shared_bytes
        ));
        let err = named(t, device(older)).unwrap_err();
        assert_eq!(err.kind(), "tier_not_runnable");
        assert!(err.to_string().contains(t.name), "{err}");
    }
}

#[test]
fn on_a_later_device_a_named_tier_runs_its_cubin_within_its_major_else_its_ptx_or_is_refused() {
    for t in set().tiers() {
        let (major, minor) = t.compute_capability;
        let ptx = set().ptx(t.id);
        // A later minor of the same major: a portable cubin loads there, an sm_XYa one not.
        let later_minor = named(t, device((major, minor + 1)));
        // A later major: only PTX can run there.
        let later_major = named(t, device((major + 1, 0)));
        match (t.arch_specific, ptx) {
            (false, _) => assert_eq!(later_minor.unwrap().code, TierCode::Cubin),
            (true, Some(p)) => assert_eq!(
                later_minor.unwrap().code,
                TierCode::Ptx { target: p.target }
            ),
            (true, None) => assert_eq!(refusal(later_minor), NotRunnable::ArchSpecific),
        }
        match (t.arch_specific, ptx) {
            (_, Some(p)) => {
                assert_eq!(
                    later_major.unwrap().code,
                    TierCode::Ptx { target: p.target }
                );
                assert_eq!(p.target, format!("compute_{major}{minor}"));
            }
            (true, None) => assert_eq!(refusal(later_major), NotRunnable::ArchSpecific),
            (false, None) => assert_eq!(refusal(later_major), NotRunnable::NoPtx),
        }
    }
}

#[test]
fn a_device_newer_than_every_tier_runs_the_newest_ptx_tier_at_or_below_it() {
    let newest = set()
        .tiers()
        .iter()
        .map(|t| t.compute_capability)
        .max()
        .unwrap();
    let beyond = (newest.0 + 1, 0);
    assert!(set().tier_for_capability(beyond).is_none());
    let want = newest_ptx_tier(beyond).expect("the shipped specs have a tier with PTX");
    let s = set()
        .choose_tier(device(beyond), &TierChoice::Auto)
        .unwrap();
    assert!(std::ptr::eq(s.tier, want), "{}", s.tier.name);
    let target = set().ptx(want.id).unwrap().target;
    assert_eq!(s.code, TierCode::Ptx { target });
    assert!(s.to_string().contains(target), "{s}");
    // Every capability no tier's rule takes, between the oldest tier and past the newest:
    // the newest PTX tier at or below it (that fits its shared memory), else no tier.
    let oldest = set()
        .tiers()
        .iter()
        .map(|t| t.compute_capability)
        .min()
        .unwrap();
    for major in oldest.0.saturating_sub(1)..=beyond.0 {
        for minor in 0..10 {
            let cc = (major, minor);
            if set().tier_for_capability(cc).is_some() {
                continue;
            }
            match (newest_ptx_tier(cc), choose(device(cc), &TierChoice::Auto)) {
                (Some(t), Ok(s)) => {
                    assert!(std::ptr::eq(s.tier, t), "{cc:?}: {}", s.tier.name);
                    assert!(matches!(s.code, TierCode::Ptx { .. }));
                }
                (
                    None,
                    Err(GemmError::NoTier {
                        major: a, minor: b, ..
                    }),
                ) => {
                    assert_eq!((a, b), cc)
                }
                (want, got) => panic!("{cc:?}: want {want:?}, got {got:?}"),
            }
        }
    }
    // A tier whose budget exceeds the device's shared memory is passed over.
    let tight = DeviceCaps {
        max_shared_bytes: want.max_shared_bytes - 1,
        ..device(beyond)
    };
    let fitting = set()
        .tiers()
        .iter()
        .filter(|t| t.max_shared_bytes < want.max_shared_bytes && set().ptx(t.id).is_some())
        .max_by_key(|t| t.compute_capability);
    match (fitting, choose(tight, &TierChoice::Auto)) {
        (Some(t), Ok(s)) => assert!(std::ptr::eq(s.tier, t), "{}", s.tier.name),
        (None, Err(e)) => assert_eq!(e.kind(), "no_tier"),
        (want, got) => panic!("tight: want {want:?}, got {got:?}"),
    }
}

#[test]
fn an_unknown_name_is_refused_with_the_known_tiers() {
    let err = choose(device((9, 0)), &TierChoice::named("sm99x")).unwrap_err();
    assert_eq!(err.kind(), "unknown_tier");
    let text = err.to_string();
    assert!(text.contains("sm99x"), "{text}");
    for t in set().tiers() {
        assert!(text.contains(t.name), "{text}");
    }
}

/// The H200 of issue 10: the sm80 tier named on a 9.0 device runs from its PTX.
#[test]
fn sm80_named_on_an_h200_runs_its_ptx() {
    let Some(sm80) = set().tier_by_name("sm80") else {
        panic!("the shipped specs define sm80");
    };
    let h200 = DeviceCaps {
        max_shared_bytes: 227 * 1024,
        ..device((9, 0))
    };
    let s = named(sm80, h200).unwrap();
    assert_eq!(
        s.code,
        TierCode::Ptx {
            target: "compute_80"
        }
    );
    assert_eq!(s.tier.id, TierId(sm80.id.0));
}
