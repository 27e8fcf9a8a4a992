//! The kernel kinds a spec may name: every manifest of a templates folder, each with its header
//! (the `.cuh` of the same stem beside it). Loaded from the folder (`from_dir`), or from texts
//! (`from_files`: the generator's embedded copy of `kernels-templates/`).

use super::manifest::{Kind, Role};
use crate::error::{Location, SpecError, SpecErrorKind, SpecErrors};
use std::collections::BTreeMap;
use std::path::Path;

/// Every kind of a templates folder, by template name.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct KindLibrary {
    kinds: BTreeMap<String, Kind>,
    /// Every file of the folder (relative path), for "is this header there".
    files: Vec<String>,
}

impl KindLibrary {
    /// From `(path relative to the templates folder, text)` pairs: each `*.toml` is a manifest
    /// of the template in the `.cuh` of its stem, which must be among the files.
    pub fn from_files<'a>(
        files: impl IntoIterator<Item = (&'a str, &'a str)>,
    ) -> Result<KindLibrary, SpecErrors> {
        let files: Vec<(&str, &str)> = files.into_iter().collect();
        let mut lib = KindLibrary {
            kinds: BTreeMap::new(),
            files: files.iter().map(|(p, _)| p.to_string()).collect(),
        };
        lib.files.sort();
        let mut errors = Vec::new();
        let mut first: BTreeMap<String, Location> = BTreeMap::new();
        for (path, text) in files.iter().filter(|(p, _)| p.ends_with(".toml")) {
            let header = format!("{}.cuh", path.trim_end_matches(".toml"));
            if !lib.files.contains(&header) {
                errors.push(SpecError {
                    location: Location {
                        file: path.to_string(),
                        line: 0,
                    },
                    kind: SpecErrorKind::Manifest {
                        template: path.to_string(),
                        problem: format!("has no header {header} beside it: a manifest describes the template of its own stem"),
                    },
                });
                continue;
            }
            match Kind::parse(path, &header, text) {
                Ok(kind) => {
                    if let Some(at) = first.get(&kind.template) {
                        errors.push(SpecError {
                            location: kind.location.clone(),
                            kind: SpecErrorKind::Duplicate {
                                what: "kernel template",
                                name: kind.template.clone(),
                                first: at.clone(),
                            },
                        });
                        continue;
                    }
                    first.insert(kind.template.clone(), kind.location.clone());
                    lib.kinds.insert(kind.template.clone(), kind);
                }
                Err(e) => errors.extend(e),
            }
        }
        if errors.is_empty() {
            Ok(lib)
        } else {
            Err(SpecErrors(errors))
        }
    }

    /// Every `.toml`, `.cuh` and `.h` file under `dir`.
    pub fn from_dir(dir: &Path) -> Result<KindLibrary, SpecErrors> {
        let mut texts = Vec::new();
        let mut stack = vec![dir.to_path_buf()];
        let io = |p: &Path, e: std::io::Error| {
            SpecErrors(vec![SpecError {
                location: Location {
                    file: p.display().to_string(),
                    line: 0,
                },
                kind: SpecErrorKind::Io(e.to_string()),
            }])
        };
        while let Some(d) = stack.pop() {
            for entry in std::fs::read_dir(&d).map_err(|e| io(&d, e))? {
                let path = entry.map_err(|e| io(&d, e))?.path();
                if path.is_dir() {
                    stack.push(path);
                } else if path
                    .extension()
                    .is_some_and(|e| e == "toml" || e == "cuh" || e == "h")
                {
                    let text = std::fs::read_to_string(&path).map_err(|e| io(&path, e))?;
                    let rel = path
                        .strip_prefix(dir)
                        .unwrap_or(&path)
                        .components()
                        .map(|c| c.as_os_str().to_string_lossy().into_owned())
                        .collect::<Vec<_>>()
                        .join("/");
                    texts.push((rel, text));
                }
            }
        }
        texts.sort();
        KindLibrary::from_files(texts.iter().map(|(p, t)| (p.as_str(), t.as_str())))
    }

    /// The kind of template `name`.
    pub fn get(&self, name: &str) -> Option<&Kind> {
        self.kinds.get(name)
    }

    /// Every kind, by template name.
    pub fn kinds(&self) -> impl Iterator<Item = &Kind> {
        self.kinds.values()
    }

    /// Whether the folder holds this file (relative path).
    pub fn has_file(&self, path: &str) -> bool {
        self.files.iter().any(|f| f == path)
    }

    /// The known template whose name is closest to `name`, when one is close enough to be a
    /// likely misspelling (case and underscores aside, or a few edits away).
    pub fn closest(&self, name: &str, role: Role) -> Option<&str> {
        let norm = |s: &str| s.to_ascii_lowercase().replace('_', "");
        let n = norm(name);
        self.kinds
            .values()
            .filter(|k| k.role == role)
            .map(|k| {
                (
                    crate::spelling::edit_distance(&n, &norm(&k.template)),
                    k.template.as_str(),
                )
            })
            .filter(|&(d, known)| d <= 2.max(known.len() / 4))
            .min()
            .map(|(_, known)| known)
    }

    /// `name (header), ...` of every template of one role, for error messages.
    pub fn listing(&self, role: Role) -> String {
        self.kinds
            .values()
            .filter(|k| k.role == role)
            .map(|k| format!("{} ({})", k.template, k.header))
            .collect::<Vec<_>>()
            .join(", ")
    }
}
