//! Embeds every header and kind manifest of `kernels-templates/` (`.cuh`, `.h` and `.toml`,
//! recursively) into the generator, so a new template needs no edit here: writes
//! `templates.rs` into OUT_DIR with one `include_str!` a file, sorted by path.

use std::path::{Path, PathBuf};

fn walk(root: &Path, dir: &Path, out: &mut Vec<String>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        if path.is_dir() {
            walk(root, &path, out);
        } else if path
            .extension()
            .is_some_and(|e| e == "cuh" || e == "h" || e == "toml")
        {
            if let Ok(rel) = path.strip_prefix(root) {
                let parts: Vec<String> = rel
                    .components()
                    .map(|c| c.as_os_str().to_string_lossy().into_owned())
                    .collect();
                out.push(parts.join("/"));
            }
        }
    }
}

fn main() {
    let manifest = PathBuf::from(std::env::var_os("CARGO_MANIFEST_DIR").unwrap_or_default());
    let root = manifest.join("..").join("kernels-templates");
    println!("cargo:rerun-if-changed={}", root.display());
    let mut files = Vec::new();
    walk(&root, &root, &mut files);
    files.sort();
    let mut text = format!(
        "/// (path under `kernels-templates/`, text) of every template header and manifest, sorted by path.\npub const TEMPLATES: [(&str, &str); {}] = [\n",
        files.len()
    );
    for f in &files {
        text.push_str(&format!(
            "    ({f:?}, include_str!(concat!(env!(\"CARGO_MANIFEST_DIR\"), \"/../kernels-templates/\", {f:?}))),\n"
        ));
    }
    text.push_str("];\n");
    write_if_changed("templates.rs", &text);

    // The shipped specs' hardware table and shared definitions: what a spec folder without
    // its own `[[hardware]]` validates against, and what `Builder::shipped_definitions` adds.
    let specs = manifest.join("..").join("specs");
    for f in ["hardware.toml", "families.toml"] {
        println!("cargo:rerun-if-changed={}", specs.join(f).display());
    }
    write_if_changed(
        "shipped_specs.rs",
        "/// The shipped `specs/hardware.toml`.\npub const HARDWARE: &str = include_str!(concat!(env!(\"CARGO_MANIFEST_DIR\"), \"/../specs/hardware.toml\"));\n/// The shipped `specs/families.toml`: instructions, contracts, ABIs, conversions, families.\npub const DEFINITIONS: &str = include_str!(concat!(env!(\"CARGO_MANIFEST_DIR\"), \"/../specs/families.toml\"));\n",
    );
}

/// Writes `name` into OUT_DIR unless it already holds `text`.
fn write_if_changed(name: &str, text: &str) {
    let out = PathBuf::from(std::env::var_os("OUT_DIR").unwrap_or_default()).join(name);
    if std::fs::read_to_string(&out).ok().as_deref() != Some(text) {
        if let Err(e) = std::fs::write(&out, text) {
            panic!("cannot write {}: {e}", out.display());
        }
    }
}
