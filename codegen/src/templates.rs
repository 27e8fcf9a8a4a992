//! The CUDA templates of `kernels-templates/`, embedded so the generator (and the runtime's
//! build script through it) works from any folder. Written next to the generated sources.
//! The list is every `.cuh` and `.h` file of the folder (the build script walks it), so a new
//! template header is embedded without an edit here.

include!(concat!(env!("OUT_DIR"), "/templates.rs"));

pub fn has(path: &str) -> bool {
    TEMPLATES.iter().any(|(p, _)| *p == path)
}

/// The text of a template header.
pub fn text(path: &str) -> Option<&'static str> {
    TEMPLATES.iter().find(|(p, _)| *p == path).map(|(_, t)| *t)
}

/// The paths of `#include "..."` lines of a source (system includes `<...>` are left out).
pub fn quoted_includes(text: &str) -> Vec<&str> {
    text.lines()
        .filter_map(|l| l.trim_start().strip_prefix("#include"))
        .filter_map(|rest| {
            let rest = rest.trim();
            let rest = rest.strip_prefix('"')?;
            rest.split_once('"').map(|(p, _)| p)
        })
        .collect()
}

/// Every template header `text` includes, directly or through other headers (resolved under
/// `kernels-templates/`; other names, such as the generated `gemm_abi.h`, are skipped), sorted.
pub fn transitive_includes(text: &str) -> Vec<&'static str> {
    let mut seen: std::collections::BTreeSet<&'static str> = Default::default();
    let mut todo: Vec<String> = quoted_includes(text)
        .into_iter()
        .map(str::to_string)
        .collect();
    while let Some(p) = todo.pop() {
        let Some(&(path, body)) = TEMPLATES.iter().find(|(q, _)| *q == p) else {
            continue;
        };
        if seen.insert(path) {
            todo.extend(quoted_includes(body).into_iter().map(str::to_string));
        }
    }
    seen.into_iter().collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn includes_follow_headers() {
        let inc = transitive_includes("#include \"gemm_abi.h\"\n#include \"fma/fma_gemm.cuh\"\n");
        assert!(inc.contains(&"fma/fma_gemm.cuh"));
        assert!(inc.contains(&"common/element.cuh"));
        assert!(!inc.contains(&"convert/convert_matrix.cuh"));
    }
}
