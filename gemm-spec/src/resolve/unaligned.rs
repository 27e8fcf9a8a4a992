//! A route's `unaligned` kernel: the plain-load kernel a route falls back to when its kernel
//! cannot take the operands (TMA kinds, and cp.async kinds copying 16-byte chunks, need 16-byte
//! aligned bases and leading dimensions), or whose kernel reads them through a vector path
//! (`vector_bytes`) that an operand may miss: that route's unaligned kernel, when it takes the
//! operands as they are, runs instead of copying them. It must exist on the tier, need no
//! alignment itself, and share the route family's policy and contract, so a call gives the
//! same bits whichever kernel runs.

use super::Sink;
use crate::error::{Location, SpecErrorKind};
use crate::model::*;
use crate::raw::RawRoute;

/// A route's `unaligned` kernel: present when the route's family needs aligned operands (its
/// kind's `operands` are cp.async or tma: then required) or has a vector path; a tile of the tier whose family has the route
/// family's contract and policy and needs no alignment. `Err` after an error; the (op, dtype) variants are checked per expanded route.
pub(super) fn resolve_unaligned<'s>(
    sink: &mut Sink,
    specs: &'s SpecSet,
    tier: &Tier,
    rule: u32,
    at: &Location,
    family: &Family,
    raw: &RawRoute,
) -> Result<Option<(TileRef, &'s Family)>, ()> {
    let Some(word) = &raw.unaligned else {
        if family.kind.operands.needs_unaligned() {
            let how = family.kind.operands.describe();
            sink.push(
                at.clone(),
                SpecErrorKind::RouteKernel {
                    rule,
                    kernel: raw.kernel.clone(),
                    problem: format!(
                        "is a {} kernel, which {how}: the route needs `unaligned = \"family.tile\"`, a plain-load kernel of contract {} for operands it cannot take",
                        family.kind.template,
                        family.contract
                    ),
                },
            );
            return Err(());
        }
        return Ok(None);
    };
    let problem = |sink: &mut Sink, problem: String| {
        sink.push(
            at.clone(),
            SpecErrorKind::RouteUnaligned {
                rule,
                kernel: word.clone(),
                problem,
            },
        );
        Err(())
    };
    if !family.kind.operands.needs_unaligned() && !family.kind.has_vector_path() {
        return problem(
            sink,
            format!(
                "is given, but the route's kernel {} is a {} kernel, which {}: only routes to kernels that need aligned operands (TMA, cp.async) or read them through a vector path (`vector_bytes`) have an unaligned kernel",
                raw.kernel,
                family.kind.template,
                family.kind.operands.describe()
            ),
        );
    }
    let Some((fam_name, tile_name)) = word.split_once('.') else {
        return problem(sink, "must read `family.tile`, e.g. `mma.wide`".into());
    };
    if !tier.families.iter().any(|f| f == fam_name) {
        return problem(
            sink,
            format!(
                "names family {fam_name}, which tier {} does not use (families: {})",
                tier.name,
                tier.families.join(", ")
            ),
        );
    }
    let Some(ufam) = specs.families.get(fam_name) else {
        return Err(());
    };
    if sink.is_broken("tile", word) {
        return Err(());
    }
    if tier.tile(fam_name, tile_name).is_none() {
        return problem(
            sink,
            format!(
                "names tile {tile_name}, which tier {} does not define for {fam_name}",
                tier.name
            ),
        );
    }
    if ufam.kind.operands.needs_unaligned() {
        return problem(
            sink,
            format!(
                "is a {} kernel, which {} too: name a plain-load kernel (e.g. of template mma_gemm)",
                ufam.kind.template,
                ufam.kind.operands.describe()
            ),
        );
    }
    if ufam.policy != family.policy {
        return problem(
            sink,
            format!(
                "is family {fam_name} of policy {}, but the route is for policy {}",
                ufam.policy, family.policy
            ),
        );
    }
    if ufam.contract != family.contract {
        return problem(
            sink,
            format!(
                "implements contract {}, but the route's kernel {} implements {}: the same call must give the same bits whether or not TMA can take its operands",
                ufam.contract, raw.kernel, family.contract
            ),
        );
    }
    Ok(Some((
        TileRef {
            family: fam_name.to_string(),
            tile: tile_name.to_string(),
        },
        ufam,
    )))
}
