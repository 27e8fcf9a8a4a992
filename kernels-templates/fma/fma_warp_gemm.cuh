// Family `fmaw`, contract `fma-k256` (see common/fma_chunks.cuh), for large m: the exact
// policy's fast tile.
//
// Schedule: one block per Cfg::M x Cfg::N tile of C, 8 x 8 elements a thread, in two halves of
// 4 rows (and 4 columns) placed M/2 (N/2) apart, so that each thread reads its operands from
// shared memory as four float4 a k. A warp is 4 x 8 threads: its A reads are 4 distinct float4
// and its B reads 8, one shared-memory wavefront each (fma_gemm's 2 x 16 warps need 2 for B).
// Operands are widened to f32 into shared memory as [K][M] and [K][N]: an operand stored with k
// contiguous (A of nn and nt, B of nt) arrives as 4-element vectors along k and is transposed
// on its way into shared memory (a warp writes 32 consecutive rows of one k: no bank conflict);
// one stored with m (n) contiguous arrives as vectors along it and is stored as they are.
// Vector loads need the operand's base and leading dimension aligned to 4 elements, which is
// checked once a launch; otherwise, and at the tile's edges, elements are loaded one by one with
// zero fill. The next k-tile is loaded into registers while the current one is computed.
//
// Chunk partials run in registers; at each chunk's end they are folded into the f32 totals in
// shared memory (each thread owns its slots: no barrier). (A second register set for the totals
// spills at 8 x 8 a thread.) Which thread runs an element and how the loads are shaped never
// changes its reduction order.
#pragma once
#include <cstdint>
#include "common/element.cuh"
#include "common/epilogue.cuh"
#include "common/fma_chunks.cuh"
#include "common/operand_layout.cuh"
#include "common/timing_perturbation.cuh"

template <typename TAB, typename TC, int OP, typename Cfg>
struct fma_warp_gemm {
    static constexpr int BM = Cfg::M, BN = Cfg::N, BK = Cfg::K;
    static constexpr int kChunk = Cfg::kChunk;  // the contract's K chunk
    static constexpr int kThreads = Cfg::kThreads;
    static constexpr int TX = BN / 8, TY = BM / 8;  // threads along n and m
    static constexpr int kStageFloats = BK * (BM + BN);
    static constexpr int kTotalsFloats = BM * BN;
    // Four-element vectors a k-tile of A and of B, and a thread's share of them.
    static constexpr int kVecA = BM * BK / 4, kVecB = BN * BK / 4;
    static constexpr int kLoadsA = (kVecA + kThreads - 1) / kThreads;
    static constexpr int kLoadsB = (kVecB + kThreads - 1) / kThreads;
    using Layout = OperandLayout<OP>;

    // The layout against the numbers the generator delivers from the manifest
    // (fma/fma_warp_gemm.toml): 8 x 8 elements a thread in warps of 4 x 8 threads, two stages of
    // A and B as f32 then the chunk totals, whole k-tiles a chunk, the tier's cap.
    static_assert(kThreads == TX * TY && TX % 8 == 0 && TY % 4 == 0 && BK % 4 == 0 &&
                      Cfg::kSharedBytes == (2 * kStageFloats + kTotalsFloats) * (int)sizeof(float) &&
                      Cfg::kSharedBytes <= Cfg::kMaxSharedBytes && kChunk % BK == 0,
                  "fma_warp_gemm: its layout does not match the config the generator delivered");

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

    // Row i (0..7) of a thread's tile: two runs of four, BM/2 apart; the same for columns.
    __device__ __forceinline__ static int row_of(int ty, int i) { return (i < 4 ? 0 : BM / 2) + ty * 4 + (i & 3); }
    __device__ __forceinline__ static int col_of(int tx, int j) { return (j < 4 ? 0 : BN / 2) + tx * 4 + (j & 3); }

    // One FMA per (element, kk): the chunk's chain, kk ascending.
    __device__ __forceinline__ static void step(const float* As, const float* Bs, int kk, int ty, int tx,
                                                float (&acc)[8][8]) {
        const float4 a0 = *reinterpret_cast<const float4*>(As + kk * BM + ty * 4);
        const float4 a1 = *reinterpret_cast<const float4*>(As + kk * BM + BM / 2 + ty * 4);
        const float4 b0 = *reinterpret_cast<const float4*>(Bs + kk * BN + tx * 4);
        const float4 b1 = *reinterpret_cast<const float4*>(Bs + kk * BN + BN / 2 + tx * 4);
        const float av[8] = {a0.x, a0.y, a0.z, a0.w, a1.x, a1.y, a1.z, a1.w};
        const float bv[8] = {b0.x, b0.y, b0.z, b0.w, b1.x, b1.y, b1.z, b1.w};
#pragma unroll
        for (int i = 0; i < 8; ++i)
#pragma unroll
            for (int j = 0; j < 8; ++j) acc[i][j] = fmaf(av[i], bv[j], acc[i][j]);
    }

    // Args: the family's ABI struct (a, b, bias, c, m, n, k, lda, ldb, ldc, beta, flags).
    template <typename Args>
    __device__ static void run(const Args& p) {
        extern __shared__ __align__(16) float smem[];
        const int m0 = blockIdx.x * BM;
        const int n0 = blockIdx.y * BN;
        const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
        const int tx = (warp % (TX / 8)) * 8 + lane % 8;
        const int ty = (warp / (TX / 8)) * 4 + lane / 8;

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

        float acc[8][8];
        float* totals = smem + 2 * kStageFloats;
#pragma unroll
        for (int i = 0; i < 8; ++i)
#pragma unroll
            for (int j = 0; j < 8; ++j) acc[i][j] = 0.0f;

        const int tiles = (p.k + BK - 1) / BK;
        constexpr int kTilesPerChunk = kChunk / BK;
        float4 ra[kLoadsA], rb[kLoadsB];
        if (tiles > 0) {
            load(t, p, 0, ra, rb);
            store(smem, ra, rb);
            __syncthreads();
        }
        for (int kt = 0; kt < tiles; ++kt) {
            GEMM_PERTURB(kPerturbConsumerRead, kt);
            const float* As = smem + (kt & 1) * kStageFloats;
            const float* Bs = As + BK * BM;
            const bool next = kt + 1 < tiles;
            if (next) load(t, p, (kt + 1) * BK, ra, rb);
            // Past K the stage holds zeros, and a zero step would still change -0.0 to +0.0:
            // the last tile runs only its valid k.
            const int kcount = min(BK, p.k - kt * BK);
            if (kcount == BK) {
#pragma unroll
                for (int kk = 0; kk < BK; ++kk) step(As, Bs, kk, ty, tx, acc);
            } else {
                for (int kk = 0; kk < kcount; ++kk) step(As, Bs, kk, ty, tx, acc);
            }
            if ((kt + 1) % kTilesPerChunk == 0 || !next) {
                const int chunk = kt / kTilesPerChunk;
#pragma unroll
                for (int i = 0; i < 8; ++i)
#pragma unroll
                    for (int j = 0; j < 8; ++j) {
                        float* s = totals + row_of(ty, i) * BN + col_of(tx, j);
                        *s = fma_chunk_fold(chunk, *s, acc[i][j]);
                        acc[i][j] = 0.0f;
                    }
            }
            if (next) {
                GEMM_PERTURB(kPerturbProducerIssue, kt + 1);
                store(smem + ((kt + 1) & 1) * kStageFloats, ra, rb);
                GEMM_PERTURB(kPerturbConsumerRelease, kt);
                __syncthreads();
            }
        }

        GEMM_PERTURB(kPerturbEpilogue, 0);
#pragma unroll
        for (int i = 0; i < 8; ++i) {
            const int m = m0 + row_of(ty, i);
#pragma unroll
            for (int j = 0; j < 8; ++j) {
                const int n = n0 + col_of(tx, j);
                const float v = tiles > 0 ? totals[row_of(ty, i) * BN + col_of(tx, j)] : 0.0f;
                if (m < p.m && n < p.n) epilogue_store<TC>(v, m, n, p);
            }
        }
    }
};
