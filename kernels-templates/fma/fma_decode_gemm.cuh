// Family `fmadec`, contract `fma-k256` (see common/fma_chunks.cuh), for small m (decode).
//
// A few rows of A against a wide B: the work is streaming B. One block covers Cfg::M rows and
// 32 columns (one warp wide, so a warp reads a 128-byte row segment of B for nn); its
// Cfg::K_SPLIT warps reduce K chunks in parallel, one chunk each per round. After a round
// the chunk results go to shared memory and are folded in ascending chunk order, which is the
// contract's order however many warps ran them.
#pragma once
#include "common/element.cuh"
#include "common/epilogue.cuh"
#include "common/fma_chunks.cuh"
#include "common/operand_layout.cuh"

template <typename TAB, typename TC, int OP, typename Cfg>
struct fma_decode_gemm {
    static constexpr int BM = Cfg::M, BN = Cfg::N, KS = Cfg::K_SPLIT;
    static constexpr int kChunk = Cfg::kChunk;  // the contract's K chunk
    static constexpr int kThreads = Cfg::kThreads;
    static constexpr int kSharedBytes = Cfg::kSharedBytes;
    // B loads a thread issues together before their FMAs. Measured on the H200 (bench runs
    // af86f82 and 7511e2e): 8 in a batch beat both 32 and a plain unrolled loop.
    static constexpr int kBatch = 8;
    using Layout = OperandLayout<OP>;

    // The layout against the numbers the generator delivers from the manifest
    // (fma/fma_decode_gemm.toml): a warp of 32 columns a K chunk, the partials of every warp in
    // shared memory, whole load batches a chunk, the tier's cap.
    static_assert(kThreads == BN * KS && BN == 32 && kSharedBytes == KS * BM * BN * (int)sizeof(float) &&
                      kSharedBytes <= Cfg::kMaxSharedBytes && kChunk % kBatch == 0,
                  "fma_decode_gemm: its layout does not match the config the generator delivered");

    template <typename Args>
    __device__ static void run(const Args& p) {
        extern __shared__ __align__(16) float partials[];  // [KS][BM][BN]
        const TAB* a = static_cast<const TAB*>(p.a);
        const TAB* b = static_cast<const TAB*>(p.b);
        const int lane = threadIdx.x % BN;
        const int warp = threadIdx.x / BN;
        const int m0 = blockIdx.x * BM;
        const int j = blockIdx.y * BN + lane;
        const int rows = min(BM, p.m - m0);
        const bool col_ok = j < p.n;
        const int chunks = fma_chunk_count<kChunk>(p.k);
        const int rounds = (chunks + KS - 1) / KS;
        // The folding thread of element (fr, lane) keeps its running total here.
        const int fr = threadIdx.x / BN;
        float total = 0.0f;

        for (int round = 0; round < rounds; ++round) {
            const int c = round * KS + warp;
            float part[BM];
#pragma unroll
            for (int r = 0; r < BM; ++r) part[r] = 0.0f;
            if (c < chunks && col_ok) {
                const int k0 = c * kChunk;
                const int k1 = min(k0 + kChunk, p.k);
                if (k1 - k0 == kChunk) {
                    // Issue kBatch loads of B before their FMAs: the B stream is the cost, and
                    // loads in flight are what hide its latency.
                    for (int kb = k0; kb < k1; kb += kBatch) {
                        float bv[kBatch];
#pragma unroll
                        for (int u = 0; u < kBatch; ++u) bv[u] = to_f32(b[Layout::b_index(kb + u, j, p.ldb)]);
#pragma unroll
                        for (int u = 0; u < kBatch; ++u)
#pragma unroll
                            for (int r = 0; r < BM; ++r)
                                if (r < rows) part[r] = fmaf(to_f32(a[Layout::a_index(m0 + r, kb + u, p.lda)]), bv[u], part[r]);
                    }
                } else {
                    for (int k = k0; k < k1; ++k) {
                        const float bv = to_f32(b[Layout::b_index(k, j, p.ldb)]);
#pragma unroll
                        for (int r = 0; r < BM; ++r)
                            if (r < rows) part[r] = fmaf(to_f32(a[Layout::a_index(m0 + r, k, p.lda)]), bv, part[r]);
                    }
                }
            }
            total = fma_fold_round<BM, BN, KS>(partials, part, warp, lane, fr, round, chunks, total);
        }
        if (fr < rows && col_ok) epilogue_store<TC>(total, m0 + fr, j, p);
    }
};
