// Family `fmadecsplit`, contract `fma-k256` (see common/fma_chunks.cuh), for small m (decode)
// where n / 32 column strips leave most SMs idle (narrow n: k_proj / v_proj of GQA), nn only.
//
// fma_decode_staged's warps and stages (each warp streams one K chunk at a time through its
// cp.async stages, the same chain run_chunk computes), with the chunks of one column strip shared
// by a cluster of S = SPLIT_K CTAs along z: chunks go in rounds of S * KS, chunk
// round * S * KS + rank * KS + warp to that warp of that rank. At a round's end every rank leaves
// its warps' partials in its own shared memory ([KS][BM][BN], as fma_fold_round), a cluster barrier
// makes them visible, and rank 0 adds the round's chunks into its totals in ascending chunk order,
// reading each from its owner through distributed shared memory: the contract's left-to-right fold
// of every chunk, whichever CTA ran it, so the bits are fma_decode_staged's. A rank writes its
// partials again only after the barrier that follows rank 0's reads (its arrive after the fold,
// its wait before the next write; ranks other than 0 run their next chunk in between). Rank 0
// stores the block's C. Every thread of every rank takes every round's barriers, with or without
// a chunk in it.
//
// Shared memory: fma_decode_staged's (its stages, then the partials), so its layout check holds.
// Launch: grid (ceil(m / BM), ceil(n / BN), SPLIT_K), cluster (1, 1, SPLIT_K), BN * KS threads.
#pragma once
#include "common/element.cuh"
#include "common/epilogue.cuh"
#include "common/fma_chunks.cuh"
#include "common/timing_perturbation.cuh"
#include "fma/fma_decode_staged.cuh"
#include "tc/smem_sync.cuh"

template <typename TAB, typename TC, int OP, typename Cfg>
struct fma_decode_split {
    using Staged = fma_decode_staged<TAB, TC, OP, Cfg>;
    static constexpr int BM = Cfg::M, BN = Cfg::N, KS = Cfg::K_SPLIT, S = Cfg::STAGES;
    static constexpr int kSplit = Cfg::SPLIT_K;
    static constexpr int kChunk = Cfg::kChunk;
    static constexpr int kPerRound = KS * kSplit;  // chunks a round, over the cluster
    // Rows of the block a folding thread of rank 0 adds up: rows fr, fr + KS, ...
    static constexpr int kFoldRows = (BM + KS - 1) / KS;
    static_assert(kSplit >= 2 && kSplit <= 8, "fma_decode_split: a cluster of 2 to 8 CTAs along z");

    template <typename Args>
    __device__ static void run(const Args& p) {
        extern __shared__ __align__(16) unsigned char shared_raw[];
        TAB* stages = reinterpret_cast<TAB*>(shared_raw);
        float* partials =
            reinterpret_cast<float*>(shared_raw + KS * S * Staged::kStageElems * sizeof(TAB));  // [KS][BM][BN]
        const TAB* a = static_cast<const TAB*>(p.a);
        const TAB* b = static_cast<const TAB*>(p.b);
        const int lane = threadIdx.x % BN;
        const int warp = threadIdx.x / BN;
        const int rank = (int)cluster_ctarank();
        const int m0 = blockIdx.x * BM;
        const int j0 = blockIdx.y * BN;
        const int j = j0 + lane;
        const int rows = min(BM, p.m - m0);
        const int chunks = fma_chunk_count<kChunk>(p.k);
        const int rounds = (chunks + kPerRound - 1) / kPerRound;
        TAB* mine = stages + warp * S * Staged::kStageElems;
        const bool wide_a = Staged::template aligned_to<16>(a, p.lda), wide_b = Staged::template aligned_to<16>(b, p.ldb);
        const bool vec_a = wide_a || (Staged::kNarrow && Staged::template aligned_to<4>(a, p.lda));
        const bool vec_b = wide_b || (Staged::kNarrow && Staged::template aligned_to<4>(b, p.ldb));
        const uint32_t partials_at = tc_smem_u32(partials);
        float total[kFoldRows];
#pragma unroll
        for (int i = 0; i < kFoldRows; ++i) total[i] = 0.0f;

        for (int round = 0; round < rounds; ++round) {
            const int c = round * kPerRound + rank * KS + warp;
            float part[BM];
#pragma unroll
            for (int r = 0; r < BM; ++r) part[r] = 0.0f;
            if (c < chunks) Staged::run_chunk(part, mine, a, b, c, m0, j0, lane, rows, vec_a, vec_b, p, wide_a, wide_b);
            if (round > 0) cluster_wait_acquire();  // rank 0 has read the last round's partials
#pragma unroll
            for (int r = 0; r < BM; ++r) partials[(warp * BM + r) * BN + lane] = part[r];
            GEMM_PERTURB(kPerturbEpilogue, 2 * round);
            cluster_sync_all();  // every rank's partials of the round are written and visible
            if (rank == 0) {
#pragma unroll
                for (int i = 0; i < kFoldRows; ++i) {
                    const int fr = warp + i * KS;
                    if (fr < BM) {
                        for (int q = 0; q < kPerRound && round * kPerRound + q < chunks; ++q) {
                            const int s = q / KS, w = q % KS;
                            const float v = ld_shared_cluster_f32(partials_at + 4u * ((w * BM + fr) * BN + lane), s);
                            total[i] = fma_chunk_fold(round * kPerRound + q, total[i], v);
                        }
                    }
                }
            }
            GEMM_PERTURB(kPerturbEpilogue, 2 * round + 1);
            cluster_arrive_release();  // this rank's reads (rank 0) and writes of the round are done
        }
        if (rounds > 0) cluster_wait_acquire();  // no CTA leaves while rank 0 may read its partials
        if (rank == 0 && j < p.n) {
#pragma unroll
            for (int i = 0; i < kFoldRows; ++i) {
                const int fr = warp + i * KS;
                if (fr < rows) epilogue_store<TC>(total[i], m0 + fr, j, p);
            }
        }
    }
};
