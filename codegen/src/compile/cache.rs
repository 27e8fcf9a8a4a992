//! Content-addressed cubin cache: the key hashes the source, every header it can include, the
//! flags and the compiler's version, so an unchanged rebuild compiles nothing.

use sha2::{Digest, Sha256};
use std::path::{Path, PathBuf};

/// Where gemm-aot keeps its toolchain and cubins: `GEMM_AOT_CACHE`, else
/// `$XDG_CACHE_HOME/gemm-aot`, else `$HOME/.cache/gemm-aot`, else a folder in the temp dir.
pub fn cache_root() -> PathBuf {
    if let Some(p) = std::env::var_os("GEMM_AOT_CACHE").filter(|p| !p.is_empty()) {
        return PathBuf::from(p);
    }
    if let Some(p) = std::env::var_os("XDG_CACHE_HOME").filter(|p| !p.is_empty()) {
        return PathBuf::from(p).join("gemm-aot");
    }
    if let Some(p) = std::env::var_os("HOME").filter(|p| !p.is_empty()) {
        return PathBuf::from(p).join(".cache").join("gemm-aot");
    }
    std::env::temp_dir().join("gemm-aot-cache")
}

/// Hex SHA-256 of the parts, each length-prefixed so boundaries count.
pub fn content_key(parts: &[&[u8]]) -> String {
    let mut h = Sha256::new();
    for p in parts {
        h.update((p.len() as u64).to_le_bytes());
        h.update(p);
    }
    hex(&h.finalize())
}

pub fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

pub struct CubinCache {
    dir: PathBuf,
}

impl CubinCache {
    pub fn new(root: &Path) -> Self {
        CubinCache {
            dir: root.join("cubins"),
        }
    }

    /// The cubin, PTX (when `with_ptx`) and ptxas log stored under `key`, if all are there.
    #[allow(clippy::type_complexity)]
    pub fn get(&self, key: &str, with_ptx: bool) -> Option<(Vec<u8>, Option<Vec<u8>>, String)> {
        let cubin = std::fs::read(self.dir.join(format!("{key}.cubin"))).ok()?;
        let log = std::fs::read_to_string(self.dir.join(format!("{key}.ptxas.txt"))).ok()?;
        let ptx = if with_ptx {
            Some(std::fs::read(self.dir.join(format!("{key}.ptx"))).ok()?)
        } else {
            None
        };
        Some((cubin, ptx, log))
    }

    /// Stores atomically (write then rename), so a concurrent reader never sees half a file.
    /// A cache that cannot be written only costs a recompile next time. The cubin goes last:
    /// `get` finds nothing until every file of the entry is there.
    pub fn put(&self, key: &str, cubin: &[u8], ptx: Option<&[u8]>, log: &str) {
        let _ = std::fs::create_dir_all(&self.dir);
        let tag = std::process::id();
        let ptx = ptx.map(|p| ("ptx", p));
        let files = [("ptxas.txt", log.as_bytes())]
            .into_iter()
            .chain(ptx)
            .chain([("cubin", cubin)]);
        for (ext, data) in files {
            let tmp = self.dir.join(format!("{key}.{ext}.{tag}.tmp"));
            if std::fs::write(&tmp, data).is_ok() {
                let _ = std::fs::rename(&tmp, self.dir.join(format!("{key}.{ext}")));
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_entry_asked_for_with_ptx_needs_its_ptx() {
        let dir = tempfile::tempdir().unwrap();
        let cache = CubinCache::new(dir.path());
        cache.put("plain", b"elf", None, "log");
        assert_eq!(
            cache.get("plain", false),
            Some((b"elf".to_vec(), None, "log".to_string()))
        );
        // Cached before the tier embedded PTX: a miss, so the unit compiles again.
        assert_eq!(cache.get("plain", true), None);
        cache.put("both", b"elf", Some(b".target sm_80"), "log");
        assert_eq!(
            cache.get("both", true),
            Some((
                b"elf".to_vec(),
                Some(b".target sm_80".to_vec()),
                "log".to_string()
            ))
        );
        assert_eq!(cache.get("missing", false), None);
    }
}
