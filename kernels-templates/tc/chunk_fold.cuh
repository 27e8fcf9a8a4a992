// Contract tc-k16-c512 (docs/tensor-core.md §9) in the mma.sync kernels: K's chunks of kChunk k
// are each a chain from +0 in the accumulators; a finished chunk is added into a second set
// (the fold, from +0, ascending chunk order) and the chain restarts from +0.
#pragma once

// Every accumulator of a warp's fragments = +0.
template <int MI, int NI>
__device__ __forceinline__ void tc_zero_fragments(float (&acc)[MI][NI][4]) {
#pragma unroll
    for (int i = 0; i < MI; ++i)
#pragma unroll
        for (int j = 0; j < NI; ++j)
#pragma unroll
            for (int r = 0; r < 4; ++r) acc[i][j][r] = 0.0f;
}

// fold += acc (one f32 addition each, round to nearest even); acc = +0.
template <int MI, int NI>
__device__ __forceinline__ void tc_fold_chunk(float (&fold)[MI][NI][4], float (&acc)[MI][NI][4]) {
#pragma unroll
    for (int i = 0; i < MI; ++i)
#pragma unroll
        for (int j = 0; j < NI; ++j)
#pragma unroll
            for (int r = 0; r < 4; ++r) {
                fold[i][j][r] = __fadd_rn(fold[i][j][r], acc[i][j][r]);
                acc[i][j][r] = 0.0f;
            }
}

// acc = fold: the folded result goes to the epilogue.
template <int MI, int NI>
__device__ __forceinline__ void tc_take_fold(float (&acc)[MI][NI][4], const float (&fold)[MI][NI][4]) {
#pragma unroll
    for (int i = 0; i < MI; ++i)
#pragma unroll
        for (int j = 0; j < NI; ++j)
#pragma unroll
            for (int r = 0; r < 4; ++r) acc[i][j][r] = fold[i][j][r];
}
