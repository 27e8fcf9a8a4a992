//! Writing generated files only when their content changed, so an unchanged rebuild touches
//! nothing (and cargo's and editors' change tracking stays quiet).

use std::path::Path;

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
