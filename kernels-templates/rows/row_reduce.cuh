// Row kernels of the batch-invariant mode (docs/fronts.md): softmax, log_softmax and mean along
// each row of a rows x cols matrix. One block reduces one row, so the reduction tree of a row
// depends only on cols and the block size, never on how many rows there are, how many blocks
// run or which block takes the row. Contract row-t<N> (N = kThreads):
//   thread t: s_t = +0; for c = t, t + N, t + 2N, ... < cols ascending: s_t = s_t + f(x[c])
//   warp w (threads 32w .. 32w + 31): for d = 16, 8, 4, 2, 1: s = s + shfl_xor(s, d)
//   row: S = W_0; for w = 1 .. N/32 - 1 ascending: S = S + W_w   (W_w: warp w's total)
// all in f32 (round to nearest even), f(x) = x for mean; for softmax and log_softmax the row's
// maximum M first (the same tree with fmaxf, exact in any order), then f(x) = expf(x - M).
// Outputs: mean y = S / cols; softmax y[c] = expf(x[c] - M) / S; log_softmax
// y[c] = (x[c] - M) - logf(S); each rounded once to the output type. cols = 0: mean 0/0 (NaN,
// as torch), softmax writes nothing.
#pragma once
#include "common/element.cuh"

template <typename From, typename To, typename Cfg>
struct row_reduce {
    static constexpr int kThreads = Cfg::kThreads;
    static constexpr int kOp = Cfg::kOp;
    static constexpr int kWarps = kThreads / 32;
    static_assert(kThreads % 32 == 0 && kWarps >= 2 && kWarps <= 32, "whole warps, 2 to 32");
    static_assert(kOp >= 0 && kOp <= 2, "softmax, log_softmax or mean");

    // The block's fold of one value a thread: butterfly within each warp, then the warps'
    // totals in ascending order by one thread, broadcast through shared memory.
    template <bool kMax>
    __device__ static float fold(float v, float* warp_totals) {
#pragma unroll
        for (int d = 16; d >= 1; d /= 2) {
            const float o = __shfl_xor_sync(0xffffffffu, v, d);
            v = kMax ? fmaxf(v, o) : v + o;
        }
        const int warp = threadIdx.x / 32;
        if (threadIdx.x % 32 == 0) warp_totals[warp] = v;
        __syncthreads();
        if (threadIdx.x == 0) {
            float s = warp_totals[0];
            for (int w = 1; w < kWarps; ++w) s = kMax ? fmaxf(s, warp_totals[w]) : s + warp_totals[w];
            warp_totals[kWarps] = s;
        }
        __syncthreads();
        const float total = warp_totals[kWarps];
        __syncthreads();  // warp_totals is reused by the next fold
        return total;
    }

    template <typename Args>
    __device__ static void run(const Args& args) {
        __shared__ float warp_totals[kWarps + 1];
        const From* src = static_cast<const From*>(args.src);
        To* dst = static_cast<To*>(args.dst);
        const int cols = args.cols;
        // Rows by grid stride: whichever block takes a row reduces it whole.
        for (long long r = blockIdx.x; r < args.rows; r += gridDim.x) {
            const From* x = src + r * args.ld_src;
            To* y = dst + r * args.ld_dst;
            if (kOp == 2) {
                float s = 0.0f;
                for (int c = threadIdx.x; c < cols; c += kThreads) s = s + to_f32(x[c]);
                const float total = fold<false>(s, warp_totals);
                if (threadIdx.x == 0) y[0] = from_f32<To>(total / static_cast<float>(cols));
                continue;
            }
            float m = -INFINITY;
            for (int c = threadIdx.x; c < cols; c += kThreads) m = fmaxf(m, to_f32(x[c]));
            const float row_max = fold<true>(m, warp_totals);
            float s = 0.0f;
            for (int c = threadIdx.x; c < cols; c += kThreads) s = s + expf(to_f32(x[c]) - row_max);
            const float total = fold<false>(s, warp_totals);
            if (kOp == 0) {
                for (int c = threadIdx.x; c < cols; c += kThreads)
                    y[c] = from_f32<To>(expf(to_f32(x[c]) - row_max) / total);
            } else {
                const float log_total = logf(total);
                for (int c = threadIdx.x; c < cols; c += kThreads)
                    y[c] = from_f32<To>((to_f32(x[c]) - row_max) - log_total);
            }
        }
    }
};
