//! The kernel templates a build instantiates: every header (`.cuh`, `.h`) and kind manifest
//! (`.toml`) of a templates folder, with the kinds the manifests declare. By default the
//! generator's own copy of `kernels-templates/`, embedded at compile time so the generator (and
//! every build script through it) works from any folder; or a folder given at run time, so a
//! new kernel kind is a template and its manifest, with no Rust edited. Written next to the
//! generated sources.

use gemm_spec::{KindLibrary, SpecErrors};
use std::path::Path;
use std::sync::OnceLock;

mod embedded {
    include!(concat!(env!("OUT_DIR"), "/templates.rs"));
}

/// A templates folder's files and kinds.
#[derive(Clone, Debug)]
pub struct TemplateFiles {
    /// (path relative to the folder, text), sorted by path.
    files: Vec<(String, String)>,
    kinds: KindLibrary,
}

impl TemplateFiles {
    /// The generator's own `kernels-templates/`.
    pub fn embedded() -> Result<TemplateFiles, SpecErrors> {
        static EMBEDDED: OnceLock<Result<TemplateFiles, SpecErrors>> = OnceLock::new();
        EMBEDDED
            .get_or_init(|| {
                TemplateFiles::from_texts(
                    embedded::TEMPLATES
                        .iter()
                        .map(|(p, t)| (p.to_string(), t.to_string()))
                        .collect(),
                )
            })
            .clone()
    }

    /// Every `.cuh`, `.h` and `.toml` file under `dir`.
    pub fn from_dir(dir: &Path) -> Result<TemplateFiles, SpecErrors> {
        let files = read_dir(dir)?;
        TemplateFiles::from_texts(files)
    }

    /// The generator's own templates and every file under `dir` beside them: a crate's own
    /// kernel kinds next to the shipped ones. A path of `dir` that the generator's copy has
    /// too is an error naming it (a crate adds kinds; it does not replace shipped files).
    pub fn embedded_and(dir: &Path) -> Result<TemplateFiles, SpecErrors> {
        let mut files: Vec<(String, String)> = TemplateFiles::embedded()?.files;
        let extra = read_dir(dir)?;
        let clashes: Vec<gemm_spec::SpecError> = extra
            .iter()
            .filter(|(p, _)| files.iter().any(|(q, _)| q == p))
            .map(|(p, _)| gemm_spec::SpecError {
                location: gemm_spec::Location {
                    file: format!("{}/{p}", dir.display()),
                    line: 0,
                },
                kind: gemm_spec::SpecErrorKind::Manifest {
                    template: p.clone(),
                    problem: "is a file of the generator's own kernels-templates/ as well: give a crate's own template files names of their own".into(),
                },
            })
            .collect();
        if !clashes.is_empty() {
            return Err(SpecErrors(clashes));
        }
        files.extend(extra);
        TemplateFiles::from_texts(files)
    }

    fn from_texts(mut files: Vec<(String, String)>) -> Result<TemplateFiles, SpecErrors> {
        files.sort();
        let kinds = KindLibrary::from_files(files.iter().map(|(p, t)| (p.as_str(), t.as_str())))?;
        Ok(TemplateFiles { files, kinds })
    }

    /// The kinds the manifests declare.
    pub fn kinds(&self) -> &KindLibrary {
        &self.kinds
    }

    /// Every file, (path, text), sorted by path.
    pub fn files(&self) -> impl Iterator<Item = (&str, &str)> {
        self.files.iter().map(|(p, t)| (p.as_str(), t.as_str()))
    }

    /// Whether the folder has this file.
    pub fn has(&self, path: &str) -> bool {
        self.files.iter().any(|(p, _)| p == path)
    }

    /// The text of a file.
    pub fn text(&self, path: &str) -> Option<&str> {
        self.files
            .iter()
            .find(|(p, _)| p == path)
            .map(|(_, t)| t.as_str())
    }

    /// Every template header `text` includes, directly or through other headers (resolved in
    /// the folder; other names, such as the generated `gemm_abi.h`, are skipped), sorted.
    pub fn transitive_includes(&self, text: &str) -> Vec<&str> {
        let mut seen: std::collections::BTreeSet<&str> = Default::default();
        let mut todo: Vec<String> = quoted_includes(text)
            .into_iter()
            .map(str::to_string)
            .collect();
        while let Some(p) = todo.pop() {
            let Some((path, body)) = self.files.iter().find(|(q, _)| *q == p) else {
                continue;
            };
            if seen.insert(path.as_str()) {
                todo.extend(quoted_includes(body).into_iter().map(str::to_string));
            }
        }
        seen.into_iter().collect()
    }
}

/// Every `.cuh`, `.h` and `.toml` file under `dir`, (path relative to it, text), sorted.
fn read_dir(dir: &Path) -> Result<Vec<(String, String)>, SpecErrors> {
    let io = |p: &Path, e: std::io::Error| {
        SpecErrors(vec![gemm_spec::SpecError {
            location: gemm_spec::Location {
                file: p.display().to_string(),
                line: 0,
            },
            kind: gemm_spec::SpecErrorKind::Io(e.to_string()),
        }])
    };
    let mut files = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for entry in std::fs::read_dir(&d).map_err(|e| io(&d, e))? {
            let path = entry.map_err(|e| io(&d, e))?.path();
            if path.is_dir() {
                stack.push(path);
            } else if path
                .extension()
                .is_some_and(|e| e == "cuh" || e == "h" || e == "toml")
            {
                let rel = path
                    .strip_prefix(dir)
                    .unwrap_or(&path)
                    .components()
                    .map(|c| c.as_os_str().to_string_lossy().into_owned())
                    .collect::<Vec<_>>()
                    .join("/");
                let text = std::fs::read_to_string(&path).map_err(|e| io(&path, e))?;
                files.push((rel, text));
            }
        }
    }
    files.sort();
    Ok(files)
}

/// The paths of `#include "..."` lines of a source (system includes `<...>` are left out).
pub fn quoted_includes(text: &str) -> Vec<&str> {
    text.lines()
        .filter_map(|l| l.trim_start().strip_prefix("#include"))
        .filter_map(|rest| {
            let rest = rest.trim();
            let rest = rest.strip_prefix('"')?;
            rest.split_once('"').map(|(p, _)| p)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn includes_follow_headers() {
        let t = TemplateFiles::embedded().unwrap();
        let inc = t.transitive_includes("#include \"gemm_abi.h\"\n#include \"fma/fma_gemm.cuh\"\n");
        assert!(inc.contains(&"fma/fma_gemm.cuh"));
        assert!(inc.contains(&"common/element.cuh"));
        assert!(!inc.contains(&"convert/convert_matrix.cuh"));
    }

    #[test]
    fn every_embedded_manifest_has_its_header_and_parses() {
        let t = TemplateFiles::embedded().unwrap();
        assert!(t.kinds().kinds().count() >= 1);
        for k in t.kinds().kinds() {
            assert!(t.has(&k.header), "{}", k.header);
            assert!(t.has(&k.manifest), "{}", k.manifest);
        }
    }
}
