// Contract `fma-k256`, shared by every exact kernel: K is cut into chunks of kChunk consecutive
// k (the contract's chunk, 256, delivered in each kernel's config as Cfg::kChunk; the last may
// be shorter). Each chunk is one f32 FMA chain from +0 over
// ascending k; the chunk results are added left to right in ascending chunk order
// (acc = p0; acc = acc + p1; ...), and acc = 0 when K = 0. The cut depends on K alone, so a
// kernel may reduce chunks in parallel (decode) or in sequence (tiles) and give the same bits.
#pragma once
#include "common/timing_perturbation.cuh"

template <int kChunk>
__device__ __forceinline__ int fma_chunk_count(int k) { return (k + kChunk - 1) / kChunk; }

// Folds chunk `c`'s result into the running total: the contract's left-to-right sum.
__device__ __forceinline__ float fma_chunk_fold(int c, float total, float partial) {
    return c == 0 ? partial : __fadd_rn(total, partial);
}

// The end of one round of a decode block (fmadec, fmadecs): each of KS warps holds `part`,
// its chunk's results for BM rows at column `lane`. They go through shared memory
// (`partials`, [KS][BM][BN]); the thread folding element (fr, lane), fr < BM, then adds the
// round's chunks to `total` in ascending chunk order, which is the contract's order however
// many warps ran them. Every thread of the block must call it.
template <int BM, int BN, int KS>
__device__ __forceinline__ float fma_fold_round(float* partials, const float (&part)[BM], int warp, int lane,
                                                int fr, int round, int chunks, float total) {
#pragma unroll
    for (int r = 0; r < BM; ++r) partials[(warp * BM + r) * BN + lane] = part[r];
    GEMM_PERTURB(kPerturbEpilogue, 2 * round);
    __syncthreads();
    if (fr < BM) {
        for (int s = 0; s < KS && round * KS + s < chunks; ++s)
            total = fma_chunk_fold(round * KS + s, total, partials[(s * BM + fr) * BN + lane]);
    }
    GEMM_PERTURB(kPerturbEpilogue, 2 * round + 1);
    __syncthreads();
    return total;
}
