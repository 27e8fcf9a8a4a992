//! Writing output files: [`write_if_changed`] for one file (its modification time kept when
//! its bytes are the same), the check that a folder is a gemm-aot output and so may be
//! replaced, the listing of an output's files, and the errors of all of these. The staging
//! folder that replaces a whole output at once lives in [`crate::staging`].

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use thiserror::Error;

/// The top-level entries of a gemm-aot output folder. A folder holding anything else is not
/// replaced (it is not ours: `--out .` must never swap away a source tree).
pub const OUTPUT_ENTRIES: [&str; 4] = ["cuda", "cubins", "rust", "report.json"];

#[derive(Debug, Error)]
pub enum OutputError {
    #[error("cannot {action} {path}: {source}")]
    Io {
        action: &'static str,
        path: String,
        source: std::io::Error,
    },
    #[error("{path} is not a gemm-aot output folder (it holds {entries}; an output holds only {expected}): refusing to replace it; choose another --out or remove it")]
    Foreign {
        path: String,
        entries: String,
        expected: String,
    },
    #[error("{path} exists and is not a folder")]
    NotAFolder { path: String },
}

pub(crate) fn io<'a>(
    action: &'static str,
    path: &'a Path,
) -> impl FnOnce(std::io::Error) -> OutputError + 'a {
    move |source| OutputError::Io {
        action,
        path: path.display().to_string(),
        source,
    }
}

/// Writes `bytes` to `path` unless it already holds exactly them. Returns whether it wrote.
pub fn write_if_changed(path: &Path, bytes: &[u8]) -> std::io::Result<bool> {
    if std::fs::read(path).is_ok_and(|old| old == bytes) {
        return Ok(false);
    }
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir)?;
    }
    let tmp = path.with_extension(format!("tmp{}", std::process::id()));
    std::fs::write(&tmp, bytes)?;
    std::fs::rename(&tmp, path)?;
    Ok(true)
}

/// Checks that `out` is absent, or a folder holding only [`OUTPUT_ENTRIES`].
pub fn check_output_folder(out: &Path) -> Result<(), OutputError> {
    let meta = match std::fs::symlink_metadata(out) {
        Ok(m) => m,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(()),
        Err(e) => return Err(io("read", out)(e)),
    };
    if !meta.is_dir() {
        return Err(OutputError::NotAFolder {
            path: out.display().to_string(),
        });
    }
    let mut foreign = Vec::new();
    for entry in std::fs::read_dir(out).map_err(io("list", out))? {
        let name = entry.map_err(io("list", out))?.file_name();
        let name = name.to_string_lossy().into_owned();
        if !OUTPUT_ENTRIES.contains(&name.as_str()) {
            foreign.push(name);
        }
    }
    if foreign.is_empty() {
        return Ok(());
    }
    foreign.sort();
    Err(OutputError::Foreign {
        path: out.display().to_string(),
        entries: foreign.join(", "),
        expected: OUTPUT_ENTRIES.join(", "),
    })
}

/// Every regular file under `dir`, relative to it (empty when `dir` does not exist).
pub fn files_under(dir: &Path) -> Result<BTreeSet<PathBuf>, OutputError> {
    let mut found = BTreeSet::new();
    let mut todo = vec![PathBuf::new()];
    while let Some(rel) = todo.pop() {
        let abs = dir.join(&rel);
        let entries = match std::fs::read_dir(&abs) {
            Ok(e) => e,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound && rel.as_os_str().is_empty() => {
                return Ok(found)
            }
            Err(e) => return Err(io("list", &abs)(e)),
        };
        for entry in entries {
            let entry = entry.map_err(io("list", &abs))?;
            let kind = entry.file_type().map_err(io("read", &entry.path()))?;
            let child = rel.join(entry.file_name());
            if kind.is_dir() {
                todo.push(child);
            } else {
                found.insert(child);
            }
        }
    }
    Ok(found)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn writes_only_changes() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("a/b.txt");
        assert!(write_if_changed(&p, b"x").unwrap());
        let t0 = std::fs::metadata(&p).unwrap().modified().unwrap();
        assert!(!write_if_changed(&p, b"x").unwrap());
        assert_eq!(std::fs::metadata(&p).unwrap().modified().unwrap(), t0);
        assert!(write_if_changed(&p, b"y").unwrap());
        assert_eq!(std::fs::read(&p).unwrap(), b"y");
    }
}
