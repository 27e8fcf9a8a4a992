//! A tile's kind parameters (scalar, wgmma_tma, mma_decode_tma, mma_gemm, mma_async, by the family's
//! template): which keys the kind takes, the defaults of those it may omit, and that each value is
//! a whole number (`scheduler` a word). Errors point at the key's own line.

use super::Sink;
use crate::error::{Location, SpecErrorKind};
use crate::model::*;
use crate::raw::RawTile;

/// Reads a tile's kind parameters: every key must be one of the kind's, each value a whole
/// number (`scheduler` a word); omitted keys take the kind's default or are errors.
pub(super) fn tile_params(
    sink: &mut Sink,
    key_at: &dyn Fn(&str) -> Location,
    family: &Family,
    raw: &RawTile,
) -> Option<TileParams> {
    let before = sink.errors.len();
    let kind = family.kind;
    let keys = kind.keys();
    let err = |sink: &mut Sink, key: &str, problem: String| {
        sink.push(
            key_at(key),
            SpecErrorKind::TileKey {
                family: raw.family.clone(),
                tile: raw.name.clone(),
                key: key.to_string(),
                problem,
            },
        )
    };
    for key in raw.params.keys() {
        if !keys.contains(&key.as_str()) {
            err(
                sink,
                key,
                format!(
                    "`{key}` is not a parameter of a {} tile (family {}, template {}); its keys are family, name, m, n, k, {}",
                    kind.as_str(),
                    family.name,
                    family.template,
                    keys.join(", ")
                ),
            );
        }
    }
    let int = |sink: &mut Sink, key: &str, default: Option<u32>| -> Option<u32> {
        match raw.params.get(key) {
            None if default.is_some() => default,
            None => {
                err(
                    sink,
                    key,
                    format!(
                        "needs `{key}`: a {} tile has no default for it",
                        kind.as_str()
                    ),
                );
                None
            }
            Some(toml::Value::Integer(i)) => match u32::try_from(*i) {
                Ok(v) => Some(v),
                Err(_) => {
                    err(
                        sink,
                        key,
                        format!("`{key}` = {i} is not a whole number from 0 to {}", u32::MAX),
                    );
                    None
                }
            },
            Some(v) => {
                err(sink, key, format!("`{key}` = {v} must be a whole number"));
                None
            }
        }
    };
    let params = match kind {
        TileKind::Scalar => {
            let stages = int(sink, "stages", Some(1));
            let thread_m = int(sink, "thread_m", Some(1));
            let thread_n = int(sink, "thread_n", Some(1));
            let k_split = int(sink, "k_split", Some(1));
            let min_blocks = match raw.params.get("min_blocks") {
                None => None,
                Some(_) => Some(int(sink, "min_blocks", None)?),
            };
            TileParams::Scalar(ScalarParams {
                stages: stages?,
                thread_m: thread_m?,
                thread_n: thread_n?,
                k_split: k_split?,
                min_blocks,
            })
        }
        TileKind::WgmmaTma => {
            let stages = int(sink, "stages", None);
            let consumers = int(sink, "consumers", None);
            let cluster_m = int(sink, "cluster_m", Some(1));
            let scheduler = match raw.params.get("scheduler") {
                None => Some(Scheduler::Persistent),
                Some(toml::Value::String(w)) if w == "persistent" => Some(Scheduler::Persistent),
                Some(v) => {
                    err(
                        sink,
                        "scheduler",
                        format!("`scheduler` = {v} is not a scheduler of template {}; expected \"persistent\"", family.template),
                    );
                    None
                }
            };
            TileParams::WgmmaTma(WgmmaTmaParams {
                stages: stages?,
                consumers: consumers?,
                cluster_m: cluster_m?,
                scheduler: scheduler?,
            })
        }
        TileKind::MmaDecodeTma => TileParams::MmaDecodeTma(MmaDecodeTmaParams {
            stages: int(sink, "stages", None)?,
        }),
        TileKind::MmaGemm => {
            let stages = int(sink, "stages", Some(1));
            let warps_m = int(sink, "warps_m", None);
            let warps_n = int(sink, "warps_n", None);
            TileParams::MmaGemm(MmaGemmParams {
                stages: stages?,
                warps_m: warps_m?,
                warps_n: warps_n?,
            })
        }
        TileKind::MmaAsync => {
            // No default stage count: it is the pipeline's depth, chosen per tier.
            let stages = int(sink, "stages", None);
            let warps_m = int(sink, "warps_m", None);
            let warps_n = int(sink, "warps_n", None);
            let min_blocks = match raw.params.get("min_blocks") {
                None => None,
                Some(_) => Some(int(sink, "min_blocks", None)?),
            };
            TileParams::MmaAsync(MmaAsyncParams {
                stages: stages?,
                warps_m: warps_m?,
                warps_n: warps_n?,
                min_blocks,
            })
        }
    };
    (sink.errors.len() == before).then_some(params)
}
