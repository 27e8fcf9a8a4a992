// Kind `wgmma_tf32_gemm` of the tensor-core policy, contracts tc-tf32-k8 and tc-tf32-k8-c512
// (f32 inputs as TF32): wgmma m64nNk8 .tf32 for nn and nt, where B may be stored n-contiguous,
// and for tn (tc-tf32-k8 only), whose m-contiguous A the producer warpgroup transposes in shared
// memory (produce_tn, transpose_a below; docs/tensor-core.md §10).
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
// the tile's m (16..256), each consumer warpgroup owns 64 columns (its M). Warpgroup 0 is the
// producer: one thread issues TMA loads of A ([m, k] boxes of 32 k = one 128-byte row) and B
// (nt: one [n, k] box; nn: N / 32 boxes of [32 k rows x 32 n]) into a STAGES-deep ring (full /
// empty mbarriers). Each consumer, for every stage, loads the stage's four k8 fragments of its
// 64 columns of B^T into one of two register sets, issues four wgmma m64nNk8 in ascending k, and
// commits; once the next stage's group is committed it waits for the previous group
// (wgmma_wait<1>) and releases that stage. Every chain is one f32 accumulator from +0 over its
// k8 steps in ascending order; TMA zero-fills past m, n and k, so a padded step adds nothing.
//
// tc-tf32-k8 (Cfg::kChunk == 0): one chain over all of K. tc-tf32-k8-c512 (kChunk = 512): a chain
// a chunk of K, the chunks added in ascending order from +0 (one f32 addition each), either
//  * SPLIT_K == 1: into a second accumulator set as each chunk ends, or
//  * SPLIT_K > 1: a cluster of SPLIT_K CTAs along z (blockIdx.z = rank) shares every tile it
//    walks, in rounds: in round r, rank q runs chunk r * S + q (if K has it) and leaves its
//    partial sums in its shared-memory slot (each thread's fragment, as it holds it); its
//    consumer warps signal every rank (an mbarrier arrive with cluster-scope release) and wait
//    until every rank has; each rank then adds 1/S of every fragment's entries from the round's
//    slots into its running total, ascending chunk order, through distributed shared memory, and
//    signals that it has read them; a rank overwrites its slot only after every rank has. After
//    the last round each rank stores its share. Any K; the producer takes no part and keeps
//    loading ahead.
//
// Persistent grid: CTA (cluster) `id` walks tiles id, id + count, ... in TcTileOrder; the grid
// decides who computes a tile, never how.
//
// Epilogue: straight from the accumulators (common/epilogue.cuh: v = acc; + bias[n]; fma(beta,
// old C, v); one rounding), rows >= m and columns >= n skipped; with beta != 0 the old values of
// 8 entries are loaded before their stores (a load behind each store was the TN rows' bottleneck). A thread's d[4j + 2h + e] is
// column n0 + 64 cw + 16 warp + lane / 4 + 8h, row m0 + 8j + 2 (lane % 4) + e.
//
// Launch (the generator's entry point, from the manifest): __launch_bounds__(kThreads, 1),
// cluster (1, 1, SPLIT_K), grid.z = SPLIT_K, dynamic shared memory kSharedBytes = STAGES * (M + N)
// * 32 * 4 (the ring) + kPartialBytes (a split's slot, M * N * 4, and its two mbarriers) + 2 *
// STAGES * 8 (full + empty mbarriers) + 1024 (alignment slack: swizzle atoms start on 1024 bytes).
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
    static constexpr bool kAKMajor = OperandLayout<OP>::kAContiguousK;  // nn, nt: A stored [m, k]
    static constexpr bool kBKMajor = OperandLayout<OP>::kBContiguousK;  // nt: B stored [n, k]
    static constexpr int kThreads = Cfg::kThreads;
    static constexpr int kABytes = BM * BK * 4;  // one stage of A: BM rows of 128 bytes
    static constexpr int kBBytes = BN * BK * 4;  // one stage of B
    static constexpr int kStageBytes = kABytes + kBBytes;
    static constexpr int kBBoxBytes = 32 * 32 * 4;  // nn: one [32 k x 32 n] box of B
    // tn: A arrives m-contiguous (BM / 32 boxes of [32 k x 32 m]) in the stage's A slot, and the
    // producer warpgroup transposes each box in place into the K-major rows wgmma reads; a third
    // barrier a stage says the loads landed.
    static constexpr int kBarrierBytes = (kAKMajor ? 2 : 3) * kStages * 8;
    static constexpr int kSharedBytes = Cfg::kSharedBytes;
    // The transposing producer needs more than the 24 registers a TMA-issuing one does.
    static constexpr int kProducerRegs = kAKMajor ? 24 : 56, kConsumerRegs = Cfg::kAccumulatorRegisters;
    static constexpr int kChunk = Cfg::kChunk;  // 0: one chain over K (tc-tf32-k8)
    static constexpr int kSplit = Cfg::SPLIT_K;
    static constexpr int kPartialBytes = Cfg::kPartialBytes;  // a split's slot and its 2 mbarriers
    static constexpr int kShare = (BM / 2) / kSplit;          // fragment entries a rank folds
    static constexpr bool kFoldSet = kChunk > 0 && kSplit == 1;

    // The layout against the numbers the generator delivers from the manifest
    // (wgmma/wgmma_tf32_gemm.toml): the carve of shared memory, the boxes the loads assume.
    static_assert(sizeof(TAB) == 4 && BK == 32 && BN == 64 * kConsumers && (kAKMajor || BM % 32 == 0) &&
                      BM % 16 == 0 && BM <= 256 && kChunk % BK == 0 && (kSplit == 1 || kChunk > 0) &&
                      (BM / 2) % kSplit == 0 && kPartialBytes == (kSplit > 1 ? BM * BN * 4 + 16 : 0) &&
                      kSharedBytes == kStages * kStageBytes + kPartialBytes + kBarrierBytes + 1024 &&
                      kSharedBytes <= Cfg::kMaxSharedBytes && kThreads == 128 * (1 + kConsumers) &&
                      Cfg::kABoxInner == 32 && Cfg::kABoxOuter == (kAKMajor ? BM : 32) && Cfg::kSwizzleA == 128 &&
                      Cfg::kBBoxInner == 32 && Cfg::kBBoxOuter == (kBKMajor ? BN : 32) && Cfg::kSwizzleB == 128 &&
                      setmaxnreg_fits(kThreads, kConsumers, kProducerRegs, kConsumerRegs),
                  "wgmma_tf32_gemm: its layout does not match the config the generator delivered");

    template <class Args>
    __device__ static void run(const Args& p) {
        extern __shared__ __align__(1024) uint8_t tc_smem_raw[];
        const uint32_t sbase = (tc_smem_u32(tc_smem_raw) + 1023u) & ~1023u;
        const uint32_t sA0 = sbase, sB0 = sbase + kStages * kABytes;
        const uint32_t sP = sbase + kStages * kStageBytes;  // a split's slot
        const uint32_t bar0 = sP + kPartialBytes;           // full[s], empty[s], then (tn) landed[s]
        // Split: "every rank's partials of the round are in its slot" and "every rank has read
        // them", each an mbarrier at the end of the slot (kPartialBytes includes them).
        const uint32_t ready_bar = bar0 - 16, free_bar = bar0 - 8;
        auto full = [&](int s) { return bar0 + 8u * s; };
        auto empty = [&](int s) { return bar0 + 8u * (kStages + s); };
        auto landed = [&](int s) { return bar0 + 8u * (2 * kStages + s); };

        const int wg = threadIdx.x / 128, tid = threadIdx.x % 128;
        if (threadIdx.x == 0) {
            for (int s = 0; s < kStages; ++s) {
                mbar_init(full(s), 1);
                mbar_init(empty(s), 4 * kConsumers);  // every consumer warp
                if constexpr (!kAKMajor) mbar_init(landed(s), 1);
            }
            if constexpr (kSplit > 1) {  // every consumer warp of every rank, once a round
                mbar_init(ready_bar, kSplit * 4 * kConsumers);
                mbar_init(free_bar, kSplit * 4 * kConsumers);
            }
            mbar_init_fence();
        }
        // A split's peers arrive on each other's barriers: all are initialised before any goes on.
        if constexpr (kSplit > 1) cluster_sync_all(); else __syncthreads();

        const TcTileOrder order{(p.m + BM - 1) / BM, (p.n + BN - 1) / BN};
        const int ntiles = order.count();
        const int nk = (p.k + BK - 1) / BK;
        // K's chunks (one chunk of all of K for tc-tf32-k8), in rounds of kSplit: rank krank
        // runs chunk r * kSplit + krank of round r, where K has it.
        const int per = kChunk > 0 ? kChunk / BK : nk;
        const int nchunks = kChunk > 0 ? (p.k + kChunk - 1) / kChunk : (nk > 0 ? 1 : 0);
        const int rounds = (nchunks + kSplit - 1) / kSplit;
        // The split's rank, also the distributed-shared-memory target rank of its peers: the
        // cluster is (1, 1, SPLIT_K) and grid.z == SPLIT_K, so blockIdx.z is %cluster_ctarank.
        const int krank = kSplit > 1 ? (int)blockIdx.z : 0;

        if (wg == 0) {
            if constexpr (kConsumers == 2) asm volatile("setmaxnreg.dec.sync.aligned.u32 %0;" ::"n"(kProducerRegs));
            if constexpr (!kAKMajor) {
                produce_tn(p, order, ntiles, nk, sA0, sB0, full, empty, landed, tid);
            } else if (tid == 0) {
                int s = 0;
                uint32_t ph = 0;
                for (int t = blockIdx.x; t < ntiles; t += gridDim.x) {
                    int tm, tn;
                    order.tile(t, tm, tn);
                    const int m0 = tm * BM, n0 = tn * BN;
                    for (int ch = krank; ch < nchunks; ch += kSplit) {
                        const int kb_end = min(nk, (ch + 1) * per);
                        for (int kb = ch * per; kb < kb_end; ++kb) {
                            GEMM_PERTURB(kPerturbProducerAcquire, kb);
                            mbar_wait(empty(s), ph ^ 1);
                            GEMM_PERTURB(kPerturbProducerIssue, kb);
                            mbar_arrive_expect_tx(full(s), kStageBytes);
                            const uint32_t a = sA0 + s * kABytes, b = sB0 + s * kBBytes;
                            tma_load_2d(a, &p.a_map, full(s), kb * BK, m0);
                            load_b(p, b, full(s), n0, kb);
                            if (++s == kStages) { s = 0; ph ^= 1; }
                        }
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
            float fold[kFoldSet ? BM / 2 : 1];       // the chunks folded so far (no split)
            float total[kSplit > 1 ? kShare : 1];    // a split rank's share, folded so far
            // Two register sets of B^T fragments, stages alternating between them; indexed by
            // constants only, so each set keeps its own registers while a wgmma group reads it.
            uint32_t frag[2][BK / 8][4];
            int s = 0;
            uint32_t ph = 0;
            int prev = -1;  // the stage the previous group read
            uint32_t rph = 0, fph = 0;  // split: phases of ready_bar and free_bar
            bool free_pending = false;  // split: peers may still read this CTA's slot
            // One stage into set SET: its fragments loaded (each truncated to TF32), four k8
            // steps in ascending k, one group; then the previous group (set SET ^ 1) retires and
            // its stage is released.
            auto stage = [&](auto set, int kb) {
                constexpr int SET = decltype(set)::value;
                GEMM_PERTURB(kPerturbConsumerWait, kb);
                mbar_wait(full(s), ph);
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
                if (++s == kStages) { s = 0; ph ^= 1; }
            };
            for (int t = blockIdx.x; t < ntiles; t += gridDim.x) {
                int tm, tn;
                order.tile(t, tm, tn);
                const int m0 = tm * BM, n0 = tn * BN;
#pragma unroll
                for (int i = 0; i < BM / 2; ++i) d[i] = 0.0f;
                if constexpr (kFoldSet) {
#pragma unroll
                    for (int i = 0; i < BM / 2; ++i) fold[i] = 0.0f;
                }
                if constexpr (kSplit > 1) {
#pragma unroll
                    for (int u = 0; u < kShare; ++u) total[u] = 0.0f;
                }
                for (int r = 0; r < rounds; ++r) {
                    const int ch = r * kSplit + krank;
                    if (ch < nchunks) {  // this rank's chunk of the round: its chain from +0
                        const int kb0 = ch * per, kb_end = min(nk, (ch + 1) * per);
                        prev = -1;
                        int kb = kb0;
                        for (; kb + 1 < kb_end; kb += 2) {
                            stage(std::integral_constant<int, 0>{}, kb);
                            stage(std::integral_constant<int, 1>{}, kb + 1);
                        }
                        if (kb < kb_end) stage(std::integral_constant<int, 0>{}, kb);
                        wgmma_wait<0>();
                        fence_fragments(frag[0]);
                        fence_fragments(frag[1]);
                        GEMM_PERTURB(kPerturbConsumerRelease, kb_end);
                        if (prev >= 0) mbar_release_after_generic_reads(empty(prev), lane);
#pragma unroll
                        for (int i = 0; i < BM / 2; ++i) wgmma_reg_fence(d[i]);
                    }
                    if constexpr (kFoldSet) {
#pragma unroll
                        for (int i = 0; i < BM / 2; ++i) {
                            fold[i] = __fadd_rn(fold[i], d[i]);  // ascending fold
                            d[i] = 0.0f;
                        }
                    } else if constexpr (kSplit > 1) {
                        fold_round(sP, ready_bar, free_bar, rph, fph, free_pending, r, ch < nchunks, nchunks, krank,
                                   cw, lane, tid, d, total);
                    }
                }
                GEMM_PERTURB(kPerturbEpilogue, t);
                if constexpr (kSplit > 1) {
                    // Rank krank's share: entries krank * kShare .. of every fragment.
#pragma unroll
                    for (int u = 0; u < kShare; ++u) store(p, total[u], krank * kShare + u, m0, n0, nl0, kq);
                } else if (p.beta != 0.0f) {
                    // C's old values 8 at a time, loaded before the group's stores (one after
                    // the other, each load would wait for the store before it).
#pragma unroll
                    for (int i0 = 0; i0 < BM / 2; i0 += kOldGroup) {
                        float old[kOldGroup];
#pragma unroll
                        for (int u = 0; u < kOldGroup; ++u) old[u] = load_old(p, i0 + u, m0, n0, nl0, kq);
#pragma unroll
                        for (int u = 0; u < kOldGroup; ++u) store(p, kFoldSet ? fold[i0 + u] : d[i0 + u], old[u], i0 + u, m0, n0, nl0, kq);
                    }
                } else {
#pragma unroll
                    for (int i = 0; i < BM / 2; ++i) store(p, kFoldSet ? fold[i] : d[i], i, m0, n0, nl0, kq);
                }
            }
            if constexpr (kSplit > 1) {
                if (free_pending) mbar_wait_acquire_cluster(free_bar, fph);  // peers have read the last slot
            }
        }
        if constexpr (kSplit > 1) {
            __syncwarp();
            cluster_sync_all();  // no CTA leaves while a peer may still read it or arrive on it
        }
    }

    // One stage of B (k-block kb, columns n0..): a [k x BN] box (nt) or BN / 32 boxes of [32 k x 32 n].
    template <class Args>
    __device__ __forceinline__ static void load_b(const Args& p, uint32_t b, uint32_t bar, int n0, int kb) {
        if constexpr (kBKMajor) {
            tma_load_2d(b, &p.b_map, bar, kb * BK, n0);
        } else {
#pragma unroll
            for (int i = 0; i < BN / 32; ++i) tma_load_2d(b + i * kBBoxBytes, &p.b_map, bar, n0 + 32 * i, kb * BK);
        }
    }

    // tn's producer warpgroup. Stage j of the CTA is k-block j % nk of its tile j / nk (tc-tf32-k8:
    // one chain over K, no split), in ring slot j % kStages. Thread 0 loads stages kStages - 2
    // ahead: raw A into the stage's A slot and B, on landed[s]. The warpgroup waits for stage j to
    // land, transposes its A in place, fences and arrives on full[s]; then every thread waits for
    // the consumers to release stage j - 2 (they do once they run stage j - 1, released a step
    // ago, so the transposition of stage j + 1 overlaps their stage j - 1; waiting for stage j - 1
    // instead put each transposition behind the consumers' previous stage) and thread 0 loads
    // stage j + kStages - 2 into its slot.
    template <class Args, class Full, class Empty, class Landed>
    __device__ __forceinline__ static void produce_tn(const Args& p, const TcTileOrder& order, int ntiles, int nk, uint32_t sA0,
                                                      uint32_t sB0, Full full, Empty empty, Landed landed, int tid) {
        static_assert(kChunk == 0 && kSplit == 1, "tn's stage sequence is k-blocks of whole tiles");
        const int mine = (int)blockIdx.x < ntiles ? (ntiles - 1 - (int)blockIdx.x) / (int)gridDim.x + 1 : 0;
        const int total = mine * nk;
        auto issue = [&](int jj) {  // thread 0; slot jj % kStages is free
            int tm, tn;
            order.tile((int)blockIdx.x + (jj / nk) * (int)gridDim.x, tm, tn);
            const int s = jj % kStages, kb = jj % nk;
            mbar_arrive_expect_tx(landed(s), kStageBytes);
#pragma unroll
            for (int i = 0; i < BM / 32; ++i) tma_load_2d(sA0 + s * kABytes + i * kBBoxBytes, &p.a_map, landed(s), tm * BM + 32 * i, kb * BK);
            load_b(p, sB0 + s * kBBytes, landed(s), tn * BN, kb);
        };
        if (tid == 0)
            for (int jj = 0; jj < min(kStages - 2, total); ++jj) issue(jj);
        for (int j = 0; j < total; ++j) {
            const int s = j % kStages;
            mbar_wait(landed(s), (uint32_t)((j / kStages) & 1));
            transpose_a(sA0 + s * kABytes, tid);
            if (tid == 0) mbar_arrive(full(s));
            const int next = j + kStages - 2;  // into the slot of stage j - 2
            if (next < total) {
                if (next >= kStages) {
                    GEMM_PERTURB(kPerturbProducerAcquire, next % nk);
                    mbar_wait(empty(next % kStages), (uint32_t)(((next / kStages) & 1) ^ 1));
                    GEMM_PERTURB(kPerturbProducerIssue, next % nk);
                }
                if (tid == 0) issue(next);
            }
        }
    }

    // tn, the producer warpgroup (thread tid of 128): a stage's A, BM / 32 boxes of [32 k rows x 32
    // m] (128B-swizzled, as TMA left them), transposed in place into K-major rows (128 bytes of 32
    // k per m, swizzled as TMA would have: box b's rows are the stage's rows 32 b ..): value e of
    // box b's chunk c in row k goes to row 32 b + 4 c + e, chunk k / 4. A unit is 4 k x 4 m: four
    // 16-byte loads, a 4 x 4 transpose in registers, four 16-byte stores. A round is two boxes,
    // one unit a thread, all loads before a barrier and all stores after it (a unit's stores land
    // on its mirror's loads). The 8 lanes of a quarter warp take units on a diagonal (k4 = i, m4 =
    // (g + i) % 8), so their loads (chunk m4 ^ (k % 8) of row k) and stores (chunk k4 ^ (m % 8) of
    // row m) each hit 8 distinct 16-byte chunks. Then the writes are fenced for wgmma's async
    // proxy and the warpgroup synchronises.
    __device__ __forceinline__ static void transpose_a(uint32_t a, int tid) {
        static_assert(BK == 32 && BM % 32 == 0, "tn: whole boxes of 32 k x 32 m");
        constexpr int kBoxes = BM / 32;
        const int i = tid & 7, g = (tid >> 3) & 7, bo = tid >> 6;  // bo: the round's box 0 or 1
        const int k4 = i, m4 = (g + i) & 7;
#pragma unroll 1
        for (int b0 = 0; b0 < kBoxes; b0 += 2) {
            const int b = b0 + bo;
            uint32_t v[4][4];  // [k offset][m offset]
            const uint32_t box = a + b * kBBoxBytes;
            if (b < kBoxes) {
#pragma unroll
                for (int e = 0; e < 4; ++e) {
                    const int k = 4 * k4 + e;
                    asm volatile("ld.shared.v4.b32 {%0, %1, %2, %3}, [%4];"
                                 : "=r"(v[e][0]), "=r"(v[e][1]), "=r"(v[e][2]), "=r"(v[e][3])
                                 : "r"(box + k * 128 + ((m4 ^ (k & 7)) << 4))
                                 : "memory");
                }
            }
            named_bar_sync(1, 128);
            if (b < kBoxes) {
#pragma unroll
                for (int f = 0; f < 4; ++f) {
                    const int m = 4 * m4 + f;
                    asm volatile("st.shared.v4.b32 [%0], {%1, %2, %3, %4};" ::"r"(box + m * 128 + ((k4 ^ (m & 7)) << 4)),
                                 "r"(v[0][f]), "r"(v[1][f]), "r"(v[2][f]), "r"(v[3][f])
                                 : "memory");
                }
            }
        }
        fence_proxy_async_shared();  // the writes, before wgmma reads them through the async proxy
        named_bar_sync(1, 128);
    }

    // Split, one round of consumer thread (cw, tid): once every rank has read this CTA's slot
    // (the previous round), its chunk's partials d go into the slot (none when K has no chunk
    // for it this round); after every rank's have, the thread adds entries krank * kShare .. of
    // its fragment position from every rank's slot, ascending chunk order, into `total`, and
    // signals that it has read them. d restarts from +0.
    __device__ __forceinline__ static void fold_round(uint32_t sP, uint32_t ready_bar, uint32_t free_bar, uint32_t& rph,
                                                      uint32_t& fph, bool& free_pending, int r, bool has_chunk,
                                                      int nchunks, int krank, int cw, int lane, int tid,
                                                      float (&d)[BM / 2], float (&total)[kSplit > 1 ? kShare : 1]) {
        if (free_pending) {
            mbar_wait_acquire_cluster(free_bar, fph);
            fph ^= 1;
        }
        if (has_chunk) {
#pragma unroll
            for (int i = 0; i < BM / 2; ++i) st_shared_f32(partial_at(sP, cw, i, tid), d[i]);
        }
#pragma unroll
        for (int i = 0; i < BM / 2; ++i) d[i] = 0.0f;
        fence_acq_rel_cluster();
        __syncwarp();
        if (lane == 0)
            for (int q = 0; q < kSplit; ++q) mbar_arrive_release_cluster(ready_bar, q);
        mbar_wait_acquire_cluster(ready_bar, rph);
        rph ^= 1;
        GEMM_PERTURB(kPerturbEpilogue, r);
#pragma unroll
        for (int q = 0; q < kSplit; ++q) {  // chunk r * kSplit + q lies in rank q's slot
            if (r * kSplit + q < nchunks) {
                float v[kShare];
#pragma unroll
                for (int u = 0; u < kShare; ++u) v[u] = ld_shared_cluster_f32(partial_at(sP, cw, krank * kShare + u, tid), q);
#pragma unroll
                for (int u = 0; u < kShare; ++u) total[u] = __fadd_rn(total[u], v[u]);
            }
        }
        fence_acq_rel_cluster();
        __syncwarp();
        if (lane == 0)
            for (int q = 0; q < kSplit; ++q) mbar_arrive_release_cluster(free_bar, q);
        free_pending = true;
    }

    // Where entry i of consumer thread (cw, tid)'s fragment lies in a split's slot (consecutive
    // threads at consecutive words: no bank conflicts; a peer reads it as its owner wrote it).
    __device__ __forceinline__ static uint32_t partial_at(uint32_t sP, int cw, int i, int tid) {
        return sP + 4u * ((cw * (BM / 2) + i) * 128 + tid);
    }

    // The epilogue of fragment entry i (d[4j + 2h + e]: C's row m0 + 8j + 2 kq + e, column n0 +
    // nl0 + 8h), skipped outside m x n.
    template <class Args>
    __device__ __forceinline__ static void store(const Args& p, float v, int i, int m0, int n0, int nl0, int kq) {
        const int row = m0 + 8 * (i / 4) + 2 * kq + (i % 2), col = n0 + nl0 + 8 * ((i / 2) % 2);
        if (row < p.m && col < p.n) epilogue_store<TC>(v, row, col, p);
    }
    // The same with C's old value read beforehand by load_old (beta != 0).
    static constexpr int kOldGroup = 8;
    template <class Args>
    __device__ __forceinline__ static float load_old(const Args& p, int i, int m0, int n0, int nl0, int kq) {
        const int row = m0 + 8 * (i / 4) + 2 * kq + (i % 2), col = n0 + nl0 + 8 * ((i / 2) % 2);
        return row < p.m && col < p.n ? epilogue_old<TC>(row, col, p) : 0.0f;
    }
    template <class Args>
    __device__ __forceinline__ static void store(const Args& p, float v, float old, int i, int m0, int n0, int nl0, int kq) {
        const int row = m0 + 8 * (i / 4) + 2 * kq + (i % 2), col = n0 + nl0 + 8 * ((i / 2) % 2);
        if (row < p.m && col < p.n) epilogue_store_old<TC>(v, old, row, col, p);
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
};
