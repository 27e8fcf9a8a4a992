//! Helpers shared by the cross-crate tests. Paths are relative to this crate's folder, where
//! cargo runs its tests.

use std::path::{Path, PathBuf};

/// The shipped spec folder.
pub fn shipped_specs() -> PathBuf {
    PathBuf::from("../specs")
}

/// Copies every `.toml` file of `from` into `to`.
pub fn copy_specs(from: &Path, to: &Path) -> std::io::Result<()> {
    std::fs::create_dir_all(to)?;
    for entry in std::fs::read_dir(from)? {
        let p = entry?.path();
        if p.extension().is_some_and(|e| e == "toml") {
            std::fs::copy(&p, to.join(p.file_name().unwrap_or_default()))?;
        }
    }
    Ok(())
}
