// The tile parameters of the tensor-core policy's kernels (contract tc-k16, docs/tensor-core.md),
// one struct per template, as the spec's [[tile]] gives them. Each struct checks only what is a
// property of the numbers alone; the templates check what their code needs (see their
// static_asserts, mirrored by the spec checker).
#pragma once

// wgmma_tma_gemm: a CTA computes M = 64 * CONSUMERS rows x N columns, K = 64 per stage,
// STAGES stages in the TMA ring, CLUSTER_M CTAs per cluster along M (B multicast when 2).
template <int M_, int N_, int K_, int STAGES_, int CONSUMERS_, int CLUSTER_M_>
struct WgmmaConfig {
    static constexpr int M = M_;                  // rows of C per CTA (64 per consumer warpgroup)
    static constexpr int N = N_;                  // columns of C per CTA = wgmma n
    static constexpr int K = K_;                  // k per pipeline stage (one 128-byte swizzle row)
    static constexpr int STAGES = STAGES_;        // shared-memory stages in the ring
    static constexpr int CONSUMERS = CONSUMERS_;  // consumer warpgroups
    static constexpr int CLUSTER_M = CLUSTER_M_;  // CTAs per cluster along M
    static_assert(M > 0 && N > 0 && K > 0 && STAGES > 0 && CONSUMERS > 0 && CLUSTER_M > 0,
                  "WgmmaConfig: all parameters must be positive");
};

// mma_decode_tma: a CTA computes M = 16 rows x N columns over all of K, K = 64 per stage.
template <int M_, int N_, int K_, int STAGES_>
struct MmaDecodeConfig {
    static constexpr int M = M_;            // rows of C per CTA (one m16 fragment)
    static constexpr int N = N_;            // columns of C per CTA (one consumer warp per 8)
    static constexpr int K = K_;            // k per pipeline stage
    static constexpr int STAGES = STAGES_;  // shared-memory stages in the ring
    static_assert(M > 0 && N > 0 && K > 0 && STAGES > 0, "MmaDecodeConfig: all parameters must be positive");
};

// mma_gemm: a CTA computes M x N, K per shared-memory step, WARPS_M x WARPS_N warps,
// STAGES = 1 (load, then compute) or 2 (the next step's global loads in flight during compute).
// mma_async_gemm takes the same numbers: STAGES cp.async stages (STAGES - 1 in flight while
// one is computed).
template <int M_, int N_, int K_, int WARPS_M_, int WARPS_N_, int STAGES_>
struct MmaConfig {
    static constexpr int M = M_;
    static constexpr int N = N_;
    static constexpr int K = K_;
    static constexpr int WARPS_M = WARPS_M_;
    static constexpr int WARPS_N = WARPS_N_;
    static constexpr int STAGES = STAGES_;
    static_assert(M > 0 && N > 0 && K > 0 && WARPS_M > 0 && WARPS_N > 0 && STAGES > 0,
                  "MmaConfig: all parameters must be positive");
};
