// Kernel kind `fma_row_gemm` of the downstream example (not shipped): contract fma-k256 the
// plainest way, added from files alone (this header and the manifest beside it). A block of
// (M / THREAD_M) x N threads computes an M x N tile of C, THREAD_M elements of a column a
// thread, reading A and B straight from global memory: chunk c's FMA chain from +0 over its k in ascending order, the chunk
// results folded in ascending chunk order (common/fma_chunks.cuh), then the shared epilogue.
// Slow, and bit for bit what every fma-k256 kernel gives.
#pragma once
#include "common/element.cuh"
#include "common/epilogue.cuh"
#include "common/fma_chunks.cuh"
#include "common/operand_layout.cuh"

template <typename TAB, typename TC, int OP, typename Cfg>
struct fma_row_gemm {
    static constexpr int BM = Cfg::M, BN = Cfg::N, TM = Cfg::THREAD_M;
    static constexpr int kChunk = Cfg::kChunk;  // the contract's K chunk
    static constexpr int kThreads = Cfg::kThreads;
    using Layout = OperandLayout<OP>;

    // The layout against the numbers the generator delivers from the manifest: a thread TM
    // elements of a column of the tile, no shared memory.
    static_assert(kThreads * TM == BM * BN && Cfg::kSharedBytes == 0,
                  "fma_row_gemm: its layout does not match the config the generator delivered");

    template <class Args>
    __device__ static void run(const Args& p) {
        const int j = blockIdx.y * BN + (int)threadIdx.x % BN;
        const int i0 = blockIdx.x * BM + (int)threadIdx.x / BN * TM;
        if (j >= p.n) return;
        const TAB* a = static_cast<const TAB*>(p.a);
        const TAB* b = static_cast<const TAB*>(p.b);
        const int chunks = fma_chunk_count<kChunk>(p.k);
        for (int r = 0; r < TM; ++r) {
            const int i = i0 + r;
            if (i >= p.m) return;
            float total = 0.0f;
            for (int c = 0; c < chunks; ++c) {
                const int k0 = c * kChunk, k1 = min(k0 + kChunk, p.k);
                float part = 0.0f;
                for (int kk = k0; kk < k1; ++kk)
                    part = fmaf(to_f32(a[Layout::a_index(i, kk, p.lda)]), to_f32(b[Layout::b_index(kk, j, p.ldb)]), part);
                total = fma_chunk_fold(c, total, part);
            }
            epilogue_store<TC>(total, i, j, p);
        }
    }
};
