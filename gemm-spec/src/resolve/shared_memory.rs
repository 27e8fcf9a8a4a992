//! Shared-memory sizes: what one kernel needs, summed from its family's shared terms at its
//! dtype, and the most over a family's variants, which a tier's budget must allow. Public
//! (re-exported from the crate root) because codegen records each planned kernel's size from the
//! same formula.

use crate::model::*;
use crate::vocab::DtypeTriple;

/// Shared memory a tile of this family needs, for its largest operand type: the budget a tier
/// must allow.
pub fn shared_bytes(family: &Family, tile: &Tile) -> u64 {
    family
        .variants
        .iter()
        .map(|&(_, d)| shared_bytes_for(family, tile, d))
        .max()
        .unwrap_or(0)
}

/// Shared memory one kernel (a tile of this family at dtype `d`) needs: the sum of the
/// family's shared terms, operands counted at `d`'s size when the family stages them as stored.
pub fn shared_bytes_for(family: &Family, tile: &Tile, d: DtypeTriple) -> u64 {
    let elem = match family.staging {
        Staging::F32 => 4,
        Staging::Operand => d.ab.size_bytes(),
    };
    let (m, n, k) = (tile.m as u64, tile.n as u64, tile.k as u64);
    family
        .shared
        .iter()
        .map(|term| match term {
            SharedTerm::Operands => (tile.stages() as u64)
                .saturating_mul(m.saturating_mul(k).saturating_add(k.saturating_mul(n)))
                .saturating_mul(elem),
            SharedTerm::Totals => m.saturating_mul(n).saturating_mul(4),
            SharedTerm::Partials => (tile.k_split() as u64)
                .saturating_mul(m)
                .saturating_mul(n)
                .saturating_mul(4),
            SharedTerm::Slices => (tile.stages() as u64)
                .saturating_mul(tile.k_split() as u64)
                .saturating_mul(32)
                .saturating_mul(m.saturating_add(n))
                .saturating_mul(elem),
            SharedTerm::Alignment => SHARED_ALIGNMENT_SLACK,
            SharedTerm::Barriers => (tile.stages() as u64).saturating_mul(BARRIER_BYTES_PER_STAGE),
            // Rows of k elements padded by 16 bytes (8 halves, 4 floats).
            SharedTerm::PaddedStep => m
                .saturating_add(n)
                .saturating_mul(k.saturating_mul(elem).saturating_add(16)),
            SharedTerm::CStaging => {
                let consumers = match &tile.params {
                    TileParams::WgmmaTma(p) => p.consumers as u64,
                    _ => 1,
                };
                let box_inner = 128 / d.c.size_bytes().max(1);
                let round = if (n / box_inner.max(1)).is_multiple_of(2) {
                    2
                } else {
                    1
                };
                consumers.saturating_mul(round).saturating_mul(64 * 128)
            }
        })
        .fold(0u64, u64::saturating_add)
}
