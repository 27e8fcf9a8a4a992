//! The repack: a TMA route's A or B whose address or leading dimension TMA cannot take (an odd
//! vocabulary, an odd hidden size) is copied, bits unchanged, into 16-byte aligned scratch, and
//! the route's own kernel reads the copy. The same kernel on the same values gives the same
//! bits, so this changes speed only (the unaligned kernel of the same contract gives those
//! bits too, slower).
//!
//! Decided by addresses, leading dimensions, k, the set's conversions and the caller's
//! scratch bound; the bound reads m through A's size, which may choose between two kernels of
//! one contract and so never changes a row's bits.

use crate::kernel_set::KernelSet;
use crate::planner::{map_key as key, Routed, StoredAb, StoredOperand};
use crate::table::{ConversionInfo, Operand, OperandPath, TierId};
use crate::tma::{check_tma, TmaProblem};
use crate::vocab::Dtype;

/// Scratch regions start on 256-byte boundaries: a fresh allocation's alignment.
pub const REPACK_ALIGN_BYTES: u64 = 256;

/// The leading dimension of an aligned copy of rows of `cols` elements: `cols` rounded up to
/// 16 bytes, TMA's stride rule (50257 bf16 columns: 50264).
pub fn aligned_ld(cols: u64, dtype: Dtype) -> u64 {
    let per = (16 / dtype.size_bytes()).max(1);
    cols.div_ceil(per).max(1) * per
}

/// One operand's aligned copy.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RepackedOperand {
    /// A or B.
    pub operand: Operand,
    /// The operand as the caller stores it.
    pub from: StoredOperand,
    /// The copy's leading dimension ([`aligned_ld`] of its columns).
    pub ld: u64,
    /// Byte offset of the copy in the scratch.
    pub offset: u64,
}

impl RepackedOperand {
    /// Bytes of the copy.
    pub fn bytes(&self, dtype: Dtype) -> u64 {
        self.from.rows * self.ld * dtype.size_bytes()
    }
}

/// What a call copies before its GEMM.
#[derive(Clone, Copy, Debug)]
pub struct RepackPlan {
    /// The repack conversion of the operands' type.
    pub conversion: &'static ConversionInfo,
    /// A's copy, if A is copied.
    pub a: Option<RepackedOperand>,
    /// B's copy, if B is copied.
    pub b: Option<RepackedOperand>,
    /// Scratch bytes both copies take (regions 256-byte aligned).
    pub scratch_bytes: u64,
}

impl RepackPlan {
    /// The copies, A first.
    pub fn copies(&self) -> impl Iterator<Item = RepackedOperand> + '_ {
        self.a.into_iter().chain(self.b)
    }
}

/// Why a call is not repacked.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NoRepack {
    /// The kernel takes A and B as they are (or reads no tensor maps).
    NotNeeded,
    /// The tier has no repack conversion for the operands' type.
    NoConversion,
    /// A problem a copy does not solve (k = 0, a dimension TMA cannot take).
    NotAlignment(Operand, TmaProblem),
    /// The copies would take more scratch than the caller allows.
    OverLimit {
        /// Bytes the copies would take.
        needed: u64,
        /// The caller's bound.
        limit: u64,
    },
}

impl Routed {
    /// Which of A and B the route's TMA kernel needs copied into aligned scratch, within
    /// `limit_bytes` of scratch; `Err` says why none is (the route's unaligned kernel then
    /// runs where the kernel cannot take an operand, [`Routed::pick`]).
    pub fn repack(
        &self,
        set: &KernelSet,
        tier: TierId,
        ab: &StoredAb,
        limit_bytes: u64,
    ) -> Result<RepackPlan, NoRepack> {
        let k = self.kernel;
        if k.operands != OperandPath::Tma {
            return Err(NoRepack::NotNeeded);
        }
        let mut copies: [Option<RepackedOperand>; 2] = [None, None];
        for map in k.tensor_maps.iter().filter(|m| !m.optional) {
            let (slot, stored) = match map.operand {
                Operand::A => (0, ab.a),
                Operand::B => (1, ab.b),
                _ => continue,
            };
            let Some(s) = stored else {
                return Err(NoRepack::NotAlignment(
                    map.operand,
                    TmaProblem::Dimension { rows: 0, cols: 0 },
                ));
            };
            match check_tma(s.address, &key(s, ab.dtype, map)) {
                Ok(()) => {}
                Err(TmaProblem::BaseMisaligned { .. } | TmaProblem::StrideMisaligned { .. }) => {
                    let ld = aligned_ld(s.cols, ab.dtype);
                    let copy = StoredOperand {
                        address: 0,
                        ld,
                        ..s
                    };
                    // The copy must satisfy every rule (dimensions too), or copying is useless.
                    if let Err(p) = check_tma(0, &key(copy, ab.dtype, map)) {
                        return Err(NoRepack::NotAlignment(map.operand, p));
                    }
                    copies[slot] = Some(RepackedOperand {
                        operand: map.operand,
                        from: s,
                        ld,
                        offset: 0,
                    });
                }
                Err(p) => return Err(NoRepack::NotAlignment(map.operand, p)),
            }
        }
        if copies.iter().all(Option::is_none) {
            return Err(NoRepack::NotNeeded);
        }
        let conversion = set
            .conversion_for(tier, ab.dtype, ab.dtype)
            .ok_or(NoRepack::NoConversion)?;
        let mut end = 0u64;
        for c in copies.iter_mut().flatten() {
            c.offset = end;
            end = end.saturating_add(
                c.bytes(ab.dtype)
                    .div_ceil(REPACK_ALIGN_BYTES)
                    .saturating_mul(REPACK_ALIGN_BYTES),
            );
        }
        if end > limit_bytes {
            return Err(NoRepack::OverLimit {
                needed: end,
                limit: limit_bytes,
            });
        }
        Ok(RepackPlan {
            conversion,
            a: copies[0],
            b: copies[1],
            scratch_bytes: end,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn aligned_leading_dimensions_round_up_to_16_bytes() {
        assert_eq!(aligned_ld(50257, Dtype::Bf16), 50264);
        assert_eq!(aligned_ld(50264, Dtype::Bf16), 50264);
        assert_eq!(aligned_ld(50257, Dtype::F32), 50260);
        assert_eq!(aligned_ld(1, Dtype::F16), 8);
        assert_eq!(aligned_ld(0, Dtype::F16), 8);
    }
}
