// The tc-k16 epilogue for accumulator fragments that hold two adjacent columns (col, col + 1) of
// one row, as every mma.sync / wgmma f32 fragment does. The value of each element is exactly
// common/epilogue.cuh's (v = acc; + bias[n]; fma(beta, C, v); one rounding): the vector path
// repeats those operations and only changes how the pair is read and written. Whether a pair may
// be written as one vector is decided per tile by the caller (tc_pairs_aligned and the tile's
// columns inside n), never per value, so it cannot change any bit.
#pragma once
#include <cstdint>
#include "common/element.cuh"
#include "common/epilogue.cuh"

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
        if (p.flags & kGemmFlagBias) {
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
