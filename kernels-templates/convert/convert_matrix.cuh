// Elementwise conversion of a strided row-major matrix. The half fallback widens half inputs to
// f32 (exact) before an f32 GEMM and rounds its f32 result to the half output (nearest even,
// once) after it, with the same conversions as every kernel's loads and stores
// (common/element.cuh), so fallback and native kernels give the same bits. A conversion of a
// type to itself (the repack) copies the stored bits unchanged, NaN payloads included: an
// operand TMA cannot take (its leading dimension or address off 16 bytes) is copied into an
// aligned scratch copy that the route's own kernel then reads.
#pragma once
#include "common/element.cuh"

template <typename From, typename To>
struct convert_element {
    __device__ static To apply(From x) { return from_f32<To>(to_f32(x)); }
};
template <typename T>
struct convert_element<T, T> {
    __device__ static T apply(T x) { return x; }
};

template <typename From, typename To, typename Cfg>
struct convert_matrix {
    static constexpr int kThreads = Cfg::kThreads;
    // A block converts a segment of one row per step: kUnroll independent loads a thread, so
    // enough bytes are in flight to stream at memory speed.
    static constexpr int kUnroll = 4;
    static constexpr int kSegment = kThreads * kUnroll;

    template <typename Args>
    __device__ static void run(const Args& args) {
        const From* src = static_cast<const From*>(args.src);
        To* dst = static_cast<To*>(args.dst);
        const int cols = args.cols;
        const long long segments_a_row = (cols + kSegment - 1) / kSegment;
        const long long total = static_cast<long long>(args.rows) * segments_a_row;
        // A grid-stride loop over row segments: the grid depends only on the element count
        // (capped), a row of any length is spread over blocks, and every element is written
        // once by one thread.
        for (long long s = blockIdx.x; s < total; s += gridDim.x) {
            const long long r = s / segments_a_row;
            const int c0 = static_cast<int>(s - r * segments_a_row) * kSegment + threadIdx.x;
            const From* in = src + r * args.ld_src;
            To* out = dst + r * args.ld_dst;
            From v[kUnroll];
#pragma unroll
            for (int j = 0; j < kUnroll; ++j) {
                const int c = c0 + j * kThreads;
                if (c < cols) v[j] = in[c];
            }
#pragma unroll
            for (int j = 0; j < kUnroll; ++j) {
                const int c = c0 + j * kThreads;
                if (c < cols) out[c] = convert_element<From, To>::apply(v[j]);
            }
        }
    }
};
