// One entry of a strided batch, for kinds whose manifest says `batch = true`: grid z is the
// entry, and each operand of entry z starts its batch stride (elements, the ABI's
// a_batch_stride, ...) times z past entry 0's. A kernel of such a kind reads its operands
// through this view, so an entry runs exactly the code (and gives exactly the bits) of one
// GEMM on those pointers; a single GEMM is the batch of one (z = 0, strides 0). The fields are
// those the plain-load and cp.async kernels read, under the names of the ABI struct; all but
// the pointers refer to the launch's own arguments, so they cost no registers of their own.
#pragma once
#include <cstdint>

template <class Args>
struct BatchEntry {
    static constexpr auto kFlagBias = Args::kFlagBias;
    const void* a;
    const void* b;
    const void* bias;
    void* c;
    const int& m;
    const int& n;
    const int& k;
    const int& lda;
    const int& ldb;
    const int& ldc;
    const float& beta;
    const unsigned int& flags;
};

template <typename TAB, typename TC, class Args>
__device__ __forceinline__ BatchEntry<Args> batch_entry(const Args& p) {
    const long long z = blockIdx.z;
    return BatchEntry<Args>{
        static_cast<const TAB*>(p.a) + z * p.a_batch_stride,
        static_cast<const TAB*>(p.b) + z * p.b_batch_stride,
        p.bias ? static_cast<const void*>(static_cast<const TC*>(p.bias) + z * p.bias_batch_stride) : nullptr,
        static_cast<TC*>(p.c) + z * p.c_batch_stride,
        p.m, p.n, p.k, p.lda, p.ldb, p.ldc, p.beta, p.flags,
    };
}

// The epilogue's view of entry z of a batched kernel that reads its operands through tensor maps
// (their third coordinate is the entry, so only C and the bias, which the epilogue addresses
// directly, move here): C and bias at their batch strides, every other field the launch's own.
// The tc epilogue (tc/tc_epilogue.cuh) takes it in place of the argument struct. With z = 0 (a
// kernel built for one GEMM a launch) it is the argument struct's values.
template <class Args>
struct TcEntryOut {
    static constexpr auto kFlagBias = Args::kFlagBias;
    static constexpr auto kFlagCTensorMap = Args::kFlagCTensorMap;
    const void* bias;
    void* c;
    const int& m;
    const int& n;
    const int& ldc;
    const float& beta;
    const unsigned int& flags;
};

template <typename TC, class Args>
__device__ __forceinline__ TcEntryOut<Args> tc_entry_out(const Args& p, long long z) {
    return TcEntryOut<Args>{
        p.bias ? static_cast<const void*>(static_cast<const TC*>(p.bias) + z * p.bias_batch_stride) : nullptr,
        static_cast<TC*>(p.c) + z * p.c_batch_stride,
        p.m, p.n, p.ldc, p.beta, p.flags,
    };
}
