// The operand path and inner step of the warp-tiled exact kernels (fma_warp_gemm, and
// fma_warp_split, which runs the same chains split over a cluster): TM x 8 elements a thread
// (TM = 8 or 16) in runs of 4 rows placed BM/(TM/4) apart and two runs of 4 columns BN/2 apart,
// warps of 4 x 8 threads,
// operands widened to f32 into shared memory as [K][M] and [K][N] through registers, as
// 4-element vectors where aligned. Which thread runs an element and how the loads are shaped
// never changes its reduction order.
#pragma once
#include <cstdint>
#include "common/element.cuh"
#include "common/operand_layout.cuh"

template <typename TAB, int OP, int BM, int BN, int BK, int kThreads, int TM = 8>
struct fma_warp_tiles {
    static constexpr int TX = BN / 8, TY = BM / TM;  // threads along n and m
    static constexpr int kRunsM = TM / 4;            // a thread's runs of 4 rows, BM / kRunsM apart
    static constexpr int kStageFloats = BK * (BM + BN);
    // Four-element vectors a k-tile of A and of B, and a thread's share of them.
    static constexpr int kVecA = BM * BK / 4, kVecB = BN * BK / 4;
    static constexpr int kLoadsA = (kVecA + kThreads - 1) / kThreads;
    static constexpr int kLoadsB = (kVecB + kThreads - 1) / kThreads;
    using Layout = OperandLayout<OP>;
    static_assert(kThreads == TX * TY && TX % 8 == 0 && TY % 4 == 0 && BK % 4 == 0 && (TM == 8 || TM == 16),
                  "fma_warp_tiles: TM x 8 elements a thread in warps of 4 x 8 threads, k in vectors of 4");

    // Four consecutive elements of an operand, widened to f32: one vector load when `vec` (the
    // operand's base and leading dimension are 4-element aligned) and all four are in bounds,
    // else one by one, zero past `limit` (the count of valid elements from `src` on).
    __device__ __forceinline__ static float4 load4(const TAB* src, bool vec, int limit) {
        if (vec && limit >= 4) {
            if constexpr (sizeof(TAB) == 4) {
                return __ldg(reinterpret_cast<const float4*>(src));
            } else {
                const uint2 raw = __ldg(reinterpret_cast<const uint2*>(src));
                const TAB* h = reinterpret_cast<const TAB*>(&raw);
                return make_float4(to_f32(h[0]), to_f32(h[1]), to_f32(h[2]), to_f32(h[3]));
            }
        }
        float v[4];
#pragma unroll
        for (int q = 0; q < 4; ++q) v[q] = q < limit ? to_f32(src[q]) : 0.0f;
        return make_float4(v[0], v[1], v[2], v[3]);
    }

    // Vector l of a k-tile of an operand of R rows (m or n) stored with k contiguous: row
    // v % R, k 4 * (v / R) ..; a warp takes 32 consecutive rows of one k.
    // Vector l of one stored with its rows contiguous: k v / (R / 4), rows 4 * (v % (R / 4)) ..
    template <int R, bool kContiguousK>
    __device__ __forceinline__ static void vec_coord(int v, int& r, int& kk) {
        if (kContiguousK) { r = v % R; kk = 4 * (v / R); } else { kk = v / (R / 4); r = 4 * (v % (R / 4)); }
    }

    // Loads vectors of an operand tile: `base` is the operand at (row0, k0), rows and ks the
    // valid extent from there. `interior`: the whole tile is in bounds and vector-aligned (the
    // same for every thread of the block), so every vector is one load without checks.
    template <int R, int kVec, int kLoads, bool kContiguousK>
    __device__ __forceinline__ static void load_tile(const TAB* base, int ld, bool vec, int rows, int ks,
                                                     bool interior, float4 (&reg)[kLoads]) {
        if (interior) {
#pragma unroll
            for (int l = 0; l < kLoads; ++l) {
                const int v = threadIdx.x + l * kThreads;
                int r, kk;
                vec_coord<R, kContiguousK>(v, r, kk);
                if (kVec % kThreads == 0 || v < kVec)
                    reg[l] = load4(base + (kContiguousK ? (size_t)r * ld + kk : (size_t)kk * ld + r), true, 4);
            }
            return;
        }
#pragma unroll
        for (int l = 0; l < kLoads; ++l) {
            const int v = threadIdx.x + l * kThreads;
            int r, kk;
            vec_coord<R, kContiguousK>(v, r, kk);
            if (v >= kVec || r >= rows || kk >= ks) {
                reg[l] = make_float4(0.0f, 0.0f, 0.0f, 0.0f);
            } else if (kContiguousK) {
                reg[l] = load4(base + (size_t)r * ld + kk, vec, ks - kk);
            } else {
                reg[l] = load4(base + (size_t)kk * ld + r, vec, rows - r);
            }
        }
    }

    // Stores the loaded vectors as [BK][R] f32.
    template <int R, int kVec, int kLoads, bool kContiguousK>
    __device__ __forceinline__ static void store_tile(float* dst, const float4 (&reg)[kLoads]) {
#pragma unroll
        for (int l = 0; l < kLoads; ++l) {
            const int v = threadIdx.x + l * kThreads;
            if (v >= kVec) continue;
            int r, kk;
            vec_coord<R, kContiguousK>(v, r, kk);
            if (kContiguousK) {
                dst[(kk + 0) * R + r] = reg[l].x;
                dst[(kk + 1) * R + r] = reg[l].y;
                dst[(kk + 2) * R + r] = reg[l].z;
                dst[(kk + 3) * R + r] = reg[l].w;
            } else {
                *reinterpret_cast<float4*>(dst + kk * R + r) = reg[l];
            }
        }
    }

    struct Tiles {
        const TAB* a;  // A at (m0, 0)
        const TAB* b;  // B at (0, n0)
        bool vec_a, vec_b;
        int rows_a, rows_b;  // valid rows of the block's A and B tiles (m and n)
        bool interior_a, interior_b;  // vector-aligned, and every row of the tile valid
    };

    template <typename Args>
    __device__ __forceinline__ static void load(const Tiles& t, const Args& g, int k0, float4 (&ra)[kLoadsA],
                                                float4 (&rb)[kLoadsB]) {
        const int ks = g.k - k0;
        const TAB* a = t.a + (Layout::kAContiguousK ? (size_t)k0 : (size_t)k0 * g.lda);
        const TAB* b = t.b + (Layout::kBContiguousK ? (size_t)k0 : (size_t)k0 * g.ldb);
        const bool full_k = ks >= BK;
        load_tile<BM, kVecA, kLoadsA, Layout::kAContiguousK>(a, g.lda, t.vec_a, t.rows_a, ks,
                                                             full_k && t.interior_a, ra);
        load_tile<BN, kVecB, kLoadsB, Layout::kBContiguousK>(b, g.ldb, t.vec_b, t.rows_b, ks,
                                                             full_k && t.interior_b, rb);
    }

    __device__ __forceinline__ static void store(float* stage, const float4 (&ra)[kLoadsA],
                                                 const float4 (&rb)[kLoadsB]) {
        store_tile<BM, kVecA, kLoadsA, Layout::kAContiguousK>(stage, ra);
        store_tile<BN, kVecB, kLoadsB, Layout::kBContiguousK>(stage + BK * BM, rb);
    }

    // Row i (0..TM-1) of a thread's tile: runs of four, BM / kRunsM apart; column j (0..7): two
    // runs of four, BN/2 apart.
    __device__ __forceinline__ static int row_of(int ty, int i) { return (i / 4) * (BM / kRunsM) + ty * 4 + (i & 3); }
    __device__ __forceinline__ static int col_of(int tx, int j) { return (j < 4 ? 0 : BN / 2) + tx * 4 + (j & 3); }

    // One FMA per (element, kk): the chunk's chain, kk ascending.
    __device__ __forceinline__ static void step(const float* As, const float* Bs, int kk, int ty, int tx,
                                                float (&acc)[TM][8]) {
        float av[TM];
#pragma unroll
        for (int r = 0; r < kRunsM; ++r) {
            const float4 a = *reinterpret_cast<const float4*>(As + kk * BM + r * (BM / kRunsM) + ty * 4);
            av[4 * r] = a.x;
            av[4 * r + 1] = a.y;
            av[4 * r + 2] = a.z;
            av[4 * r + 3] = a.w;
        }
        const float4 b0 = *reinterpret_cast<const float4*>(Bs + kk * BN + tx * 4);
        const float4 b1 = *reinterpret_cast<const float4*>(Bs + kk * BN + BN / 2 + tx * 4);
        const float bv[8] = {b0.x, b0.y, b0.z, b0.w, b1.x, b1.y, b1.z, b1.w};
#pragma unroll
        for (int i = 0; i < TM; ++i)
#pragma unroll
            for (int j = 0; j < 8; ++j) acc[i][j] = fmaf(av[i], bv[j], acc[i][j]);
    }

    // One stage's k into the chain, ascending: all BK unrolled, or only the valid k of K's last
    // k-tile (past K the stage holds zeros, and a zero step would still change -0.0 to +0.0).
    __device__ __forceinline__ static void steps(const float* As, const float* Bs, int kcount, int ty, int tx,
                                                 float (&acc)[TM][8]) {
        if (kcount == BK) {
#pragma unroll
            for (int kk = 0; kk < BK; ++kk) step(As, Bs, kk, ty, tx, acc);
        } else {
            for (int kk = 0; kk < kcount; ++kk) step(As, Bs, kk, ty, tx, acc);
        }
    }

    // The block's operand tiles at (m0, n0) and what the launch's alignment allows.
    template <typename Args>
    __device__ __forceinline__ static Tiles tiles_at(const Args& p, int m0, int n0) {
        const TAB* a = static_cast<const TAB*>(p.a);
        const TAB* b = static_cast<const TAB*>(p.b);
        Tiles t;
        t.a = a + (Layout::kAContiguousK ? (size_t)m0 * p.lda : (size_t)m0);
        t.b = b + (Layout::kBContiguousK ? (size_t)n0 * p.ldb : (size_t)n0);
        t.vec_a = p.lda % 4 == 0 && reinterpret_cast<uintptr_t>(a) % (4 * sizeof(TAB)) == 0;
        t.vec_b = p.ldb % 4 == 0 && reinterpret_cast<uintptr_t>(b) % (4 * sizeof(TAB)) == 0;
        t.rows_a = p.m - m0;
        t.rows_b = p.n - n0;
        t.interior_a = t.vec_a && t.rows_a >= BM;
        t.interior_b = t.vec_b && t.rows_b >= BN;
        return t;
    }

    // This thread's place in the tile: warps of 4 x 8 threads.
    __device__ __forceinline__ static int thread_x() { return ((threadIdx.x / 32) % (TX / 8)) * 8 + threadIdx.x % 32 % 8; }
    __device__ __forceinline__ static int thread_y() { return ((threadIdx.x / 32) / (TX / 8)) * 4 + threadIdx.x % 32 / 8; }
};
