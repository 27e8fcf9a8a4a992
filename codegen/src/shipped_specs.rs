//! The generator's copy of the shipped specs' hardware table (`specs/hardware.toml`: what each
//! compute capability has) and shared definitions (`specs/families.toml`), embedded at compile
//! time. A spec folder with no `[[hardware]]` of its own validates against the shipped table;
//! a build that asks for the shipped definitions ([`crate::Builder::shipped_definitions`],
//! `gemm-aot build --shipped-definitions`) gets the shipped instructions, contracts, ABIs,
//! conversions and families beside its own files, instead of copying them.

use gemm_spec::{Defaults, SpecSource};

mod embedded {
    include!(concat!(env!("OUT_DIR"), "/shipped_specs.rs"));
}

/// The name errors give the embedded hardware table.
pub const HARDWARE_FILE: &str = "shipped:hardware.toml";
/// The name errors give the embedded shared definitions.
pub const DEFINITIONS_FILE: &str = "shipped:families.toml";

/// The defaults of a build: the shipped hardware table, and the shipped definitions when
/// `definitions` is set.
pub fn defaults(definitions: bool) -> Defaults {
    Defaults {
        hardware: vec![SpecSource {
            file: HARDWARE_FILE.into(),
            text: embedded::HARDWARE.into(),
        }],
        definitions: if definitions {
            vec![SpecSource {
                file: DEFINITIONS_FILE.into(),
                text: embedded::DEFINITIONS.into(),
            }]
        } else {
            Vec::new()
        },
    }
}
