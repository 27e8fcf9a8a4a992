// Elementwise conversion of a strided row-major matrix, for the half fallback: half inputs are
// widened to f32 (exact) before an f32 GEMM, and its f32 result is rounded to the half output
// (nearest even, once) after it. The same conversions as every kernel's loads and stores
// (common/element.cuh), so fallback and native kernels give the same bits.
#pragma once
#include "common/element.cuh"

template <typename From, typename To, typename Cfg>
struct convert_matrix {
    static constexpr int kThreads = Cfg::kThreads;

    template <typename Args>
    __device__ static void run(const Args& args) {
        const From* src = static_cast<const From*>(args.src);
        To* dst = static_cast<To*>(args.dst);
        const long long cols = args.cols;
        const long long total = static_cast<long long>(args.rows) * cols;
        const long long stride = static_cast<long long>(gridDim.x) * kThreads;
        // A grid-stride loop: the grid depends only on the element count (capped), and every
        // element is written once by one thread.
        for (long long i = static_cast<long long>(blockIdx.x) * kThreads + threadIdx.x; i < total;
             i += stride) {
            const long long r = i / cols;
            const long long c = i - r * cols;
            dst[r * args.ld_dst + c] = from_f32<To>(to_f32(src[r * args.ld_src + c]));
        }
    }
};
