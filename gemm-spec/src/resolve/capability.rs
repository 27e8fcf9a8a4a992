//! Compute capabilities: the range a written `[major, minor]` may take, and a tier's
//! `arch=compute_XY,code=sm_XY` gencode read back into a capability and whether it is
//! arch-specific. Instructions and tiers both name capabilities; `tier` compares them to decide
//! whether a family's instruction exists on a target.

use super::Sink;
use crate::error::{Location, SpecErrorKind};

/// Largest major compute-capability version a spec may name. NVIDIA's run to 12 through
/// sm_120; two digits leave room and keep every `sm_XY` name and sum in range.
pub const CC_MAJOR_MAX: u32 = 99;

/// Checks a written compute capability: major 1..=99, minor one digit (sm_XY is major X,
/// minor Y, so the minor never reaches 10).
pub(super) fn check_cc(
    sink: &mut Sink,
    at: &Location,
    item: &str,
    key: &'static str,
    cc: [u32; 2],
) -> bool {
    let ok = (1..=CC_MAJOR_MAX).contains(&cc[0]) && cc[1] <= 9;
    if !ok {
        sink.push(
            at.clone(),
            SpecErrorKind::Capability {
                item: item.to_string(),
                key,
                major: cc[0],
                minor: cc[1],
                problem: format!(
                    "is out of range: the major version must be 1..={CC_MAJOR_MAX} and the minor 0..=9 (sm_XY reads major X, minor Y)"
                ),
            },
        );
    }
    ok
}

/// `arch=compute_90a,code=sm_90a` -> ((9, 0), arch-specific): the last digit is the minor
/// version, the digits before it the major (`100a` -> (10, 0), `120` -> (12, 0)).
pub(super) fn parse_gencode(gencode: &str) -> Result<((u32, u32), bool), String> {
    let bad = || {
        "must read `arch=compute_XY,code=sm_XY` (XY the compute capability, major then one minor digit, optionally with an `a` suffix on both)".to_string()
    };
    let (arch, code) = gencode.split_once(',').ok_or_else(bad)?;
    let arch = arch.strip_prefix("arch=compute_").ok_or_else(bad)?;
    let code = code.strip_prefix("code=sm_").ok_or_else(bad)?;
    if arch != code {
        return Err(format!(
            "names compute_{arch} but sm_{code}; they must be the same target"
        ));
    }
    let (digits, specific) = match arch.strip_suffix('a') {
        Some(d) => (d, true),
        None => (arch, false),
    };
    let all_digits = digits.bytes().all(|b| b.is_ascii_digit());
    // Two or three digits: a major of 1..=99 without a leading zero, then the minor digit.
    if !all_digits || !(2..=3).contains(&digits.len()) || digits.starts_with('0') {
        return Err(bad());
    }
    let (major, minor) = digits.split_at(digits.len() - 1);
    let major = major.parse::<u32>().map_err(|_| bad())?;
    let minor = minor.parse::<u32>().map_err(|_| bad())?;
    Ok(((major, minor), specific))
}
