//! Row kernels over raw device addresses: softmax, log_softmax and mean along each row of a
//! `rows x cols` matrix, one block a row, the tree fixed by the kernel's contract
//! (`row-t256`: docs/fronts.md), so a row's bits do not depend on how many rows there are.
//! Checked like [`RawGemm`](crate::RawGemm): everything that needs no device first, then the
//! extents are registered for the call and the kernel launched on this context's stream.
//! Row launches are not seen by observers (they are not GEMMs; packages do not hold them).

use crate::context::Context;
use crate::error::{GemmError, Operand};
use crate::launcher::{Geometry, NO_CLUSTER};
use crate::raw::{extent, RawMatrix, Registered};
use crate::request::dim;
use crate::table::{ArgSources, Dtype, KernelRef, RowOp};
use gemm_core::DIM_MAX;
use half::{bf16, f16};

/// Longest row a row kernel takes.
pub const MAX_COLS: u64 = DIM_MAX - 1024;

/// One row kernel call: `dst` row r = `op`(`src` row r) for `rows` rows of `cols` elements.
/// `src` holds `from` elements with leading dimension `ld_src`; `dst` holds `to` elements
/// (`cols` a row, or one for `mean`) with leading dimension `ld_dst`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RawRows {
    /// What each row's output is.
    pub op: RowOp,
    /// Element type of `src`.
    pub from: Dtype,
    /// Element type of `dst`.
    pub to: Dtype,
    /// The input rows.
    pub src: RawMatrix,
    /// The output rows.
    pub dst: RawMatrix,
    /// Rows.
    pub rows: usize,
    /// Elements a row of `src`.
    pub cols: usize,
}

impl RawRows {
    /// Checks the call without the device (dimensions, leading dimensions, null and
    /// misaligned pointers, `dst` overlapping `src`); returns the (src, dst) byte extents.
    #[allow(clippy::type_complexity)]
    pub fn check(&self) -> Result<(Option<(u64, u64)>, Option<(u64, u64)>), GemmError> {
        let (rows, cols) = (dim("rows", self.rows)?, dim("cols", self.cols)?);
        // The kernel's column loops step by a block past the row's end in i32.
        if cols > MAX_COLS {
            return Err(GemmError::DimensionOverflow {
                what: "cols",
                value: cols,
                max: MAX_COLS,
            });
        }
        let out_cols = self.op.outputs_per_row(cols);
        let src = extent(Operand::A, self.src, (rows, cols), self.from.size_bytes())?;
        let dst = extent(Operand::C, self.dst, (rows, out_cols), self.to.size_bytes())?;
        if let (Some((c_start, c_end)), Some((start, end))) = (dst, src) {
            if start < c_end && c_start < end {
                return Err(GemmError::Overlap {
                    operand: Operand::A,
                    c_start,
                    c_end,
                    start,
                    end,
                });
            }
        }
        Ok((src, dst))
    }
}

impl Context {
    /// Runs a row kernel ([`RawRows`]) on this context's stream: checked without the device
    /// first, then against the driver's allocations, then launched. Refused with
    /// [`GemmError::NoRowKernel`] when the tier builds none for (op, from, to).
    pub fn rows_raw(&self, call: &RawRows) -> Result<(), GemmError> {
        let (src, dst) = call.check()?;
        let tier = self.tier();
        let info = self
            .kernels()
            .row_kernel(tier.id, call.op, call.from, call.to, call.cols as u64)
            .ok_or(GemmError::NoRowKernel {
                tier: tier.name,
                op: call.op,
                from: call.from,
                to: call.to,
            })?;
        let Some(dst) = dst else {
            return Ok(()); // no rows, or softmax of empty rows: nothing to write
        };
        // Mean of empty rows still writes each row's 0 / 0 (NaN, as torch); nothing is read.
        let src = src.unwrap_or((call.src.ptr, call.src.ptr));
        let mut reg = Registered::bound(self)?;
        // Registered for the call (the driver's allocation bounds checked), released after.
        for (dtype, (start, end)) in [(call.from, src), (call.to, dst)] {
            if start == end {
                continue;
            }
            let extent = Some((start, end));
            match dtype {
                Dtype::F32 => reg.add::<f32>(start, extent).map(|_| ())?,
                Dtype::Bf16 => reg.add::<bf16>(start, extent).map(|_| ())?,
                Dtype::F16 => reg.add::<f16>(start, extent).map(|_| ())?,
            }
        }
        let abi = self
            .kernels()
            .abi(info.abi)
            .ok_or(GemmError::UnknownAbi { abi: info.abi })?;
        let args = (abi.bind)(&ArgSources {
            src: src.0,
            dst: dst.0,
            rows: call.rows as i32,
            cols: call.cols as i32,
            ld_src: call.src.ld as i32,
            ld_dst: call.dst.ld as i32,
            ..ArgSources::default()
        });
        let geometry = Geometry {
            grid: info.launch_grid(call.rows as u64, call.cols as u64),
            block: (info.block_threads, 1, 1),
            shared_bytes: 0,
            cluster: NO_CLUSTER,
        };
        self.launch_bytes(KernelRef::Conversion(info.id), geometry, &args)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn call(op: RowOp) -> RawRows {
        RawRows {
            op,
            from: Dtype::Bf16,
            to: Dtype::F32,
            src: RawMatrix {
                ptr: 0x10_0000,
                ld: 4096,
            },
            dst: RawMatrix {
                ptr: 0x90_0000,
                ld: 4096,
            },
            rows: 8,
            cols: 4096,
        }
    }

    #[test]
    fn extents_follow_the_op() {
        let (src, dst) = call(RowOp::Softmax).check().unwrap();
        assert_eq!(src, Some((0x10_0000, 0x10_0000 + 8 * 4096 * 2)));
        assert_eq!(dst, Some((0x90_0000, 0x90_0000 + 8 * 4096 * 4)));
        let mut mean = call(RowOp::Mean);
        mean.dst.ld = 1;
        let (_, dst) = mean.check().unwrap();
        assert_eq!(dst, Some((0x90_0000, 0x90_0000 + 8 * 4)));
    }

    #[test]
    fn bad_calls_are_refused_without_a_device() {
        let mut short = call(RowOp::Softmax);
        short.src.ld = 100;
        assert!(matches!(
            short.check(),
            Err(GemmError::LeadingDimension {
                operand: Operand::A,
                ..
            })
        ));
        let mut over = call(RowOp::LogSoftmax);
        over.dst.ptr = over.src.ptr + 64;
        assert!(matches!(over.check(), Err(GemmError::Overlap { .. })));
        let mut null = call(RowOp::Mean);
        null.src.ptr = 0;
        assert!(matches!(
            null.check(),
            Err(GemmError::NullPointer {
                operand: Operand::A
            })
        ));
    }

    #[test]
    fn row_kernels_launch_a_block_per_warp_of_rows_up_to_the_warp_path_length() {
        use crate::table::{ConversionInfo, ConversionKind};
        let set = crate::shipped::shipped();
        let mut seen = 0;
        for t in set.tiers() {
            for c in set
                .tier_conversions(t.id)
                .iter()
                .filter(|c| matches!(c.kind, ConversionKind::Row(_)))
            {
                seen += 1;
                assert!(c.warp_cols >= 32, "{}", c.name);
                let warps = u64::from(c.block_threads / 32);
                let short = u64::from(c.warp_cols);
                assert_eq!(c.launch_grid(300, short).0 as u64, 300u64.div_ceil(warps));
                assert_eq!(c.launch_grid(1, 1), (1, 1, 1));
                assert_eq!(c.launch_grid(300, short + 1), (300, 1, 1));
                assert_eq!(c.launch_grid(0, 4096), (1, 1, 1));
                assert_eq!(
                    c.launch_grid(1 << 30, 512).0 as u64,
                    ConversionInfo::MAX_BLOCKS
                );
            }
        }
        assert!(seen > 0, "the shipped specs build no row kernel");
    }

    #[test]
    fn a_row_takes_the_shortest_warp_path_it_fits_and_longer_rows_the_shortest_kernel() {
        use crate::table::ConversionKind;
        let set = crate::shipped::shipped();
        for t in set.tiers() {
            for op in [RowOp::Softmax, RowOp::LogSoftmax, RowOp::Mean] {
                for (from, to) in [(Dtype::F32, Dtype::F32), (Dtype::Bf16, Dtype::F32)] {
                    let mut lengths: Vec<u32> = set
                        .tier_conversions(t.id)
                        .iter()
                        .filter(|c| {
                            c.kind == ConversionKind::Row(op) && (c.from, c.to) == (from, to)
                        })
                        .map(|c| c.warp_cols)
                        .collect();
                    lengths.sort_unstable();
                    let Some(&first) = lengths.first() else {
                        continue;
                    };
                    let pick =
                        |cols: u64| set.row_kernel(t.id, op, from, to, cols).unwrap().warp_cols;
                    assert_eq!(pick(1), first);
                    let mut below = 0u32;
                    for &l in &lengths {
                        assert_eq!(pick(u64::from(l)), l, "{op} {from}->{to} at {l}");
                        assert_eq!(pick(u64::from(below) + 1), l);
                        below = l;
                    }
                    assert_eq!(pick(u64::from(below) + 1), first, "the block path");
                    assert_eq!(pick(1 << 20), first);
                }
            }
        }
        // That the specs' lengths are all built is tests/generated_tables.rs's check.
    }
}
