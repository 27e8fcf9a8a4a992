// The tile parameters of one kernel, as the spec's [[tile]] gives them.
#pragma once

template <int M_, int N_, int K_, int STAGES_, int THREAD_M_, int THREAD_N_, int K_SPLIT_>
struct TileConfig {
    static constexpr int M = M_;               // rows of C per block
    static constexpr int N = N_;               // columns of C per block
    static constexpr int K = K_;               // reduction step staged in shared memory
    static constexpr int STAGES = STAGES_;     // shared-memory buffers in flight
    static constexpr int THREAD_M = THREAD_M_; // rows of C per thread
    static constexpr int THREAD_N = THREAD_N_; // columns of C per thread
    static constexpr int K_SPLIT = K_SPLIT_;   // K chunks one block reduces in parallel
    static_assert(M > 0 && N > 0 && K > 0, "TileConfig: tile dimensions must be positive");
    static_assert(STAGES > 0 && THREAD_M > 0 && THREAD_N > 0 && K_SPLIT > 0,
                  "TileConfig: stages, thread tile and k_split must be positive");
};
