//! Reading a spec folder: each `.toml` file is parsed on its own, the routes files the tiers
//! list are read and parsed as such ([`crate::routes_files`]), then `resolve` joins them.

use crate::error::{Location, SpecError, SpecErrorKind, SpecErrors, SpecWarning};
use crate::kinds::KindLibrary;
use crate::model::SpecSet;
use crate::raw::{line_of, ParsedFile, RawFile, RawRoutesFile};
use crate::routes_files::{listed_by, located, FileRoutes, Listed, RoutesFiles};
use std::collections::BTreeSet;
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

/// A routes file a build adds to one tier (`gemm_codegen::Builder::routes_file`): its routes
/// come before those of the routes files the tier lists and the tier's own. `source.file` is
/// how errors name it.
#[derive(Clone, Debug)]
pub struct TierRoutesFile {
    pub tier: String,
    pub source: SpecSource,
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
/// naming the file. The routes files a tier lists are read relative to its file, inside the
/// folder or not.
pub fn load_dir(
    dir: &Path,
    kinds: &KindLibrary,
    defaults: &Defaults,
) -> Result<Validated, SpecErrors> {
    load_dir_with_routes(dir, kinds, defaults, &[])
}

/// [`load_dir`] with routes files added to tiers (`extra`), as a build adds them.
pub fn load_dir_with_routes(
    dir: &Path,
    kinds: &KindLibrary,
    defaults: &Defaults,
    extra: &[TierRoutesFile],
) -> Result<Validated, SpecErrors> {
    let folder_err = |e: std::io::Error| {
        SpecErrors(vec![SpecError {
            location: Location {
                file: dir.display().to_string(),
                line: 0,
            },
            kind: SpecErrorKind::Io(e.to_string()),
        }])
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
            match read_source(&path, file) {
                Ok(src) => sources.push(src),
                Err(e) => errors.push(*e),
            }
        }
    }
    if !errors.is_empty() {
        errors.sort_by(|a, b| a.location.cmp(&b.location));
        return Err(SpecErrors(errors));
    }
    sources.sort_by(|a, b| a.file.cmp(&b.file));
    // A listed routes file outside the folder's top level (or not named *.toml) is read
    // from disk; one among the folder's files is taken from them.
    let read = |name: &str| {
        let path = dir.join(name);
        path.is_file().then(|| read_source(&path, name.to_string()))
    };
    load(&sources, extra, kinds, defaults, &read)
}

/// One file's text, or the error naming it: unreadable, or not UTF-8 (with the line).
fn read_source(path: &Path, file: String) -> Result<SpecSource, Box<SpecError>> {
    let err_at = |file: String, line: usize, kind: SpecErrorKind| {
        Box::new(SpecError {
            location: Location { file, line },
            kind,
        })
    };
    let bytes = std::fs::read(path)
        .map_err(|e| err_at(file.clone(), 0, SpecErrorKind::Io(e.to_string())))?;
    match String::from_utf8(bytes) {
        Ok(text) => Ok(SpecSource { file, text }),
        Err(e) => {
            let valid = e.utf8_error().valid_up_to();
            let bytes = e.as_bytes();
            let line = bytes[..valid].iter().filter(|&&b| b == b'\n').count() + 1;
            let bad = bytes.get(valid).copied().unwrap_or(0);
            Err(err_at(
                file,
                line,
                SpecErrorKind::NotUtf8(format!(
                    "byte {bad:#04x} at byte offset {valid} starts no UTF-8 character; save the file as UTF-8"
                )),
            ))
        }
    }
}

/// Parses and validates spec files given as text (used by tests and by `load_dir`). A routes
/// file a tier lists must be among `sources`, named as the tier resolves it.
pub fn load_sources(
    sources: &[SpecSource],
    kinds: &KindLibrary,
    defaults: &Defaults,
) -> Result<Validated, SpecErrors> {
    load_sources_with_routes(sources, kinds, defaults, &[])
}

/// [`load_sources`] with routes files added to tiers (`extra`), as a build adds them.
pub fn load_sources_with_routes(
    sources: &[SpecSource],
    kinds: &KindLibrary,
    defaults: &Defaults,
    extra: &[TierRoutesFile],
) -> Result<Validated, SpecErrors> {
    load(sources, extra, kinds, defaults, &|_| None)
}

/// A routes file that is not among the sources: its text, an error reading it, or `None`
/// when there is no such file.
type ReadRoutesFile<'r> = dyn Fn(&str) -> Option<Result<SpecSource, Box<SpecError>>> + 'r;

fn toml_error(src: &SpecSource, e: &toml::de::Error, routes_file: bool) -> SpecError {
    let mut message = toml_message(e, &src.text);
    if routes_file && message.starts_with("unknown field") {
        message += "; a routes file holds [[route]] tables alone (tiles and [tier] keys belong in the tier file)";
    }
    SpecError {
        location: Location {
            file: src.file.clone(),
            line: e.span().map_or(0, |s| line_of(&src.text, s.start)),
        },
        kind: SpecErrorKind::Toml(message),
    }
}

/// The routes of a routes file; none after a parse error (pushed to `errors`).
fn parse_routes(src: &SpecSource, errors: &mut Vec<SpecError>) -> FileRoutes {
    match toml::from_str::<RawRoutesFile>(&src.text) {
        Ok(raw) => located(&src.file, &src.text, raw),
        Err(e) => {
            errors.push(toml_error(src, &e, true));
            Vec::new()
        }
    }
}

/// Reads and parses the listed routes files that are not among the sources (`read`); a
/// missing one is an error at the line that lists it.
fn read_listed(
    listed: &[Listed],
    routes: &mut RoutesFiles,
    read: &ReadRoutesFile<'_>,
    errors: &mut Vec<SpecError>,
) {
    for l in listed {
        routes
            .listed
            .entry(l.at.file.clone())
            .or_default()
            .push(l.name.clone());
        if routes.parsed.contains_key(&l.name) {
            continue;
        }
        match read(&l.name) {
            Some(Ok(src)) => {
                let r = parse_routes(&src, errors);
                routes.parsed.insert(l.name.clone(), r);
            }
            Some(Err(e)) => {
                errors.push(*e);
                routes.parsed.insert(l.name.clone(), Vec::new());
            }
            None => errors.push(SpecError {
                location: l.at.clone(),
                kind: SpecErrorKind::RoutesFile {
                    tier: l.tier.clone(),
                    file: l.entry.clone(),
                    problem: format!(
                        "does not exist (`{}` in the spec folder): write it (gemm-aot tune --out) or take it out of `routes_files`",
                        l.name
                    ),
                },
            }),
        }
    }
}

/// Parses the routes files a build adds, each to a tier of `tiers`.
fn add_build_files(
    extra: &[TierRoutesFile],
    tiers: &[String],
    routes: &mut RoutesFiles,
    errors: &mut Vec<SpecError>,
) {
    for x in extra {
        if !tiers.contains(&x.tier) {
            errors.push(SpecError {
                location: Location {
                    file: x.source.file.clone(),
                    line: 0,
                },
                kind: SpecErrorKind::RoutesFile {
                    tier: x.tier.clone(),
                    file: x.source.file.clone(),
                    problem: format!(
                        "is added to tier {}, which the specs do not define (tiers: {})",
                        x.tier,
                        tiers.join(", ")
                    ),
                },
            });
            continue;
        }
        let r = parse_routes(&x.source, errors);
        routes
            .added
            .entry(x.tier.clone())
            .or_default()
            .push((x.source.file.clone(), r));
    }
}

fn load(
    sources: &[SpecSource],
    extra: &[TierRoutesFile],
    kinds: &KindLibrary,
    defaults: &Defaults,
    read: &ReadRoutesFile<'_>,
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
    let all: Vec<&SpecSource> = sources.iter().chain(&defaults.definitions).collect();
    let first_pass: Vec<Result<RawFile, toml::de::Error>> = all
        .iter()
        .map(|src| toml::from_str::<RawFile>(&src.text))
        .collect();
    // The routes files the tiers list; the sources among them are routes files, not spec
    // files.
    let mut listed: Vec<Listed> = Vec::new();
    for (src, raw) in all.iter().zip(&first_pass) {
        if let Ok(raw) = raw {
            let (l, e) = listed_by(&src.file, &src.text, raw.tier.as_ref());
            listed.extend(l);
            errors.extend(e);
        }
    }
    let routes_names: BTreeSet<&str> = listed.iter().map(|l| l.name.as_str()).collect();
    let mut routes = RoutesFiles::default();
    let mut parsed = Vec::new();
    for (src, raw) in all.iter().zip(first_pass) {
        if routes_names.contains(src.file.as_str()) {
            let r = parse_routes(src, &mut errors);
            routes.parsed.insert(src.file.clone(), r);
            continue;
        }
        match raw {
            Ok(raw) => parsed.push(ParsedFile::new(src.file.clone(), &src.text, raw)),
            Err(e) => errors.push(toml_error(src, &e, false)),
        }
    }
    read_listed(&listed, &mut routes, read, &mut errors);
    let tiers: Vec<String> = parsed
        .iter()
        .filter_map(|f| f.raw.tier.as_ref().map(|t| t.get_ref().name.clone()))
        .collect();
    add_build_files(extra, &tiers, &mut routes, &mut errors);
    // The hardware table: the folder's own, or the default one.
    if !parsed
        .iter()
        .any(|f: &ParsedFile<'_>| !f.raw.hardware.is_empty())
    {
        for src in &defaults.hardware {
            match toml::from_str::<RawFile>(&src.text) {
                Ok(raw) => parsed.push(ParsedFile::new(
                    src.file.clone(),
                    &src.text,
                    RawFile {
                        hardware: raw.hardware,
                        ..RawFile::default()
                    },
                )),
                Err(e) => errors.push(toml_error(src, &e, false)),
            }
        }
    }
    let parse_failed = !errors.is_empty();
    let resolved = crate::resolve::resolve(&parsed, &routes, kinds, parse_failed, &mut errors);
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
