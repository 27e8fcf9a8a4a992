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

/// The cubins `gemm-aot build` wrote for `tier` under `out`: every
/// `cubins/<tier>/*.cubin` (one per compile unit) in name order.
pub fn tier_cubins(out: &Path, tier: &str) -> std::io::Result<Vec<(PathBuf, Vec<u8>)>> {
    let mut paths: Vec<PathBuf> = std::fs::read_dir(out.join("cubins").join(tier))?
        .map(|e| e.map(|e| e.path()))
        .collect::<Result<_, _>>()?;
    paths.retain(|p| p.extension().is_some_and(|e| e == "cubin"));
    paths.sort();
    paths
        .into_iter()
        .map(|p| std::fs::read(&p).map(|b| (p, b)))
        .collect()
}
