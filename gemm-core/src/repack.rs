//! The repack: a TMA route's A or B whose address or leading dimension TMA cannot take (an odd
//! vocabulary, an odd hidden size) is copied, bits unchanged, into 16-byte aligned scratch, and
//! the route's own kernel reads the copy. The same kernel on the same values gives the same
//! bits, so this changes speed only (the unaligned kernel of the same contract gives those
//! bits too, slower).
//!
//! A plain-load kernel with a vector path (its manifest's `vector_bytes`: the exact policy's
//! decode and warp-tiled kernels) reads an operand off that alignment element by element, the
//! same values several times slower; such an operand is copied as for TMA, unless the route's
//! unaligned kernel has a narrower vector path that takes the operands as they are
//! ([`Routed::vector_unaligned`]): then that kernel runs and nothing is copied.
//!
//! A kernel whose family has `prepass = "transpose-a"` (TF32 tn on wgmma) reads A transposed:
//! its A is always copied, `[k, m]` into `[m, k]`, the same values in the layout the kernel
//! reads, so the bits are the kernel's on those values, as for any copy.
//!
//! Decided by addresses, leading dimensions, k, the set's conversions and the caller's
//! scratch bound; the bound reads m through A's size, which may choose between two kernels of
//! one contract and so never changes a row's bits.

use crate::kernel_set::KernelSet;
use crate::planner::{map_key as key, Routed, StoredAb, StoredOperand};
use crate::table::{ConversionInfo, Operand, OperandPath, Prepass, TierId};
use crate::tma::{check_tma, TmaProblem};
use crate::vocab::Dtype;

/// Scratch regions start on 256-byte boundaries: a fresh allocation's alignment.
pub const REPACK_ALIGN_BYTES: u64 = 256;

/// The leading dimension of an aligned copy of rows of `cols` elements: `cols` rounded up to
/// 16 bytes, TMA's stride rule (50257 bf16 columns: 50264).
pub fn aligned_ld(cols: u64, dtype: Dtype) -> u64 {
    aligned_ld_to(cols, dtype, 16)
}

/// `cols` rounded up so that a row is a multiple of `bytes` (and of 16): the leading dimension
/// of a copy for a kernel whose vector path needs `bytes`.
fn aligned_ld_to(cols: u64, dtype: Dtype, bytes: u64) -> u64 {
    let per = (bytes.max(16) / dtype.size_bytes()).max(1);
    cols.div_ceil(per).max(1) * per
}

/// One operand's aligned copy.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RepackedOperand {
    /// A or B.
    pub operand: Operand,
    /// The operand as the caller stores it.
    pub from: StoredOperand,
    /// Whether the copy is the transposition (`[cols, rows]` of `from`): a
    /// [`Prepass::TransposeA`] kernel's A. Else the same rows and columns.
    pub transposed: bool,
    /// The copy's leading dimension ([`aligned_ld`] of its columns).
    pub ld: u64,
    /// Byte offset of the copy in the scratch.
    pub offset: u64,
}

impl RepackedOperand {
    /// Rows and columns of the copy.
    pub fn shape(&self) -> (u64, u64) {
        if self.transposed {
            (self.from.cols, self.from.rows)
        } else {
            (self.from.rows, self.from.cols)
        }
    }

    /// Bytes of the copy.
    pub fn bytes(&self, dtype: Dtype) -> u64 {
        self.shape()
            .0
            .saturating_mul(self.ld)
            .saturating_mul(dtype.size_bytes())
    }

    /// The copy as the kernel reads it, at scratch address `address`.
    pub fn stored(&self, address: u64) -> StoredOperand {
        let (rows, cols) = self.shape();
        StoredOperand {
            address,
            rows,
            cols,
            ld: self.ld,
        }
    }
}

/// What a call copies before its GEMM.
#[derive(Clone, Copy, Debug)]
pub struct RepackPlan {
    /// The bit copy of the operands' type, for the copies that keep their layout.
    pub conversion: Option<&'static ConversionInfo>,
    /// The transposing bit copy, for a [`Prepass::TransposeA`] kernel's A.
    pub transpose: Option<&'static ConversionInfo>,
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

    /// The conversion kernel that makes `copy`.
    pub fn conversion_of(&self, copy: &RepackedOperand) -> Option<&'static ConversionInfo> {
        if copy.transposed {
            self.transpose
        } else {
            self.conversion
        }
    }
}

/// Why a call is not repacked.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NoRepack {
    /// The kernel takes A and B as they are (or reads no tensor maps).
    NotNeeded,
    /// The operand is off the kernel's vector path, but the route's unaligned kernel reads
    /// both as they are ([`Routed::vector_unaligned`]): that kernel runs, nothing is copied.
    UnalignedKernel(Operand),
    /// The tier has no repack (or, for a transposed copy, no transposing) conversion for the
    /// operands' type.
    NoConversion,
    /// A problem a copy does not solve (k = 0, a dimension TMA cannot take).
    NotAlignment(Operand, TmaProblem),
    /// A copy's leading dimension (its columns rounded up) would not fit the kernels' i32.
    TooWide(Operand),
    /// The copies would take more scratch than the caller allows.
    OverLimit {
        /// Bytes the copies would take.
        needed: u64,
        /// The caller's bound.
        limit: u64,
    },
}

impl Routed {
    /// Which of A and B the route's kernel needs copied into aligned scratch, within
    /// `limit_bytes` of scratch; `Err` says why none is (the route's unaligned kernel then
    /// runs where the kernel cannot take an operand, [`Routed::pick`]). A
    /// [`Prepass::TransposeA`] kernel always has A copied, transposed; a TMA kernel has an
    /// operand copied, as stored, where TMA cannot take its address or leading dimension
    /// alone; a kernel with a vector path ([`KernelInfo::vector_bytes`](crate::table::KernelInfo::vector_bytes)) where the operand's
    /// address or row pitch is off it.
    pub fn repack(
        &self,
        set: &KernelSet,
        tier: TierId,
        ab: &StoredAb,
        limit_bytes: u64,
    ) -> Result<RepackPlan, NoRepack> {
        let k = self.kernel;
        let transposes_a = k.prepass == Prepass::TransposeA;
        let vector = u64::from(k.vector_bytes);
        if k.operands != OperandPath::Tma && !transposes_a && vector == 0 {
            return Err(NoRepack::NotNeeded);
        }
        if let Some(o) = self.vector_unaligned(ab) {
            return Err(NoRepack::UnalignedKernel(o));
        }
        let mut copies: [Option<RepackedOperand>; 2] = [None, None];
        if transposes_a {
            let Some(s) = ab.a else {
                return Err(NoRepack::NotAlignment(
                    Operand::A,
                    TmaProblem::Dimension { rows: 0, cols: 0 },
                ));
            };
            // A stored [k, m] is copied as [m, k], its rows 16-byte aligned.
            copies[0] = Some(RepackedOperand {
                operand: Operand::A,
                from: s,
                transposed: true,
                ld: aligned_ld(s.rows, ab.dtype),
                offset: 0,
            });
        }
        for map in k.tensor_maps.iter().filter(|m| !m.optional) {
            let (slot, stored) = match map.operand {
                Operand::A => (0, ab.a),
                Operand::B => (1, ab.b),
                _ => continue,
            };
            if let Some(copy) = copies[slot] {
                // The transposed copy must satisfy every rule of the map, or copying is useless.
                if let Err(p) = check_tma(0, &key(copy.stored(0), ab.dtype, map)) {
                    return Err(NoRepack::NotAlignment(map.operand, p));
                }
                continue;
            }
            let Some(s) = stored else {
                return Err(NoRepack::NotAlignment(
                    map.operand,
                    TmaProblem::Dimension { rows: 0, cols: 0 },
                ));
            };
            match check_tma(s.address, &key(s, ab.dtype, map)) {
                Ok(()) => {}
                Err(TmaProblem::BaseMisaligned { .. } | TmaProblem::StrideMisaligned { .. }) => {
                    let copy = RepackedOperand {
                        operand: map.operand,
                        from: s,
                        transposed: false,
                        ld: aligned_ld(s.cols, ab.dtype),
                        offset: 0,
                    };
                    // The copy must satisfy every rule (dimensions too), or copying is useless.
                    if let Err(p) = check_tma(0, &key(copy.stored(0), ab.dtype, map)) {
                        return Err(NoRepack::NotAlignment(map.operand, p));
                    }
                    copies[slot] = Some(copy);
                }
                Err(p) => return Err(NoRepack::NotAlignment(map.operand, p)),
            }
        }
        if vector > 0 {
            // A plain-load kernel's vector path: an operand whose address or row pitch is off
            // it would be read element by element (the same values, several times slower).
            let elem = ab.dtype.size_bytes();
            for (slot, operand, stored) in [(0, Operand::A, ab.a), (1, Operand::B, ab.b)] {
                let Some(s) = stored.filter(|_| copies[slot].is_none()) else {
                    continue;
                };
                let off = |bytes: u64| !bytes.is_multiple_of(vector);
                if off(s.address) || off(s.ld.saturating_mul(elem)) {
                    copies[slot] = Some(RepackedOperand {
                        operand,
                        from: s,
                        transposed: false,
                        ld: aligned_ld_to(s.cols, ab.dtype, vector),
                        offset: 0,
                    });
                }
            }
        }
        if copies.iter().all(Option::is_none) {
            return Err(NoRepack::NotNeeded);
        }
        if let Some(c) = copies
            .iter()
            .flatten()
            .find(|c| c.ld > crate::vocab::DIM_MAX)
        {
            return Err(NoRepack::TooWide(c.operand));
        }
        let needs = |transposed: bool| copies.iter().flatten().any(|c| c.transposed == transposed);
        let conversion = match needs(false) {
            true => Some(
                set.conversion_for(tier, ab.dtype, ab.dtype)
                    .ok_or(NoRepack::NoConversion)?,
            ),
            false => None,
        };
        let transpose = match needs(true) {
            true => Some(
                set.transpose_for(tier, ab.dtype)
                    .ok_or(NoRepack::NoConversion)?,
            ),
            false => None,
        };
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
            transpose,
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
