//! `--shapes FILE`: a list of real models' layer shapes (`bench/shapes/models.toml`), their
//! regimes and the speed targets of each regime.
//!
//! A regime follows from (n, k) alone, as routes and contracts do: `odd` when n or k is no
//! multiple of 8 elements (a leading dimension TMA and cp.async cannot take), `narrow-deep`
//! when n <= 2048 and k >= 4n (too few output tiles for the SMs without splitting K), and
//! `aligned` otherwise. The file is parsed by the tuner's parser (`gemm_aot_tune::ShapeList`).

use std::path::Path;

/// Where a shape falls, for its targets.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Regime {
    Aligned,
    NarrowDeep,
    Odd,
}

impl Regime {
    /// The regime rule of the shape list, written once in `gemm_aot_tune::shapes::regime`.
    pub fn of(n: usize, k: usize) -> Regime {
        match gemm_aot_tune::shapes::regime(n as u64, k as u64) {
            "odd" => Regime::Odd,
            "narrow-deep" => Regime::NarrowDeep,
            _ => Regime::Aligned,
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Regime::Aligned => "aligned",
            Regime::NarrowDeep => "narrow-deep",
            Regime::Odd => "odd",
        }
    }

    /// The target for cuBLAS time / ours, bf16 and f16 NN, at batch m: aligned >= 0.97 at
    /// m >= 1024, 0.90 at 32-512, 1.0 at m <= 16; narrow-deep 0.90 at every m; odd 0.85 at
    /// m >= 256, 0.80 at m <= 16 (repacking included).
    pub fn target(self, m: usize) -> Option<f64> {
        match self {
            Regime::Aligned if m >= 1024 => Some(0.97),
            Regime::Aligned if (32..=512).contains(&m) => Some(0.90),
            Regime::Aligned if m <= 16 => Some(1.0),
            Regime::NarrowDeep => Some(0.90),
            Regime::Odd if m >= 256 => Some(0.85),
            Regime::Odd if m <= 16 => Some(0.80),
            _ => None,
        }
    }
}

/// Weight bandwidth a decode row (m <= 16) must reach where the weight is at least 100 MB.
pub const DECODE_WEIGHT_TBPS: f64 = 3.6;
/// Weights from this size on carry the bandwidth target.
pub const DECODE_WEIGHT_MIN_BYTES: usize = 100_000_000;

/// One distinct (n, k) of the list, with the layers that have it.
#[derive(Clone, Debug)]
pub struct NkShape {
    pub n: usize,
    pub k: usize,
    pub regime: Regime,
    /// "model layer" of every layer with this (n, k), in file order.
    pub layers: Vec<String>,
}

/// A parsed shape list.
#[derive(Debug)]
pub struct ShapeList {
    pub m: Vec<usize>,
    pub shapes: Vec<NkShape>,
}

/// Why a shape list cannot be used (the tuner's parser: one format, one set of rules).
pub type ShapeListError = gemm_aot_tune::ShapesError;

impl ShapeList {
    /// Reads a shape list (parsed as `gemm-aot tune` parses it) with each (n, k)'s regime.
    pub fn load(path: &Path) -> Result<ShapeList, ShapeListError> {
        Ok(Self::from_parsed(gemm_aot_tune::ShapeList::load(path)?))
    }

    #[cfg(test)]
    pub fn parse(path: &str, text: &str) -> Result<ShapeList, ShapeListError> {
        Ok(Self::from_parsed(gemm_aot_tune::ShapeList::parse(
            path, text,
        )?))
    }

    fn from_parsed(list: gemm_aot_tune::ShapeList) -> ShapeList {
        ShapeList {
            m: list.m.iter().map(|&m| m as usize).collect(),
            shapes: list
                .shapes
                .into_iter()
                .map(|s| NkShape {
                    n: s.n as usize,
                    k: s.k as usize,
                    regime: Regime::of(s.n as usize, s.k as usize),
                    layers: s.layers,
                })
                .collect(),
        }
    }
}

/// The geometric mean of positive ratios (None for none).
pub fn geometric_mean(ratios: impl IntoIterator<Item = f64>) -> Option<f64> {
    let (mut sum, mut count) = (0.0f64, 0usize);
    for r in ratios {
        if r > 0.0 && r.is_finite() {
            sum += r.ln();
            count += 1;
        }
    }
    (count > 0).then(|| (sum / count as f64).exp())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn regimes_follow_from_n_and_k() {
        assert_eq!(Regime::of(50257, 768), Regime::Odd);
        assert_eq!(Regime::of(768, 50257), Regime::Odd);
        assert_eq!(Regime::of(1024, 8192), Regime::NarrowDeep);
        assert_eq!(Regime::of(1024, 4096), Regime::NarrowDeep);
        assert_eq!(Regime::of(2304, 9216), Regime::Aligned);
        assert_eq!(Regime::of(4096, 14336), Regime::Aligned);
        assert_eq!(Regime::of(768, 768), Regime::Aligned);
    }

    #[test]
    fn targets_are_the_issues() {
        assert_eq!(Regime::Aligned.target(4096), Some(0.97));
        assert_eq!(Regime::Aligned.target(256), Some(0.90));
        assert_eq!(Regime::Aligned.target(16), Some(1.0));
        assert_eq!(Regime::Aligned.target(24), None);
        assert_eq!(Regime::NarrowDeep.target(1), Some(0.90));
        assert_eq!(Regime::Odd.target(128), None);
        assert_eq!(Regime::Odd.target(8), Some(0.80));
    }

    #[test]
    fn the_shipped_list_has_the_issues_models_and_layers() {
        let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("shapes/models.toml");
        let list = ShapeList::load(&path).unwrap();
        assert!(list.shapes.len() >= 14, "{} shapes", list.shapes.len());
        let all: Vec<&String> = list.shapes.iter().flat_map(|s| &s.layers).collect();
        for model in [
            "Llama-3 8B",
            "Llama-3 70B",
            "Qwen2.5 7B",
            "Qwen2.5 72B",
            "Mistral",
            "Mixtral",
            "Gemma-2",
            "Phi-3",
            "GPT-2",
        ] {
            assert!(all.iter().any(|l| l.starts_with(model)), "{model} missing");
        }
        for layer in ["qkv", "o_proj", "gate", "down", "k_proj", "lm_head"] {
            assert!(all.iter().any(|l| l.contains(layer)), "{layer} missing");
        }
        assert!(list.shapes.iter().any(|s| s.n == 50257));
        for regime in [Regime::Aligned, Regime::NarrowDeep, Regime::Odd] {
            assert!(list.shapes.iter().any(|s| s.regime == regime));
        }
        // Distinct (n, k): a shape shared by models is benched once.
        let mut nk: Vec<_> = list.shapes.iter().map(|s| (s.n, s.k)).collect();
        nk.sort_unstable();
        nk.dedup();
        assert_eq!(nk.len(), list.shapes.len());
    }

    #[test]
    fn bad_lists_are_errors_naming_the_file() {
        let e = ShapeList::parse(
            "x.toml",
            "m = []\n[[model]]\nname='a'\nconfig=''\nlayers=[{layer='q', n=8, k=8}]",
        )
        .unwrap_err();
        assert!(e.to_string().contains("x.toml: `m`"), "{e}");
        let e = ShapeList::parse(
            "x.toml",
            "m = [1]\n[[model]]\nname='a'\nconfig=''\nlayers=[{layer='q', n=0, k=8}]",
        )
        .unwrap_err();
        assert!(e.to_string().contains("a q: n and k"), "{e}");
        let e = ShapeList::parse("x.toml", "m = [1]\nmodels = 3").unwrap_err();
        assert!(e.to_string().contains("x.toml:"), "{e}");
    }

    #[test]
    fn the_holdout_list_shares_no_shape_with_the_tuning_list() {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("shapes");
        let tuned = ShapeList::load(&dir.join("models.toml")).unwrap();
        let holdout = ShapeList::load(&dir.join("holdout.toml")).unwrap();
        assert!(!holdout.shapes.is_empty());
        for s in &holdout.shapes {
            assert!(
                !tuned.shapes.iter().any(|t| (t.n, t.k) == (s.n, s.k)),
                "{} x {} ({:?}) is on the tuning list",
                s.n,
                s.k,
                s.layers
            );
        }
    }

    #[test]
    fn geometric_mean_of_ratios() {
        let g = geometric_mean([0.5, 2.0]).unwrap();
        assert!((g - 1.0).abs() < 1e-12);
        assert_eq!(geometric_mean([]), None);
    }
}
