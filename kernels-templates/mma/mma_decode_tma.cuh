// Kind `mma_decode_tma` (small m) of the tensor-core policy, contract tc-k16 (docs/tensor-core.md §1).
//
// A CTA computes 16 rows (blockIdx.x: m tile) x Cfg::N columns (blockIdx.y: n tile) of C over
// all of K. One producer warp (the last) issues TMA loads of A (16 rows x 64 k) and B (64 k x N)
// into a STAGES-deep ring (full/empty mbarriers); N / 8 consumer warps each own an n8 column group
// and run mma.sync m16n8k16 with fragments from ldmatrix (transposed where the operand is
// MN-major). Every output element is one f32 accumulator from +0 over the k16 steps in ascending
// order; TMA zero-fills past m, n and k, so padded steps add nothing. Same bits as
// wgmma_tma_gemm and mma_gemm.
//
// A consumer warp releases a stage with a proxy fence first (mbar_release_after_generic_reads):
// its ldmatrix reads are generic-proxy accesses and the TMA load that refills the stage is an
// async-proxy write. Without the fence ptxas issued the release while the stage's last ldmatrix
// was still in flight, and the refill could land before that read (wrong results under
// compute-sanitizer memcheck and beside kernels of other streams; docs/timing.md).
//
// Shared layouts (each stage 1024-byte aligned, swizzle as the tensor maps say):
//   A [m, k] (nn, nt): 16 rows x 128 B, 128B swizzle     A [k, m] (tn): 64 rows x 32 B, 32B swizzle
//   B [k, n] (nn, tn): 64 rows x 2N B, 2N-byte swizzle   B [n, k] (nt): N rows x 128 B, 128B swizzle
//
// Launch: grid (ceil(m / 16), ceil(n / N)), kThreads threads, dynamic shared memory kSharedBytes:
//   kSharedBytes = STAGES * (16*K + K*N) * sizeof(TAB) + 2 * STAGES * 8 (mbarriers) + 1024 (alignment slack).
#pragma once
#include <cstdint>
#include "common/element.cuh"
#include "common/epilogue.cuh"
#include "common/operand_layout.cuh"
#include "common/timing_perturbation.cuh"
#include "tc/mma_sync.cuh"
#include "tc/smem_sync.cuh"
#include "tc/tc_epilogue.cuh"
#include "tc/tma.cuh"

template <typename TAB, typename TC, int OP, typename Cfg>
struct mma_decode_tma {
    static constexpr int BM = Cfg::M, BN = Cfg::N, BK = Cfg::K, kStages = Cfg::STAGES;
    static constexpr bool kAKMajor = OperandLayout<OP>::kAContiguousK;
    static constexpr bool kBKMajor = OperandLayout<OP>::kBContiguousK;
    static constexpr int kWarps = Cfg::kConsumerWarps;  // consumer warps, 8 columns each
    static constexpr int kThreads = Cfg::kThreads;
    static constexpr int kABytes = BM * BK * (int)sizeof(TAB);
    static constexpr int kBBytes = BK * BN * (int)sizeof(TAB);
    static constexpr int kSharedBytes = Cfg::kSharedBytes;

    // The layout against the numbers the generator delivers from the manifest
    // (mma/mma_decode_tma.toml): the carve of shared memory, one consumer warp per 8 columns
    // and a producer warp, the boxes the TMA loads and the ldmatrix addressing assume (A and B
    // as stored: a K-major operand in 128-byte swizzled rows of 64 k), the tier's cap.
    static_assert(kSharedBytes == kStages * (kABytes + kBBytes) + 2 * kStages * 8 + 1024 &&
                      kSharedBytes <= Cfg::kMaxSharedBytes && kWarps * 8 == BN && kThreads == 32 * kWarps + 32 &&
                      Cfg::kABoxInner == (kAKMajor ? BK : BM) && Cfg::kABoxOuter == (kAKMajor ? BM : BK) &&
                      Cfg::kSwizzleA == (kAKMajor ? 128 : 32) &&
                      Cfg::kBBoxInner == (kBKMajor ? BK : BN) && Cfg::kBBoxOuter == (kBKMajor ? BN : BK) &&
                      Cfg::kSwizzleB == (kBKMajor ? 128 : 2 * BN),
                  "mma_decode_tma: its layout does not match the config the generator delivered");

    template <class Args>
    __device__ static void run(const Args& p) {
        extern __shared__ __align__(1024) uint8_t tc_smem_raw[];
        const uint32_t sbase = (tc_smem_u32(tc_smem_raw) + 1023u) & ~1023u;
        const uint32_t sA0 = sbase, sB0 = sbase + kStages * kABytes;
        const uint32_t bar0 = sB0 + kStages * kBBytes;
        auto full = [&](int s) { return bar0 + 8u * s; };
        auto empty = [&](int s) { return bar0 + 8u * (kStages + s); };
        const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
        const int m0 = blockIdx.x * BM, n0 = blockIdx.y * BN;
        const int nk = (p.k + BK - 1) / BK;
        if (threadIdx.x == 0) {
            for (int s = 0; s < kStages; ++s) {
                mbar_init(full(s), 1);
                mbar_init(empty(s), kWarps);
            }
            mbar_init_fence();
        }
        __syncthreads();
        if (warp == kWarps) {  // producer
            if (lane == 0) {
                int s = 0;
                uint32_t ph = 0;
                for (int kb = 0; kb < nk; ++kb) {
                    GEMM_PERTURB(kPerturbProducerAcquire, kb);
                    mbar_wait(empty(s), ph ^ 1);
                    GEMM_PERTURB(kPerturbProducerIssue, kb);
                    mbar_arrive_expect_tx(full(s), kABytes + kBBytes);
                    if (kAKMajor) tma_load_2d(sA0 + s * kABytes, &p.a_map, full(s), kb * BK, m0);
                    else tma_load_2d(sA0 + s * kABytes, &p.a_map, full(s), m0, kb * BK);
                    if (kBKMajor) tma_load_2d(sB0 + s * kBBytes, &p.b_map, full(s), kb * BK, n0);
                    else tma_load_2d(sB0 + s * kBBytes, &p.b_map, full(s), n0, kb * BK);
                    if (++s == kStages) { s = 0; ph ^= 1; }
                }
            }
            return;
        }
        // Consumer warp `warp`: columns n0 + 8 * warp .. + 7, all 16 rows.
        float c[4] = {0.0f, 0.0f, 0.0f, 0.0f};
        int s = 0;
        uint32_t ph = 0;
        const int mat = lane / 8, r8 = lane % 8;
        for (int kb = 0; kb < nk; ++kb) {
            GEMM_PERTURB(kPerturbConsumerWait, kb);
            mbar_wait(full(s), ph);
            GEMM_PERTURB(kPerturbConsumerRead, kb);
            const uint32_t a = sA0 + s * kABytes, b = sB0 + s * kBBytes;
#pragma unroll
            for (int kk = 0; kk < BK / 16; ++kk) {  // ascending k16 steps
                uint32_t a0, a1, a2, a3, b0, b1;
                if constexpr (kAKMajor) {
                    // matrices (rows 0-7 | 8-15) x (k 0-7 | 8-15); 128B swizzle: chunk ^= row % 8
                    const int row = r8 + 8 * (mat & 1), kc = kk * 2 + (mat >> 1);
                    ldsm_x4(a + row * 128 + ((kc ^ (row & 7)) << 4), a0, a1, a2, a3);
                } else {
                    // k rows of 16 m (32 B); matrix (m 0-7 | 8-15) x (k 0-7 | 8-15), transposed;
                    // 32B swizzle: address bit 4 ^= bit 7
                    const int krow = kk * 16 + (mat >> 1) * 8 + r8, mc = mat & 1;
                    ldsm_x4_trans(a + krow * 32 + ((mc ^ ((krow >> 2) & 1)) << 4), a0, a1, a2, a3);
                }
                if constexpr (kBKMajor) {
                    // n rows of 64 k (128 B): matrices k 0-7 | 8-15 of rows 8 * warp ..; 128B swizzle
                    const int nrow = warp * 8 + r8, kc = kk * 2 + (mat & 1);
                    ldsm_x2(b + nrow * 128 + ((kc ^ (nrow & 7)) << 4), b0, b1);
                } else {
                    // k rows of N (2N bytes): lanes 0-15 give k rows 0..15; swizzle XORs address bits [4,7) with [7,10)
                    constexpr int RB = BN * 2, SWM = RB == 128 ? 7 : RB == 64 ? 3 : 1;
                    const int krow = kk * 16 + (lane % 16);
                    ldsm_x2_trans(b + krow * RB + ((warp ^ (((krow * RB) >> 7) & SWM)) << 4), b0, b1);
                }
                mma_m16n8k16<TAB>(c, a0, a1, a2, a3, b0, b1);
            }
            GEMM_PERTURB(kPerturbConsumerRelease, kb);
            // The stage was read by ldmatrix (generic proxy) and the next TMA load (async proxy)
            // overwrites it: fenced release, tc/smem_sync.cuh.
            mbar_release_after_generic_reads(empty(s), lane);
            if (++s == kStages) { s = 0; ph ^= 1; }
        }
        GEMM_PERTURB(kPerturbEpilogue, 0);
        const int row = m0 + lane / 4, col = n0 + 8 * warp + 2 * (lane % 4);
        const bool vec = tc_pairs_aligned<TC>(p) && n0 + BN <= p.n;
        tc_store_pair<TC>(p, row, col, c[0], c[1], vec);
        tc_store_pair<TC>(p, row + 8, col, c[2], c[3], vec);
    }
};
