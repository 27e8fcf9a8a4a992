//! TMA's rules for a 2-D tensor map (address, row stride, dimensions, box, swizzle), as pure
//! functions: which operands TMA takes decides whether a route's TMA kernel or its unaligned
//! kernel runs, so the planner, `explain` and the runtime share one verdict. Encoding a map
//! needs the driver and lives in the runtime.

use crate::vocab::Dtype;

/// Largest extent of a tensor-map dimension (elements).
pub const TMA_MAX_DIM: u64 = 1 << 32;
/// Largest box extent in either dimension (elements).
pub const TMA_MAX_BOX: u32 = 256;
/// Global strides must be below this many bytes.
pub const TMA_MAX_STRIDE_BYTES: u64 = 1 << 40;

/// Everything a tensor map is made from, independent of the device address: the cache key,
/// and what a launch record's argument digest hashes in place of the map's bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct TensorMapKey {
    /// Allocation id from the registry.
    pub allocation: u64,
    /// Generation of that allocation.
    pub generation: u64,
    /// Byte offset of element (0, 0) into the allocation.
    pub offset: u64,
    /// Rows of the operand as stored.
    pub rows: u64,
    /// Columns of the operand as stored (the contiguous dimension).
    pub cols: u64,
    /// Leading dimension, in elements.
    pub ld: u64,
    /// Element type.
    pub dtype: Dtype,
    /// Box extent along the columns (elements).
    pub box_inner: u32,
    /// Box extent along the rows (elements).
    pub box_outer: u32,
    /// Swizzle span in bytes: 0 (none), 32, 64 or 128.
    pub swizzle_bytes: u32,
    /// `None`: a 2-D map of one matrix. `Some(batch)`: a batch kernel's 3-D map, the entry its
    /// third coordinate.
    pub batch: Option<MapBatch>,
}

/// The third dimension of a batch kernel's map: a strided batch's entries.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct MapBatch {
    /// Entries the map spans (1 for an operand every entry shares).
    pub entries: u64,
    /// Elements from one entry's (0, 0) to the next.
    pub stride: u64,
}

impl TensorMapKey {
    /// The key's bytes as a digest hashes them (stable across runs and platforms).
    pub fn digest_bytes(&self) -> impl Iterator<Item = u8> {
        let words = [
            self.allocation,
            self.generation,
            self.offset,
            self.rows,
            self.cols,
            self.ld,
            match self.dtype {
                Dtype::F32 => 1,
                Dtype::Bf16 => 2,
                Dtype::F16 => 3,
            },
            u64::from(self.box_inner),
            u64::from(self.box_outer),
            u64::from(self.swizzle_bytes),
        ];
        // A 2-D map digests as it always has; a 3-D one adds its entries and stride.
        let batch = self
            .batch
            .map(|b| [b.entries, b.stride])
            .into_iter()
            .flatten();
        words.into_iter().chain(batch).flat_map(u64::to_le_bytes)
    }
}

/// Why TMA cannot take an operand (or a table's box and swizzle), with the offending values.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TmaProblem {
    /// The operand's first element is not 16-byte aligned.
    BaseMisaligned {
        /// Device address of element (0, 0).
        address: u64,
    },
    /// `ld * element size` is not a multiple of 16 bytes.
    StrideMisaligned {
        /// Leading dimension, in elements.
        ld: u64,
        /// The row stride in bytes.
        stride_bytes: u64,
    },
    /// The operand has several rows and its row stride is shorter than a row, or at least
    /// 2^40 bytes.
    StrideRange {
        /// Leading dimension, in elements.
        ld: u64,
        /// Columns of a row.
        cols: u64,
    },
    /// A dimension is 0 or over 2^32 elements.
    Dimension {
        /// Rows as stored.
        rows: u64,
        /// Columns as stored.
        cols: u64,
    },
    /// A box extent is 0 or over 256, or the box's row is not a multiple of 16 bytes.
    Box {
        /// Box extent along the columns.
        inner: u32,
        /// Box extent along the rows.
        outer: u32,
    },
    /// A batch kernel's 3-D map: the entries' stride is not a multiple of 16 bytes or at
    /// least 2^40 bytes, or the entries are 0 or over 2^32.
    EntryStride {
        /// Elements from one entry to the next.
        stride: u64,
        /// Entries.
        entries: u64,
    },
    /// The swizzle is not 0, 32, 64 or 128 bytes, or the box's row is wider than it.
    Swizzle {
        /// Swizzle span in bytes.
        swizzle_bytes: u32,
        /// Bytes of one box row.
        inner_bytes: u64,
    },
}

impl TmaProblem {
    /// Whether the operand (address, leading dimension, shape) is what TMA refuses, so the
    /// route's unaligned kernel serves the call; otherwise the kernel table's box or swizzle
    /// is wrong, which no fallback should hide.
    pub fn is_operand(&self) -> bool {
        matches!(
            self,
            TmaProblem::BaseMisaligned { .. }
                | TmaProblem::StrideMisaligned { .. }
                | TmaProblem::StrideRange { .. }
                | TmaProblem::Dimension { .. }
                | TmaProblem::EntryStride { .. }
        )
    }
}

impl std::fmt::Display for TmaProblem {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match *self {
            TmaProblem::BaseMisaligned { address } => {
                write!(f, "its address {address:#x} is not 16-byte aligned")
            }
            TmaProblem::StrideMisaligned { ld, stride_bytes } => write!(
                f,
                "its row stride ld = {ld} ({stride_bytes} bytes) is not a multiple of 16 bytes"
            ),
            TmaProblem::StrideRange { ld, cols } => write!(
                f,
                "its row stride ld = {ld} is shorter than a row of {cols} or at least 2^40 bytes"
            ),
            TmaProblem::Dimension { rows, cols } => write!(
                f,
                "its shape {rows} x {cols} has a dimension of 0 or over 2^32"
            ),
            TmaProblem::EntryStride { stride, entries } => write!(
                f,
                "its batch stride of {stride} elements is not a multiple of 16 bytes or at least 2^40 bytes, or its {entries} entries are 0 or over 2^32"
            ),
            TmaProblem::Box { inner, outer } => write!(
                f,
                "the box {inner} x {outer} has an extent of 0 or over 256, or a row not a multiple of 16 bytes"
            ),
            TmaProblem::Swizzle {
                swizzle_bytes,
                inner_bytes,
            } => write!(
                f,
                "swizzle {swizzle_bytes} is not 0, 32, 64 or 128 bytes, or narrower than the box's row of {inner_bytes} bytes"
            ),
        }
    }
}

/// Checks TMA's rules for a map of `key` whose element (0, 0) is at `address`. The operand
/// rules (address, stride, dimensions) come first: they decide whether the unaligned kernel
/// runs. They depend on the address, the leading dimension and the columns, and on the rows
/// only through "at least one and at most 2^32" and "several rows need `ld >= cols`", which a
/// validated operand of several rows always meets (a single row's stride is never followed,
/// so its `ld` only has to be a multiple of 16 bytes). So when the rows are m, the verdict is
/// the same for every m.
pub fn check_tma(address: u64, key: &TensorMapKey) -> Result<(), TmaProblem> {
    let elem = key.dtype.size_bytes();
    if !address.is_multiple_of(16) {
        return Err(TmaProblem::BaseMisaligned { address });
    }
    let stride_bytes = key.ld.saturating_mul(elem);
    if !stride_bytes.is_multiple_of(16) {
        return Err(TmaProblem::StrideMisaligned {
            ld: key.ld,
            stride_bytes,
        });
    }
    if key.rows == 0 || key.cols == 0 || key.rows > TMA_MAX_DIM || key.cols > TMA_MAX_DIM {
        return Err(TmaProblem::Dimension {
            rows: key.rows,
            cols: key.cols,
        });
    }
    if key.rows > 1 && (key.ld < key.cols || stride_bytes >= TMA_MAX_STRIDE_BYTES) {
        return Err(TmaProblem::StrideRange {
            ld: key.ld,
            cols: key.cols,
        });
    }
    if let Some(b) = key.batch {
        let bytes = b.stride.saturating_mul(elem);
        if !bytes.is_multiple_of(16)
            || bytes >= TMA_MAX_STRIDE_BYTES
            || b.entries == 0
            || b.entries > TMA_MAX_DIM
        {
            return Err(TmaProblem::EntryStride {
                stride: b.stride,
                entries: b.entries,
            });
        }
    }
    let inner_bytes = u64::from(key.box_inner) * elem;
    if key.box_inner == 0
        || key.box_outer == 0
        || key.box_inner > TMA_MAX_BOX
        || key.box_outer > TMA_MAX_BOX
        || !inner_bytes.is_multiple_of(16)
    {
        return Err(TmaProblem::Box {
            inner: key.box_inner,
            outer: key.box_outer,
        });
    }
    let swizzle_ok = match key.swizzle_bytes {
        0 => true,
        32 | 64 | 128 => inner_bytes <= u64::from(key.swizzle_bytes),
        _ => false,
    };
    if !swizzle_ok {
        return Err(TmaProblem::Swizzle {
            swizzle_bytes: key.swizzle_bytes,
            inner_bytes,
        });
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(rows: u64, cols: u64, ld: u64, dtype: Dtype) -> TensorMapKey {
        TensorMapKey {
            allocation: 7,
            generation: 1,
            offset: 0,
            rows,
            cols,
            ld,
            dtype,
            box_inner: 64,
            box_outer: 64,
            swizzle_bytes: 128,
            batch: None,
        }
    }

    #[test]
    fn tma_rules_name_the_offending_values() {
        let ok = key(100, 4096, 4096, Dtype::Bf16);
        assert_eq!(check_tma(0x10_0000, &ok), Ok(()));
        assert_eq!(
            check_tma(0x10_0008, &ok),
            Err(TmaProblem::BaseMisaligned { address: 0x10_0008 })
        );
        assert_eq!(
            check_tma(0x10_0000, &key(100, 4095, 4095, Dtype::Bf16)),
            Err(TmaProblem::StrideMisaligned {
                ld: 4095,
                stride_bytes: 8190
            })
        );
        // f32 with ld 4 is a 16-byte stride; but a box row of 64 f32 is 256 bytes, wider
        // than the 128-byte swizzle.
        assert_eq!(
            check_tma(0x1000, &key(3, 4, 4, Dtype::F32)),
            Err(TmaProblem::Swizzle {
                swizzle_bytes: 128,
                inner_bytes: 256
            })
        );
        assert_eq!(
            check_tma(0x1000, &key(0, 64, 64, Dtype::Bf16)),
            Err(TmaProblem::Dimension { rows: 0, cols: 64 })
        );
        assert_eq!(
            check_tma(0x1000, &key(1 << 33, 64, 64, Dtype::Bf16)),
            Err(TmaProblem::Dimension {
                rows: 1 << 33,
                cols: 64
            })
        );
        assert_eq!(
            check_tma(0x1000, &key(4, 64, 32, Dtype::Bf16)),
            Err(TmaProblem::StrideRange { ld: 32, cols: 64 })
        );
        // A single row: its stride is never followed (a multiple of 16 bytes still).
        assert_eq!(check_tma(0x1000, &key(1, 64, 32, Dtype::Bf16)), Ok(()));
        assert_eq!(check_tma(0x1000, &key(1, 64, 0, Dtype::Bf16)), Ok(()));
        let big_box = TensorMapKey {
            box_outer: 257,
            ..ok
        };
        assert_eq!(
            check_tma(0x1000, &big_box),
            Err(TmaProblem::Box {
                inner: 64,
                outer: 257
            })
        );
        let bad_swizzle = TensorMapKey {
            swizzle_bytes: 48,
            ..ok
        };
        assert!(matches!(
            check_tma(0x1000, &bad_swizzle),
            Err(TmaProblem::Swizzle {
                swizzle_bytes: 48,
                ..
            })
        ));
        // A batch kernel's 3-D map: the entries' stride a multiple of 16 bytes, below 2^40.
        let batched = |entries, stride| TensorMapKey {
            batch: Some(MapBatch { entries, stride }),
            ..ok
        };
        assert_eq!(check_tma(0x1000, &batched(64, 100 * 4096)), Ok(()));
        assert_eq!(check_tma(0x1000, &batched(1, 0)), Ok(()));
        assert_eq!(
            check_tma(0x1000, &batched(64, 100 * 4096 + 4)),
            Err(TmaProblem::EntryStride {
                stride: 100 * 4096 + 4,
                entries: 64
            })
        );
        assert_eq!(
            check_tma(0x1000, &batched(0, 4096)),
            Err(TmaProblem::EntryStride {
                stride: 4096,
                entries: 0
            })
        );
        assert!(TmaProblem::EntryStride {
            stride: 1,
            entries: 2
        }
        .is_operand());
        assert!(TmaProblem::BaseMisaligned { address: 1 }.is_operand());
        assert!(!TmaProblem::Box { inner: 0, outer: 0 }.is_operand());
    }

    #[test]
    fn the_operand_rules_do_not_depend_on_the_rows() {
        // What decides TMA or the unaligned kernel: address, ld, cols; rows only as >= 1.
        for ld in [4096u64, 4095, 4104, 4097] {
            let verdicts: Vec<bool> = [1u64, 2, 17, 300, 4096]
                .iter()
                .map(|&rows| {
                    check_tma(0x20_0000, &key(rows, 4096.min(ld), ld, Dtype::Bf16)).is_ok()
                })
                .collect();
            assert!(
                verdicts.iter().all(|v| *v == verdicts[0]),
                "ld {ld}: {verdicts:?}"
            );
        }
    }

    #[test]
    fn keys_hash_every_input() {
        let base = key(100, 4096, 4096, Dtype::Bf16);
        let bytes = |k: TensorMapKey| k.digest_bytes().collect::<Vec<u8>>();
        let variants = [
            TensorMapKey {
                allocation: 8,
                ..base
            },
            TensorMapKey {
                generation: 2,
                ..base
            },
            TensorMapKey { offset: 16, ..base },
            TensorMapKey { rows: 101, ..base },
            TensorMapKey { cols: 4088, ..base },
            TensorMapKey { ld: 4104, ..base },
            TensorMapKey {
                dtype: Dtype::F16,
                ..base
            },
            TensorMapKey {
                box_inner: 32,
                ..base
            },
            TensorMapKey {
                box_outer: 128,
                ..base
            },
            TensorMapKey {
                swizzle_bytes: 64,
                ..base
            },
            TensorMapKey {
                batch: Some(MapBatch {
                    entries: 2,
                    stride: 409_600,
                }),
                ..base
            },
        ];
        for v in variants {
            assert_ne!(bytes(base), bytes(v), "{v:?}");
        }
        // Entries and stride both count in a 3-D map's digest.
        let batched = |entries, stride| TensorMapKey {
            batch: Some(MapBatch { entries, stride }),
            ..base
        };
        assert_ne!(bytes(batched(2, 409_600)), bytes(batched(3, 409_600)));
        assert_ne!(bytes(batched(2, 409_600)), bytes(batched(2, 409_608)));
    }
}
