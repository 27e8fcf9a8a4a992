//! Writing the output folder all at once: every file goes into a staging folder next to the
//! output, and the staging folder replaces the output only when the whole build succeeded.
//! Files whose bytes did not change keep their modification time, and a build that changes
//! nothing leaves the output folder untouched (cargo's and editors' change tracking stays
//! quiet; the runtime `include!`s these files).

use crate::write::{check_output_folder, files_under, io, OutputError};
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

/// What [`OutputStaging::commit`] did to the output folder.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Committed {
    /// Files new or changed.
    pub written: usize,
    /// Files whose bytes were already there (their modification time is kept).
    pub unchanged: usize,
    /// Files of the old output the new one does not have (tiers gone from the specs).
    pub removed: usize,
}

/// A staging folder beside the output folder. Dropped without [`commit`](Self::commit)
/// (a failed build), it is deleted and the output is left exactly as it was.
#[derive(Debug)]
pub struct OutputStaging {
    dir: PathBuf,
    out: PathBuf,
    files: BTreeSet<PathBuf>,
}

/// Removes staging and backup folders of `out` that runs no longer alive left behind (a build
/// killed by Ctrl-C runs no destructor). Only where `/proc` tells which processes live.
fn remove_dead_siblings(out: &Path) {
    let proc_fs = Path::new("/proc/self");
    let (Ok(abs), true) = (std::path::absolute(out), proc_fs.exists()) else {
        return;
    };
    let (Some(name), Some(parent)) = (abs.file_name(), abs.parent()) else {
        return;
    };
    let name = name.to_string_lossy();
    let Ok(entries) = std::fs::read_dir(parent) else {
        return;
    };
    for entry in entries.flatten() {
        let file = entry.file_name().to_string_lossy().into_owned();
        let pid = ["staging", "old"]
            .iter()
            .find_map(|what| file.strip_prefix(&format!(".{name}.{what}-")))
            .and_then(|pid| pid.parse::<u32>().ok());
        if let Some(pid) = pid {
            if pid != std::process::id() && !Path::new(&format!("/proc/{pid}")).exists() {
                let _ = std::fs::remove_dir_all(entry.path());
            }
        }
    }
}

/// `<parent of out>/.<name of out>.<what>-<pid>`, absolute.
fn sibling(out: &Path, what: &str) -> Result<PathBuf, OutputError> {
    let abs = std::path::absolute(out).map_err(io("resolve", out))?;
    let name = abs
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| "gemm-out".into());
    let parent = abs.parent().map(Path::to_path_buf).unwrap_or_default();
    Ok(parent.join(format!(".{name}.{what}-{}", std::process::id())))
}

impl OutputStaging {
    /// Checks `out` (see [`check_output_folder`]) and creates an empty staging folder beside it.
    pub fn new(out: &Path) -> Result<OutputStaging, OutputError> {
        check_output_folder(out)?;
        remove_dead_siblings(out);
        let dir = sibling(out, "staging")?;
        let _ = std::fs::remove_dir_all(&dir); // a leftover of a killed run with our pid
        std::fs::create_dir_all(&dir).map_err(io("create", &dir))?;
        Ok(OutputStaging {
            dir,
            out: out.to_path_buf(),
            files: BTreeSet::new(),
        })
    }

    /// The staging folder (absolute).
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// Writes one file of the new output, `rel` to the output folder.
    pub fn put(&mut self, rel: &Path, bytes: &[u8]) -> Result<(), OutputError> {
        let path = self.dir.join(rel);
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent).map_err(io("create", parent))?;
        }
        std::fs::write(&path, bytes).map_err(io("write", &path))?;
        self.files.insert(rel.to_path_buf());
        Ok(())
    }

    /// Makes the staged files the output: when nothing differs from the output folder, the
    /// output is not touched at all; otherwise the staging folder replaces it (unchanged files
    /// keep their old modification time), and files the new output lacks are gone.
    pub fn commit(self) -> Result<Committed, OutputError> {
        check_output_folder(&self.out)?;
        let old = files_under(&self.out)?;
        let mut c = Committed::default();
        for rel in &self.files {
            let staged = self.dir.join(rel);
            let current = self.out.join(rel);
            let same = match (std::fs::read(&current), std::fs::read(&staged)) {
                (Ok(a), Ok(b)) => a == b,
                (_, Err(e)) => return Err(io("read", &staged)(e)),
                (Err(_), _) => false,
            };
            if !same {
                c.written += 1;
                continue;
            }
            c.unchanged += 1;
            // Keep the old modification time, so the swap looks like no write at all.
            if let Ok(t) = std::fs::metadata(&current).and_then(|m| m.modified()) {
                let f = std::fs::File::options()
                    .write(true)
                    .open(&staged)
                    .map_err(io("open", &staged))?;
                f.set_modified(t).map_err(io("set the time of", &staged))?;
            }
        }
        // Files in the staging folder that were not put (nvcc's scratch) are not output.
        for rel in files_under(&self.dir)? {
            if !self.files.contains(&rel) {
                let p = self.dir.join(&rel);
                std::fs::remove_file(&p).map_err(io("remove", &p))?;
            }
        }
        c.removed = old.difference(&self.files).count();
        if c.written == 0 && c.removed == 0 {
            return Ok(c); // drop removes the staging folder
        }
        if old.is_empty() && !self.out.exists() {
            if let Some(parent) = self.out.parent().filter(|p| !p.as_os_str().is_empty()) {
                std::fs::create_dir_all(parent).map_err(io("create", parent))?;
            }
            std::fs::rename(&self.dir, &self.out).map_err(io("move into place", &self.out))?;
            return Ok(c);
        }
        let backup = sibling(&self.out, "old")?;
        let _ = std::fs::remove_dir_all(&backup);
        std::fs::rename(&self.out, &backup).map_err(io("move aside", &self.out))?;
        if let Err(e) = std::fs::rename(&self.dir, &self.out) {
            let _ = std::fs::rename(&backup, &self.out);
            return Err(io("move into place", &self.out)(e));
        }
        let _ = std::fs::remove_dir_all(&backup);
        Ok(c)
    }
}

impl Drop for OutputStaging {
    fn drop(&mut self) {
        // After a successful swap the folder is gone and this does nothing.
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn stage(out: &Path, files: &[(&str, &str)]) -> Committed {
        let mut s = OutputStaging::new(out).unwrap();
        for (rel, text) in files {
            s.put(Path::new(rel), text.as_bytes()).unwrap();
        }
        s.commit().unwrap()
    }

    fn leftovers(dir: &Path) -> Vec<String> {
        std::fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .filter(|n| n.starts_with('.'))
            .collect()
    }

    #[test]
    fn staging_swaps_in_complete_outputs_and_keeps_unchanged_times() {
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("out");
        let c = stage(&out, &[("rust/a.rs", "a"), ("cubins/x.cubin", "x")]);
        assert_eq!((c.written, c.unchanged, c.removed), (2, 0, 0));
        let t_a = std::fs::metadata(out.join("rust/a.rs"))
            .unwrap()
            .modified()
            .unwrap();
        let t_dir = std::fs::metadata(&out).unwrap().modified().unwrap();
        std::thread::sleep(std::time::Duration::from_millis(20));

        // Nothing differs: the output folder is not touched.
        let c = stage(&out, &[("rust/a.rs", "a"), ("cubins/x.cubin", "x")]);
        assert_eq!((c.written, c.unchanged, c.removed), (0, 2, 0));
        assert_eq!(std::fs::metadata(&out).unwrap().modified().unwrap(), t_dir);

        // One change and one tier gone: swapped, the unchanged file keeps its time.
        let c = stage(&out, &[("rust/a.rs", "a"), ("cubins/y.cubin", "y")]);
        assert_eq!((c.written, c.unchanged, c.removed), (1, 1, 1));
        assert!(!out.join("cubins/x.cubin").exists());
        assert_eq!(std::fs::read(out.join("cubins/y.cubin")).unwrap(), b"y");
        let t_a2 = std::fs::metadata(out.join("rust/a.rs"))
            .unwrap()
            .modified()
            .unwrap();
        assert_eq!(t_a, t_a2);
        assert!(
            leftovers(dir.path()).is_empty(),
            "{:?}",
            leftovers(dir.path())
        );
    }

    #[test]
    fn a_dropped_staging_leaves_the_output_alone() {
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("out");
        stage(&out, &[("rust/a.rs", "a")]);
        let mut s = OutputStaging::new(&out).unwrap();
        s.put(Path::new("rust/a.rs"), b"changed").unwrap();
        drop(s);
        assert_eq!(std::fs::read(out.join("rust/a.rs")).unwrap(), b"a");
        assert!(leftovers(dir.path()).is_empty());
    }

    #[test]
    fn leftovers_of_dead_runs_are_removed() {
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("out");
        // No process has pid u32::MAX - 1 (Linux caps pids far lower).
        let dead = dir.path().join(format!(".out.staging-{}", u32::MAX - 1));
        std::fs::create_dir_all(dead.join("cuda")).unwrap();
        stage(&out, &[("rust/a.rs", "a")]);
        if Path::new("/proc/self").exists() {
            assert!(
                leftovers(dir.path()).is_empty(),
                "{:?}",
                leftovers(dir.path())
            );
        }
    }

    #[test]
    fn a_folder_that_is_not_an_output_is_never_replaced() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("Cargo.toml"), "x").unwrap();
        let e = OutputStaging::new(dir.path()).unwrap_err().to_string();
        assert!(
            e.contains("is not a gemm-aot output folder (it holds Cargo.toml"),
            "{e}"
        );
    }
}
