//! Digests of outputs, so that a run under compute-sanitizer is compared bit for bit with the
//! same cases run plainly: `GEMM_TIMING_DIGESTS=write:FILE` makes the plain run write one line a
//! case (`label<TAB>kernel<TAB>digest`; the tests of one executable add to the same file), and
//! `GEMM_TIMING_DIGESTS=check:FILE` makes a later run compare against it. Both runs must draw the
//! same data: the file records `GEMM_TEST_SEED`, and a run with another seed is refused.

use crate::case::{test_seed, Output};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

/// FNV-1a over the bits: equal outputs, equal digests.
pub fn digest(bits: &[u32]) -> u64 {
    bits.iter()
        .flat_map(|b| b.to_le_bytes())
        .fold(0xcbf2_9ce4_8422_2325u64, |h, b| {
            (h ^ u64::from(b)).wrapping_mul(0x0000_0100_0000_01b3)
        })
}

/// The digest file of this process, if `GEMM_TIMING_DIGESTS` names one.
pub struct Digests {
    path: PathBuf,
    /// Whether this run compares against the file (else it writes it).
    check: bool,
    /// What the file held (when checking).
    recorded: BTreeMap<String, (String, u64)>,
    /// What this process saw, written when it writes the file.
    seen: Mutex<BTreeMap<String, (String, u64)>>,
}

fn header() -> String {
    format!("# seed {}", test_seed())
}

fn parse(path: &Path, text: &str) -> BTreeMap<String, (String, u64)> {
    let mut lines = text.lines();
    assert_eq!(
        lines.next().unwrap_or_default(),
        header(),
        "{}: written under another GEMM_TEST_SEED (or not a digest file); run both with the same seed",
        path.display()
    );
    lines
        .map(|line| {
            let mut f = line.split('\t');
            let (Some(label), Some(kernel), Some(d)) = (f.next(), f.next(), f.next()) else {
                panic!("{}: bad line {line:?}", path.display());
            };
            let d = u64::from_str_radix(d, 16)
                .unwrap_or_else(|_| panic!("{}: bad digest in {line:?}", path.display()));
            (label.to_string(), (kernel.to_string(), d))
        })
        .collect()
}

impl Digests {
    /// From `GEMM_TIMING_DIGESTS` (`write:FILE` or `check:FILE`), or `None`. Panics (a test
    /// failure) on another form, or when checking a file that is missing, was written under
    /// another data seed, or is not a digest file.
    pub fn from_env() -> Option<Digests> {
        let spec = std::env::var("GEMM_TIMING_DIGESTS")
            .ok()
            .filter(|v| !v.is_empty())?;
        Some(Digests::open(&spec))
    }

    /// As [`from_env`](Self::from_env), from the variable's value.
    pub fn open(spec: &str) -> Digests {
        let (check, path) = match spec.split_once(':') {
            Some(("write", p)) => (false, PathBuf::from(p)),
            Some(("check", p)) => (true, PathBuf::from(p)),
            _ => panic!("GEMM_TIMING_DIGESTS={spec}: expected write:FILE or check:FILE"),
        };
        let recorded = if check {
            let text = std::fs::read_to_string(&path).unwrap_or_else(|e| {
                panic!("{}: {e} (write it with a plain run first)", path.display())
            });
            parse(&path, &text)
        } else {
            BTreeMap::new()
        };
        Digests {
            path,
            check,
            recorded,
            seen: Mutex::new(BTreeMap::new()),
        }
    }

    /// Whether this run compares rather than writes.
    pub fn comparing(&self) -> bool {
        self.check
    }

    /// Records `out` under `label`; when comparing, the plain run's digest and kernel must be
    /// the same. Returns the failure as a message.
    pub fn note(&self, label: &str, out: &Output) -> Result<(), String> {
        let d = digest(&out.bits);
        self.seen
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .insert(label.to_string(), (out.kernel.to_string(), d));
        if !self.check {
            return Ok(());
        }
        match self.recorded.get(label) {
            None => Err(format!(
                "{label}: not in the plain run's digests ({})",
                self.path.display()
            )),
            Some((kernel, want)) if kernel != out.kernel || *want != d => Err(format!(
                "{label}: {} gave digest {d:016x}, the plain run's {kernel} gave {want:016x}",
                out.kernel
            )),
            Some(_) => Ok(()),
        }
    }

    /// Writes what this run saw, keeping what another test of the same run (same seed) wrote
    /// before; a comparing run leaves the file alone.
    pub fn finish(&self) {
        if self.check {
            return;
        }
        let mut all = match std::fs::read_to_string(&self.path) {
            Ok(old) if old.lines().next() == Some(header().as_str()) => parse(&self.path, &old),
            _ => BTreeMap::new(),
        };
        all.extend(
            self.seen
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .iter()
                .map(|(k, v)| (k.clone(), v.clone())),
        );
        let mut text = header() + "\n";
        for (label, (kernel, d)) in &all {
            text += &format!("{label}\t{kernel}\t{d:016x}\n");
        }
        std::fs::write(&self.path, text).unwrap_or_else(|e| panic!("{}: {e}", self.path.display()));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn out(kernel: &'static str, bits: Vec<u32>) -> Output {
        Output {
            launch: None,
            kernel,
            bits,
        }
    }

    #[test]
    fn a_checking_run_finds_what_differs_from_the_writing_run() {
        let dir = std::env::temp_dir().join(format!("gemm-digests-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let file = dir.join("digests.txt");
        let _ = std::fs::remove_file(&file);
        let spec = |mode: &str| format!("{mode}:{}", file.display());
        // Two tests of one executable write into one file.
        let w1 = Digests::open(&spec("write"));
        w1.note("a", &out("k1", vec![1, 2, 3])).unwrap();
        w1.finish();
        let w2 = Digests::open(&spec("write"));
        w2.note("b", &out("k2", vec![4])).unwrap();
        w2.finish();
        let c = Digests::open(&spec("check"));
        assert!(c.comparing());
        c.note("a", &out("k1", vec![1, 2, 3])).unwrap();
        c.note("b", &out("k2", vec![4])).unwrap();
        let e = c.note("a", &out("k1", vec![1, 2, 4])).unwrap_err();
        assert!(e.contains("gave digest"), "{e}");
        assert!(
            c.note("a", &out("other", vec![1, 2, 3])).is_err(),
            "another kernel"
        );
        assert!(c
            .note("c", &out("k1", vec![]))
            .unwrap_err()
            .contains("not in"));
        c.finish();
        assert_eq!(
            std::fs::read_to_string(&file).unwrap().lines().count(),
            3,
            "a check writes nothing"
        );
        assert_ne!(digest(&[1, 2, 3]), digest(&[3, 2, 1]));
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    #[should_panic(expected = "expected write:FILE or check:FILE")]
    fn a_spec_without_its_mode_is_refused() {
        Digests::open("digests.txt");
    }
}
