// Transposing bit copy of a strided row-major matrix: dst[c, r] = src[r, c] for a rows x cols
// source (leading dimension ld_src) into a cols x rows destination (ld_dst). The prepass of a
// kernel whose family has `prepass = "transpose-a"`: a tn call's A, stored [k, m], is copied
// into [m, k] scratch and the kernel reads it as nn does. The stored bits move unchanged (a
// load and a store, no arithmetic), so the GEMM sees the caller's values.
#pragma once
#include "common/element.cuh"

template <typename From, typename To, typename Cfg>
struct transpose_matrix {
    static_assert(sizeof(From) == sizeof(To), "a transposition copies a type to itself");
    static constexpr int kThreads = Cfg::kThreads;
    // A block moves one 32 x 32 tile at a time (ConversionInfo::TRANSPOSE_TILE on the host):
    // each warp reads 32 consecutive elements of a source row and writes 32 consecutive
    // elements of a destination row, so both sides are whole 128-byte lines for f32; the
    // tile's padding column puts a column's 32 elements in 32 banks.
    static constexpr int kTile = 32;
    static constexpr int kRowsAPass = kThreads / kTile;
    static_assert(kThreads % kTile == 0 && kRowsAPass >= 1, "whole warps");

    template <typename Args>
    __device__ static void run(const Args& args) {
        __shared__ From tile[kTile][kTile + 1];
        const From* src = static_cast<const From*>(args.src);
        To* dst = static_cast<To*>(args.dst);
        // 64-bit indices: rows and cols may be up to 2^31 - 1.
        const long long rows = args.rows;
        const long long cols = args.cols;
        const long long tiles_c = (cols + kTile - 1) / kTile;
        const long long total = (rows + kTile - 1) / kTile * tiles_c;
        const int lane = threadIdx.x % kTile;
        const int row = threadIdx.x / kTile;
        // A grid-stride loop over tiles: every element is written once by one thread whatever
        // the grid.
        for (long long t = blockIdx.x; t < total; t += gridDim.x) {
            const long long tr = t / tiles_c;
            const long long r0 = tr * kTile;
            const long long c0 = (t - tr * tiles_c) * kTile;
#pragma unroll
            for (int i = row; i < kTile; i += kRowsAPass) {
                const long long r = r0 + i;
                const long long c = c0 + lane;
                if (r < rows && c < cols) tile[i][lane] = src[r * args.ld_src + c];
            }
            __syncthreads();
#pragma unroll
            for (int i = row; i < kTile; i += kRowsAPass) {
                const long long c = c0 + i;  // the destination's row
                const long long r = r0 + lane;
                if (c < cols && r < rows) {
                    const From v = tile[lane][i];
                    dst[c * args.ld_dst + r] = *reinterpret_cast<const To*>(&v);
                }
            }
            // The next tile overwrites the shared tile.
            __syncthreads();
        }
    }
};
