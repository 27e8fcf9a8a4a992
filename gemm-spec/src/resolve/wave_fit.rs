//! A route's `wave_fit` kernels: other tiles of the route's contract that the runtime may run
//! instead of the route's kernel, whichever the wave model says finishes first at the call's m
//! and n (rounds of tiles on the device's SMs, times each tile's `tile_ps_per_k`, times k).
//! Each must exist on the tier, share the route family's policy and contract (so every element
//! gets the same bits whichever runs), and say its cost, as must the route's own tile; one that
//! needs aligned operands needs the route's `unaligned` kernel to fall back to.

use super::Sink;
use crate::error::{Location, SpecErrorKind};
use crate::model::*;
use crate::raw::RawRoute;

/// The route's `wave_fit` kernels with their families (empty when it names none). `Err` after
/// an error; the (op, dtype) variants are checked per expanded route.
pub(super) fn resolve_wave_fit<'s>(
    sink: &mut Sink,
    specs: &'s SpecSet,
    tier: &Tier,
    rule: u32,
    at: &Location,
    family: &Family,
    raw: &RawRoute,
) -> Result<Vec<(TileRef, &'s Family)>, ()> {
    let Some(words) = &raw.wave_fit else {
        return Ok(Vec::new());
    };
    let problem = |sink: &mut Sink, kernel: &str, problem: String| {
        sink.push(
            at.clone(),
            SpecErrorKind::RouteWaveFit {
                rule,
                kernel: kernel.to_string(),
                problem,
            },
        );
    };
    if words.is_empty() {
        sink.push(
            at.clone(),
            SpecErrorKind::EmptyList {
                item: format!("route {rule}"),
                key: "wave_fit".into(),
                why: "name the kernels the wave model may run instead of the route's, or leave the key out",
            },
        );
        return Err(());
    }
    let cost_missing = |tile: &Tile| tile.tile_ps_per_k.is_none();
    let before = sink.errors.len();
    if let Some((f, t)) = raw.kernel.split_once('.') {
        if tier.tile(f, t).is_some_and(cost_missing) {
            problem(
                sink,
                &words[0],
                format!(
                    "is named, but the route's own kernel {} says no `tile_ps_per_k`: the wave model compares every kernel's cost, the route's too",
                    raw.kernel
                ),
            );
        }
    }
    let mut out: Vec<(TileRef, &Family)> = Vec::new();
    for word in words {
        let Some((fam_name, tile_name)) = word.split_once('.') else {
            problem(
                sink,
                word,
                "must read `family.tile`, e.g. `tcwide.wide`".into(),
            );
            continue;
        };
        if word == &raw.kernel || out.iter().any(|(r, _)| r.to_string() == *word) {
            problem(
                sink,
                word,
                "is named twice (the route's kernel always takes part)".into(),
            );
            continue;
        }
        if !tier.families.iter().any(|f| f == fam_name) {
            problem(
                sink,
                word,
                format!(
                    "names family {fam_name}, which tier {} does not use (families: {})",
                    tier.name,
                    tier.families.join(", ")
                ),
            );
            continue;
        }
        let Some(wfam) = specs.families.get(fam_name) else {
            continue;
        };
        if sink.is_broken("tile", word) {
            continue;
        }
        let Some(tile) = tier.tile(fam_name, tile_name) else {
            problem(
                sink,
                word,
                format!(
                    "names tile {tile_name}, which tier {} does not define for {fam_name}",
                    tier.name
                ),
            );
            continue;
        };
        if wfam.policy != family.policy || wfam.contract != family.contract {
            problem(
                sink,
                word,
                format!(
                    "is family {fam_name} (policy {}, contract {}), but the route's kernel {} is policy {}, contract {}: a call must give the same bits whichever kernel the wave model runs",
                    wfam.policy, wfam.contract, raw.kernel, family.policy, family.contract
                ),
            );
            continue;
        }
        // The runtime runs only kernels that may stand in for the route's on one GEMM
        // (gemm-core's `KernelInfo::can_stand_in_for`): no plain-load or strided-batch kernel.
        let batch = tier
            .batch_kernels
            .iter()
            .any(|(f, t)| f == fam_name && t == tile_name);
        if !wfam.kind.operands.needs_unaligned() || batch {
            problem(
                sink,
                word,
                format!(
                    "is {}: the wave model runs only TMA and cp.async kernels of one GEMM a launch, so it would never run",
                    if batch {
                        "a batch kernel of the tier".to_string()
                    } else {
                        format!("a {} kernel, which {}", wfam.kind.template, wfam.kind.operands.describe())
                    }
                ),
            );
            continue;
        }
        if cost_missing(tile) {
            problem(
                sink,
                word,
                format!(
                    "says no `tile_ps_per_k`: give tile {word} its time per unit of k (picoseconds one CTA spends on one tile), which the wave model weighs"
                ),
            );
            continue;
        }
        if wfam.kind.operands.needs_unaligned() && raw.unaligned.is_none() {
            problem(
                sink,
                word,
                format!(
                    "is a {} kernel, which {}: the route needs `unaligned = \"family.tile\"` for operands it cannot take",
                    wfam.kind.template,
                    wfam.kind.operands.describe()
                ),
            );
            continue;
        }
        out.push((
            TileRef {
                family: fam_name.to_string(),
                tile: tile_name.to_string(),
            },
            wfam,
        ));
    }
    if sink.errors.len() != before {
        return Err(());
    }
    Ok(out)
}
