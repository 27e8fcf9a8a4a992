// Family `fmaw`, contract `fma-k256` (see common/fma_chunks.cuh), for large m: the exact
// policy's fast tile.
//
// Schedule: one block per Cfg::M x Cfg::N tile of C, TM x 8 elements a thread (`thread_m` = 8
// or 16), in runs of 4 rows placed M/(TM/4) apart and two runs of 4 columns N/2 apart, so that
// each thread reads its operands from shared memory as TM/4 + 2 float4 a k. A warp is 4 x 8
// threads: its A reads are 4 distinct float4 and its B reads 8, one shared-memory wavefront each
// (fma_gemm's 2 x 16 warps need 2 for B). 16 x 8 a thread (the form of cuBLAS's pedantic SGEMM on
// Hopper, 256 x 128 tiles of 8 warps at 254 registers) reads 6 float4 for 128 FMAs where 8 x 8
// reads 4 for 64.
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
#include "fma/fma_warp_tiles.cuh"
#include "common/timing_perturbation.cuh"

template <typename TAB, typename TC, int OP, typename Cfg>
struct fma_warp_gemm {
    static constexpr int BM = Cfg::M, BN = Cfg::N, BK = Cfg::K;
    static constexpr int kChunk = Cfg::kChunk;  // the contract's K chunk
    static constexpr int kThreads = Cfg::kThreads;
    static constexpr int TM = Cfg::THREAD_M;  // rows of C a thread computes (8 or 16), 8 columns
    using W = fma_warp_tiles<TAB, OP, BM, BN, BK, kThreads, TM>;
    static constexpr int kStageFloats = W::kStageFloats;
    static constexpr int kTotalsFloats = BM * BN;

    // The layout against the numbers the generator delivers from the manifest
    // (fma/fma_warp_gemm.toml): TM x 8 elements a thread in warps of 4 x 8 threads, two stages of
    // A and B as f32 then the chunk totals, whole k-tiles a chunk, the tier's cap.
    static_assert(Cfg::kSharedBytes == (2 * kStageFloats + kTotalsFloats) * (int)sizeof(float) &&
                      Cfg::kSharedBytes <= Cfg::kMaxSharedBytes && kChunk % BK == 0,
                  "fma_warp_gemm: its layout does not match the config the generator delivered");

    // Args: the family's ABI struct (a, b, bias, c, m, n, k, lda, ldb, ldc, beta, flags).
    template <typename Args>
    __device__ static void run(const Args& p) {
        extern __shared__ __align__(16) float smem[];
        const int m0 = blockIdx.x * BM;
        const int n0 = blockIdx.y * BN;
        const int tx = W::thread_x(), ty = W::thread_y();
        const typename W::Tiles t = W::tiles_at(p, m0, n0);

        float acc[TM][8];
        float* totals = smem + 2 * kStageFloats;
#pragma unroll
        for (int i = 0; i < TM; ++i)
#pragma unroll
            for (int j = 0; j < 8; ++j) acc[i][j] = 0.0f;

        const int tiles = (p.k + BK - 1) / BK;
        constexpr int kTilesPerChunk = kChunk / BK;
        float4 ra[W::kLoadsA], rb[W::kLoadsB];
        if (tiles > 0) {
            W::load(t, p, 0, ra, rb);
            W::store(smem, ra, rb);
            __syncthreads();
        }
        for (int kt = 0; kt < tiles; ++kt) {
            GEMM_PERTURB(kPerturbConsumerRead, kt);
            const float* As = smem + (kt & 1) * kStageFloats;
            const float* Bs = As + BK * BM;
            const bool next = kt + 1 < tiles;
            if (next) W::load(t, p, (kt + 1) * BK, ra, rb);
            W::steps(As, Bs, min(BK, p.k - kt * BK), ty, tx, acc);
            if ((kt + 1) % kTilesPerChunk == 0 || !next) {
                const int chunk = kt / kTilesPerChunk;
#pragma unroll
                for (int i = 0; i < TM; ++i)
#pragma unroll
                    for (int j = 0; j < 8; ++j) {
                        float* s = totals + W::row_of(ty, i) * BN + W::col_of(tx, j);
                        *s = fma_chunk_fold(chunk, *s, acc[i][j]);
                        acc[i][j] = 0.0f;
                    }
            }
            if (next) {
                GEMM_PERTURB(kPerturbProducerIssue, kt + 1);
                W::store(smem + ((kt + 1) & 1) * kStageFloats, ra, rb);
                GEMM_PERTURB(kPerturbConsumerRelease, kt);
                __syncthreads();
            }
        }

        GEMM_PERTURB(kPerturbEpilogue, 0);
#pragma unroll
        for (int i = 0; i < TM; ++i) {
            const int m = m0 + W::row_of(ty, i);
#pragma unroll
            for (int j = 0; j < 8; ++j) {
                const int n = n0 + W::col_of(tx, j);
                const float v = tiles > 0 ? totals[W::row_of(ty, i) * BN + W::col_of(tx, j)] : 0.0f;
                if (m < p.m && n < p.n) epilogue_store<TC>(v, m, n, p);
            }
        }
    }
};
