//! Kernel kinds as data. Beside each template in `kernels-templates/` a manifest (`<name>.toml`)
//! declares its config parameters, limits, derived numbers, tensor maps, grid, operand path,
//! ops, types, contracts and capability; nothing about a template is written in Rust.
//!
//! - [`formula`]: the expression language of manifests;
//! - [`manifest`]: one manifest, parsed and checked ([`Kind`]);
//! - [`library`]: every manifest of a templates folder ([`KindLibrary`]);
//! - [`derive`]: a manifest evaluated for one kernel ([`Derived`]), the one place each derived
//!   number is computed.

pub mod derive;
pub mod formula;
pub mod library;
pub mod manifest;

pub use derive::{
    broken_limits, derive, describe, BrokenLimit, DeriveError, Derived, DerivedMap, KernelPoint,
};
pub use formula::{EvalError, Formula, Value};
pub use library::KindLibrary;
pub use manifest::{keys, Kind, KindContract, Let, Limit, MapDecl, Param, Role, BUILTIN_NAMES};

/// `CBoxInner` for `c_box_inner`: the CamelCase of a snake_case name.
pub fn camel(snake: &str) -> String {
    snake
        .split('_')
        .map(|w| {
            let mut c = w.chars();
            c.next()
                .map(|f| f.to_ascii_uppercase().to_string() + c.as_str())
                .unwrap_or_default()
        })
        .collect()
}

/// The constant a kernel's config carries for a manifest name: a parameter in capitals
/// (`stages` → `STAGES`), a let as `k` + CamelCase (`shared_bytes` → `kSharedBytes`).
pub fn config_constant(name: &str, is_param: bool) -> String {
    if is_param {
        name.to_ascii_uppercase()
    } else {
        format!("k{}", camel(name))
    }
}
