// The tail every contract shares: v = acc; v = v + bias[n]; v = fma(beta, C[m, n], v);
// one rounding to C's dtype at the store. The order is part of the numeric contract. The bias
// bit is the argument struct's (Args::kFlagBias, generated from its `flags` in the specs).
#pragma once
#include "common/element.cuh"

template <typename TC, typename Args>
__device__ __forceinline__ void epilogue_store(float acc, int m, int n, const Args& p) {
    float v = acc;
    if (p.flags & Args::kFlagBias) {
        v = __fadd_rn(v, to_f32(static_cast<const TC*>(p.bias)[n]));
    }
    TC* c = static_cast<TC*>(p.c) + (size_t)m * p.ldc + n;
    if (p.beta != 0.0f) {
        v = fmaf(p.beta, to_f32(*c), v);
    }
    *c = from_f32<TC>(v);
}

// The same tail for a kernel that reads C's old values ahead of its stores (a group of loads in
// flight together, where epilogue_store's load of one element waits for the store before it):
// `old` is what epilogue_old read at (m, n), ignored when beta is 0. Same values, same order.
template <typename TC, typename Args>
__device__ __forceinline__ float epilogue_old(int m, int n, const Args& p) {
    return to_f32(static_cast<const TC*>(p.c)[(size_t)m * p.ldc + n]);
}
template <typename TC, typename Args>
__device__ __forceinline__ void epilogue_store_old(float acc, float old, int m, int n, const Args& p) {
    float v = acc;
    if (p.flags & Args::kFlagBias) {
        v = __fadd_rn(v, to_f32(static_cast<const TC*>(p.bias)[n]));
    }
    if (p.beta != 0.0f) {
        v = fmaf(p.beta, old, v);
    }
    static_cast<TC*>(p.c)[(size_t)m * p.ldc + n] = from_f32<TC>(v);
}
