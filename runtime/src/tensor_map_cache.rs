//! Tensor maps (TMA descriptors) of one device: a 2-D operand as stored (`[rows, cols]`,
//! row-major, `ld` elements apart; a batch kernel's maps add the entries of a strided batch as
//! a third dimension), encoded with `cuTensorMapEncodeTiled` for one box and
//! swizzle, out of bounds filled with zeros, L2 promotion 256 B. A map's bytes are a function
//! of its address and geometry alone (shape, ld, dtype, box, swizzle), so the cache is keyed
//! by exactly those: a raw call, whose pointers are registered afresh on every call, finds the
//! map its previous call encoded, as a registered buffer's views do. Callers get the map with
//! its [`TensorMapKey`] (allocation id, generation, byte offset, geometry): a launch record's
//! digest hashes that key, never the map's bytes (which hold the address): see
//! [`argument_digest_with_maps`](crate::argument_digest_with_maps). TMA's rules
//! themselves are gemm-core's ([`check_tma`]), shared with the planner.

use crate::error::GemmError;
use crate::registry::{Registry, Span};
use crate::table::{Dtype, Operand, TensorMap};
use cudarc::driver::sys;
use gemm_core::fast_hash::FastMap;
use gemm_core::{check_tma, MapBatch, TensorMapKey};
use std::sync::Mutex;

/// The 128 bytes of an encoded `CUtensorMap`, 128-byte aligned, as the kernels' argument
/// structs hold it.
pub type TensorMapBytes = TensorMap;

/// Encodes the map of `key` at `address` (the rules of [`check_tma`] already hold).
fn encode(address: u64, key: &TensorMapKey) -> Result<TensorMapBytes, GemmError> {
    use sys::CUtensorMapDataType as Dt;
    use sys::CUtensorMapSwizzle as Sw;
    let dtype = match key.dtype {
        Dtype::F32 => Dt::CU_TENSOR_MAP_DATA_TYPE_FLOAT32,
        Dtype::Bf16 => Dt::CU_TENSOR_MAP_DATA_TYPE_BFLOAT16,
        Dtype::F16 => Dt::CU_TENSOR_MAP_DATA_TYPE_FLOAT16,
    };
    let swizzle = match key.swizzle_bytes {
        32 => Sw::CU_TENSOR_MAP_SWIZZLE_32B,
        64 => Sw::CU_TENSOR_MAP_SWIZZLE_64B,
        128 => Sw::CU_TENSOR_MAP_SWIZZLE_128B,
        _ => Sw::CU_TENSOR_MAP_SWIZZLE_NONE,
    };
    // A batch kernel's map: [entries, rows, cols], the entry stride outermost.
    let (entries, entry_stride) = key.batch.map_or((1, 0), |b| (b.entries, b.stride));
    let rank: u32 = if key.batch.is_some() { 3 } else { 2 };
    let dims: [u64; 3] = [key.cols, key.rows, entries];
    // Rank - 1 strides: the row stride in bytes (then the entry stride). A single row's stride
    // is never followed; it gets at least a row's bytes, rounded up to 16, whatever its ld; so
    // is a single entry's.
    let elem = key.dtype.size_bytes();
    let row_bytes = (key.cols * elem).div_ceil(16) * 16;
    let row_stride = (key.ld * elem).max(row_bytes);
    // A single entry's stride is never followed either: it gets a whole entry's bytes.
    let entry_bytes = if entries > 1 {
        entry_stride * elem
    } else {
        row_stride * key.rows
    };
    let strides: [u64; 2] = [row_stride, entry_bytes];
    let boxes: [u32; 3] = [key.box_inner, key.box_outer, 1];
    let element_strides: [u32; 3] = [1, 1, 1];
    // SAFETY: a zeroed CUtensorMap is a valid out-structure (aligned as the driver wants).
    let mut map: sys::CUtensorMap = unsafe { std::mem::zeroed() };
    // SAFETY: every array holds at least `rank` (or rank - 1) entries checked by `check_tma`; the
    // address is only recorded in the map, not dereferenced here.
    unsafe {
        sys::cuTensorMapEncodeTiled(
            &mut map,
            dtype,
            rank,
            address as *mut std::ffi::c_void,
            dims.as_ptr(),
            strides.as_ptr(),
            boxes.as_ptr(),
            element_strides.as_ptr(),
            sys::CUtensorMapInterleave::CU_TENSOR_MAP_INTERLEAVE_NONE,
            swizzle,
            sys::CUtensorMapL2promotion::CU_TENSOR_MAP_L2_PROMOTION_L2_256B,
            // FILL_NONE fills out-of-bounds elements with zeros.
            sys::CUtensorMapFloatOOBfill::CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE,
        )
    }
    .result()?;
    let mut bytes = [0u8; 128];
    for (chunk, word) in bytes.chunks_exact_mut(8).zip(map.opaque) {
        chunk.copy_from_slice(&word.to_ne_bytes());
    }
    Ok(TensorMap(bytes))
}

/// Maps kept at most: at the limit the cache drops those of dead allocations, and when more
/// than half of it is still live (a batch of many views into live spans) it is cleared, so
/// the scan runs at most once every `CACHE_LIMIT / 2` insertions.
const CACHE_LIMIT: usize = 4096;

/// A device's encoded maps, by address and geometry (a [`TensorMapKey`] with allocation and
/// generation 0 and the address as its offset), with the span that encoded each (shared by
/// the device's streams).
#[derive(Default)]
pub(crate) struct TensorMapCache {
    maps: Mutex<FastMap<TensorMapKey, (Span, TensorMapBytes)>>,
}

impl TensorMapCache {
    fn lock(&self) -> std::sync::MutexGuard<'_, FastMap<TensorMapKey, (Span, TensorMapBytes)>> {
        self.maps.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// How many maps are cached.
    pub(crate) fn len(&self) -> usize {
        self.lock().len()
    }
}

impl TensorMapCache {
    /// The tensor map of an operand already validated against the registry: `span` at byte
    /// `offset`, stored `rows x cols` with leading dimension `ld`. Checks TMA's rules first
    /// ([`GemmError::Tma`]), then encodes, or takes the map from the cache.
    pub(crate) fn map_for(
        &self,
        registry: &Registry,
        operand: Operand,
        (span, offset): (Span, u64),
        (rows, cols, ld, dtype): (u64, u64, u64, Dtype),
        (box_inner, box_outer, swizzle_bytes): (u32, u32, u32),
        batch: Option<MapBatch>,
    ) -> Result<(TensorMapKey, TensorMapBytes), GemmError> {
        let key = TensorMapKey {
            allocation: span.id,
            generation: span.generation,
            offset,
            rows,
            cols,
            ld,
            dtype,
            box_inner,
            box_outer,
            swizzle_bytes,
            batch,
        };
        let address = span.base.saturating_add(offset);
        check_tma(address, &key).map_err(|problem| GemmError::Tma { operand, problem })?;
        // What the encoding reads: the address and the geometry, not the registration.
        let lookup = TensorMapKey {
            allocation: 0,
            generation: 0,
            offset: address,
            ..key
        };
        if let Some((_, map)) = self.lock().get(&lookup) {
            return Ok((key, *map));
        }
        let map = encode(address, &key)?;
        let mut cache = self.lock();
        if cache.len() >= CACHE_LIMIT {
            cache.retain(|_, (s, _)| registry.check(s).is_ok());
            if cache.len() >= CACHE_LIMIT / 2 {
                cache.clear();
            }
        }
        cache.insert(lookup, (span, map));
        Ok((key, map))
    }
}
