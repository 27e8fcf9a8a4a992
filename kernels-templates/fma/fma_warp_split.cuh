// Family `fmaws`, contract `fma-k256` (see common/fma_chunks.cuh): fmaw's chains with K's chunks
// shared by a cluster, for grids with too few tiles to fill the GPU (narrow n, mid m).
//
// A cluster of S = SPLIT_K CTAs along z (rank = the CTA's rank in it) shares one BM x BN tile of
// C. Rank r runs chunks r, r + S, r + 2S, ..., each exactly as fma_warp_gemm runs a chunk (the
// same fma_warp_tiles loads and steps: a chain from +0 in registers, k ascending, the last k-tile
// of K only over its valid k). Chunks go in rounds of S: at the end of round t each rank leaves
// its chunk's partials in a shared-memory slot (BM x BN f32), and after a cluster barrier rank r
// folds its share of the tile (elements r * BM * BN / S ..., row-major) into totals it keeps in
// shared memory, reading chunk t * S + s from rank s through distributed shared memory, s
// ascending. Over all rounds that is the contract's left-to-right fold of every chunk in
// ascending order, whichever CTA ran it: the bits are fma_warp_gemm's. The slot is written again
// only after the next round's barrier says every peer has read it (one barrier a round: its
// arrive after the fold, its wait before the next write). A rank with no chunk in the last round
// still takes part in the round's barriers. Then each rank stores its share through the epilogue.
// (Two alternating slots, each round folded a round later so that no rank waits at a barrier,
// measured slower on the H200: the second slot halves the CTAs an SM.)
//
// Shared memory: two stages of A and B as f32 (as fma_warp_gemm), the slot, the rank's totals:
//   kSharedBytes = (2 * BK * (BM + BN) + BM * BN + BM * BN / SPLIT_K) * 4.
// (Totals in registers spilled: fmaw's 8 x 8 a thread leaves no room for them.)
// Launch: grid (ceil(m / BM), ceil(n / BN), SPLIT_K), cluster (1, 1, SPLIT_K), kThreads threads.
#pragma once
#include <cstdint>
#include "common/element.cuh"
#include "common/epilogue.cuh"
#include "common/fma_chunks.cuh"
#include "common/timing_perturbation.cuh"
#include "fma/fma_warp_tiles.cuh"
#include "tc/smem_sync.cuh"

template <typename TAB, typename TC, int OP, typename Cfg>
struct fma_warp_split {
    static constexpr int BM = Cfg::M, BN = Cfg::N, BK = Cfg::K;
    static constexpr int kChunk = Cfg::kChunk;  // the contract's K chunk
    static constexpr int kThreads = Cfg::kThreads;
    static constexpr int kSplit = Cfg::SPLIT_K;
    using W = fma_warp_tiles<TAB, OP, BM, BN, BK, kThreads>;
    static constexpr int kStageFloats = W::kStageFloats;
    static constexpr int kSlotFloats = BM * BN;
    static constexpr int kShare = kSlotFloats / kSplit;      // elements a rank folds
    static constexpr int kTotals = kShare / (4 * kThreads);  // float4 of them a thread folds

    // The layout against the numbers the generator delivers from the manifest
    // (fma/fma_warp_split.toml): two stages, the slot and the totals, whole k-tiles a chunk,
    // whole float4 of the share a thread, the tier's cap.
    static_assert(Cfg::kSharedBytes == (2 * kStageFloats + kSlotFloats + kShare) * (int)sizeof(float) &&
                      Cfg::kSharedBytes <= Cfg::kMaxSharedBytes && kChunk % BK == 0 &&
                      kShare % (4 * kThreads) == 0 && kTotals >= 1,
                  "fma_warp_split: its layout does not match the config the generator delivered");

    // Chunk c of this rank into acc (from +0), k-tiles through the two stages; the next chunk's
    // first k-tile (c + S) is loaded on the way, so the stages stay one tile ahead across rounds.
    template <typename Args>
    __device__ __forceinline__ static void run_chunk(const typename W::Tiles& t, const Args& p, int c, int chunks,
                                                     int tiles, int tx, int ty, float* smem, int& buf,
                                                     float4 (&ra)[W::kLoadsA], float4 (&rb)[W::kLoadsB],
                                                     float (&acc)[8][8]) {
        constexpr int kTilesPerChunk = kChunk / BK;
#pragma unroll
        for (int i = 0; i < 8; ++i)
#pragma unroll
            for (int j = 0; j < 8; ++j) acc[i][j] = 0.0f;
        const int kt0 = c * kTilesPerChunk, kt1 = min(kt0 + kTilesPerChunk, tiles);
        for (int kt = kt0; kt < kt1; ++kt) {
            GEMM_PERTURB(kPerturbConsumerRead, kt);
            const float* As = smem + buf * kStageFloats;
            const float* Bs = As + BK * BM;
            // This rank's next k-tile: its chunk's next, else its next chunk's first.
            const int nk = kt + 1 < kt1 ? kt + 1 : (c + kSplit < chunks ? (c + kSplit) * kTilesPerChunk : -1);
            if (nk >= 0) W::load(t, p, nk * BK, ra, rb);
            W::steps(As, Bs, min(BK, p.k - kt * BK), ty, tx, acc);
            if (nk >= 0) {
                GEMM_PERTURB(kPerturbProducerIssue, nk);
                W::store(smem + (buf ^ 1) * kStageFloats, ra, rb);
                GEMM_PERTURB(kPerturbConsumerRelease, kt);
                __syncthreads();
                buf ^= 1;
            }
        }
    }

    // Args: the family's ABI struct (a, b, bias, c, m, n, k, lda, ldb, ldc, beta, flags).
    template <typename Args>
    __device__ static void run(const Args& p) {
        extern __shared__ __align__(16) float smem[];
        const int m0 = blockIdx.x * BM;
        const int n0 = blockIdx.y * BN;
        const int rank = (int)cluster_ctarank();
        const int tx = W::thread_x(), ty = W::thread_y();
        const typename W::Tiles t = W::tiles_at(p, m0, n0);
        float* slot = smem + 2 * kStageFloats;
        const uint32_t slot_addr = tc_smem_u32(slot);

        const int tiles = (p.k + BK - 1) / BK;
        constexpr int kTilesPerChunk = kChunk / BK;
        const int chunks = (tiles + kTilesPerChunk - 1) / kTilesPerChunk;
        const int rounds = (chunks + kSplit - 1) / kSplit;

        float acc[8][8] = {};
        // This thread's float4 of the rank's totals (its own: no barrier); acc = 0 when K = 0.
        float4* tot = reinterpret_cast<float4*>(slot + kSlotFloats) + threadIdx.x;
#pragma unroll
        for (int q = 0; q < kTotals; ++q) tot[q * kThreads] = make_float4(0.0f, 0.0f, 0.0f, 0.0f);

        float4 ra[W::kLoadsA], rb[W::kLoadsB];
        int buf = 0;
        if (rank < chunks) {
            W::load(t, p, rank * kChunk, ra, rb);
            W::store(smem, ra, rb);
            __syncthreads();
        }
        // The chunk's partials into a slot, as float4 runs of a thread's rows.
        auto write_slot = [&](float* to) {
#pragma unroll
            for (int i = 0; i < 8; ++i)
#pragma unroll
                for (int h = 0; h < 2; ++h)
                    *reinterpret_cast<float4*>(to + W::row_of(ty, i) * BN + W::col_of(tx, 4 * h)) =
                        make_float4(acc[i][4 * h], acc[i][4 * h + 1], acc[i][4 * h + 2], acc[i][4 * h + 3]);
        };
        // Round r's chunks (r * S + s from rank s, s ascending) added into this thread's totals.
        auto fold_round = [&](int r, uint32_t from) {
#pragma unroll 1
            for (int q = 0; q < kTotals; ++q) {
                const uint32_t at = from + 4u * (rank * kShare + (q * kThreads + (int)threadIdx.x) * 4);
                float4 f = tot[q * kThreads];
                // Two loads in flight at a time: more of them spilled beside the chain's registers.
#pragma unroll 2
                for (int s = 0; s < kSplit; ++s) {
                    const int cc = r * kSplit + s;
                    if (cc < chunks) {
                        const float4 v = ld_shared_cluster_v4(at, s);
                        f.x = fma_chunk_fold(cc, f.x, v.x);
                        f.y = fma_chunk_fold(cc, f.y, v.y);
                        f.z = fma_chunk_fold(cc, f.z, v.z);
                        f.w = fma_chunk_fold(cc, f.w, v.w);
                    }
                }
                tot[q * kThreads] = f;
            }
        };

        // Each thread alternates the cluster barrier's arrive and wait; every thread of every
        // rank takes the same rounds, with or without a chunk in them.
        for (int r = 0; r < rounds; ++r) {
            const int c = r * kSplit + rank;
            if (c < chunks) run_chunk(t, p, c, chunks, tiles, tx, ty, smem, buf, ra, rb, acc);
            GEMM_PERTURB(kPerturbEpilogue, 2 * r);
            if (r > 0) cluster_wait_acquire();  // every peer has read the slot's last round
            if (c < chunks) write_slot(slot);
            cluster_sync_all();  // every partial of the round is in its slot, and visible
            fold_round(r, slot_addr);
            GEMM_PERTURB(kPerturbEpilogue, 2 * r + 1);
            cluster_arrive_release();  // this rank's slot is written and its reads are done
        }
        if (rounds > 0) cluster_wait_acquire();  // no CTA leaves while a peer may read its slot

#pragma unroll
        for (int q = 0; q < kTotals; ++q) {
            const int e = rank * kShare + (q * kThreads + (int)threadIdx.x) * 4;
            const int m = m0 + e / BN, n = n0 + e % BN;
            const float4 f = tot[q * kThreads];
            const float v[4] = {f.x, f.y, f.z, f.w};
#pragma unroll
            for (int u = 0; u < 4; ++u)
                if (m < p.m && n + u < p.n) epilogue_store<TC>(v[u], m, n + u, p);
        }
    }
};
