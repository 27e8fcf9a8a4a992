//! Name rules: the words that may name instructions, contracts, families, conversions, tiers and
//! tiles (lowercase, so they can become identifiers and file names; contracts may add `-`), the
//! C-identifier test ABI structs and fields must pass, the family name reserved for the
//! conversion kernels' compile unit, and the `known` listing error messages offer in place of a
//! reference to nothing.

use super::Sink;
use crate::error::{Location, SpecErrorKind};

/// The compile unit of a tier's conversion kernels (`cuda/<tier>/conversions.cu`); no family
/// may take the name.
pub const RESERVED_MODULE: &str = "conversions";

/// Contract names also allow `-` (`fma-k256`): they appear in generated comments and strings,
/// never as identifiers.
pub(super) fn check_contract_name(sink: &mut Sink, at: &Location, name: &str) -> bool {
    let ok = name.chars().next().is_some_and(|c| c.is_ascii_lowercase())
        && name
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-');
    if !ok {
        sink.push(
            at.clone(),
            SpecErrorKind::BadContractName {
                name: name.to_string(),
            },
        );
    }
    ok
}

pub(super) fn check_name(sink: &mut Sink, at: &Location, what: &'static str, name: &str) -> bool {
    let ok = name.chars().next().is_some_and(|c| c.is_ascii_lowercase())
        && name
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit());
    if !ok {
        sink.push(
            at.clone(),
            SpecErrorKind::BadName {
                what,
                name: name.to_string(),
            },
        );
    }
    ok
}

pub(super) fn is_c_identifier(s: &str) -> bool {
    s.chars()
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && s.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
}

pub(super) fn known<'a>(names: impl Iterator<Item = &'a String>) -> String {
    let v: Vec<&str> = names.map(String::as_str).collect();
    if v.is_empty() {
        "none".into()
    } else {
        v.join(", ")
    }
}
