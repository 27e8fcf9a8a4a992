// Contract `fma-k256`, shared by every exact kernel: K is cut into chunks of kFmaChunk
// consecutive k (the last may be shorter). Each chunk is one f32 FMA chain from +0 over
// ascending k; the chunk results are added left to right in ascending chunk order
// (acc = p0; acc = acc + p1; ...), and acc = 0 when K = 0. The cut depends on K alone, so a
// kernel may reduce chunks in parallel (decode) or in sequence (tiles) and give the same bits.
#pragma once

constexpr int kFmaChunk = 256;

__device__ __forceinline__ int fma_chunk_count(int k) { return (k + kFmaChunk - 1) / kFmaChunk; }

// Folds chunk `c`'s result into the running total: the contract's left-to-right sum.
__device__ __forceinline__ float fma_chunk_fold(int c, float total, float partial) {
    return c == 0 ? partial : __fadd_rn(total, partial);
}
