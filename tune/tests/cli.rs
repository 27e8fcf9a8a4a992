//! The binary's errors before (and without) a GPU: each names what to fix, none panics.

use std::path::Path;
use std::process::Command;

fn tune(args: &[&str]) -> (bool, String) {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let out = Command::new(env!("CARGO_BIN_EXE_gemm-aot-tune"))
        .current_dir(&root)
        .args(args)
        .output()
        .unwrap();
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn errors_name_what_to_fix() {
    let dir = tempfile::tempdir().unwrap();
    let shapes = dir.path().join("shapes.toml");
    std::fs::write(
        &shapes,
        "m = [1, 64]\n[[model]]\nname = \"T\"\nlayers = [{ layer = \"o\", n = 4096, k = 4096 }]\n",
    )
    .unwrap();
    let shapes = shapes.to_str().unwrap();
    let (ok, err) = tune(&["--tier", "sm99", "--shapes", shapes]);
    assert!(!ok);
    // The tiers listed are whatever specs/ holds (an added tier keeps this green).
    assert!(
        err.contains("no tier named sm99 in specs; it defines ") && err.contains("sm90a"),
        "{err}"
    );
    let (ok, err) = tune(&["--tier", "sm90a", "--shapes", "missing.toml"]);
    assert!(!ok);
    assert!(
        err.contains("cannot read the shape list missing.toml"),
        "{err}"
    );
    let (ok, err) = tune(&["--tier", "sm90a", "--shapes", shapes, "--buckets", "64,16"]);
    assert!(!ok);
    assert!(
        err.contains("m bucket edges [64, 16]: edges must rise"),
        "{err}"
    );
    let (ok, err) = tune(&["--tier", "sm90a", "--shapes", shapes, "--time-limit=-5"]);
    assert!(!ok);
    assert!(
        err.contains("--time-limit -5: give a number of seconds, 0 or more"),
        "{err}"
    );
    // --from-m keeps the routes below it from the file being rewritten: one the tier does
    // not include would lose them (refused before any device is opened).
    let other = dir.path().join("other.tuned.toml");
    let (ok, err) = tune(&[
        "--tier",
        "sm90a",
        "--shapes",
        shapes,
        "--from-m",
        "2049",
        "--out",
        other.to_str().unwrap(),
    ]);
    assert!(!ok);
    assert!(
        err.contains("--from-m keeps the routes below it") && err.contains("does not include"),
        "{err}"
    );
    // A tile --only names must exist (refused before any device is opened).
    let (ok, err) = tune(&[
        "--tier",
        "sm90a",
        "--shapes",
        shapes,
        "--only",
        "mid2,mid2xb9",
    ]);
    assert!(!ok);
    assert!(
        err.contains("--only mid2xb9: tier sm90a has no tile of that name"),
        "{err}"
    );
    let (ok, err) = tune(&["--tier", "sm90a", "--shapes", shapes, "--op", "xx"]);
    assert!(!ok);
    assert!(err.starts_with("gemm-aot tune: error: "), "{err}");
    assert!(!err.contains("panicked"), "{err}");
}
