//! Reading a spec folder: each `.toml` file is parsed on its own, then `resolve` joins them.

use crate::error::{Location, SpecError, SpecErrorKind, SpecErrors, SpecWarning};
use crate::kinds::KindLibrary;
use crate::model::SpecSet;
use crate::raw::{line_of, ParsedFile, RawFile};
use std::path::Path;

/// The text of one spec file, named relative to its folder (errors use this name).
#[derive(Clone, Debug)]
pub struct SpecSource {
    pub file: String,
    pub text: String,
}

/// What a spec folder may leave to the generator: the hardware table (used when the folder has
/// no `[[hardware]]` of its own; the generator passes its copy of the shipped
/// `specs/hardware.toml`), and shared definitions added beside the folder's files (the
/// shipped instructions, contracts, ABIs, conversions and families, when a build asks for
/// them).
#[derive(Clone, Debug, Default)]
pub struct Defaults {
    pub hardware: Vec<SpecSource>,
    pub definitions: Vec<SpecSource>,
}

/// A spec folder that passed every rule, with the warnings it raised.
#[derive(Clone, Debug)]
pub struct Validated {
    pub specs: SpecSet,
    pub warnings: Vec<SpecWarning>,
}

/// Reads every `*.toml` file directly in `dir` (sorted by name), then parses and validates them
/// against the kernel kinds of `kinds` (the manifests of a templates folder), with `defaults`
/// for what the folder leaves out. A file that cannot be read, or is not UTF-8, is an error
/// naming the file.
pub fn load_dir(
    dir: &Path,
    kinds: &KindLibrary,
    defaults: &Defaults,
) -> Result<Validated, SpecErrors> {
    let err_at = |file: String, line: usize, kind: SpecErrorKind| SpecError {
        location: Location { file, line },
        kind,
    };
    let folder_err = |e: std::io::Error| {
        SpecErrors(vec![err_at(
            dir.display().to_string(),
            0,
            SpecErrorKind::Io(e.to_string()),
        )])
    };
    let mut sources = Vec::new();
    let mut errors = Vec::new();
    for entry in std::fs::read_dir(dir).map_err(folder_err)? {
        let path = entry.map_err(folder_err)?.path();
        if path.extension().is_some_and(|e| e == "toml") && path.is_file() {
            let file = path
                .file_name()
                .map(|f| f.to_string_lossy().into_owned())
                .unwrap_or_default();
            let bytes = match std::fs::read(&path) {
                Ok(b) => b,
                Err(e) => {
                    errors.push(err_at(file, 0, SpecErrorKind::Io(e.to_string())));
                    continue;
                }
            };
            match String::from_utf8(bytes) {
                Ok(text) => sources.push(SpecSource { file, text }),
                Err(e) => {
                    let valid = e.utf8_error().valid_up_to();
                    let bytes = e.as_bytes();
                    let line = bytes[..valid].iter().filter(|&&b| b == b'\n').count() + 1;
                    let bad = bytes.get(valid).copied().unwrap_or(0);
                    errors.push(err_at(
                        file,
                        line,
                        SpecErrorKind::NotUtf8(format!(
                            "byte {bad:#04x} at byte offset {valid} starts no UTF-8 character; save the file as UTF-8"
                        )),
                    ));
                }
            }
        }
    }
    if !errors.is_empty() {
        errors.sort_by(|a, b| a.location.cmp(&b.location));
        return Err(SpecErrors(errors));
    }
    sources.sort_by(|a, b| a.file.cmp(&b.file));
    load_sources(&sources, kinds, defaults)
}

/// Parses and validates spec files given as text (used by tests and by `load_dir`).
pub fn load_sources(
    sources: &[SpecSource],
    kinds: &KindLibrary,
    defaults: &Defaults,
) -> Result<Validated, SpecErrors> {
    if sources.is_empty() {
        return Err(SpecErrors(vec![SpecError {
            location: Location {
                file: "<specs>".into(),
                line: 0,
            },
            kind: SpecErrorKind::NoSpecFiles,
        }]));
    }
    let mut errors = Vec::new();
    let mut parsed = Vec::new();
    let extra: Vec<&SpecSource> = defaults.definitions.iter().collect();
    for src in sources.iter().chain(extra) {
        match toml::from_str::<RawFile>(&src.text) {
            Ok(raw) => parsed.push(ParsedFile {
                name: src.file.clone(),
                text: &src.text,
                raw,
            }),
            Err(e) => errors.push(SpecError {
                location: Location {
                    file: src.file.clone(),
                    line: e.span().map_or(0, |s| line_of(&src.text, s.start)),
                },
                kind: SpecErrorKind::Toml(toml_message(&e, &src.text)),
            }),
        }
    }
    // The hardware table: the folder's own, or the default one.
    if !parsed
        .iter()
        .any(|f: &ParsedFile<'_>| !f.raw.hardware.is_empty())
    {
        for src in &defaults.hardware {
            match toml::from_str::<RawFile>(&src.text) {
                Ok(raw) => parsed.push(ParsedFile {
                    name: src.file.clone(),
                    text: &src.text,
                    raw: RawFile {
                        hardware: raw.hardware,
                        ..RawFile::default()
                    },
                }),
                Err(e) => errors.push(SpecError {
                    location: Location {
                        file: src.file.clone(),
                        line: e.span().map_or(0, |s| line_of(&src.text, s.start)),
                    },
                    kind: SpecErrorKind::Toml(toml_message(&e, &src.text)),
                }),
            }
        }
    }
    let parse_failed = !errors.is_empty();
    let resolved = crate::resolve::resolve(&parsed, kinds, parse_failed, &mut errors);
    match resolved {
        Some((specs, warnings)) if errors.is_empty() => Ok(Validated { specs, warnings }),
        _ => Err(SpecErrors(once_each(errors))),
    }
}

/// The parser's message, with the key named where it says only "duplicate key".
fn toml_message(e: &toml::de::Error, text: &str) -> String {
    let msg = e.message().trim().to_string();
    if !msg.starts_with("duplicate key") || msg.contains('`') {
        return msg;
    }
    let key = e
        .span()
        .and_then(|s| text.get(s))
        .map(|k| k.trim().trim_matches(|c| c == '[' || c == ']').trim())
        .filter(|k| !k.is_empty() && !k.contains('\n'));
    match key {
        Some(k) => format!("duplicate key `{k}`: a key may appear once in a table"),
        None => msg,
    }
}

/// `errors` with each (location, text) kept once, in order: a mistake in a base tier's file is
/// met again by every tier built on it, and is one mistake.
fn once_each(errors: Vec<SpecError>) -> Vec<SpecError> {
    let mut seen = std::collections::BTreeSet::new();
    errors
        .into_iter()
        .filter(|e| seen.insert((e.location.clone(), e.to_string())))
        .collect()
}
