// Family `fma`, contract `fma-k256` (see common/fma_chunks.cuh), for mid-size and large m.
//
// Schedule: one block per Cfg::M x Cfg::N tile of C; each thread owns THREAD_M x THREAD_N
// elements. Operands are widened to f32 into shared memory (A as [K][M], B as [K][N]); with
// STAGES == 2 the next k-tile is loaded into registers while the current one is used. The
// chunk partials live in registers; at each chunk end they are folded into f32 totals kept in
// shared memory (each thread owns its slots, so no barrier is needed for them).
//
// A thread's rows (and columns) are two halves of THREAD_M/2 placed BM/2 apart when
// THREAD_M % 8 == 0, so that the float4 reads of a warp from shared memory do not conflict.
// This placement decides which thread computes an element, never its reduction order.
#pragma once
#include "common/element.cuh"
#include "common/epilogue.cuh"
#include "common/fma_chunks.cuh"
#include "common/operand_layout.cuh"
#include "common/timing_perturbation.cuh"

template <typename TAB, typename TC, int OP, typename Cfg>
struct fma_gemm {
    static constexpr int BM = Cfg::M, BN = Cfg::N, BK = Cfg::K;
    static constexpr int TM = Cfg::THREAD_M, TN = Cfg::THREAD_N;
    static constexpr int kStages = Cfg::STAGES;
    static constexpr int kChunk = Cfg::kChunk;  // the contract's K chunk
    static constexpr int kThreads = Cfg::kThreads;
    static constexpr int kStageFloats = BM * BK + BK * BN;
    static constexpr int kSharedBytes = Cfg::kSharedBytes;
    static constexpr int kLoadsA = (BM * BK + kThreads - 1) / kThreads;
    static constexpr int kLoadsB = (BK * BN + kThreads - 1) / kThreads;
    // Split placement (two halves BM/2 apart) when a half is a whole float4.
    static constexpr bool kSplitM = TM % 8 == 0;
    static constexpr bool kSplitN = TN % 8 == 0;
    using Layout = OperandLayout<OP>;

    // The layout against the numbers the generator delivers from the manifest
    // (fma/fma_gemm.toml): a thread per thread_m x thread_n micro-tile, the stages of A and B as
    // f32 then the chunk totals, whole k-tiles a chunk, the tier's cap.
    static_assert(kThreads == (BM / TM) * (BN / TN) &&
                      kSharedBytes == (kStages * kStageFloats + BM * BN) * (int)sizeof(float) &&
                      kSharedBytes <= Cfg::kMaxSharedBytes && kChunk % BK == 0,
                  "fma_gemm: its layout does not match the config the generator delivered");

    __device__ __forceinline__ static int row_of(int ty, int i) {
        if (kSplitM) return i < TM / 2 ? ty * (TM / 2) + i : BM / 2 + ty * (TM / 2) + (i - TM / 2);
        return ty * TM + i;
    }
    __device__ __forceinline__ static int col_of(int tx, int j) {
        if (kSplitN) return j < TN / 2 ? tx * (TN / 2) + j : BN / 2 + tx * (TN / 2) + (j - TN / 2);
        return tx * TN + j;
    }

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

    template <int W>
    __device__ __forceinline__ static void read_run(const float* src, float* dst) {
        if (W % 4 == 0) {
#pragma unroll
            for (int v = 0; v < W / 4; ++v) {
                float4 q = reinterpret_cast<const float4*>(src)[v];
                dst[4 * v] = q.x; dst[4 * v + 1] = q.y; dst[4 * v + 2] = q.z; dst[4 * v + 3] = q.w;
            }
        } else {
#pragma unroll
            for (int v = 0; v < W; ++v) dst[v] = src[v];
        }
    }

    // One FMA per (element, kk): the chunk's chain, kk ascending.
    __device__ __forceinline__ static void step(const float* As, const float* Bs, int kk, int ty, int tx,
                                                float (&acc)[TM][TN]) {
        float av[TM], bv[TN];
        if (kSplitM) {
            read_run<TM / 2>(As + kk * BM + ty * (TM / 2), av);
            read_run<TM / 2>(As + kk * BM + BM / 2 + ty * (TM / 2), av + TM / 2);
        } else {
            read_run<TM>(As + kk * BM + ty * TM, av);
        }
        if (kSplitN) {
            read_run<TN / 2>(Bs + kk * BN + tx * (TN / 2), bv);
            read_run<TN / 2>(Bs + kk * BN + BN / 2 + tx * (TN / 2), bv + TN / 2);
        } else {
            read_run<TN>(Bs + kk * BN + tx * TN, bv);
        }
#pragma unroll
        for (int i = 0; i < TM; ++i)
#pragma unroll
            for (int j = 0; j < TN; ++j) acc[i][j] = fmaf(av[i], bv[j], acc[i][j]);
    }

    // Folds this chunk's partials into the totals in shared memory and restarts the chain.
    __device__ __forceinline__ static void fold(float* totals, int chunk, int ty, int tx, float (&acc)[TM][TN]) {
#pragma unroll
        for (int i = 0; i < TM; ++i)
#pragma unroll
            for (int j = 0; j < TN; ++j) {
                float* t = totals + row_of(ty, i) * BN + col_of(tx, j);
                *t = fma_chunk_fold(chunk, *t, acc[i][j]);
                acc[i][j] = 0.0f;
            }
    }

    // Args: the family's ABI struct (a, b, bias, c, m, n, k, lda, ldb, ldc, beta, flags).
    template <typename Args>
    __device__ static void run(const Args& p) {
        extern __shared__ __align__(16) float smem[];
        float* totals = smem + kStages * kStageFloats;
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
        constexpr int kTilesPerChunk = kChunk / BK;
        float ra[kLoadsA], rb[kLoadsB];
        if (tiles > 0) {
            load(p, m0, n0, 0, ra, rb);
            store(smem, smem + BM * BK, ra, rb);
            __syncthreads();
        }
        for (int t = 0; t < tiles; ++t) {
            GEMM_PERTURB(kPerturbConsumerRead, t);
            const int s = kStages == 2 ? (t & 1) : 0;
            const float* As = smem + s * kStageFloats;
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
            if ((t + 1) % kTilesPerChunk == 0 || !next) fold(totals, t / kTilesPerChunk, ty, tx, acc);
            if (next) {
                GEMM_PERTURB(kPerturbProducerIssue, t + 1);
                if (kStages == 1) {
                    __syncthreads();
                    load(p, m0, n0, (t + 1) * BK, ra, rb);
                    store(smem, smem + BM * BK, ra, rb);
                } else {
                    float* dst = smem + (s ^ 1) * kStageFloats;
                    store(dst, dst + BM * BK, ra, rb);
                }
                GEMM_PERTURB(kPerturbConsumerRelease, t);
                __syncthreads();
            }
        }

        GEMM_PERTURB(kPerturbEpilogue, 0);
#pragma unroll
        for (int i = 0; i < TM; ++i) {
            const int m = m0 + row_of(ty, i);
#pragma unroll
            for (int j = 0; j < TN; ++j) {
                const int col = col_of(tx, j);
                const int n = n0 + col;
                const float total = tiles > 0 ? totals[row_of(ty, i) * BN + col] : 0.0f;
                if (m < p.m && n < p.n) epilogue_store<TC>(total, m, n, p);
            }
        }
    }
};
