//! Argument-ABI structs: a CamelCase name; snake_case fields of known types, each bound to one
//! source of launch arguments of a matching type; laid out by C alignment rules into the field
//! offsets, size and alignment that the generated Rust and CUDA both rely on.

use super::names::is_c_identifier;
use super::Sink;
use crate::error::{Location, SpecErrorKind};
use crate::model::*;
use crate::raw::RawAbi;

pub(super) fn resolve_abi(sink: &mut Sink, at: &Location, name: &str, raw: &RawAbi) -> Option<Abi> {
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
    let problem = |sink: &mut Sink, field: &str, problem: String| {
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
        problem(sink, "", "list is empty: a struct needs fields".into());
        return None;
    }
    let mut fields: Vec<AbiField> = Vec::new();
    let mut offset = 0u64;
    let mut align = 1u64;
    for f in &raw.fields {
        if !is_c_identifier(&f.name) || f.name.chars().any(|c| c.is_ascii_uppercase()) {
            problem(sink, &f.name, "is not a snake_case identifier".into());
            ok = false;
            continue;
        }
        if fields.iter().any(|g| g.name == f.name) {
            problem(sink, &f.name, "appears twice".into());
            ok = false;
            continue;
        }
        let Some(&(_, ty)) = FieldType::ALL.iter().find(|(s, _)| *s == f.ty) else {
            let names: Vec<&str> = FieldType::ALL.iter().map(|(s, _)| *s).collect();
            problem(
                sink,
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
                &f.name,
                format!(
                    "has type {} but binds {bind}, a {} value",
                    f.ty,
                    match bind.ty() {
                        SourceType::Pointer => "device-address",
                        SourceType::TensorMap => "tensor_map",
                        SourceType::I32 => "i32",
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
        });
        offset += ty.size();
    }
    ok.then(|| Abi {
        name: name.to_string(),
        doc: raw.doc.clone(),
        fields,
        size: offset.next_multiple_of(align),
        align,
    })
}
