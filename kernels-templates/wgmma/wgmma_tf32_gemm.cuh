// Kind `wgmma_tf32_gemm` of the tensor-core policy, contract tc-tf32-k8 (f32 inputs as TF32):
// wgmma m64nNk8 .tf32 for nn and nt, where B may be stored n-contiguous (docs/tensor-core.md §10).
//
// wgmma reads TF32 from shared memory only K-major, and has no transpose bits for it; nn's B is
// stored [k, n]. So the product runs transposed, C^T = B^T * A^T, the way cuBLAS's TF32 kernel
// does: wgmma's A operand (64 rows of the instruction's M) is a 64-column slab of B^T, read from
// the shared-memory stage into registers (any layout can be read there) and truncated to TF32
// on the way (tf32(x) = bits(x) & 0xffffe000); wgmma's B operand (the instruction's N) is the
// tile's rows of A, K-major as stored, through a 128B-swizzled descriptor. The products and the
// sum of a k8 step are the same for either orientation.
//
// A CTA computes Cfg::M rows x Cfg::N = 64 * CONSUMERS columns of C a tile: the instruction's N is
// the tile's m (64..256), each consumer warpgroup owns 64 columns (its M). Warpgroup 0 is the
// producer: one thread issues TMA loads of A ([m, k] boxes of 32 k = one 128-byte row) and B
// (nt: one [n, k] box; nn: N / 32 boxes of [32 k rows x 32 n]) into a STAGES-deep ring (full /
// empty mbarriers). Each consumer, for every stage, loads the stage's four k8 fragments of its
// 64 columns of B^T into one of two register sets, issues four wgmma m64nNk8 in ascending k, and
// commits; once the next stage's group is committed it waits for the previous group
// (wgmma_wait<1>) and releases that stage. Every output element is one f32 accumulator from +0
// over the k8 steps in ascending order; TMA zero-fills past m, n and k, so a padded step adds
// nothing. No split of K.
//
// Persistent grid: CTA `id` walks tiles id, id + count, ... in TcTileOrder; the grid decides who
// computes a tile, never how.
//
// Epilogue: straight from the accumulators (tc-tf32-k8's tail, common/epilogue.cuh: v = acc;
// + bias[n]; fma(beta, old C, v); one rounding), rows >= m and columns >= n skipped. A thread's
// d[4j + 2h + e] is column n0 + 64 cw + 16 warp + lane / 4 + 8h, row m0 + 8j + 2 (lane % 4) + e.
//
// Launch (the generator's entry point, from the manifest): __launch_bounds__(kThreads, 1),
// dynamic shared memory kSharedBytes = STAGES * (M + N) * 32 * 4 (the ring) + 2 * STAGES * 8
// (full + empty mbarriers) + 1024 (alignment slack: swizzle atoms start on 1024 bytes).
// 256 x 128 x 32, 4 stages, 2 consumers: 196608 + 64 + 1024 = 197696 bytes.
#pragma once
#include <cstdint>
#include <type_traits>
#include "common/element.cuh"
#include "common/epilogue.cuh"
#include "common/operand_layout.cuh"
#include "common/timing_perturbation.cuh"
#include "tc/smem_sync.cuh"
#include "tc/tile_order.cuh"
#include "tc/tma.cuh"
#include "tc/wgmma_ops.cuh"
#include "tc/wgmma_tf32_ops.cuh"

template <typename TAB, typename TC, int OP, typename Cfg>
struct wgmma_tf32_gemm {
    static constexpr int BM = Cfg::M, BN = Cfg::N, BK = Cfg::K;
    static constexpr int kStages = Cfg::STAGES, kConsumers = Cfg::CONSUMERS;
    static constexpr bool kBKMajor = OperandLayout<OP>::kBContiguousK;  // nt: B stored [n, k]
    static constexpr int kThreads = Cfg::kThreads;
    static constexpr int kABytes = BM * BK * 4;  // one stage of A: BM rows of 128 bytes
    static constexpr int kBBytes = BN * BK * 4;  // one stage of B
    static constexpr int kStageBytes = kABytes + kBBytes;
    static constexpr int kBBoxBytes = 32 * 32 * 4;  // nn: one [32 k x 32 n] box of B
    static constexpr int kBarrierBytes = 2 * kStages * 8;
    static constexpr int kSharedBytes = Cfg::kSharedBytes;
    static constexpr int kProducerRegs = 24, kConsumerRegs = Cfg::kAccumulatorRegisters;

    // The layout against the numbers the generator delivers from the manifest
    // (wgmma/wgmma_tf32_gemm.toml): the carve of shared memory, the boxes the loads assume.
    static_assert(sizeof(TAB) == 4 && OperandLayout<OP>::kAContiguousK && BK == 32 && BN == 64 * kConsumers &&
                      BM % 64 == 0 && BM <= 256 &&
                      kSharedBytes == kStages * kStageBytes + kBarrierBytes + 1024 &&
                      kSharedBytes <= Cfg::kMaxSharedBytes && kThreads == 128 * (1 + kConsumers) &&
                      Cfg::kABoxInner == 32 && Cfg::kABoxOuter == BM && Cfg::kSwizzleA == 128 &&
                      Cfg::kBBoxInner == 32 && Cfg::kBBoxOuter == (kBKMajor ? BN : 32) && Cfg::kSwizzleB == 128 &&
                      (kConsumers == 1 || (kConsumerRegs % 8 == 0 && kConsumerRegs <= 256 &&
                                           128 * kProducerRegs + 128 * kConsumers * kConsumerRegs <= 65536)),
                  "wgmma_tf32_gemm: its layout does not match the config the generator delivered");

    template <class Args>
    __device__ static void run(const Args& p) {
        extern __shared__ __align__(1024) uint8_t tc_smem_raw[];
        const uint32_t sbase = (tc_smem_u32(tc_smem_raw) + 1023u) & ~1023u;
        const uint32_t sA0 = sbase, sB0 = sbase + kStages * kABytes;
        const uint32_t bar0 = sbase + kStages * kStageBytes;  // full[s], then empty[s]
        auto full = [&](int s) { return bar0 + 8u * s; };
        auto empty = [&](int s) { return bar0 + 8u * (kStages + s); };

        const int wg = threadIdx.x / 128, tid = threadIdx.x % 128;
        if (threadIdx.x == 0) {
            for (int s = 0; s < kStages; ++s) {
                mbar_init(full(s), 1);
                mbar_init(empty(s), 4 * kConsumers);  // every consumer warp
            }
            mbar_init_fence();
        }
        __syncthreads();

        const TcTileOrder order{(p.m + BM - 1) / BM, (p.n + BN - 1) / BN};
        const int ntiles = order.count();
        const int nk = (p.k + BK - 1) / BK;

        if (wg == 0) {
            if constexpr (kConsumers == 2) asm volatile("setmaxnreg.dec.sync.aligned.u32 %0;" ::"n"(kProducerRegs));
            if (tid == 0) {
                int s = 0;
                uint32_t ph = 0;
                for (int t = blockIdx.x; t < ntiles; t += gridDim.x) {
                    int tm, tn;
                    order.tile(t, tm, tn);
                    const int m0 = tm * BM, n0 = tn * BN;
                    for (int kb = 0; kb < nk; ++kb) {
                        GEMM_PERTURB(kPerturbProducerAcquire, kb);
                        mbar_wait(empty(s), ph ^ 1);
                        GEMM_PERTURB(kPerturbProducerIssue, kb);
                        mbar_arrive_expect_tx(full(s), kStageBytes);
                        const uint32_t a = sA0 + s * kABytes, b = sB0 + s * kBBytes;
                        tma_load_2d(a, &p.a_map, full(s), kb * BK, m0);
                        if constexpr (kBKMajor) {
                            tma_load_2d(b, &p.b_map, full(s), kb * BK, n0);
                        } else {
#pragma unroll
                            for (int i = 0; i < BN / 32; ++i) tma_load_2d(b + i * kBBoxBytes, &p.b_map, full(s), n0 + 32 * i, kb * BK);
                        }
                        if (++s == kStages) { s = 0; ph ^= 1; }
                    }
                }
            }
        } else {
            if constexpr (kConsumers == 2) asm volatile("setmaxnreg.inc.sync.aligned.u32 %0;" ::"n"(kConsumerRegs));
            const int cw = wg - 1;
            const int warp = tid / 32, lane = tid % 32;
            // This thread's fragment rows of B^T (columns of C within the tile) and k offsets.
            const int nl0 = cw * 64 + warp * 16 + lane / 4;  // + 8 (i % 2)
            const int kq = lane % 4;                          // + 8 kk + 4 (i / 2)
            float d[BM / 2];
            // Two register sets of B^T fragments, stages alternating between them; indexed by
            // constants only, so each set keeps its own registers while a wgmma group reads it.
            uint32_t frag[2][BK / 8][4];
            int s = 0;
            uint32_t ph = 0;
            int prev = -1;  // the stage the previous group read
            // One stage into set SET: its fragments loaded (each truncated to TF32), four k8
            // steps in ascending k, one group; then the previous group (set SET ^ 1) retires and
            // its stage is released.
            auto stage = [&](auto set, int kb, uint32_t& m_ph) {
                constexpr int SET = decltype(set)::value;
                GEMM_PERTURB(kPerturbConsumerWait, kb);
                mbar_wait(full(s), m_ph);
                GEMM_PERTURB(kPerturbConsumerRead, kb);
                const uint32_t a = sA0 + s * kABytes, b = sB0 + s * kBBytes;
#pragma unroll
                for (int kk = 0; kk < BK / 8; ++kk)
#pragma unroll
                    for (int i = 0; i < 4; ++i)
                        frag[SET][kk][i] = tf32_bits(ld_shared_u32(b_at(b, nl0 + 8 * (i % 2), 8 * kk + kq + 4 * (i / 2))));
                fence_fragments(frag[SET]);
                wgmma_fence();
#pragma unroll
                for (int kk = 0; kk < BK / 8; ++kk)  // ascending k8 steps: the contract's chain
                    wgmma_k8_tf32_rs<BM>(d, frag[SET][kk], wgmma_desc_sw128(a + kk * 32, 16, 1024));
                wgmma_commit();
                fence_fragments(frag[SET]);
                if (prev >= 0) {  // the group that read stage `prev` (and set SET ^ 1) has retired
                    wgmma_wait<1>();
                    fence_fragments(frag[SET ^ 1]);
                    GEMM_PERTURB(kPerturbConsumerRelease, kb);
                    mbar_release_after_generic_reads(empty(prev), lane);
                }
                prev = s;
                if (++s == kStages) { s = 0; m_ph ^= 1; }
            };
            for (int t = blockIdx.x; t < ntiles; t += gridDim.x) {
                int tm, tn;
                order.tile(t, tm, tn);
                const int m0 = tm * BM, n0 = tn * BN;
#pragma unroll
                for (int i = 0; i < BM / 2; ++i) d[i] = 0.0f;
                prev = -1;
                int kb = 0;
                for (; kb + 1 < nk; kb += 2) {
                    stage(std::integral_constant<int, 0>{}, kb, ph);
                    stage(std::integral_constant<int, 1>{}, kb + 1, ph);
                }
                if (kb < nk) stage(std::integral_constant<int, 0>{}, kb, ph);
                wgmma_wait<0>();
                fence_fragments(frag[0]);
                fence_fragments(frag[1]);
                GEMM_PERTURB(kPerturbConsumerRelease, nk);
                if (prev >= 0) mbar_release_after_generic_reads(empty(prev), lane);
#pragma unroll
                for (int i = 0; i < BM / 2; ++i) wgmma_reg_fence(d[i]);
                GEMM_PERTURB(kPerturbEpilogue, t);
                // d[4j + 2h + e] is C's (row m0 + 8j + 2 kq + e, column n0 + nl0 + 8h).
#pragma unroll
                for (int h = 0; h < 2; ++h) {
                    const int col = n0 + nl0 + 8 * h;
                    if (col >= p.n) continue;
#pragma unroll
                    for (int j = 0; j < BM / 8; ++j)
#pragma unroll
                        for (int e = 0; e < 2; ++e) {
                            const int row = m0 + 8 * j + 2 * kq + e;
                            if (row < p.m) epilogue_store<TC>(d[4 * j + 2 * h + e], row, col, p);
                        }
                }
            }
        }
    }

    // Shared address of B(k, n) in a stage at `b` (k < 32 of the stage, n < BN of the tile), as
    // TMA's 128-byte swizzle left it: the 16-byte chunk c of a 128-byte row r lies at chunk
    // c ^ (r % 8). nt: one box, a row per n (32 k); nn: BN / 32 boxes, a row per k (32 n).
    __device__ __forceinline__ static uint32_t b_at(uint32_t b, int n, int k) {
        if constexpr (kBKMajor) {
            return b + n * 128 + ((((k >> 2) ^ (n & 7))) << 4) + (k & 3) * 4;
        } else {
            return b + (n >> 5) * kBBoxBytes + k * 128 + ((((n & 31) >> 2) ^ (k & 7)) << 4) + (n & 3) * 4;
        }
    }
    // Keeps the compiler from reusing a fragment register before the group reading it retires.
    __device__ __forceinline__ static void fence_fragments(uint32_t (&f)[BK / 8][4]) {
#pragma unroll
        for (int kk = 0; kk < BK / 8; ++kk)
#pragma unroll
            for (int i = 0; i < 4; ++i) asm volatile("" : "+r"(f[kk][i])::"memory");
    }
    __device__ __forceinline__ static uint32_t ld_shared_u32(uint32_t addr) {
        uint32_t v;
        asm volatile("ld.shared.b32 %0, [%1];" : "=r"(v) : "r"(addr) : "memory");
        return v;
    }
    // The contract's TF32 of an f32: the low 13 mantissa bits cleared.
    __device__ __forceinline__ static uint32_t tf32_bits(uint32_t x) { return x & 0xffffe000u; }
};
