//! Helpers shared by the cross-crate tests. Paths are relative to this crate's folder, where
//! cargo runs its tests.

use gemm_codegen::catalog::KernelCatalog;
use gemm_codegen::pipeline::{generate, template_files, validate_and_catalog, Generated};
use gemm_codegen::{Instrumentation, Provenance, Templates};
use std::path::{Path, PathBuf};

/// The one golden-file check of the tests: `actual` must equal the file at `expected`. With
/// `GEMM_AOT_BLESS=1` the file is written instead (after an intended change; review the diff),
/// so CI, which never sets it, only checks.
pub fn ensure_file_contents(expected: &Path, actual: &str) {
    if std::env::var_os("GEMM_AOT_BLESS").is_some_and(|v| !v.is_empty() && v != "0") {
        std::fs::create_dir_all(expected.parent().unwrap_or(Path::new("."))).unwrap();
        if std::fs::read_to_string(expected).ok().as_deref() != Some(actual) {
            std::fs::write(expected, actual).unwrap();
            eprintln!("blessed {}", expected.display());
        }
        return;
    }
    let want = std::fs::read_to_string(expected).unwrap_or_else(|e| {
        panic!(
            "{}: {e} (run the test with GEMM_AOT_BLESS=1 to create it)",
            expected.display()
        )
    });
    assert!(
        want == actual,
        "{} differs from the generated output; run the test with GEMM_AOT_BLESS=1 and review the diff.\n--- generated ---\n{actual}",
        expected.display()
    );
}

/// The catalog of a spec folder against the generator's own templates, and its warnings.
pub fn catalog(specs: &Path) -> (KernelCatalog, Vec<String>) {
    catalog_tiers(specs, &[])
}

/// [`catalog`] of only these tiers.
pub fn catalog_tiers(specs: &Path, tiers: &[&str]) -> (KernelCatalog, Vec<String>) {
    let templates = template_files(&Templates::Shipped).unwrap_or_else(|e| panic!("{e}"));
    let tiers: Vec<String> = tiers.iter().map(|t| t.to_string()).collect();
    let (c, w) =
        validate_and_catalog(specs, &tiers, &templates, false).unwrap_or_else(|e| panic!("{e}"));
    (c, w.iter().map(|w| w.to_string()).collect())
}

/// Everything generated for `catalog` (the generator's own templates, no instrumentation).
pub fn generated(catalog: &KernelCatalog) -> Generated {
    let templates = template_files(&Templates::Shipped).unwrap_or_else(|e| panic!("{e}"));
    generate(
        catalog,
        &templates,
        &Provenance::new("fixture test"),
        Instrumentation::NONE,
    )
}

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

/// A spec folder validated as a build would (the generator's own templates, the shipped
/// hardware table when the folder has none).
pub fn load(specs: &Path) -> Result<gemm_spec::Validated, gemm_spec::SpecErrors> {
    let templates = template_files(&Templates::Shipped).unwrap_or_else(|e| panic!("{e}"));
    gemm_spec::load_dir(
        specs,
        templates.kinds(),
        &gemm_codegen::shipped_specs::defaults(false),
    )
}

/// Writes a host-emulation driver's source `text` into `dir` (beside the generated `gemm_abi.h`
/// of `catalog`) and compiles it with the host C++ compiler (`CXX`, else `c++`) against
/// `host/cuda_host_shim.h`, `templates` and CUDA's headers from the toolchain the build uses
/// (bootstrapped if need be); returns the executable, or panics with the compiler's output.
pub fn build_host_driver(
    catalog: &KernelCatalog,
    text: &str,
    templates: &Path,
    dir: &Path,
) -> PathBuf {
    use gemm_codegen::compile::{cache::cache_root, toolchain};
    let tc = toolchain::find_or_bootstrap(&cache_root(), &|m| eprintln!("{m}"))
        .unwrap_or_else(|e| panic!("{e}"));
    let cuda_include = tc
        .nvcc
        .parent()
        .and_then(Path::parent)
        .unwrap()
        .join("include");
    let abi = generated(catalog)
        .files
        .into_iter()
        .find(|(p, _)| p.ends_with("gemm_abi.h"))
        .map(|(_, text)| text)
        .expect("the generator writes gemm_abi.h");
    std::fs::write(dir.join("gemm_abi.h"), abi).unwrap();
    let src = dir.join("driver.cpp");
    std::fs::write(&src, text).unwrap();
    let exe = dir.join("driver");
    let cxx = std::env::var("CXX").unwrap_or_else(|_| "c++".into());
    let out = std::process::Command::new(&cxx)
        .args(["-std=c++17", "-O1", "-Wno-attributes"])
        .arg("-I")
        .arg(Path::new("host").canonicalize().unwrap())
        .arg("-I")
        .arg(dir)
        .arg("-I")
        .arg(templates)
        .arg("-I")
        .arg(&cuda_include)
        .arg(&src)
        .arg("-o")
        .arg(&exe)
        .output()
        .unwrap_or_else(|e| panic!("{cxx}: {e} (set CXX to a C++17 compiler)"));
    assert!(
        out.status.success(),
        "{cxx} failed on the host driver:\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    exe
}

/// A copy in `dir/templates` of kernels-templates' folders `dirs`, with the one occurrence of
/// `from` in `file` (relative to it) replaced by `to`: a mutated template for a host check that
/// must then fail. Panics when `from` does not occur exactly once (the template changed).
pub fn mutated_templates(
    dir: &Path,
    dirs: &[&str],
    file: &str,
    (from, to): (&str, &str),
) -> PathBuf {
    let templates = dir.join("templates");
    for d in dirs {
        std::fs::create_dir_all(templates.join(d)).unwrap();
        for e in std::fs::read_dir(Path::new("../kernels-templates").join(d)).unwrap() {
            let p = e.unwrap().path();
            std::fs::copy(&p, templates.join(d).join(p.file_name().unwrap())).unwrap();
        }
    }
    let path = templates.join(file);
    let text = std::fs::read_to_string(&path).unwrap();
    assert_eq!(
        text.matches(from).count(),
        1,
        "{file} changed: update the mutation {from:?}"
    );
    std::fs::write(&path, text.replace(from, to)).unwrap();
    templates
}

/// Runs `name`'s jobs (`input`, the driver's job file) through a host-emulation driver built by
/// [`build_host_driver`] in `dir`, and returns what it wrote, or the driver's error.
pub fn run_host_driver(
    driver: &Path,
    name: &str,
    input: &[u8],
    dir: &Path,
) -> Result<Vec<u8>, String> {
    let jobs_file = dir.join(format!("{name}.jobs"));
    let out_file = dir.join(format!("{name}.out"));
    std::fs::write(&jobs_file, input).unwrap();
    let run = std::process::Command::new(driver)
        .arg(name)
        .arg(&jobs_file)
        .arg(&out_file)
        .output()
        .unwrap();
    if !run.status.success() {
        return Err(format!(
            "{name}: the driver failed: {}",
            String::from_utf8_lossy(&run.stderr)
        ));
    }
    Ok(std::fs::read(&out_file).unwrap())
}
