//! The shape list a model is tuned for, in the format of `bench/shapes/models.toml`: the batch
//! sizes `m = [...]`, and `[[model]]` tables whose `layers` give each linear layer's weight
//! shape `{ layer, n, k }` (a layer `y = x·W` with W stored `[k, n]` is NN at (m, n, k)).
//!
//! Parsed here rather than shared with the bench so that the tuner depends on no GPU crate's
//! internals; the format is small and its rules are checked the same way.

use serde::Deserialize;
use std::collections::BTreeMap;
use std::path::Path;

/// The file as written.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct File {
    m: Vec<u64>,
    model: Vec<Model>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Model {
    name: String,
    /// Where the shapes come from (the model's config); for people only.
    #[allow(dead_code)]
    config: Option<String>,
    layers: Vec<Layer>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Layer {
    layer: String,
    n: u64,
    k: u64,
}

/// Where an (n, k) falls, as the bench's targets put it: `odd` when n or k is no multiple of
/// 8 elements (a leading dimension TMA and cp.async cannot take), `narrow-deep` when
/// n <= 2048 and k >= 4n, `aligned` otherwise. Reported beside each region.
pub fn regime(n: u64, k: u64) -> &'static str {
    if !n.is_multiple_of(8) || !k.is_multiple_of(8) {
        "odd"
    } else if n <= 2048 && k >= 4 * n {
        "narrow-deep"
    } else {
        "aligned"
    }
}

/// One distinct (n, k) of the list, with the layers that have it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NkShape {
    pub n: u64,
    pub k: u64,
    /// "model layer" of every layer with this (n, k), in file order.
    pub layers: Vec<String>,
}

/// A parsed shape list.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ShapeList {
    /// Batch sizes, sorted, each once.
    pub m: Vec<u64>,
    /// Distinct (n, k), sorted.
    pub shapes: Vec<NkShape>,
}

/// Why a shape list cannot be used.
#[derive(Debug, thiserror::Error)]
pub enum ShapesError {
    #[error("cannot read the shape list {path}: {source}")]
    Read {
        path: String,
        source: std::io::Error,
    },
    #[error("shape list {path}: {message}")]
    Parse { path: String, message: String },
    #[error("shape list {path}: {what}")]
    Invalid { path: String, what: String },
}

impl ShapeList {
    /// Reads and parses the shape list at `path`.
    pub fn load(path: &Path) -> Result<ShapeList, ShapesError> {
        let name = path.display().to_string();
        let text = std::fs::read_to_string(path).map_err(|source| ShapesError::Read {
            path: name.clone(),
            source,
        })?;
        Self::parse(&name, &text)
    }

    /// Parses the text of a shape list; `path` names it in errors.
    pub fn parse(path: &str, text: &str) -> Result<ShapeList, ShapesError> {
        let file: File = toml::from_str(text).map_err(|e| {
            let line = e
                .span()
                .map(|s| text[..s.start.min(text.len())].matches('\n').count() + 1);
            ShapesError::Parse {
                path: line.map_or(path.to_string(), |l| format!("{path}:{l}")),
                message: e.message().trim().to_string(),
            }
        })?;
        let invalid = |what: String| ShapesError::Invalid {
            path: path.to_string(),
            what,
        };
        let max = gemm_spec::DIM_MAX;
        if file.m.is_empty() || file.m.iter().any(|&m| m == 0 || m > max) {
            return Err(invalid(format!(
                "`m` must list batch sizes from 1 to {max}"
            )));
        }
        if file.model.is_empty() {
            return Err(invalid("the list has no [[model]]".into()));
        }
        let mut by_nk: BTreeMap<(u64, u64), Vec<String>> = BTreeMap::new();
        for model in &file.model {
            if model.layers.is_empty() {
                return Err(invalid(format!("model {:?} lists no layers", model.name)));
            }
            for l in &model.layers {
                if l.n == 0 || l.k == 0 || l.n > max || l.k > max {
                    return Err(invalid(format!(
                        "{} {}: n and k must be from 1 to {max} (n = {}, k = {})",
                        model.name, l.layer, l.n, l.k
                    )));
                }
                by_nk
                    .entry((l.n, l.k))
                    .or_default()
                    .push(format!("{} {}", model.name, l.layer));
            }
        }
        let mut m = file.m;
        m.sort_unstable();
        m.dedup();
        let shapes = by_nk
            .into_iter()
            .map(|((n, k), layers)| NkShape { n, k, layers })
            .collect();
        Ok(ShapeList { m, shapes })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const LIST: &str = r#"
m = [64, 1, 16, 16]

[[model]]
name = "Tiny"
config = "hidden 4096"
layers = [
  { layer = "o_proj", n = 4096, k = 4096 },
  { layer = "up", n = 14336, k = 4096 },
]

[[model]]
name = "Other"
layers = [{ layer = "o_proj", n = 4096, k = 4096 }]
"#;

    #[test]
    fn parses_distinct_shapes_with_their_layers() {
        let l = ShapeList::parse("list.toml", LIST).unwrap();
        assert_eq!(l.m, [1, 16, 64]);
        assert_eq!(l.shapes.len(), 2);
        assert_eq!(l.shapes[0].n, 4096);
        assert_eq!(l.shapes[0].layers, ["Tiny o_proj", "Other o_proj"]);
        assert_eq!(regime(50257, 768), "odd");
        assert_eq!(regime(1024, 8192), "narrow-deep");
        assert_eq!(regime(4096, 4096), "aligned");
    }

    #[test]
    fn refuses_bad_lists_with_the_reason() {
        let e = ShapeList::parse("list.toml", &LIST.replace("n = 14336", "n = 0")).unwrap_err();
        assert_eq!(
            e.to_string(),
            "shape list list.toml: Tiny up: n and k must be from 1 to 2147483647 (n = 0, k = 4096)"
        );
        let e = ShapeList::parse("list.toml", &LIST.replace("m = [64, 1, 16, 16]", "m = []"))
            .unwrap_err();
        assert!(e.to_string().contains("`m` must list batch sizes"), "{e}");
        let e = ShapeList::parse("list.toml", &LIST.replace("config =", "confg =")).unwrap_err();
        assert!(
            e.to_string()
                .starts_with("shape list list.toml:6: unknown field `confg`"),
            "{e}"
        );
    }
}
