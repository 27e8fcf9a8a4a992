// Kind `wgmma_tma_gemm` (wide) of the tensor-core policy, contracts tc-k16 and tc-k16-c512 (docs/tensor-core.md §1, §9).
//
// A CTA computes Cfg::M = 64 * CONSUMERS rows x Cfg::N columns of C a tile (with PINGPONG, 64 rows:
// see below). Warpgroup 0 is the producer
// (one thread issues TMA loads of A and B into a STAGES-deep ring of 128B-swizzled stages, K = 64
// each, full/empty mbarriers); warpgroups 1..CONSUMERS each own 64 rows and issue wgmma
// m64nNk16, accumulators in registers, K-major operands as they are, MN-major operands (A of tn,
// B of nn / tn) through the instruction's transpose bits. Every output element is one f32
// accumulator from +0 over the k16 steps in ascending order (4 per stage, in order; stages in
// ascending k); TMA zero-fills past m, n and k, so a padded step adds nothing. No split of K.
// Under a chunked contract (Cfg::kChunk > 0, tc-k16-c512) the accumulators hold one chunk's
// chain from +0; at a chunk's last stage the consumer waits for its wgmma groups, then
//  * SPLIT_K == 1: adds the chunk into a second accumulator set, the fold (from +0, ascending
//    chunk order), and zeroes the accumulators; with FOLD_OVERLAP, the chunks alternate between
//    two chain sets and chunk c is folded only after chunk c + 1's first wgmma group is issued
//    (wgmma_wait<1> then retires every group of chunk c), so the tensor cores do not drain at
//    a chunk's end; the same additions in the same order;
//  * SPLIT_K > 1: a cluster of SPLIT_K CTAs along z (blockIdx.z = rank) shares every tile it
//    walks: rank r runs chunks r, r + S, ... and leaves each chunk's partials in one of its SLOTS
//    shared-memory slots (each thread's fragment, as it holds it). Its consumer warps then
//    signal every rank (an mbarrier arrive with cluster-scope release) and wait until every
//    rank has; each rank folds 1/S of every fragment (whole 8-column groups) over every chunk in
//    ascending order from +0, reading each chunk from its owner's slot through distributed
//    shared memory, stores those columns with the direct epilogue and signals that it has read
//    them; a rank overwrites its slots for the next tile only after every rank has. The
//    producer takes no part and keeps loading the next tile.
//    K is at most kMaxK = SPLIT_K * SLOTS * kChunk (routes are bounded by it; more traps).
//  * SPLIT_K > 1 with EXCHANGE: the same ranks and chunks, no K bound. Rank r owns 1/S of the
//    tile's columns (8-column groups r * kSplitCols ..) and folds them itself, chunk after chunk:
//    once its chunk ch is whole it writes every other rank's columns of it into that rank's
//    slot for ch (SLOTS = 2 (S - 1): one a peer and round parity) through distributed shared
//    memory, keeps its own columns in registers (`hold`), and folds, in ascending chunk order,
//    every chunk up to its previous own chunk: the peers' from its slots, its own from the
//    previous `hold`. Folding one round behind keeps the peers' transfers off the critical path.
//    After its last chunk it folds the rest and stores its columns. A slot is written again
//    only after its owner has read it (full and free mbarriers, cluster-scope release/acquire).
//    EXCHANGE == 2 sends the same values to the same slots with asynchronous stores (st.async):
//    each completes its 16 bytes on the slot's full barrier, which its owner arms with the
//    piece's byte count (once at the start, again each time it has read the slot), so the sender
//    neither fences nor arrives and goes on to its next chunk while the bytes travel. The slots,
//    the free barriers, the fold and its order are EXCHANGE == 1's.
// (docs/tensor-core.md §9.)
//
// PINGPONG (two consumers, tc-k16 without a split): a tile is 64 rows, and the consumers take
// the CTA's tiles in turn (its j-th tile is consumer j % 2's), each a whole tile with the same
// m64nNk16 chain as above, so one consumer's epilogue overlaps the other's main loop. The
// producer loads every tile's stages in order into the one ring; a consumer skips the other's
// stages (tile j's first stage is stage j * nk of the ring's sequence) and each stage is
// released by the one consumer that read it. A consumer starts tile j's main loop only once the
// other has finished tile j - 1's (an mbarrier a consumer, one phase a tile): the main loops
// take turns, and a stage's full barrier is never waited on more than one phase ahead (its
// parity would not tell the phases apart).
//
// Persistent grid: CTA (cluster) `id` walks tiles id, id + count, ... in TcTileOrder. Clusters of
// CLUSTER_M CTAs along M share the B tile through TMA multicast: B box i is loaded by rank
// i % CLUSTER_M and written to every CTA of the cluster; a consumer warp releases a stage in every
// CTA of its cluster. Rank r computes rows (tile_row * CLUSTER_M + r) * M. The cluster, the grid
// and the tile order decide who computes an element, never how.
//
// Epilogue, chosen at run time, the same values either way (tc/tc_epilogue.cuh: v = acc;
// + bias[n]; fma(beta, old C, v) when beta != 0; one rounding):
//  * flags bit Args::kFlagCTensorMap clear, or a tile whose columns are no whole number of C
//    boxes (kCStaged false: an NT tile of 144 columns): straight from the accumulators; rows >= m and
//    columns >= n are skipped; pairs are stored as vectors when C and ldc are pair-aligned and
//    the tile lies inside n.
//  * bit set (the host sets it when C can take TMA: 16-byte aligned base, ldc * sizeof(TC) a
//    multiple of 16) and n * sizeof(TC) a multiple of 16 (checked here, tc_c_tensor_map: a TMA
//    store writes whole 16-byte chunks, so where n ends inside one it also writes columns n.. of
//    that chunk, seen on the H200; such an n keeps the direct stores, the same values): each
//    consumer warpgroup writes its 64 rows in rounds of kCRoundBoxes boxes
//    of kCBoxOuter (64) rows x kCBoxInner columns (one 128-byte row: 64 16-bit or 32 f32 values),
//    128B-swizzled, into its own staging buffer (stmatrix for 16-bit C, st.shared.v2 for f32),
//    fence.proxy.async, then one thread TMA-stores the boxes through p.c_map (encoded with rows =
//    m, columns = n, ld = ldc), which clips rows >= m and columns >= n. With beta != 0 the old C
//    comes into the same staging buffer through TMA loads of the same boxes (p.c_map, one
//    mbarrier per consumer warpgroup; rows >= m and columns >= n arrive as TMA's zero fill, and
//    boxes wholly past m or n are not loaded: neither is ever stored): round 0 of a tile is
//    issued by the warpgroup's thread 0 when the tile starts (before its main loop, so the load
//    overlaps it), round r + 1 right after round r's stores have read the buffer. Each thread
//    reads the old value at exactly the address it then overwrites with fma(beta, old, v) (the
//    16-bit path's stmatrix writes rows of its own warp only, after a __syncwarp); a tile's
//    stores are issued only after those reads, and tiles are disjoint.
//    A round waits (cp.async.bulk.wait_group.read) until the previous round's stores have read
//    the buffer (with beta != 0, the wait on the round's load implies it); the kernel's end
//    waits for all of them.
//
// Launch (the generator's entry point, from the manifest): __launch_bounds__(kThreads, 1),
// dynamic shared memory kSharedBytes, cluster (kClusterM, 1, SPLIT_K), grid.x a multiple of
// kClusterM (persistent), grid.z = SPLIT_K. Every number comes in Cfg (the manifest's parameters and lets, evaluated).
// A batch kernel (Cfg::kBatch: a tile its tier lists in batch_kernels; no cluster, no split) runs
// a strided batch (attention's products): grid (x, 1, entries), entry z = blockIdx.z, whose x CTAs
// walk that entry's tiles exactly as above. Its maps are 3-D ([entries, rows, cols], the batch
// stride the outer stride; TMA zero-fills and clips at each entry's own m, n and k), so every
// entry computes exactly what one GEMM on its operands does.
// Shared memory: kSharedBytes = STAGES * (M*K + K*N) * sizeof(TAB)   (the ring)
//                             + CONSUMERS * kCRoundBoxes * 64 * 128   (C staging: per consumer,
//                               kCRoundBoxes boxes of 64 rows x 128 bytes; kCRoundBoxes = 2 when
//                               N / kCBoxInner is even, else 1; none with a split, which
//                               stores directly)
//                             + kPartialBytes                         (split: SLOTS * M * N * 4 + 2 mbarriers;
//                               exchange: SLOTS * M * N / SPLIT_K * 4 + (SLOTS + 2 SPLIT_K) mbarriers)
//                             + 2 * STAGES * 8                        (full + empty mbarriers)
//                             + 1024                                  (alignment slack: 128B
//                               swizzle atoms must start at 1024-byte boundaries)
//                             + kOrderBytes                           (PINGPONG: 2 mbarriers, after
//                               the C-load ones)
//                             + kCBarExtraBytes                       (3 consumers: 16, see below).
// The C-load mbarriers (8 bytes per consumer, beta != 0 with the TMA-store epilogue) follow the
// stage barriers inside the slack: dynamic shared memory is at least 16-byte aligned, so the
// 1024-byte rounding of the base uses at most 1008 of the slack and 16 bytes remain, enough for
// two consumers; three take 16 bytes more (kCBarExtraBytes).
// 128 x 256 x 64, 4 stages, 2 consumers: 196608 + 32768 + 64 + 1024 = 230464 bytes (any TC);
// 64 x 128 x 64, 6 stages, 1 consumer: 147456 + 16384 + 96 + 1024 = 164960 bytes;
// 192 x 192 x 64, 4 stages, 3 consumers (one C box a round): 196608 + 24576 + 64 + 1024 + 16 =
// 222288 bytes (any TC).
#pragma once
#include <cstdint>
#include "common/element.cuh"
#include "common/epilogue.cuh"
#include "common/operand_layout.cuh"
#include "common/timing_perturbation.cuh"
#include "tc/batch_entry.cuh"
#include "tc/mma_sync.cuh"
#include "tc/smem_sync.cuh"
#include "tc/tc_epilogue.cuh"
#include "tc/tile_order.cuh"
#include "tc/tma.cuh"
#include "tc/wgmma_ops.cuh"

template <typename TAB, typename TC, int OP, typename Cfg>
struct wgmma_tma_gemm {
    static constexpr int BM = Cfg::M, BN = Cfg::N, BK = Cfg::K;
    static constexpr int kStages = Cfg::STAGES, kConsumers = Cfg::CONSUMERS;
    static constexpr int kClusterM = Cfg::CLUSTER_M;
    static constexpr bool kPingPong = Cfg::PINGPONG != 0;  // consumers on alternate 64-row tiles
    static constexpr int kTileConsumers = kPingPong ? 1 : kConsumers;  // consumers reading a stage
    static constexpr bool kAKMajor = OperandLayout<OP>::kAContiguousK;  // nn, nt: A stored [m, k]
    static constexpr bool kBKMajor = OperandLayout<OP>::kBContiguousK;  // nt: B stored [n, k]

    static constexpr int kThreads = Cfg::kThreads;
    static constexpr int kABytes = BM * BK * (int)sizeof(TAB);  // one stage of A
    static constexpr int kBBytes = BK * BN * (int)sizeof(TAB);  // one stage of B
    static constexpr int kStageBytes = kABytes + kBBytes;
    static constexpr int kBarrierBytes = 2 * kStages * 8;
    static constexpr int kOrderBytes = kPingPong ? 16 : 0;  // PINGPONG: "main loop done", per consumer
    // The C-load mbarriers past the slack's 16 bytes (8 a consumer): three consumers need 8 more.
    static constexpr int kCBarExtraBytes = kConsumers > 2 ? 16 : 0;

    // The TMA-store epilogue's box of C (elements of C as stored, inner = contiguous n): one
    // 128-byte swizzled row (64 bf16 / f16 or 32 f32) x one consumer warpgroup's 64 rows.
    static constexpr int kCBoxInner = Cfg::kCBoxInner, kCBoxOuter = Cfg::kCBoxOuter;
    static constexpr int kSwizzleC = Cfg::kSwizzleC;
    static constexpr int kCBoxBytes = kCBoxInner * kCBoxOuter * (int)sizeof(TC);  // 8 KiB
    static constexpr int kCBoxesPerRow = BN / kCBoxInner;                        // boxes across the tile
    static constexpr int kCRoundBoxes = Cfg::kCRoundBoxes;                       // boxes staged per round
    static constexpr int kCRounds = kCBoxesPerRow / kCRoundBoxes;
    static constexpr int kCRoundCols = kCRoundBoxes * kCBoxInner;                // columns per round
    static constexpr int kCStageBytes = kCRoundBoxes * kCBoxBytes;               // one consumer's buffer
    // Whether C goes through the TMA-store epilogue's staging: not with a split (it stores its
    // folded columns directly, fold_and_store_split), nor where the tile's columns are no whole
    // number of C boxes (an NT tile of 144 columns: a box past the tile would write the next
    // tile's columns), which stores directly too.
    static constexpr bool kCStaged = Cfg::SPLIT_K == 1 && BN % kCBoxInner == 0;
    static constexpr int kCBytes = kCStaged ? kConsumers * kCStageBytes : 0;
    static constexpr int kSharedBytes = Cfg::kSharedBytes;

    // Tensor-map boxes of A and B (elements of the operand as stored, inner = contiguous):
    // 64 x 64 boxes of 128-byte swizzled rows.
    static constexpr int kABoxes = kAKMajor ? 1 : BM / 64;  // TMA boxes of A per stage
    static constexpr int kBBoxes = kBKMajor ? 1 : BN / 64;     // TMA boxes of B per stage
    static constexpr int kBoxBytes = 64 * 64 * (int)sizeof(TAB);  // one 64 x 64 box (8 KiB)

    // setmaxnreg with 2 or 3 consumers; the manifest's accumulator_registers (checked against the tile).
    static constexpr int kProducerRegs = 24, kConsumerRegs = Cfg::kAccumulatorRegisters;
    static constexpr int kChunk = Cfg::kChunk;                     // 0: one chain over K (tc-k16)
    static constexpr int kChunkStages = kChunk > 0 ? kChunk / BK : 1;
    static constexpr int kSplit = Cfg::SPLIT_K, kSlots = Cfg::SLOTS;  // K split over a z cluster
    static constexpr int kPartialBytes = Cfg::kPartialBytes;         // the split's chunk partials
    static constexpr int kSplitCols = (BN / 8) / kSplit;              // 8-column groups a rank folds
    // A second chain set (chunked, no split): chunk c - 1 is folded while chunk c's first group runs.
    static constexpr bool kFoldOverlap = Cfg::FOLD_OVERLAP != 0;
    // A split whose ranks each fold their own columns as the peers' partials arrive (no K bound).
    static constexpr bool kExchange = Cfg::EXCHANGE != 0;
    static constexpr bool kAsyncExchange = Cfg::EXCHANGE == 2;  // the peers' columns by st.async
    static constexpr int kPieceBytes = BM * (BN / kSplit) * 4;  // EXCHANGE: one peer's columns of a chunk
    // A slotted split's signals: every lane fences (fence.acq_rel.cluster) before its warp's one
    // release arrive (SPLIT_FENCE = 1), or the warp's __syncwarp orders its lanes' slot stores and
    // fold loads before that arrive, whose release at cluster scope is cumulative (0).
    static constexpr bool kSplitFence = Cfg::SPLIT_FENCE != 0;
    // A batch kernel of its tier: grid z is the entry of a strided batch, the maps 3-D.
    static constexpr bool kBatched = Cfg::kBatch != 0;

    // The layout against the numbers the generator delivers from the manifest
    // (wgmma/wgmma_tma_gemm.toml): the carve of shared memory below, the boxes the loads and
    // stores assume, the C-load mbarriers inside the alignment slack, the tier's cap.
    static_assert(kSharedBytes == kStages * kStageBytes + kCBytes + kPartialBytes + kBarrierBytes + 1024 + kOrderBytes + kCBarExtraBytes &&
                      kPartialBytes == (kSplit > 1 ? (kExchange ? kSlots * kPieceBytes + (kSlots + 2 * kSplit) * 8 : kSlots * BM * BN * 4 + 16) : 0) &&
                      (kSplit == 1 || (kChunk > 0 && kClusterM == 1 && (BN / 8) % kSplit == 0)) &&
                      kSharedBytes <= Cfg::kMaxSharedBytes && kThreads == 128 * (1 + kConsumers) &&
                      8 * kConsumers <= 1024 - 1008 + kCBarExtraBytes && (kConsumers < 3 || kOrderBytes == 0) &&
                      Cfg::kABoxInner == 64 && Cfg::kABoxOuter == (kAKMajor ? BM : 64) && Cfg::kSwizzleA == 128 &&
                      Cfg::kBBoxInner == 64 && Cfg::kBBoxOuter == (kBKMajor ? BN : 64) && Cfg::kSwizzleB == 128 &&
                      kCBoxInner * (int)sizeof(TC) == 128 && kCBoxOuter == 64 && kSwizzleC == 128 &&
                      (BN % 64 == 0 || (kBKMajor && BN % 16 == 0 && Cfg::SPLIT_K == 1)) &&
                      (!kCStaged || (kCBoxesPerRow % kCRoundBoxes == 0 && kCRoundCols % 16 == 0)) &&
                      kChunk % BK == 0 && BM == 64 * kTileConsumers &&
                      (!kPingPong || (kConsumers == 2 && kSplit == 1 && kChunk == 0)) &&
                      (!kFoldOverlap || (kChunk > 0 && kSplit == 1 && !kPingPong)) &&
                      (!kExchange || (kSplit > 1 && kSlots == 2 * (kSplit - 1))) &&
                      (kSplitFence || (kSplit > 1 && !kExchange)) &&
                      (!kBatched || (kClusterM == 1 && kSplit == 1)) &&
                      setmaxnreg_fits(kThreads, kConsumers, kProducerRegs, kConsumerRegs),
                  "wgmma_tma_gemm: its layout does not match the config the generator delivered");

    template <class Args>
    __device__ static void run(const Args& p) {
        extern __shared__ __align__(1024) uint8_t tc_smem_raw[];
        const uint32_t sbase = (tc_smem_u32(tc_smem_raw) + 1023u) & ~1023u;
        const uint32_t sA0 = sbase, sB0 = sbase + kStages * kABytes;
        const uint32_t sC0 = sbase + kStages * kStageBytes;  // C staging, kCStageBytes per consumer
        const uint32_t sP0 = sC0 + kCBytes;                  // split: kSlots chunk partials
        const uint32_t bar0 = sP0 + kPartialBytes;           // full[s], then empty[s]
        // Split: "every rank's partials of the tile are in its slots" and "every rank has read
        // them", each an mbarrier at the end of the partials (kPartialBytes includes them). An
        // exchange never uses them: its own barriers follow its slots (xfull, xfree).
        const uint32_t ready_bar = bar0 - 16, free_bar = bar0 - 8;
        auto full = [&](int s) { return bar0 + 8u * s; };
        auto empty = [&](int s) { return bar0 + 8u * (kStages + s); };
        const uint32_t cbar0 = bar0 + kBarrierBytes;         // C-load barrier of consumer cw: cbar0 + 8 cw
        // PINGPONG: consumer cw's "main loop of my tile done" barrier, past the slack's C barriers.
        const uint32_t obar0 = cbar0 + 16;

        const int wg = threadIdx.x / 128, tid = threadIdx.x % 128;
        // Batch kernels: entry z = blockIdx.z of a strided batch, through 3-D maps whose third
        // coordinate is the entry (an operand every entry shares, batch stride 0, is read at
        // entry 0); C and bias, which the epilogue addresses, through the entry's view `e`. The
        // grid's x CTAs walk that entry's tiles. Otherwise z = 0 and `e` is the launch's values.
        const int z = kBatched ? (int)blockIdx.z : 0;
        const int za = kBatched && p.a_batch_stride != 0 ? z : 0, zb = kBatched && p.b_batch_stride != 0 ? z : 0;
        const auto& e = out_view(p, z);
        const uint32_t rank = kClusterM > 1 ? cluster_ctarank() : 0u;
        const int cid = (int)blockIdx.x / kClusterM, ncl = (int)gridDim.x / kClusterM;

        if (threadIdx.x == 0) {
            for (int s = 0; s < kStages; ++s) {
                mbar_init(full(s), 1);
                mbar_init(empty(s), 4 * kTileConsumers * kClusterM);  // every reading consumer warp of the cluster
            }
            for (int c = 0; c < kConsumers; ++c) mbar_init(cbar0 + 8u * c, 1);
            if constexpr (kPingPong) {
                for (int c = 0; c < 2; ++c) mbar_init(obar0 + 8u * c, 4);  // every warp of the consumer
            }
            if constexpr (kAsyncExchange) {  // a slot: its owner's arming (the bytes complete it); free: as below
                for (int i = 0; i < kSlots + 2 * kSplit; ++i) mbar_init(sP0 + kSlots * kPieceBytes + 8u * i, i < kSlots ? 1 : 4 * kConsumers);
            } else if constexpr (kExchange) {  // every consumer warp of the one rank that writes / reads a slot
                for (int i = 0; i < kSlots + 2 * kSplit; ++i) mbar_init(sP0 + kSlots * kPieceBytes + 8u * i, 4 * kConsumers);
            } else if constexpr (kSplit > 1) {  // every consumer warp of every rank, once a tile
                mbar_init(ready_bar, kSplit * 4 * kConsumers);
                mbar_init(free_bar, kSplit * 4 * kConsumers);
            }
            mbar_init_fence();
            if constexpr (kAsyncExchange) {  // every slot armed for its first piece
                for (int i = 0; i < kSlots; ++i) mbar_arrive_expect_tx(xfull(sP0, i), kPieceBytes);
            }
        }
        // Peers arrive on each other's barriers (multicast releases, the split's signals): all
        // are initialised before any CTA of the cluster goes on.
        if constexpr (kClusterM > 1 || kSplit > 1) cluster_sync_all(); else __syncthreads();

        const TcTileOrder order{(p.m + BM * kClusterM - 1) / (BM * kClusterM), (p.n + BN - 1) / BN};
        const int ntiles = order.count();
        const int nk = (p.k + BK - 1) / BK;

        // K's chunks (one chunk of all of K for tc-k16), and this CTA's share of them: rank
        // krank of a split runs chunks krank, krank + S, ... of every tile its cluster walks.
        const int per = kChunk > 0 ? kChunkStages : nk;
        const int nchunks = kChunk > 0 ? (p.k + kChunk - 1) / kChunk : (nk > 0 ? 1 : 0);
        const int krank = kSplit > 1 ? (int)blockIdx.z : 0;
        if constexpr (kSplit > 1 && !kExchange) {
            if (nchunks > kSplit * kSlots) __trap();  // past kMaxK: no route sends such a K here
        }

        if (wg == 0) {
            if constexpr (kConsumers >= 2) asm volatile("setmaxnreg.dec.sync.aligned.u32 %0;" ::"n"(kProducerRegs));
            int s = 0;
            uint32_t ph = 0;
            for (int t = cid; t < ntiles; t += ncl) {
                if (tid == 0) {
                    int tm, tn;
                    order.tile(t, tm, tn);
                    const int m0 = (tm * kClusterM + (int)rank) * BM, n0 = tn * BN;
                    for (int ch = krank; ch < nchunks; ch += kSplit) {
                        const int kb_end = min(nk, (ch + 1) * per);
                        for (int kb = ch * per; kb < kb_end; ++kb) {
                            GEMM_PERTURB(kPerturbProducerAcquire, kb);
                            mbar_wait(empty(s), ph ^ 1);
                            GEMM_PERTURB(kPerturbProducerIssue, kb);
                            mbar_arrive_expect_tx(full(s), kStageBytes);
                            const uint32_t a = sA0 + s * kABytes, b = sB0 + s * kBBytes;
                            if constexpr (kAKMajor) {
                                tma_load(a, &p.a_map, full(s), kb * BK, m0, za);
                            } else {
#pragma unroll
                                for (int c = 0; c < kABoxes; ++c) tma_load(a + c * kBoxBytes, &p.a_map, full(s), m0 + 64 * c, kb * BK, za);
                            }
#pragma unroll
                            for (int i = 0; i < kBBoxes; ++i) {
                                if (i % kClusterM != (int)rank) continue;
                                const int c0 = kBKMajor ? kb * BK : n0 + 64 * i;
                                const int c1 = kBKMajor ? n0 : kb * BK;
                                if constexpr (kClusterM > 1)
                                    tma_load_2d_multicast(b + i * kBoxBytes, &p.b_map, full(s), c0, c1, (uint16_t)((1u << kClusterM) - 1));
                                else
                                    tma_load(b + i * kBoxBytes, &p.b_map, full(s), c0, c1, zb);
                            }
                            if (++s == kStages) { s = 0; ph ^= 1; }
                        }
                    }
                }
            }
        } else {
            if constexpr (kConsumers >= 2) asm volatile("setmaxnreg.inc.sync.aligned.u32 %0;" ::"n"(kConsumerRegs));
            const int cw = wg - 1;  // rows cw * 64 .. + 63 of the tile (PINGPONG: every tile j with j % 2 == cw)
            const int rows0 = kPingPong ? 0 : cw * 64;  // this consumer's first row in a tile
            const int warp = tid / 32, lane = tid % 32;
            const bool aligned = tc_pairs_aligned<TC>(e);
            // (A split never stores through it: its epilogue returns first.)
            const bool tma_c = BN % kCBoxInner == 0 && tc_c_tensor_map<TC>(e);
            // Old C through TMA into the staging buffer (a split stores directly).
            const bool c_load = tma_c && p.beta != 0.0f && kSplit == 1;
            const uint32_t cbuf = sC0 + cw * kCStageBytes, cbar = cbar0 + 8u * cw;
            uint32_t cph = 0;
            float d[BN / 2];
            float fold[kChunk > 0 && kSplit == 1 ? BN / 2 : 1];  // the chunks folded so far (no split)
            float d2[kFoldOverlap ? BN / 2 : 1];                 // FOLD_OVERLAP: the odd chunks' chain
            uint32_t rph = 0, fph = 0;  // split: phases of ready_bar and free_bar
            // EXCHANGE: this rank's columns folded so far, its last own chunk's columns, the
            // phase bits of its slots' full barriers and of its free barriers (peer g, parity b).
            constexpr int kV = kExchange ? 4 * kSplitCols : 1;
            float xacc[kV], hold[kV];
            uint32_t xfull_ph = 0, xfree_ph = 0;
            int s = 0;
            uint32_t ph = 0;
            for (int t = cid, j = 0; t < ntiles; t += ncl, ++j) {
                if constexpr (kPingPong) {
                    if ((j & 1) != cw) continue;  // the other consumer's tile
                    // Its stages follow the CTA's earlier tiles' (nk each) in the ring's sequence.
                    const long long g = (long long)j * nk;
                    s = (int)(g % kStages);
                    ph = (uint32_t)((g / kStages) & 1);
                    // The other consumer has finished tile j - 1's main loop (its (j - 1) / 2-th tile).
                    if (j > 0) mbar_wait(obar0 + 8u * (1 - cw), (uint32_t)(((j - 1) / 2) & 1));
                }
                int tm, tn;
                order.tile(t, tm, tn);
                const int m0 = (tm * kClusterM + (int)rank) * BM, n0 = tn * BN;
                if constexpr (kCStaged) {
                    if (c_load && tid == 0) {  // round 0's old C, overlapping the main loop
                        bulk_wait_group_read0();  // the previous tile's stores have read the buffer
                        load_c_round(p, cbuf, cbar, m0 + rows0, n0, 0, z);
                    }
                }
#pragma unroll
                for (int i = 0; i < BN / 2; ++i) d[i] = 0.0f;
                if constexpr (kChunk > 0 && kSplit == 1) {
#pragma unroll
                    for (int i = 0; i < BN / 2; ++i) fold[i] = 0.0f;
                }
                if constexpr (kFoldOverlap) {
#pragma unroll
                    for (int i = 0; i < BN / 2; ++i) d2[i] = 0.0f;
                }
                int slot = 0;
                int xnext = 0, xheld = -1;  // EXCHANGE: the next chunk to fold; the chunk in `hold`
                if constexpr (kExchange) {
#pragma unroll
                    for (int u = 0; u < kV; ++u) xacc[u] = 0.0f;
                }
                bool free_pending = t != cid;  // the previous tile's slots may still be read by peers
                if constexpr (kFoldOverlap) {
                    // Two chain sets: chunk c runs in d when c is even, in d2 when odd. Chunk
                    // c - 1's fold waits only for its own wgmma groups, retired once chunk c's
                    // first group is issued (wgmma_wait<1>), so the tensor cores run that group
                    // while the fold's additions do; the fold and its order are unchanged.
                    int prev = -1;
                    // One stage into dx. The wait is unconditional, so that where chunk c - 1 is
                    // folded ptxas sees every group but this one retired (else it serializes
                    // every wgmma: C7514).
                    auto stage = [&](float(&dx)[BN / 2], int kb) {
                        GEMM_PERTURB(kPerturbConsumerWait, kb);
                        mbar_wait(full(s), ph);
                        GEMM_PERTURB(kPerturbConsumerRead, kb);
                        wgmma_fence();
                        issue_stage(dx, sA0 + s * kABytes, sB0 + s * kBBytes, rows0);
                        wgmma_commit();
                        wgmma_wait<1>();
                        if (prev >= 0) {  // the group that read stage `prev` has retired: release it
                            GEMM_PERTURB(kPerturbConsumerRelease, kb);
                            release(empty(prev), lane);
                        }
                        prev = s;
                        if (++s == kStages) { s = 0; ph ^= 1; }
                    };
                    // Chunk ch into dx; after its first stage is issued, chunk ch - 1 (in dy) is
                    // whole and is folded. Unconditionally: before chunk 0, dy and the fold are
                    // +0 and stay +0. No branch joins paths with different groups in flight
                    // (such a join copies accumulators, and ptxas serializes).
                    auto run_chunk = [&](float(&dx)[BN / 2], float(&dy)[BN / 2], int ch) {
                        const int kb0 = ch * per, kb_end = min(nk, (ch + 1) * per);
                        stage(dx, kb0);
                        fold_chunk(fold, dy);
                        for (int kb = kb0 + 1; kb < kb_end; ++kb) stage(dx, kb);
                    };
                    int ch = 0;
                    for (; ch + 1 < nchunks; ch += 2) {
                        run_chunk(d, d2, ch);
                        run_chunk(d2, d, ch + 1);
                    }
                    if (ch < nchunks) {  // an odd count: the last chunk in d
                        run_chunk(d, d2, ch);
                        wgmma_wait<0>();
                        fold_chunk(fold, d);
                    } else {  // the last chunk (if any) in d2; with none, d2 and the fold are +0
                        wgmma_wait<0>();
                        fold_chunk(fold, d2);
                    }
                    GEMM_PERTURB(kPerturbConsumerRelease, nk);
                    if (prev >= 0) release(empty(prev), lane);
#pragma unroll
                    for (int i = 0; i < BN / 2; ++i) d[i] = fold[i];
                } else {
                    for (int ch = krank; ch < nchunks; ch += kSplit, ++slot) {
                        int prev = -1;
                        const int kb_end = min(nk, (ch + 1) * per);
                        for (int kb = ch * per; kb < kb_end; ++kb) {
                            GEMM_PERTURB(kPerturbConsumerWait, kb);
                            mbar_wait(full(s), ph);
                            GEMM_PERTURB(kPerturbConsumerRead, kb);
                            wgmma_fence();
                            issue_stage(d, sA0 + s * kABytes, sB0 + s * kBBytes, rows0);
                            wgmma_commit();
                            if (prev >= 0) {  // the group that read stage `prev` has retired: release it
                                wgmma_wait<1>();
                                GEMM_PERTURB(kPerturbConsumerRelease, kb);
                                release(empty(prev), lane);
                            }
                            prev = s;
                            if (++s == kStages) { s = 0; ph ^= 1; }
                        }
                        // The chunk (all of K for tc-k16) is done: its last group retires.
                        wgmma_wait<0>();
                        GEMM_PERTURB(kPerturbConsumerRelease, kb_end);
                        if (prev >= 0) release(empty(prev), lane);
                        if constexpr (kPingPong) {
                            if (lane == 0) mbar_arrive(obar0 + 8u * cw);  // the other may start its tile
                        }
#pragma unroll
                        for (int i = 0; i < BN / 2; ++i) wgmma_reg_fence(d[i]);
                        if constexpr (kChunk > 0 && kSplit == 1) {
#pragma unroll
                            for (int i = 0; i < BN / 2; ++i) {
                                fold[i] = __fadd_rn(fold[i], d[i]);  // ascending fold
                                d[i] = 0.0f;
                            }
                        } else if constexpr (kExchange) {
                            // Fold through the previous own chunk (its peers' chunks before it
                            // arrived a round ago), then hold this one's columns. EXCHANGE == 2
                            // folds before it sends: the fold's fence then finds none of this
                            // thread's asynchronous stores outstanding but the previous round's.
                            if constexpr (kAsyncExchange) {
                                if (xheld >= 0) exchange_fold(xacc, hold, sP0, xfull_ph, krank, xnext, xheld, true, cw, lane, tid);
                            }
                            exchange_send(d, sP0, xfree_ph, krank, ch, cw, lane, tid);
                            if constexpr (!kAsyncExchange) {
                                if (xheld >= 0) exchange_fold(xacc, hold, sP0, xfull_ph, krank, xnext, xheld, true, cw, lane, tid);
                            }
                            // (d indexed by constants only: a run-time index would copy the
                            // accumulators, and ptxas would serialize every wgmma.)
#pragma unroll
                            for (int g = 0; g < kSplit; ++g) {
                                if (g != krank) continue;
#pragma unroll
                                for (int u = 0; u < kV; ++u) hold[u] = d[4 * kSplitCols * g + u];
                            }
#pragma unroll
                            for (int i = 0; i < BN / 2; ++i) d[i] = 0.0f;
                            xheld = ch;
                        } else if constexpr (kSplit > 1) {
                            if (free_pending) {  // every rank has read this CTA's previous partials
                                mbar_wait_acquire_cluster(free_bar, fph);
                                fph ^= 1;
                                free_pending = false;
                            }
#pragma unroll
                            for (int i = 0; i < BN / 2; ++i) {  // the chunk's partials into slot `slot`
                                st_shared_f32(partial_at(sP0, slot, cw, i, tid), d[i]);
                                d[i] = 0.0f;
                            }
                        }
                    }
                    if constexpr (kChunk > 0 && kSplit == 1) {
#pragma unroll
                        for (int i = 0; i < BN / 2; ++i) d[i] = fold[i];
                    }
                }
                if constexpr (kExchange) {
                    // The held chunk, then every later chunk (all the peers'), then this rank's columns.
                    if (xheld >= 0) exchange_fold(xacc, hold, sP0, xfull_ph, krank, xnext, xheld, true, cw, lane, tid);
                    exchange_fold(xacc, hold, sP0, xfull_ph, krank, xnext, nchunks, false, cw, lane, tid);
                    GEMM_PERTURB(kPerturbEpilogue, t);
                    store_columns(e, xacc, krank, m0, n0, cw, warp, lane, aligned);
                    continue;
                } else if constexpr (kSplit > 1) {
                    // Publish this rank's partials to every rank, wait for every rank's, fold
                    // column groups krank * kSplitCols .. of every fragment in ascending chunk
                    // order from +0 (chunk ch: slot ch / S of rank ch % S, the same fragment
                    // position), store them, and tell every rank its slots were read. The
                    // producer is not involved: it keeps loading the next tile.
                    if (free_pending) {
                        mbar_wait_acquire_cluster(free_bar, fph);
                        fph ^= 1;
                    }
                    if constexpr (kSplitFence) fence_acq_rel_cluster();
                    __syncwarp();
                    if (lane == 0)
                        for (int r = 0; r < kSplit; ++r) mbar_arrive_release_cluster(ready_bar, r);
                    mbar_wait_acquire_cluster(ready_bar, rph);
                    rph ^= 1;
                    GEMM_PERTURB(kPerturbEpilogue, t);
                    fold_and_store_split(e, sP0, krank, nchunks, m0, n0, cw, warp, lane, tid, aligned);
                    if constexpr (kSplitFence) fence_acq_rel_cluster();
                    __syncwarp();
                    if (lane == 0)
                        for (int r = 0; r < kSplit; ++r) mbar_arrive_release_cluster(free_bar, r);
                    continue;
                }
                GEMM_PERTURB(kPerturbEpilogue, t);
                if constexpr (kCStaged) {
                    if (c_load) {
                        store_tile_tma<true>(p, e, z, d, cbuf, m0 + rows0, n0, cw, tid, cbar, cph);
                        continue;
                    }
                    if (tma_c) {
                        store_tile_tma<false>(p, e, z, d, cbuf, m0 + rows0, n0, cw, tid, cbar, cph);
                        continue;
                    }
                }
                // d[4j + 2h + e] is (row0 + 8h, col0 + 8j + e).
                const int row0 = m0 + rows0 + warp * 16 + lane / 4;
                const int col0 = n0 + 2 * (lane % 4);
                const bool vec = aligned && n0 + BN <= p.n;
                if (row0 < p.m) {
#pragma unroll
                    for (int jc = 0; jc < BN / 8; ++jc) {
                        tc_store_pair<TC>(e, row0, col0 + 8 * jc, d[4 * jc], d[4 * jc + 1], vec);
                        tc_store_pair<TC>(e, row0 + 8, col0 + 8 * jc, d[4 * jc + 2], d[4 * jc + 3], vec);
                    }
                }
            }
            if (tma_c && tid == 0) bulk_wait_group0();  // the last stores have read the staging and are done
            if constexpr (kSplit > 1 && !kExchange) {
                if (cid < ntiles) mbar_wait_acquire_cluster(free_bar, fph);  // peers have read the last tile's slots
            }
        }
        if constexpr (kClusterM > 1 || kSplit > 1) {
            __syncwarp();
            cluster_sync_all();  // no CTA leaves while a peer may still multicast into it, read it or arrive on it
        }
    }

    // One stage's chain: the BK / 16 k16 steps of the stage at a (A) and b (B), ascending, into d
    // (this consumer's rows rows0 .. + 63 of the tile).
    __device__ __forceinline__ static void issue_stage(float (&d)[BN / 2], uint32_t a, uint32_t b, int rows0) {
#pragma unroll
        for (int kk = 0; kk < BK / 16; ++kk) {  // ascending k16 steps: the contract's chain
            const uint64_t da = kAKMajor ? wgmma_desc_sw128(a + rows0 * 128 + kk * 32, 16, 1024)
                                         : wgmma_desc_sw128(a + (rows0 / 64) * kBoxBytes + kk * 2048, kBoxBytes, 1024);
            const uint64_t db = kBKMajor ? wgmma_desc_sw128(b + kk * 32, 16, 1024)
                                         : wgmma_desc_sw128(b + kk * 2048, kBoxBytes, 1024);
            wgmma_k16<TAB, BN, kAKMajor ? 0 : 1, kBKMajor ? 0 : 1>(d, da, db);
        }
    }

    // FOLD_OVERLAP: a whole chunk's chain (its wgmma groups retired) into the fold, ascending
    // chunk order (one f32 addition each); the set restarts from +0 for chunk c + 2.
    __device__ __forceinline__ static void fold_chunk(float (&fold)[BN / 2], float (&dy)[BN / 2]) {
#pragma unroll
        for (int i = 0; i < BN / 2; ++i) wgmma_reg_fence(dy[i]);
#pragma unroll
        for (int i = 0; i < BN / 2; ++i) {
            fold[i] = __fadd_rn(fold[i], dy[i]);
            dy[i] = 0.0f;
        }
    }

    // Split K, consumer thread (cw, tid) of rank `krank`: folds entries 4j .. 4j + 3 of its
    // fragment for the column groups j = krank * kSplitCols .. + kSplitCols - 1 over every chunk
    // (ascending, from +0; up to four chunks' loads in flight), then stores them with the direct
    // epilogue (tc_store_pair: the values of every other path).
    template <class Args>
    __device__ __forceinline__ static void fold_and_store_split(const Args& p, uint32_t sP0, int krank, int nchunks,
                                                                int m0, int n0, int cw, int warp, int lane, int tid,
                                                                bool aligned) {
        constexpr int V = 4 * kSplitCols;  // fragment entries this rank folds
        const int i0 = 4 * kSplitCols * krank;
        float v[V];
#pragma unroll
        for (int u = 0; u < V; ++u) v[u] = 0.0f;
        int ch = 0;
        for (; ch + 4 <= nchunks; ch += 4) {
            float t[4][V];
#pragma unroll
            for (int c = 0; c < 4; ++c)
#pragma unroll
                for (int u = 0; u < V; ++u)
                    t[c][u] = ld_shared_cluster_f32(partial_at(sP0, (ch + c) / kSplit, cw, i0 + u, tid), (ch + c) % kSplit);
#pragma unroll
            for (int c = 0; c < 4; ++c)
#pragma unroll
                for (int u = 0; u < V; ++u) v[u] = __fadd_rn(v[u], t[c][u]);
        }
        for (; ch < nchunks; ++ch) {
            float t[V];
#pragma unroll
            for (int u = 0; u < V; ++u) t[u] = ld_shared_cluster_f32(partial_at(sP0, ch / kSplit, cw, i0 + u, tid), ch % kSplit);
#pragma unroll
            for (int u = 0; u < V; ++u) v[u] = __fadd_rn(v[u], t[u]);
        }
        store_columns(p, v, krank, m0, n0, cw, warp, lane, aligned);
    }

    // EXCHANGE: where this CTA's slot `i` lies (one peer's columns of a chunk: 16 bytes a
    // thread for each of its kSplitCols 8-column groups, consecutive threads consecutive), its
    // full barrier, and its free barrier for peer g's slots of round parity b.
    __device__ __forceinline__ static uint32_t xslot_at(uint32_t sP0, int i, int cw, int jl, int tid) {
        return sP0 + (uint32_t)(i * kPieceBytes) + 16u * ((cw * kSplitCols + jl) * 128 + tid);
    }
    __device__ __forceinline__ static uint32_t xfull(uint32_t sP0, int i) { return sP0 + kSlots * kPieceBytes + 8u * i; }
    __device__ __forceinline__ static uint32_t xfree(uint32_t sP0, int g, int b) {
        return sP0 + kSlots * kPieceBytes + 8u * (kSlots + 2 * g + b);
    }
    // Owner g's slot for chunk ch (whose rank is ch % S, not g): one a peer, and the round's parity.
    __device__ __forceinline__ static int xslot_of(int g, int ch) {
        return ((ch / kSplit) & 1) * (kSplit - 1) + (ch % kSplit - g - 1 + kSplit) % kSplit;
    }

    // EXCHANGE: chunk ch (this rank's, whole in d) to its owners: peer g's columns into g's
    // slot for ch, once g has read what this rank wrote there before (this CTA's free barrier
    // for g and the round's parity; the first wait on each passes: the slots start free).
    __device__ __forceinline__ static void exchange_send(const float (&d)[BN / 2], uint32_t sP0, uint32_t& free_ph, int krank,
                                                         int ch, int cw, int lane, int tid) {
        GEMM_PERTURB(kPerturbEpilogue, ch);
#pragma unroll
        for (int g = 0; g < kSplit; ++g) {  // (g a constant: d is indexed by constants only)
            if (g == krank) continue;
            const int b = (ch / kSplit) & 1;
            const uint32_t bit = 1u << (2 * g + b);
            mbar_wait_acquire_cluster(xfree(sP0, g, b), ((free_ph & bit) ? 1u : 0u) ^ 1u);
            free_ph ^= bit;
            const int i = xslot_of(g, ch);
            if constexpr (kAsyncExchange) {  // each store completes its bytes on g's full barrier
                const uint32_t rbar = cluster_addr(xfull(sP0, i), (uint32_t)g);
#pragma unroll
                for (int jl = 0; jl < kSplitCols; ++jl) {
                    const int q = 4 * (g * kSplitCols + jl);
                    st_async_v4(cluster_addr(xslot_at(sP0, i, cw, jl, tid), (uint32_t)g), d[q], d[q + 1], d[q + 2], d[q + 3], rbar);
                }
            } else {
#pragma unroll
                for (int jl = 0; jl < kSplitCols; ++jl) {
                    const int q = 4 * (g * kSplitCols + jl);
                    st_shared_cluster_v4(xslot_at(sP0, i, cw, jl, tid), (uint32_t)g, d[q], d[q + 1], d[q + 2], d[q + 3]);
                }
                fence_acq_rel_cluster();
                __syncwarp();
                if (lane == 0) mbar_arrive_release_cluster(xfull(sP0, i), (uint32_t)g);
            }
        }
    }

    // EXCHANGE: this rank's columns of chunks xnext .. upto - 1 into the fold, ascending: the
    // peers' from their slots (the writer told that the slot is read); then, with `held`, chunk
    // `upto` itself (this rank's) from `hold`. One f32 addition an element a chunk.
    __device__ __forceinline__ static void exchange_fold(float (&acc)[4 * kSplitCols], const float (&hold)[4 * kSplitCols],
                                                         uint32_t sP0, uint32_t& full_ph, int krank, int& xnext, int upto,
                                                         bool held, int cw, int lane, int tid) {
        for (; xnext < upto; ++xnext) {
            const int i = xslot_of(krank, xnext);
            mbar_wait_acquire_cluster(xfull(sP0, i), (full_ph >> i) & 1u);
            full_ph ^= 1u << i;
#pragma unroll
            for (int jl = 0; jl < kSplitCols; ++jl) {
                const float4 f = ld_shared_v4(xslot_at(sP0, i, cw, jl, tid));
                acc[4 * jl] = __fadd_rn(acc[4 * jl], f.x);
                acc[4 * jl + 1] = __fadd_rn(acc[4 * jl + 1], f.y);
                acc[4 * jl + 2] = __fadd_rn(acc[4 * jl + 2], f.z);
                acc[4 * jl + 3] = __fadd_rn(acc[4 * jl + 3], f.w);
            }
            if constexpr (kAsyncExchange) {
                // Armed for the slot's next piece: this phase has completed (waited above), and
                // the sender writes the slot again only after every consumer warp here has
                // signalled it free below (this thread's warp after this arming).
                if (cw == 0 && tid == 0) mbar_arrive_expect_tx(xfull(sP0, i), kPieceBytes);
            }
            fence_acq_rel_cluster();
            __syncwarp();
            if (lane == 0) mbar_arrive_release_cluster(xfree(sP0, krank, (xnext / kSplit) & 1), (uint32_t)(xnext % kSplit));
        }
        if (held) {
#pragma unroll
            for (int u = 0; u < 4 * kSplitCols; ++u) acc[u] = __fadd_rn(acc[u], hold[u]);
            xnext = upto + 1;
        }
    }

    // A rank's columns of the tile (8-column groups krank * kSplitCols ..), v[4 jl + 2h + e]
    // at (row0 + 8h, col0 + 8 (krank * kSplitCols + jl) + e), through the direct epilogue.
    template <class Args>
    __device__ __forceinline__ static void store_columns(const Args& p, const float (&v)[4 * kSplitCols], int krank, int m0,
                                                         int n0, int cw, int warp, int lane, bool aligned) {
        const int row0 = m0 + cw * 64 + warp * 16 + lane / 4;
        const int col0 = n0 + 2 * (lane % 4) + 8 * kSplitCols * krank;
        const bool vec = aligned && n0 + BN <= p.n;
        if (row0 < p.m) {
#pragma unroll
            for (int jl = 0; jl < kSplitCols; ++jl) {
                tc_store_pair<TC>(p, row0, col0 + 8 * jl, v[4 * jl], v[4 * jl + 1], vec);
                tc_store_pair<TC>(p, row0 + 8, col0 + 8 * jl, v[4 * jl + 2], v[4 * jl + 3], vec);
            }
        }
    }

    // Split K: where element i of consumer thread (cw, tid)'s fragment of a chunk's partial
    // sums lies in slot `slot` (consecutive threads at consecutive words: no bank conflicts, and
    // rank 0 reads a peer's slot as that peer wrote it).
    __device__ __forceinline__ static uint32_t partial_at(uint32_t sP0, int slot, int cw, int i, int tid) {
        return sP0 + 4u * (((slot * kConsumers + cw) * (BN / 2) + i) * 128 + tid);
    }

    // The TMA-store epilogue of one consumer warpgroup: its 64 rows (first row r0) of the tile at
    // column n0, from the accumulators d, through its staging buffer `buf` (kCStageBytes,
    // 1024-aligned) and p.c_map. Each box is 64 rows x 128 bytes, 128B-swizzled: the 16-byte
    // chunk ch of row r lies at r * 128 + ((ch ^ (r % 8)) * 16), as TMA reads it.
    // d[4j + 2h + e] is row warp * 16 + lane / 4 + 8h, column 8j + 2 (lane % 4) + e.
    // LOAD (beta != 0): round rd's old C has been (or is being) loaded into `buf` through p.c_map,
    // completing on `cbar` (parity cph, flipped per round); each value is read from the staging
    // address it is then written to. `e` is the entry's view of C and bias (entry z of a batch).
    template <bool LOAD, class Args, class Entry>
    __device__ __forceinline__ static void store_tile_tma(const Args& p, const Entry& e, int z, float (&d)[BN / 2], uint32_t buf,
                                                          int r0, int n0, int cw, int tid, uint32_t cbar, uint32_t& cph) {
        const int warp = tid / 32, lane = tid % 32, q = lane % 4;
        const int frow = warp * 16 + lane / 4;  // fragment row (h = 0) within the 64
#pragma unroll
        for (int rd = 0; rd < kCRounds; ++rd) {
            GEMM_PERTURB(kPerturbEpilogue, 2 * rd);
            if constexpr (LOAD) {
                mbar_wait(cbar, cph);  // the load was issued after the previous stores read the buffer
                cph ^= 1u;
            } else {
                if (tid == 0) bulk_wait_group_read0();  // the previous round's stores have read the buffer
                named_bar_sync(1 + cw, 128);
            }
            if constexpr (sizeof(TC) == 2) {
                // stmatrix x4: matrices (j, h = 0), (j, h = 1), (j + 1, h = 0), (j + 1, h = 1); lanes
                // 8i .. 8i + 7 address the rows of matrix i.
                const int i4 = lane / 8;
                const int srow = warp * 16 + (i4 & 1) * 8 + lane % 8;
#pragma unroll
                for (int jj = 0; jj < kCRoundCols / 8; jj += 2) {
                    const int j = rd * (kCRoundCols / 8) + jj;
                    uint32_t r[4];
#pragma unroll
                    for (int u = 0; u < 4; ++u) {
                        const int jx = j + (u >> 1), h = u & 1;
                        float v0 = d[4 * jx + 2 * h], v1 = d[4 * jx + 2 * h + 1];
                        if constexpr (LOAD) {
                            // (row, col 8 jl + 2q of the round): box jl / 8, chunk jl % 8, bytes 4q..
                            const int row = frow + 8 * h, jl = jj + (u >> 1);
                            uint32_t o;
                            asm volatile("ld.shared.b32 %0, [%1];"
                                         : "=r"(o)
                                         : "r"(buf + (jl / 8) * kCBoxBytes + row * 128 + (((jl % 8) ^ (row & 7)) << 4) + 4 * q)
                                         : "memory");
                            TcPair<TC> old;
                            memcpy(&old, &o, sizeof o);
                            tc_epi_pair_old<TC>(e, n0 + 8 * jx + 2 * q, v0, v1, old.v[0], old.v[1]);
                        } else {
                            tc_epi_pair<TC>(e, r0 + frow + 8 * h, n0 + 8 * jx + 2 * q, v0, v1);
                        }
                        r[u] = tc_pack_pair<TC>(v0, v1);
                    }
                    if constexpr (LOAD) __syncwarp();  // every lane has read the old chunks stmatrix overwrites
                    const int g = jj + (i4 >> 1);  // 16-byte chunk of the round: box g / 8, chunk g % 8
                    stsm_x4(buf + (g / 8) * kCBoxBytes + srow * 128 + (((g % 8) ^ (srow & 7)) << 4), r[0], r[1], r[2], r[3]);
                }
            } else {
                // f32: the pair (col, col + 1) is 8 bytes of chunk (col % 32) / 4 of its box.
#pragma unroll
                for (int jj = 0; jj < kCRoundCols / 8; ++jj) {
                    const int j = rd * (kCRoundCols / 8) + jj;
#pragma unroll
                    for (int h = 0; h < 2; ++h) {
                        float v0 = d[4 * j + 2 * h], v1 = d[4 * j + 2 * h + 1];
                        const int srow = frow + 8 * h;
                        const int ch = 2 * (jj % 4) + (q >> 1);
                        const uint32_t a = buf + (jj / 4) * kCBoxBytes + srow * 128 + ((ch ^ (srow & 7)) << 4) + (q & 1) * 8;
                        if constexpr (LOAD) {  // the old pair at the address this thread writes
                            float o0, o1;
                            asm volatile("ld.shared.v2.f32 {%0, %1}, [%2];" : "=f"(o0), "=f"(o1) : "r"(a) : "memory");
                            tc_epi_pair_old<TC>(e, n0 + 8 * j + 2 * q, v0, v1, o0, o1);
                        } else {
                            tc_epi_pair<TC>(e, r0 + frow + 8 * h, n0 + 8 * j + 2 * q, v0, v1);
                        }
                        asm volatile("st.shared.v2.f32 [%0], {%1, %2};" ::"r"(a), "f"(v0), "f"(v1) : "memory");
                    }
                }
            }
            fence_proxy_async_shared();  // every writer, before the barrier that precedes the TMA store
            GEMM_PERTURB(kPerturbEpilogue, 2 * rd + 1);
            named_bar_sync(1 + cw, 128);
            if (tid == 0) {
#pragma unroll
                for (int b = 0; b < kCRoundBoxes; ++b) {
                    const int c0 = n0 + rd * kCRoundCols + b * kCBoxInner;
                    if (r0 < p.m && c0 < p.n) {
                        if constexpr (kBatched) tma_store_3d(&p.c_map, buf + b * kCBoxBytes, c0, r0, z);
                        else tma_store_2d(&p.c_map, buf + b * kCBoxBytes, c0, r0);
                    }
                }
                bulk_commit_group();
                if constexpr (LOAD) {
                    if (rd + 1 < kCRounds) {  // the next round's old C, once these stores have read the buffer
                        bulk_wait_group_read0();
                        load_c_round(p, buf, cbar, r0, n0, rd + 1, z);
                    }
                }
            }
        }
    }

    // Thread 0 of a consumer warpgroup, once the buffer is free: TMA loads of round rd's boxes of
    // the old C (rows r0.., columns n0 + rd * kCRoundCols..) into `buf`, the layout the stores
    // read, completing on `bar`. Boxes wholly past m or n are skipped (never stored).
    template <class Args>
    __device__ __forceinline__ static void load_c_round(const Args& p, uint32_t buf, uint32_t bar, int r0, int n0, int rd, int z) {
        int nb = 0;
#pragma unroll
        for (int b = 0; b < kCRoundBoxes; ++b) nb += (r0 < p.m && n0 + rd * kCRoundCols + b * kCBoxInner < p.n) ? 1 : 0;
        mbar_arrive_expect_tx(bar, (uint32_t)(nb * kCBoxBytes));
#pragma unroll
        for (int b = 0; b < kCRoundBoxes; ++b) {
            const int c0 = n0 + rd * kCRoundCols + b * kCBoxInner;
            if (r0 < p.m && c0 < p.n) tma_load(buf + b * kCBoxBytes, &p.c_map, bar, c0, r0, z);
        }
    }

    // What the epilogue addresses C and the bias through: entry z's view for a batch kernel,
    // the argument struct itself otherwise (so a kernel of one GEMM a launch is unchanged).
    template <class Args>
    __device__ __forceinline__ static decltype(auto) out_view(const Args& p, int z) {
        if constexpr (kBatched) {
            return tc_entry_out<TC>(p, z);
        } else {
            return (p);
        }
    }

    // A box of an operand's map: 2-D, or entry zz's of a batch kernel's 3-D map.
    __device__ __forceinline__ static void tma_load(uint32_t dst, const void* map, uint32_t bar, int c0, int c1, int zz) {
        if constexpr (kBatched) {
            tma_load_3d(dst, map, bar, c0, c1, zz);
        } else {
            tma_load_2d(dst, map, bar, c0, c1);
        }
    }

    // One arrive per consumer warp on stage barrier `bar` of every CTA of the cluster.
    __device__ __forceinline__ static void release(uint32_t bar, int lane) {
        if constexpr (kClusterM > 1) {
            if (lane < kClusterM) mbar_arrive_cluster(bar, (uint32_t)lane);
        } else {
            if (lane == 0) mbar_arrive(bar);
        }
    }
};
