//! What the spec tests validate against: the repository's kernel templates (their kind
//! manifests) plus two test-only kinds, `fma_pair_gemm` (fma_gemm's manifest under another
//! name, implementing contract `fma-pair` instead) and `mma_other_gemm` (mma_gemm's,
//! implementing `tc-other`), their headers never compiled, so two families of one policy can
//! have two contracts; and the shipped hardware table.

#![allow(dead_code)]

use gemm_spec::{Defaults, KindLibrary, SpecErrors, SpecSource, Validated};
use std::path::{Path, PathBuf};

pub fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// Every file of `kernels-templates/`, (relative path, text).
pub fn template_files() -> Vec<(String, String)> {
    let dir = root().join("kernels-templates");
    let mut out = Vec::new();
    let mut stack = vec![dir.clone()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap().flatten() {
            let p = e.path();
            if p.is_dir() {
                stack.push(p);
            } else if p
                .extension()
                .is_some_and(|x| x == "toml" || x == "cuh" || x == "h")
            {
                let rel = p
                    .strip_prefix(&dir)
                    .unwrap()
                    .components()
                    .map(|c| c.as_os_str().to_string_lossy().into_owned())
                    .collect::<Vec<_>>()
                    .join("/");
                out.push((rel, std::fs::read_to_string(&p).unwrap()));
            }
        }
    }
    out.sort();
    out
}

/// The test-only kind: fma_gemm's manifest implementing `fma-pair`.
pub fn pair_manifest() -> String {
    let fma = std::fs::read_to_string(root().join("kernels-templates/fma/fma_gemm.toml")).unwrap();
    fma.replace("template = \"fma_gemm\"", "template = \"fma_pair_gemm\"")
        .replace("{ name = \"fma-k256\",", "{ name = \"fma-pair\",")
}

/// The second test-only kind: mma_gemm's manifest implementing `tc-other` (bf16 and f16).
pub fn other_manifest() -> String {
    let mma = std::fs::read_to_string(root().join("kernels-templates/mma/mma_gemm.toml")).unwrap();
    let start = mma.find("contracts = [").unwrap();
    let end = start + mma[start..].find("]\n").unwrap() + 2;
    let mma = format!(
        "{}contracts = [{{ name = \"tc-other\", inputs = [\"bf16\", \"f16\"] }}]\n{}",
        &mma[..start],
        &mma[end..]
    );
    mma.replace("template = \"mma_gemm\"", "template = \"mma_other_gemm\"")
}

/// The kinds with `extra` files added (manifests and headers, relative paths).
pub fn kinds_with(extra: &[(&str, &str)]) -> KindLibrary {
    let mut files = template_files();
    let pair = pair_manifest();
    files.push(("test/fma_pair_gemm.toml".into(), pair));
    files.push((
        "test/fma_pair_gemm.cuh".into(),
        "// never compiled\n".into(),
    ));
    files.push(("test/mma_other_gemm.toml".into(), other_manifest()));
    files.push((
        "test/mma_other_gemm.cuh".into(),
        "// never compiled\n".into(),
    ));
    for (p, t) in extra {
        files.push((p.to_string(), t.to_string()));
    }
    KindLibrary::from_files(files.iter().map(|(p, t)| (p.as_str(), t.as_str())))
        .unwrap_or_else(|e| panic!("{e}"))
}

pub fn kinds() -> KindLibrary {
    kinds_with(&[])
}

/// The shipped hardware table, as the generator supplies it to a folder without one.
pub fn defaults() -> Defaults {
    Defaults {
        hardware: vec![SpecSource {
            file: "hardware.toml".into(),
            text: std::fs::read_to_string(root().join("specs/hardware.toml")).unwrap(),
        }],
        definitions: Vec::new(),
    }
}

/// Validates spec files against the test kinds and the shipped hardware table.
pub fn load_sources(sources: &[SpecSource]) -> Result<Validated, SpecErrors> {
    gemm_spec::load_sources(sources, &kinds(), &defaults())
}

/// Every spec file of the shipped folder, `edit` applied to the one named `file`.
pub fn shipped_with(file: &str, edit: impl Fn(&str) -> String) -> Vec<SpecSource> {
    let dir = root().join("specs");
    let mut out = Vec::new();
    for e in std::fs::read_dir(&dir).unwrap().flatten() {
        let name = e.file_name().to_string_lossy().into_owned();
        if !name.ends_with(".toml") {
            continue;
        }
        let text = std::fs::read_to_string(e.path()).unwrap();
        let text = if name == file { edit(&text) } else { text };
        out.push(SpecSource { file: name, text });
    }
    out
}

/// The validation errors of the shipped specs when the first tile of `family` in sm90a.toml
/// gets `line` in place of its line starting `key = ` (or appended, when it has none).
pub fn errors_with_sm90a_tile_line(family: &str, key: &str, line: &str) -> Vec<String> {
    let sources = shipped_with("sm90a.toml", |text| {
        let start = text
            .find(&format!("[[tile]]\nfamily = \"{family}\""))
            .unwrap_or_else(|| panic!("sm90a.toml has a {family} tile"));
        let end = start + text[start..].find("\n\n").unwrap();
        let tile = &text[start..end];
        let edited = match tile.lines().find(|l| l.starts_with(&format!("{key} = "))) {
            Some(old) => tile.replacen(old, line, 1),
            None => format!("{tile}\n{line}"),
        };
        format!("{}{edited}{}", &text[..start], &text[end..])
    });
    match load_sources(&sources) {
        Ok(_) => panic!("the {family} tile with `{line}` validated"),
        Err(e) => e.0.iter().map(|e| e.to_string()).collect(),
    }
}

/// The validation errors of the shipped specs with `family` added to the family list of tier
/// file `file` (a tier the family's instruction or kind does not allow).
pub fn errors_with_family_on(file: &str, family: &str) -> Vec<String> {
    let sources = shipped_with(file, |text| {
        let at = text
            .find("families = [")
            .unwrap_or_else(|| panic!("{file} lists its families"));
        let mut out = text.to_string();
        out.insert_str(at + "families = [".len(), &format!("\"{family}\", "));
        out
    });
    match load_sources(&sources) {
        Ok(_) => panic!("{file} validated with {family}"),
        Err(e) => e.0.iter().map(|e| e.to_string()).collect(),
    }
}

/// Validates a spec folder against the test kinds and the shipped hardware table.
pub fn load_dir(dir: &Path) -> Result<Validated, SpecErrors> {
    gemm_spec::load_dir(dir, &kinds(), &defaults())
}

/// What a tile's kind derives for it on `tier` at op nn and `dtype`.
pub fn derived(
    v: &Validated,
    tier: &str,
    family: &str,
    tile: &str,
    dtype: gemm_spec::DtypeTriple,
) -> gemm_spec::kinds::Derived {
    let t = v.specs.tier(tier).unwrap();
    let tile = t.tile(family, tile).unwrap();
    v.specs
        .derive(t, tile, gemm_spec::Op::Nn, dtype)
        .unwrap()
        .unwrap_or_else(|e| panic!("{e}"))
}

/// Validates a shared definitions file (as `families.toml`) and one tier file (`tier_file`,
/// `tier`); the errors as their messages.
pub fn load_pair(shared: &str, tier_file: &str, tier: &str) -> Result<Validated, Vec<String>> {
    load_sources(&[
        SpecSource {
            file: "families.toml".into(),
            text: shared.into(),
        },
        SpecSource {
            file: tier_file.into(),
            text: tier.into(),
        },
    ])
    .map_err(|e| e.0.iter().map(|e| e.to_string()).collect())
}

/// `"<manifest>:<line>"` of the `[[...]]` block of a shipped kind manifest that holds the line
/// `key` (e.g. `rule = "k == 64"`), as validation errors cite it. Expected messages take the
/// line from the manifest rather than a number that goes stale when the manifest is edited.
pub fn block_at(manifest: &str, key: &str) -> String {
    let text = std::fs::read_to_string(root().join("kernels-templates").join(manifest))
        .unwrap_or_else(|e| panic!("{manifest}: {e}"));
    let lines: Vec<&str> = text.lines().collect();
    let hits: Vec<usize> = (0..lines.len())
        .filter(|&i| lines[i].trim() == key)
        .collect();
    let [hit] = hits[..] else {
        panic!("{manifest} has {} lines `{key}`, not one", hits.len());
    };
    let header = (0..=hit)
        .rev()
        .find(|&i| lines[i].starts_with("[["))
        .unwrap_or_else(|| panic!("{manifest}: `{key}` is in no [[...]] block"));
    format!("{manifest}:{}", header + 1)
}

/// `name (header), ...` of every GEMM template (`conversion`: every conversion template) the
/// spec tests know: each manifest of `kernels-templates/` of that role, with the two test-only
/// kinds among the GEMM templates, sorted by name, as validation errors list them. Read from the
/// files, so adding a kind changes no expected message.
pub fn template_listing(conversion: bool) -> String {
    let mut names: Vec<(String, String)> = template_files()
        .into_iter()
        .filter(|(path, _)| path.ends_with(".toml"))
        .filter(|(_, text)| text.contains("role = \"conversion\"") == conversion)
        .map(|(path, _)| {
            let header = path.replace(".toml", ".cuh");
            let name = header.rsplit('/').next().unwrap().replace(".cuh", "");
            (name, header)
        })
        .collect();
    if !conversion {
        for test_kind in ["fma_pair_gemm", "mma_other_gemm"] {
            names.push((test_kind.into(), format!("test/{test_kind}.cuh")));
        }
    }
    names.sort();
    names
        .iter()
        .map(|(name, header)| format!("{name} ({header})"))
        .collect::<Vec<_>>()
        .join(", ")
}
