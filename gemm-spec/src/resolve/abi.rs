//! Argument-ABI structs: a CamelCase name; snake_case fields of known types, each bound to one
//! source of launch arguments of a matching type; laid out by C alignment rules into the field
//! offsets, size and alignment that the generated Rust and CUDA both rely on.

use super::names::is_c_identifier;
use super::Sink;
use crate::error::{Location, SpecErrorKind};
use crate::model::*;
use crate::raw::{ParsedFile, RawAbi};

pub(super) fn resolve_abi(
    sink: &mut Sink,
    file: &ParsedFile<'_>,
    at: &Location,
    name: &str,
    raw: &RawAbi,
) -> Option<Abi> {
    let mut ok = true;
    if !is_c_identifier(name) || !name.starts_with(|c: char| c.is_ascii_uppercase()) {
        sink.push(
            at.clone(),
            SpecErrorKind::BadName {
                what: "ABI struct (CamelCase)",
                name: name.to_string(),
            },
        );
        ok = false;
    }
    let problem = |sink: &mut Sink, at: &Location, field: &str, problem: String| {
        sink.push(
            at.clone(),
            SpecErrorKind::AbiField {
                abi: name.to_string(),
                field: field.to_string(),
                problem,
            },
        );
    };
    if raw.fields.is_empty() {
        problem(sink, at, "", "list is empty: a struct needs fields".into());
        return None;
    }
    let mut fields: Vec<AbiField> = Vec::new();
    let mut offset = 0u64;
    let mut align = 1u64;
    for f in &raw.fields {
        let f_at = file.at(f.span());
        let f = f.get_ref();
        if !is_c_identifier(&f.name) || f.name.chars().any(|c| c.is_ascii_uppercase()) {
            problem(
                sink,
                &f_at,
                &f.name,
                "is not a snake_case identifier".into(),
            );
            ok = false;
            continue;
        }
        if fields.iter().any(|g| g.name == f.name) {
            problem(sink, &f_at, &f.name, "appears twice".into());
            ok = false;
            continue;
        }
        let Some(&(_, ty)) = FieldType::ALL.iter().find(|(s, _)| *s == f.ty) else {
            let names: Vec<&str> = FieldType::ALL.iter().map(|(s, _)| *s).collect();
            problem(
                sink,
                &f_at,
                &f.name,
                format!("has type `{}`; expected one of {}", f.ty, names.join(", ")),
            );
            ok = false;
            continue;
        };
        let word = f.bind.as_deref().unwrap_or(&f.name);
        let Some(bind) = BindSource::parse(word) else {
            let words: Vec<&str> = BindSource::ALL.iter().map(|(w, _, _)| *w).collect();
            let how = if f.bind.is_some() {
                format!("binds `{word}`, which")
            } else {
                format!("has no `bind`, and its name `{word}`")
            };
            problem(
                sink,
                &f_at,
                &f.name,
                format!(
                    "{how} is not a source of launch arguments; give `bind` one of {}",
                    words.join(", ")
                ),
            );
            ok = false;
            continue;
        };
        if !bind.fits(ty) {
            problem(
                sink,
                &f_at,
                &f.name,
                format!(
                    "has type {} but binds {bind}, a {} value",
                    f.ty,
                    match bind.ty() {
                        SourceType::Pointer => "device-address",
                        SourceType::TensorMap => "tensor_map",
                        SourceType::I32 => "i32",
                        SourceType::I64 => "i64",
                        SourceType::U32 => "u32",
                        SourceType::F32 => "f32",
                    }
                ),
            );
            ok = false;
            continue;
        }
        if let Some(other) = fields.iter().find(|g| g.bind == bind) {
            problem(
                sink,
                &f_at,
                &f.name,
                format!(
                    "binds {bind}, which field `{}` binds already: each source fills one field",
                    other.name
                ),
            );
            ok = false;
            continue;
        }
        offset = offset.next_multiple_of(ty.align());
        align = align.max(ty.align());
        fields.push(AbiField {
            name: f.name.clone(),
            ty,
            bind,
            doc: f.doc.clone(),
            offset,
            location: f_at,
        });
        offset += ty.size();
    }
    let flags = resolve_flags(sink, file, at, name, raw, &fields);
    ok &= flags.is_some();
    ok.then(|| Abi {
        name: name.to_string(),
        doc: raw.doc.clone(),
        fields,
        flags: flags.unwrap_or_default(),
        location: at.clone(),
        size: offset.next_multiple_of(align),
        align,
    })
}

/// The bits of the `flags` field: snake_case names, distinct bits below 32, each set by the
/// presence of a pointer or tensor-map source; declared exactly when a field binds `flags`.
fn resolve_flags(
    sink: &mut Sink,
    file: &ParsedFile<'_>,
    at: &Location,
    name: &str,
    raw: &RawAbi,
    fields: &[AbiField],
) -> Option<Vec<AbiFlag>> {
    let before = sink.errors.len();
    let has_field = fields.iter().any(|f| f.bind == BindSource::Flags);
    let problem = |sink: &mut Sink, at: &Location, flag: &str, problem: String| {
        sink.push(
            at.clone(),
            SpecErrorKind::AbiField {
                abi: name.to_string(),
                field: format!("flags.{flag}"),
                problem,
            },
        )
    };
    if has_field && raw.flags.is_empty() {
        problem(
            sink,
            at,
            "",
            "are not declared: a field binds `flags`, so list its bits (`flags = [{ name = \"bias\", bit = 0, set = \"bias.ptr\" }]`)".into(),
        );
    }
    if !has_field && !raw.flags.is_empty() {
        problem(
            sink,
            at,
            "",
            "are declared, but no field binds `flags` to carry them".into(),
        );
    }
    let mut flags: Vec<AbiFlag> = Vec::new();
    for f in &raw.flags {
        let f_at = file.at(f.span());
        let f = f.get_ref();
        if !is_c_identifier(&f.name) || f.name.chars().any(|c| c.is_ascii_uppercase()) {
            problem(
                sink,
                &f_at,
                &f.name,
                "is not a snake_case identifier".into(),
            );
            continue;
        }
        if f.bit >= 32 {
            problem(
                sink,
                &f_at,
                &f.name,
                format!("has bit {}, but `flags` is a u32 (bits 0 to 31)", f.bit),
            );
            continue;
        }
        if let Some(other) = flags.iter().find(|g| g.bit == f.bit || g.name == f.name) {
            problem(
                sink,
                &f_at,
                &f.name,
                format!(
                    "repeats flag `{}` (bit {}): each flag has its own name and bit",
                    other.name, other.bit
                ),
            );
            continue;
        }
        let set = BindSource::parse(&f.set)
            .filter(|s| matches!(s.ty(), SourceType::Pointer | SourceType::TensorMap));
        let Some(set) = set else {
            problem(
                sink,
                &f_at,
                &f.name,
                format!(
                    "is set by `{}`, which is no pointer or tensor-map source: name one whose presence the bit reports (bias.ptr, c.tensor_map, ...)",
                    f.set
                ),
            );
            continue;
        };
        if !fields.iter().any(|field| field.bind == set) {
            problem(
                sink,
                &f_at,
                &f.name,
                format!(
                    "is set by `{}`, which no field of {name} carries: the bit would report an operand the kernel cannot reach",
                    f.set
                ),
            );
            continue;
        }
        flags.push(AbiFlag {
            name: f.name.clone(),
            bit: f.bit,
            set,
            doc: f.doc.clone(),
            location: f_at,
        });
    }
    (sink.errors.len() == before).then_some(flags)
}
