//! Reading a spec folder: each `.toml` file is parsed on its own, then `resolve` joins them.

use crate::error::{Location, SpecError, SpecErrorKind, SpecErrors, SpecWarning};
use crate::model::SpecSet;
use crate::raw::RawFile;
use std::path::Path;

/// The text of one spec file, named relative to its folder (errors use this name).
#[derive(Clone, Debug)]
pub struct SpecSource {
    pub file: String,
    pub text: String,
}

/// A spec folder that passed every rule, with the warnings it raised.
#[derive(Clone, Debug)]
pub struct Validated {
    pub specs: SpecSet,
    pub warnings: Vec<SpecWarning>,
}

/// Reads every `*.toml` file directly in `dir` (sorted by name), then parses and validates.
pub fn load_dir(dir: &Path) -> Result<Validated, SpecErrors> {
    let io_err = |e: std::io::Error| {
        SpecErrors(vec![SpecError {
            location: Location {
                file: dir.display().to_string(),
                line: 0,
            },
            kind: SpecErrorKind::Io(e.to_string()),
        }])
    };
    let mut sources = Vec::new();
    for entry in std::fs::read_dir(dir).map_err(io_err)? {
        let path = entry.map_err(io_err)?.path();
        if path.extension().is_some_and(|e| e == "toml") && path.is_file() {
            let file = path
                .file_name()
                .map(|f| f.to_string_lossy().into_owned())
                .unwrap_or_default();
            let text = std::fs::read_to_string(&path).map_err(io_err)?;
            sources.push(SpecSource { file, text });
        }
    }
    sources.sort_by(|a, b| a.file.cmp(&b.file));
    load_sources(&sources)
}

/// Parses and validates spec files given as text (used by tests and by `load_dir`).
pub fn load_sources(sources: &[SpecSource]) -> Result<Validated, SpecErrors> {
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
    for src in sources {
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
                kind: SpecErrorKind::Toml(e.message().trim().to_string()),
            }),
        }
    }
    let parse_failed = !errors.is_empty();
    let resolved = crate::resolve::resolve(&parsed, parse_failed, &mut errors);
    match resolved {
        Some((specs, warnings)) if errors.is_empty() => Ok(Validated { specs, warnings }),
        _ => Err(SpecErrors(errors)),
    }
}

/// A parsed file with what is needed to turn spans into lines.
pub(crate) struct ParsedFile<'a> {
    pub name: String,
    pub text: &'a str,
    pub raw: RawFile,
}

impl ParsedFile<'_> {
    pub fn at(&self, span: std::ops::Range<usize>) -> Location {
        Location {
            file: self.name.clone(),
            line: line_of(self.text, span.start),
        }
    }
}

/// 1-based line of a byte offset (clamped to the text).
pub fn line_of(text: &str, offset: usize) -> usize {
    let end = offset.min(text.len());
    text.as_bytes()[..end]
        .iter()
        .filter(|&&b| b == b'\n')
        .count()
        + 1
}
