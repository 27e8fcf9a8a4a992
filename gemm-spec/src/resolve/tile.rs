//! Tiles of a tier: a lowercase name and a family the tier uses; nonzero shape and parameters; a
//! shape that is a multiple of the instruction's and of the per-thread split; the template's own
//! limits; then threads a block and shared memory within the tier's budgets.

use super::budget::BLOCKS_PER_SM_MAX;
use super::names::check_name;
use super::shared_memory::shared_bytes;
use super::tile_params::tile_params;
use super::Sink;
use crate::error::{Location, SpecErrorKind};
use crate::model::*;
use crate::raw::RawTile;
use crate::templates::{self, TemplateKind};

pub(super) fn resolve_tile(
    sink: &mut Sink,
    specs: &SpecSet,
    tier: &Tier,
    at: Location,
    key_at: &dyn Fn(&str) -> Location,
    raw: &RawTile,
) -> Option<Tile> {
    if !check_name(sink, &at, "tile", &raw.name) {
        return None;
    }
    if !tier.families.contains(&raw.family) {
        sink.push(
            at,
            SpecErrorKind::FamilyNotUsed {
                tier: tier.name.clone(),
                family: raw.family.clone(),
            },
        );
        return None;
    }
    let family = specs.families.get(&raw.family)?;
    let inst = specs.instructions.get(&family.instruction)?;
    let before = sink.errors.len();
    let item = format!(
        "tile {}.{} {}x{}x{}",
        raw.family, raw.name, raw.m, raw.n, raw.k
    );
    let params = tile_params(sink, key_at, family, raw)?;
    let tile = Tile {
        family: raw.family.clone(),
        name: raw.name.clone(),
        m: raw.m,
        n: raw.n,
        k: raw.k,
        params,
        location: at.clone(),
    };
    let mut zeros: Vec<(&'static str, u32, &'static str)> = vec![
        ("m", tile.m, "a tile covers at least one row of C"),
        ("n", tile.n, "a tile covers at least one column of C"),
        ("k", tile.k, "a tile steps K by at least one"),
        (
            "stages",
            tile.stages(),
            "a tile needs at least one shared-memory stage",
        ),
    ];
    match &tile.params {
        TileParams::Scalar(p) => zeros.extend([
            (
                "thread_m",
                p.thread_m,
                "each thread computes at least one row of C",
            ),
            (
                "thread_n",
                p.thread_n,
                "each thread computes at least one column of C",
            ),
            ("k_split", p.k_split, "a block reduces at least one K chunk"),
            (
                "min_blocks",
                p.min_blocks.unwrap_or(1),
                "an SM holds at least one block (leave min_blocks out for no occupancy bound)",
            ),
        ]),
        TileParams::WgmmaTma(p) => zeros.extend([
            (
                "consumers",
                p.consumers,
                "a tile has at least one consumer warpgroup",
            ),
            ("cluster_m", p.cluster_m, "a cluster holds at least one CTA"),
        ]),
        TileParams::MmaDecodeTma(_) => {}
        TileParams::MmaGemm(MmaGemmParams {
            warps_m, warps_n, ..
        })
        | TileParams::MmaAsync(MmaAsyncParams {
            warps_m, warps_n, ..
        }) => zeros.extend([
            ("warps_m", *warps_m, "a block has at least one warp along M"),
            ("warps_n", *warps_n, "a block has at least one warp along N"),
            (
                "min_blocks",
                tile.min_blocks().unwrap_or(1),
                "an SM holds at least one block (leave min_blocks out for no occupancy bound)",
            ),
        ]),
    }
    for (key, value, why) in zeros {
        if value == 0 {
            sink.push(
                at.clone(),
                SpecErrorKind::Zero {
                    item: item.clone(),
                    key,
                    why,
                },
            );
        }
    }
    if sink.errors.len() != before {
        return None;
    }
    if let Some(b) = tile.min_blocks().filter(|&b| b > BLOCKS_PER_SM_MAX) {
        sink.push(
            at.clone(),
            SpecErrorKind::MinBlocks {
                family: tile.family.clone(),
                tile: tile.name.clone(),
                m: tile.m,
                n: tile.n,
                k: tile.k,
                value: b,
                max: BLOCKS_PER_SM_MAX,
            },
        );
    }
    let shape_err = |sink: &mut Sink, dim, value, multiple, why: String| {
        sink.push(
            at.clone(),
            SpecErrorKind::TileShape {
                family: tile.family.clone(),
                tile: tile.name.clone(),
                m: tile.m,
                n: tile.n,
                k: tile.k,
                dim,
                value,
                multiple,
                why,
            },
        );
    };
    let inst_why = format!(
        "instruction {} is {}x{}x{}",
        inst.name, inst.shape.m, inst.shape.n, inst.shape.k
    );
    for (dim, value, multiple) in [
        ("m", tile.m, inst.shape.m),
        ("n", tile.n, inst.shape.n),
        ("k", tile.k, inst.shape.k),
    ] {
        if !value.is_multiple_of(multiple) {
            shape_err(sink, dim, value, multiple, inst_why.clone());
        }
    }
    if let TileParams::Scalar(p) = &tile.params {
        if !tile.m.is_multiple_of(p.thread_m) {
            shape_err(
                sink,
                "m",
                tile.m,
                p.thread_m,
                "each thread computes thread_m rows".into(),
            );
        }
        if !tile.n.is_multiple_of(p.thread_n) {
            shape_err(
                sink,
                "n",
                tile.n,
                p.thread_n,
                "each thread computes thread_n columns".into(),
            );
        }
    }
    if let Some(TemplateKind::Gemm(g)) = templates::find(&family.template).map(|t| &t.kind) {
        for (key, value, rule, why) in g.rules.broken(&tile) {
            sink.push(
                at.clone(),
                SpecErrorKind::TemplateLimit {
                    family: tile.family.clone(),
                    tile: tile.name.clone(),
                    m: tile.m,
                    n: tile.n,
                    k: tile.k,
                    template: family.template.clone(),
                    key,
                    value,
                    rule,
                    why,
                },
            );
        }
    }
    if sink.errors.len() != before {
        return None;
    }
    let threads = tile.threads();
    if threads == 0 || !threads.is_multiple_of(32) || threads > tier.max_threads_per_block {
        sink.push(
            at.clone(),
            SpecErrorKind::BlockThreads {
                family: tile.family.clone(),
                tile: tile.name.clone(),
                m: tile.m,
                n: tile.n,
                k: tile.k,
                threads,
                tier: tier.name.clone(),
                max: tier.max_threads_per_block,
            },
        );
        return None;
    }
    let needed = shared_bytes(family, &tile);
    if needed > tier.max_shared_bytes {
        sink.push(
            at,
            SpecErrorKind::SharedMemory {
                family: tile.family.clone(),
                tile: tile.name.clone(),
                m: tile.m,
                n: tile.n,
                k: tile.k,
                needed,
                tier: tier.name.clone(),
                allowed: tier.max_shared_bytes,
            },
        );
        return None;
    }
    Some(tile)
}
