// The tc-k16 epilogue for accumulator fragments that hold two adjacent columns (col, col + 1) of
// one row, as every mma.sync / wgmma f32 fragment does. The value of each element is exactly
// common/epilogue.cuh's (v = acc; + bias[n]; fma(beta, C, v); one rounding): the vector path
// repeats those operations and only changes how the pair is read and written. Whether a pair may
// be written as one vector is decided per tile by the caller (tc_pairs_aligned and the tile's
// columns inside n), never per value, so it cannot change any bit.
//
// tc_epi_pair gives the same values to a caller that stores them elsewhere (the TMA-store
// epilogue of wgmma_tma_gemm: shared-memory staging, then a TMA store through p.c_map).
#pragma once
#include <cstdint>
#include <cstring>
#include "common/element.cuh"
#include "common/epilogue.cuh"

// Args::kFlagCTensorMap (the `c_tensor_map` bit of the argument struct's `flags` in the specs):
// C may be written through the tensor map p.c_map (rows = m, columns = n, ld = ldc; box and
// swizzle from the kernel's kCBox*, kSwizzleC). The host sets it only when C can take TMA
// (16-byte aligned base, ldc * sizeof(TC) a multiple of 16), from addresses and ldc, never from
// m. It chooses how C is written, never a value; kernels without a TMA-store epilogue ignore it.
// Whether a kernel with a TMA-store epilogue writes C through p.c_map: the bit is set and a row
// of C ends on a 16-byte boundary (n * sizeof(TC) a multiple of 16). A TMA store writes whole
// 16-byte chunks: where n ends inside one, it would also write the columns n.. of that chunk
// (C's padding, or another tensor's columns), so such an n keeps the direct stores. Uniform over
// the grid, from n alone (never m): it changes no value.
template <typename TC, typename Args>
__device__ __forceinline__ bool tc_c_tensor_map(const Args& p) {
    return (p.flags & Args::kFlagCTensorMap) != 0 && (p.n * (int)sizeof(TC)) % 16 == 0;
}

template <typename TC> struct alignas(2 * sizeof(TC)) TcPair { TC v[2]; };

// True when every element pair at an even column offset from an even column is 2-element
// aligned: C's base is aligned to a pair and ldc is even.
template <typename TC, typename Args>
__device__ __forceinline__ bool tc_pairs_aligned(const Args& p) {
    return ((uintptr_t)p.c % (2 * sizeof(TC))) == 0 && (p.ldc % 2) == 0;
}

// Stores acc0 at (row, col) and acc1 at (row, col + 1). Rows >= m and columns >= n are skipped.
// vec: the caller guarantees (row, col) is pair-aligned and col + 1 < n.
template <typename TC, typename Args>
__device__ __forceinline__ void tc_store_pair(const Args& p, int row, int col, float acc0, float acc1, bool vec) {
    if (row >= p.m) return;
    if (vec) {
        TC* c = static_cast<TC*>(p.c) + (size_t)row * p.ldc + col;
        float v0 = acc0, v1 = acc1;
        if (p.flags & Args::kFlagBias) {
            const TC* bias = static_cast<const TC*>(p.bias);
            v0 = __fadd_rn(v0, to_f32(bias[col]));
            v1 = __fadd_rn(v1, to_f32(bias[col + 1]));
        }
        if (p.beta != 0.0f) {
            const TcPair<TC> old = *reinterpret_cast<const TcPair<TC>*>(c);
            v0 = fmaf(p.beta, to_f32(old.v[0]), v0);
            v1 = fmaf(p.beta, to_f32(old.v[1]), v1);
        }
        TcPair<TC> out;
        out.v[0] = from_f32<TC>(v0);
        out.v[1] = from_f32<TC>(v1);
        *reinterpret_cast<TcPair<TC>*>(c) = out;
    } else {
        if (col < p.n) epilogue_store<TC>(acc0, row, col, p);
        if (col + 1 < p.n) epilogue_store<TC>(acc1, row, col + 1, p);
    }
}

// The values tc_store_pair would store at (row, col) and (row, col + 1), left in v0 / v1 (which
// hold the accumulators on entry), before the rounding: v = acc; + bias[col]; fma(beta, C, v),
// the same operations in the same order. Reads bias only for columns < n and the old C only for
// rows < m and columns < n; outside, the values are meaningless and must not be stored.
// The caller guarantees that C's base is pair-aligned and ldc even when beta != 0 (both follow
// from the conditions of Args::kFlagCTensorMap).
template <typename TC, typename Args>
__device__ __forceinline__ void tc_epi_pair(const Args& p, int row, int col, float& v0, float& v1) {
    const bool in0 = col < p.n, in1 = col + 1 < p.n;
    if (p.flags & Args::kFlagBias) {
        const TC* bias = static_cast<const TC*>(p.bias);
        if (in0) v0 = __fadd_rn(v0, to_f32(bias[col]));
        if (in1) v1 = __fadd_rn(v1, to_f32(bias[col + 1]));
    }
    if (p.beta != 0.0f && row < p.m) {
        const TC* c = static_cast<const TC*>(p.c) + (size_t)row * p.ldc + col;
        if (in1) {
            const TcPair<TC> old = *reinterpret_cast<const TcPair<TC>*>(c);
            v0 = fmaf(p.beta, to_f32(old.v[0]), v0);
            v1 = fmaf(p.beta, to_f32(old.v[1]), v1);
        } else if (in0) {
            v0 = fmaf(p.beta, to_f32(c[0]), v0);
        }
    }
}

// tc_epi_pair with the old C supplied by the caller (o0 at (row, col), o1 at (row, col + 1), as
// stored), read from the TMA-store epilogue's staging buffer, where a TMA load put the old tile:
// v = acc; + bias[col]; fma(beta, o, v), the same operations in the same order as tc_epi_pair.
// The caller calls it only when beta != 0; rows >= m and columns >= n hold TMA's zero fill (or
// nothing loaded) and are never stored.
template <typename TC, typename Args>
__device__ __forceinline__ void tc_epi_pair_old(const Args& p, int col, float& v0, float& v1, TC o0, TC o1) {
    if (p.flags & Args::kFlagBias) {
        const TC* bias = static_cast<const TC*>(p.bias);
        if (col < p.n) v0 = __fadd_rn(v0, to_f32(bias[col]));
        if (col + 1 < p.n) v1 = __fadd_rn(v1, to_f32(bias[col + 1]));
    }
    v0 = fmaf(p.beta, to_f32(o0), v0);
    v1 = fmaf(p.beta, to_f32(o1), v1);
}

// The two 16-bit values of a pair, rounded once each (from_f32), as one 32-bit word: (col) in the
// low half, (col + 1) in the high half, as they lie in memory.
template <typename TC>
__device__ __forceinline__ uint32_t tc_pack_pair(float v0, float v1) {
    static_assert(sizeof(TC) == 2, "tc_pack_pair: 16-bit TC only");
    TcPair<TC> t;
    t.v[0] = from_f32<TC>(v0);
    t.v[1] = from_f32<TC>(v1);
    uint32_t u;
    memcpy(&u, &t, sizeof u);
    return u;
}
