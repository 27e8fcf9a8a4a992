// Row kernels of the batch-invariant mode (docs/fronts.md): softmax, log_softmax and mean along
// each row of a rows x cols matrix. One block reduces one row, so the reduction tree of a row
// depends only on cols and the block size, never on how many rows there are, how many blocks
// run or which block takes the row. Contract row-t<N> (N = kThreads):
//   thread t: s_t = +0; for c = t, t + N, t + 2N, ... < cols ascending: s_t = s_t + f(x[c])
//   warp w (threads 32w .. 32w + 31): for d = 16, 8, 4, 2, 1: s = s + shfl_xor(s, d)
//   row: S = W_0; for w = 1 .. N/32 - 1 ascending: S = S + W_w   (W_w: warp w's total)
// all in f32 (round to nearest even), f(x) = x for mean; for softmax and log_softmax the row's
// maximum M first (the same tree with fmaxf from s_t = -inf, exact in any order), then
// f(x) = expf(x - M).
// Outputs: mean y = S / cols; softmax y[c] = expf(x[c] - M) / S; log_softmax
// y[c] = (x[c] - M) - logf(S); each rounded once to the output type. cols = 0: mean 0/0 (NaN,
// as torch), softmax writes nothing.
//
// Two paths compute that tree. Rows of more than Cfg::kWarpCols columns: one block a row, the
// tree as written. Shorter rows (attention's softmax over a few hundred keys): one warp a row,
// the block's warps on consecutive rows, where a block a row would spend its time in barriers.
// The warp keeps the row in registers and plays the block's N threads: lane l holds thread
// t = l + 32w's sums for each w (the elements c = t + N j), runs warp w's butterfly on them
// with its own shuffles (after which every lane holds W_w: a + b == b + a, so the butterfly's
// lanes agree), and adds the W_w in ascending w. Same sums in the same order: the same bits,
// whichever path the row length picks (tests/host_conversions.rs runs both on the CPU).
// The runtime's grid (gemm_core conversion_grid) follows the same threshold.
#pragma once
#include "common/element.cuh"

template <typename From, typename To, typename Cfg>
struct row_reduce {
    static constexpr int kThreads = Cfg::kThreads;
    static constexpr int kOp = Cfg::kOp;
    static constexpr int kWarps = kThreads / 32;
    static_assert(kThreads % 32 == 0 && kWarps >= 2 && kWarps <= 32, "whole warps, 2 to 32");
    // Rows of at most kWarpCols columns take the warp path: kPer elements a lane, in registers.
    static constexpr int kWarpCols = Cfg::kWarpCols;
    static constexpr int kPer = kWarpCols / 32;
    static_assert(kWarpCols % 32 == 0 && kPer <= 64, "whole warps of columns, at most 64 registers a lane");
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

    // The warp path's fold: lane l holds thread (l + 32w)'s sum in s[w]; each w's butterfly,
    // then the W_w in ascending w. Every lane returns the total.
    //
    // Cfg::kHalvingFold (the spec's `warp_fold = "halving"`), with a power-of-two number of
    // warps, runs the butterflies as one recursive halving instead: at
    // distance 16, then 8, ... (log2(kWarps) distances) a lane keeps half of the sums it holds,
    // sends the other half to its partner and adds what it receives to what it kept, own +
    // received, as a butterfly's lane adds own + shuffled: the same pairs in the same order,
    // so the same values, in kWarps - 1 shuffles instead of 5 a warp up to there. The remaining
    // distances are plain butterfly steps. Lane l then holds W_w for w = (l >> (5 - H)) %
    // kWarps (H halvings), which every lane gathers in ascending w with indexed shuffles.
    template <bool kMax>
    __device__ static float combine(float own, float other) {
        return kMax ? fmaxf(own, other) : own + other;
    }

    template <bool kMax>
    __device__ static float fold_lanes(float (&s)[kWarps]) {
        if constexpr (!Cfg::kHalvingFold || (kWarps & (kWarps - 1)) != 0) {
#pragma unroll
            for (int w = 0; w < kWarps; ++w) {
#pragma unroll
                for (int d = 16; d >= 1; d /= 2) s[w] = combine<kMax>(s[w], __shfl_xor_sync(0xffffffffu, s[w], d));
            }
            float total = s[0];
#pragma unroll
            for (int w = 1; w < kWarps; ++w) total = combine<kMax>(total, s[w]);
            return total;
        } else {
            constexpr int kHalvings = kWarps >= 32 ? 5 : kWarps >= 16 ? 4 : kWarps >= 8 ? 3 : kWarps >= 4 ? 2 : 1;
            const int lane = threadIdx.x % 32;
#pragma unroll
            for (int h = 0; h < kHalvings; ++h) {
                const int d = 16 >> h, half = kWarps >> (h + 1);
                const bool upper = (lane & d) != 0;
#pragma unroll
                for (int i = 0; i < half; ++i) {
                    const float keep = upper ? s[i + half] : s[i];
                    const float send = upper ? s[i] : s[i + half];
                    s[i] = combine<kMax>(keep, __shfl_xor_sync(0xffffffffu, send, d));
                }
            }
            float x = s[0];
#pragma unroll
            for (int d = 16 >> kHalvings; d >= 1; d /= 2) x = combine<kMax>(x, __shfl_xor_sync(0xffffffffu, x, d));
            constexpr int kShift = 5 - kHalvings;  // W_w sits at lanes w << kShift ..
            float total = __shfl_sync(0xffffffffu, x, 0);
#pragma unroll
            for (int w = 1; w < kWarps; ++w) total = combine<kMax>(total, __shfl_sync(0xffffffffu, x, w << kShift));
            return total;
        }
    }

    // Rows of at most kWarpCols columns, a warp a row. Lane l's element i is column
    // c = l + 32 i: thread t = c % N = l + 32 (i % kWarps) of chain j = i / kWarps. Every warp
    // of the block runs each round's shuffles (a warp past the last row redoes the last row and
    // writes nothing), so the block's control flow is uniform.
    template <typename Args>
    __device__ static void run_warps(const Args& args) {
        const From* src = static_cast<const From*>(args.src);
        To* dst = static_cast<To*>(args.dst);
        const int cols = args.cols;
        const int lane = threadIdx.x % 32;
        for (long long base = static_cast<long long>(blockIdx.x) * kWarps; base < args.rows;
             base += static_cast<long long>(gridDim.x) * kWarps) {
            const long long row = base + threadIdx.x / 32;
            const bool active = row < args.rows;
            const From* x = src + (active ? row : args.rows - 1) * args.ld_src;
            float v[kPer];
#pragma unroll
            for (int i = 0; i < kPer; ++i) {
                const int c = lane + 32 * i;
                v[i] = c < cols ? to_f32(x[c]) : 0.0f;
            }
            if constexpr (kOp == 2) {
                warp_mean(v, cols, lane, active ? dst + row * args.ld_dst : nullptr);
            } else {
                warp_softmax(v, cols, lane, active ? dst + row * args.ld_dst : nullptr);
            }
        }
    }

    // The warp path's mean of one row held as v (nothing written when y is null).
    __device__ static void warp_mean(const float (&v)[kPer], int cols, int lane, To* y) {
        float s[kWarps];
#pragma unroll
        for (int w = 0; w < kWarps; ++w) {
            s[w] = 0.0f;
#pragma unroll
            for (int i = w; i < kPer; i += kWarps)
                if (lane + 32 * i < cols) s[w] = s[w] + v[i];
        }
        const float total = fold_lanes<false>(s);
        if (y != nullptr && lane == 0) y[0] = from_f32<To>(total / static_cast<float>(cols));
    }

    // The warp path's softmax or log_softmax of one row held as v (nothing written when y is
    // null).
    __device__ static void warp_softmax(float (&v)[kPer], int cols, int lane, To* y) {
        float s[kWarps];
#pragma unroll
        for (int w = 0; w < kWarps; ++w) {
            s[w] = -INFINITY;
#pragma unroll
            for (int i = w; i < kPer; i += kWarps)
                if (lane + 32 * i < cols) s[w] = fmaxf(s[w], v[i]);
        }
        const float row_max = fold_lanes<true>(s);
#pragma unroll
        for (int w = 0; w < kWarps; ++w) {
            s[w] = 0.0f;
#pragma unroll
            for (int i = w; i < kPer; i += kWarps) {
                if (lane + 32 * i < cols) {
                    const float e = expf(v[i] - row_max);
                    s[w] = s[w] + e;
                    if (kOp == 0) v[i] = e;  // softmax divides the same e
                }
            }
        }
        const float total = fold_lanes<false>(s);
        if (y == nullptr) return;
        const float log_total = kOp == 1 ? logf(total) : 0.0f;
#pragma unroll
        for (int i = 0; i < kPer; ++i) {
            const int c = lane + 32 * i;
            if (c < cols) y[c] = from_f32<To>(kOp == 0 ? v[i] / total : (v[i] - row_max) - log_total);
        }
    }

    template <typename Args>
    __device__ static void run(const Args& args) {
        if (args.cols <= kWarpCols) {
            run_warps(args);
            return;
        }
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
