// Family `fma`, contract `fma-seq`: every element of C is one f32 FMA chain over k ascending
// from 0, with no split of K, then the shared epilogue. The tile only decides which thread
// computes an element, never the order of its reduction, so every tile of this family gives
// the same bits, whatever M is.
//
// Schedule: one block per Tile::M x Tile::N tile of C; each thread owns a THREAD_M x THREAD_N
// micro-tile. Operands are widened to f32 into shared memory (A as [K][M], B as [K][N]).
// With STAGES == 2 the next k-tile is loaded into registers while the current one is used.
#pragma once
#include "common/element.cuh"
#include "common/epilogue.cuh"
#include "common/operand_layout.cuh"
#include "common/tile_config.cuh"

template <typename TAB, typename TC, int OP, typename Tile>
struct fma_gemm {
    static constexpr int BM = Tile::M, BN = Tile::N, BK = Tile::K;
    static constexpr int TM = Tile::THREAD_M, TN = Tile::THREAD_N;
    static constexpr int kStages = Tile::STAGES;
    static constexpr int kThreads = (BM / TM) * (BN / TN);
    static constexpr int kSharedBytes = kStages * (BM * BK + BK * BN) * (int)sizeof(float);
    static constexpr int kLoadsA = (BM * BK + kThreads - 1) / kThreads;
    static constexpr int kLoadsB = (BK * BN + kThreads - 1) / kThreads;
    using Layout = OperandLayout<OP>;

    static_assert(BM % TM == 0 && BN % TN == 0, "fma_gemm: tile m and n must be multiples of thread_m and thread_n");
    static_assert(kThreads % 32 == 0, "fma_gemm: threads per block must be a multiple of 32");
    static_assert(kStages == 1 || kStages == 2, "fma_gemm: supports 1 or 2 shared-memory stages");

    // Element e of a k-tile, mapped so that consecutive threads read consecutive addresses.
    __device__ __forceinline__ static void a_coord(int e, int& i, int& kk) {
        if (Layout::kAContiguousK) { i = e / BK; kk = e % BK; } else { kk = e / BM; i = e % BM; }
    }
    __device__ __forceinline__ static void b_coord(int e, int& kk, int& j) {
        if (Layout::kBContiguousK) { j = e / BK; kk = e % BK; } else { kk = e / BN; j = e % BN; }
    }

    template <typename Args>
    __device__ __forceinline__ static void load(const Args& p, int m0, int n0, int k0,
                                                float (&ra)[kLoadsA], float (&rb)[kLoadsB]) {
        const TAB* a = static_cast<const TAB*>(p.a);
        const TAB* b = static_cast<const TAB*>(p.b);
#pragma unroll
        for (int l = 0; l < kLoadsA; ++l) {
            int e = threadIdx.x + l * kThreads, i, kk;
            a_coord(e, i, kk);
            bool ok = e < BM * BK && m0 + i < p.m && k0 + kk < p.k;
            ra[l] = ok ? to_f32(a[Layout::a_index(m0 + i, k0 + kk, p.lda)]) : 0.0f;
        }
#pragma unroll
        for (int l = 0; l < kLoadsB; ++l) {
            int e = threadIdx.x + l * kThreads, kk, j;
            b_coord(e, kk, j);
            bool ok = e < BK * BN && n0 + j < p.n && k0 + kk < p.k;
            rb[l] = ok ? to_f32(b[Layout::b_index(k0 + kk, n0 + j, p.ldb)]) : 0.0f;
        }
    }

    __device__ __forceinline__ static void store(float* As, float* Bs, const float (&ra)[kLoadsA],
                                                 const float (&rb)[kLoadsB]) {
#pragma unroll
        for (int l = 0; l < kLoadsA; ++l) {
            int e = threadIdx.x + l * kThreads, i, kk;
            a_coord(e, i, kk);
            if (e < BM * BK) As[kk * BM + i] = ra[l];
        }
#pragma unroll
        for (int l = 0; l < kLoadsB; ++l) {
            int e = threadIdx.x + l * kThreads, kk, j;
            b_coord(e, kk, j);
            if (e < BK * BN) Bs[kk * BN + j] = rb[l];
        }
    }

    // One FMA per (element, kk), kk ascending: the contract's chain.
    __device__ __forceinline__ static void step(const float* As, const float* Bs, int kk, int ty, int tx,
                                                float (&acc)[TM][TN]) {
        float av[TM], bv[TN];
#pragma unroll
        for (int i = 0; i < TM; ++i) av[i] = As[kk * BM + ty * TM + i];
#pragma unroll
        for (int j = 0; j < TN; ++j) bv[j] = Bs[kk * BN + tx * TN + j];
#pragma unroll
        for (int i = 0; i < TM; ++i)
#pragma unroll
            for (int j = 0; j < TN; ++j) acc[i][j] = fmaf(av[i], bv[j], acc[i][j]);
    }

    // Args: the family's ABI struct (a, b, bias, c, m, n, k, lda, ldb, ldc, beta, flags).
    template <typename Args>
    __device__ static void run(const Args& p) {
        extern __shared__ __align__(16) float smem[];
        const int m0 = blockIdx.x * BM;
        const int n0 = blockIdx.y * BN;
        const int tx = threadIdx.x % (BN / TN);
        const int ty = threadIdx.x / (BN / TN);

        float acc[TM][TN];
#pragma unroll
        for (int i = 0; i < TM; ++i)
#pragma unroll
            for (int j = 0; j < TN; ++j) acc[i][j] = 0.0f;

        const int tiles = (p.k + BK - 1) / BK;
        float ra[kLoadsA], rb[kLoadsB];
        if (tiles > 0) {
            load(p, m0, n0, 0, ra, rb);
            store(smem, smem + BM * BK, ra, rb);
            __syncthreads();
        }
        for (int t = 0; t < tiles; ++t) {
            const int s = kStages == 2 ? (t & 1) : 0;
            const float* As = smem + s * (BM * BK + BK * BN);
            const float* Bs = As + BM * BK;
            const bool next = t + 1 < tiles;
            if (kStages == 2 && next) load(p, m0, n0, (t + 1) * BK, ra, rb);
            const int kcount = min(BK, p.k - t * BK);
            if (kcount == BK) {
#pragma unroll
                for (int kk = 0; kk < BK; ++kk) step(As, Bs, kk, ty, tx, acc);
            } else {
                for (int kk = 0; kk < kcount; ++kk) step(As, Bs, kk, ty, tx, acc);
            }
            if (next) {
                if (kStages == 1) {
                    __syncthreads();
                    load(p, m0, n0, (t + 1) * BK, ra, rb);
                    store(smem, smem + BM * BK, ra, rb);
                } else {
                    float* dst = smem + (s ^ 1) * (BM * BK + BK * BN);
                    store(dst, dst + BM * BK, ra, rb);
                }
                __syncthreads();
            }
        }

#pragma unroll
        for (int i = 0; i < TM; ++i) {
            const int m = m0 + ty * TM + i;
#pragma unroll
            for (int j = 0; j < TN; ++j) {
                const int n = n0 + tx * TN + j;
                if (m < p.m && n < p.n) epilogue_store<TC>(acc[i][j], m, n, p);
            }
        }
    }
};
