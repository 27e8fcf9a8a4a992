// Kind `mma_decode_tma` (small m) of the tensor-core policy, contracts tc-k16 and the chunked
// tc-k16-c512 for bf16 and f16, tc-tf32-k8 and tc-tf32-k8-c512 for f32 read as TF32
// (docs/tensor-core.md §1, §9, §10).
//
// A CTA computes Cfg::M rows (16, 32 or 64; blockIdx.x: m tile) x Cfg::N columns (blockIdx.y:
// n tile) of C. One producer warp (the last) issues TMA loads of A (M rows x K k) and B (K k x N)
// into a STAGES-deep ring (full/empty mbarriers); a stage's rows are 128 bytes of k (64 halves or
// 32 floats). N / 8 consumer warps each own an n8 column group over all M rows: M / 16 mma.sync
// m16n8k16 (halves) or m16n8k8 .tf32 (floats, each operand truncated in the register the mma
// reads) a k step, one per row tile, against the one B fragment (independent chains, and B read
// from memory once for M rows rather than once for each 16), with
// fragments from ldmatrix (transposed where a 16-bit operand is MN-major; nn's n-contiguous
// TF32 B by 32-bit loads at the swizzled address, as ldmatrix's transpose moves 16-bit
// elements only). TMA zero-fills past m, n and k, so padded steps add nothing.
//  * unchunked (Cfg::kChunk == 0): every output element is one f32 accumulator from +0 over the
//    k16 (k8 on TF32) steps of all of K in ascending order. Same bits as wgmma_tma_gemm and
//    mma_gemm (wgmma_tf32_gemm and mma_async_gemm on TF32).
//  * chunked (Cfg::kChunk > 0): K is cut into chunks of kChunk k (whole stages); each chunk is
//    its own step chain from +0 and the chunks are folded from +0 in ascending order.
//    SPLIT_K == 1: the CTA runs every chunk and folds in registers; with CHUNK_GROUPS = G > 1
//    the consumer warps form G groups of N / 8 (one warp per 8 columns each), group g runs
//    chunks g, g + G, ... on its own STAGES / G stages of the ring (the producer loads a round's
//    G chunks stage by stage, interleaved), and after each round groups 1..G-1 leave their
//    chunk's partials in G - 1 shared-memory slots and group 0 adds the round's chunks to its
//    running fold in ascending order (named barriers between the consumer warps): G chains of
//    one element run at once, and the fold and its order are unchanged. SPLIT_K > 1: a cluster of
//    SPLIT_K CTAs along z (blockIdx.z = rank) shares the tile: rank r runs chunks r, r + S, ...
//    and leaves each chunk's partial sums in one of its SLOTS shared-memory slots; after a
//    cluster barrier each rank folds 1/S of the tile's elements, reading every chunk's partial
//    from its owner through distributed shared memory, in ascending chunk order, and stores
//    them; a second cluster barrier keeps every CTA's slots alive until all are read. Who runs
//    a chunk and who folds an element never changes how: the bits are those of the CTA that
//    runs all chunks itself, and of wgmma_tma_gemm and mma_gemm under the same contract.
//
// A consumer warp releases a stage with a proxy fence first (mbar_release_after_generic_reads):
// its ldmatrix reads are generic-proxy accesses and the TMA load that refills the stage is an
// async-proxy write. Without the fence ptxas issued the release while the stage's last ldmatrix
// was still in flight, and the refill could land before that read (wrong results under
// compute-sanitizer memcheck and beside kernels of other streams; docs/timing.md).
//
// Shared layouts (each stage 1024-byte aligned, swizzle as the tensor maps say; E bytes an element):
//   A [m, k] (nn, nt): M rows x 128 B, 128B swizzle      A [k, m] (tn, halves): 64 rows x 2M B, 2M-byte swizzle
//   B [k, n] (nn, tn): K rows x E*N B, E*N-byte swizzle  B [n, k] (nt): N rows x 128 B, 128B swizzle
//   then the mbarriers, then (SPLIT_K > 1) SLOTS partial tiles of M x N f32, row-major, then
//   (CHUNK_GROUPS > 1) G - 1 round partial tiles of M x N f32, row-major.
//
// Launch: grid (ceil(m / M), ceil(n / N), SPLIT_K), cluster (1, 1, SPLIT_K) when SPLIT_K > 1,
// kThreads threads, dynamic shared memory kSharedBytes:
//   kSharedBytes = STAGES * (M*K + K*N) * sizeof(TAB) + 2 * STAGES * 8 (mbarriers)
//                + kPartialBytes (SLOTS * M * N * 4 when split)
//                + kGroupBytes ((G - 1) * M * N * 4) + 1024 (alignment slack).
// A split takes K up to kMaxK = SPLIT_K * SLOTS * kChunk (routes are bounded by it; more traps).
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
    static constexpr int kWarps = Cfg::kConsumerWarps;   // consumer warps, every group's
    static constexpr int kGroups = Cfg::CHUNK_GROUPS;     // warp groups running chunks side by side
    static constexpr int kColWarps = BN / 8;              // a group's warps, 8 columns each
    static constexpr int kRing = kStages / kGroups;       // a group's stages of the ring
    static constexpr int kGroupBytes = Cfg::kGroupBytes;  // groups 1..G-1's round partials
    static constexpr int kThreads = Cfg::kThreads;
    static constexpr int kABytes = BM * BK * (int)sizeof(TAB);
    static constexpr int kBBytes = BK * BN * (int)sizeof(TAB);
    static constexpr int kSharedBytes = Cfg::kSharedBytes;
    static constexpr int kChunk = Cfg::kChunk;  // 0: one chain over K (tc-k16)
    static constexpr int kSplit = Cfg::SPLIT_K, kSlots = Cfg::SLOTS;
    static constexpr int kPartialBytes = Cfg::kPartialBytes;
    static constexpr bool kTf32 = sizeof(TAB) == 4;  // f32 operands read as TF32: m16n8k8 steps
    static constexpr int kStepK = Cfg::kStepK;       // k of one mma (16, or 8 on TF32)
    static constexpr int kRowBytes = BK * (int)sizeof(TAB);  // a K-major stage row
    static constexpr int kRowTiles = BM / 16;  // m16 row tiles a consumer warp runs
    static constexpr int kARowBytes = BM * (int)sizeof(TAB);  // tn: a k row of A (m-contiguous)

    // The layout against the numbers the generator delivers from the manifest
    // (mma/mma_decode_tma.toml): the carve of shared memory, one consumer warp per 8 columns
    // a group and a producer warp, the boxes the TMA loads and the ldmatrix addressing assume (A and B
    // as stored: a K-major operand in 128-byte swizzled rows of k, 64 halves or 32 floats), the tier's cap.
    static_assert(kSharedBytes == kStages * (kABytes + kBBytes) + 2 * kStages * 8 + kPartialBytes + kGroupBytes + 1024 &&
                      kGroupBytes == (kGroups - 1) * BM * BN * 4 && kWarps == kColWarps * kGroups &&
                      (kGroups == 1 || (kChunk > 0 && kSplit == 1)) && kRing * kGroups == kStages && kRing >= 2 &&
                      kPartialBytes == (kSplit > 1 ? kSlots * BM * BN * 4 : 0) && kChunk % BK == 0 &&
                      (kSplit == 1 || kChunk > 0) && (BM * BN) % kSplit == 0 &&
                      kSharedBytes <= Cfg::kMaxSharedBytes && kColWarps * 8 == BN && kThreads == 32 * kWarps + 32 &&
                      Cfg::kABoxInner == (kAKMajor ? BK : BM) && Cfg::kABoxOuter == (kAKMajor ? BM : BK) &&
                      Cfg::kSwizzleA == (kAKMajor ? 128 : kARowBytes) && BM % 16 == 0 && kRowTiles <= 4 &&
                      (kAKMajor || kARowBytes == 32 || kARowBytes == 64 || kARowBytes == 128) &&
                      Cfg::kBBoxInner == (kBKMajor ? BK : BN) && Cfg::kBBoxOuter == (kBKMajor ? BN : BK) &&
                      Cfg::kSwizzleB == (kBKMajor ? 128 : BN * (int)sizeof(TAB)) && kRowBytes == 128 &&
                      kStepK == (kTf32 ? 8 : 16) && (!kTf32 || kAKMajor),
                  "mma_decode_tma: its layout does not match the config the generator delivered");

    // Chunk ch is the stages [ch * per, min(nk, (ch + 1) * per)); the producer and every
    // consumer walk this CTA's chunks in the same order, so the ring's phases agree (with
    // groups, group g's chunks on its own stages g * kRing .. + kRing - 1).
    template <class Args>
    __device__ static void run(const Args& p) {
        extern __shared__ __align__(1024) uint8_t tc_smem_raw[];
        const uint32_t sbase = (tc_smem_u32(tc_smem_raw) + 1023u) & ~1023u;
        const uint32_t sA0 = sbase, sB0 = sbase + kStages * kABytes;
        const uint32_t bar0 = sB0 + kStages * kBBytes;
        const uint32_t sP0 = bar0 + 2 * kStages * 8;  // partial slots (split), 16-byte aligned
        auto full = [&](int s) { return bar0 + 8u * s; };
        auto empty = [&](int s) { return bar0 + 8u * (kStages + s); };
        const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
        const int m0 = blockIdx.x * BM, n0 = blockIdx.y * BN;
        const int nk = (p.k + BK - 1) / BK;
        // Chunks of the contract (one chunk of all of K for tc-k16), and this CTA's share.
        const int per = kChunk > 0 ? kChunk / BK : nk;
        const int nchunks = kChunk > 0 ? (p.k + kChunk - 1) / kChunk : (nk > 0 ? 1 : 0);
        const int rank = kSplit > 1 ? (int)blockIdx.z : 0;
        if constexpr (kSplit > 1) {
            if (nchunks > kSplit * kSlots) __trap();  // past kMaxK: no route sends such a K here
        }
        if (threadIdx.x == 0) {
            for (int s = 0; s < kStages; ++s) {
                mbar_init(full(s), 1);
                mbar_init(empty(s), kColWarps);  // the warps of the one group that reads the stage
            }
            mbar_init_fence();
        }
        __syncthreads();
        if (warp == kWarps) {  // producer
            if (lane == 0) {
                // One group: the loop as it was before groups existed, written out, so that its
                // kernels keep their SASS (a lambda shared with the groups' loop changed 20 of
                // tcdec's 30 kernels).
                if constexpr (kGroups == 1) {
                    int s = 0;
                    uint32_t ph = 0;
                    for (int ch = rank; ch < nchunks; ch += kSplit) {
                        const int kb_end = min(nk, (ch + 1) * per);
                        for (int kb = ch * per; kb < kb_end; ++kb) {
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
                } else {  // round by round, stage by stage: chunk r0 + g into group g's stages
                    auto load = [&](int s, uint32_t ph, int kb) {  // stage kb into slot s of phase ph
                        GEMM_PERTURB(kPerturbProducerAcquire, kb);
                        mbar_wait(empty(s), ph ^ 1);
                        GEMM_PERTURB(kPerturbProducerIssue, kb);
                        mbar_arrive_expect_tx(full(s), kABytes + kBBytes);
                        if (kAKMajor) tma_load_2d(sA0 + s * kABytes, &p.a_map, full(s), kb * BK, m0);
                        else tma_load_2d(sA0 + s * kABytes, &p.a_map, full(s), m0, kb * BK);
                        if (kBKMajor) tma_load_2d(sB0 + s * kBBytes, &p.b_map, full(s), kb * BK, n0);
                        else tma_load_2d(sB0 + s * kBBytes, &p.b_map, full(s), n0, kb * BK);
                    };
                    int s[kGroups];
                    uint32_t ph[kGroups];
#pragma unroll
                    for (int g = 0; g < kGroups; ++g) s[g] = g * kRing, ph[g] = 0;
                    for (int r0 = 0; r0 < nchunks; r0 += kGroups)
                        for (int st = 0; st < per; ++st)
#pragma unroll
                            for (int g = 0; g < kGroups; ++g) {
                                const int kb = (r0 + g) * per + st;
                                if (r0 + g >= nchunks || kb >= nk) continue;  // the last chunk may be shorter
                                load(s[g], ph[g], kb);
                                if (++s[g] == g * kRing + kRing) { s[g] = g * kRing; ph[g] ^= 1; }
                            }
                }
            }
            __syncwarp();
            if constexpr (kSplit > 1) fold_split(p, sP0, rank, nchunks, m0, n0);
            return;
        }
        // Consumer warp `warp` (warp cw of group grp): columns n0 + 8 * cw .. + 7, all M rows (row
        // tile r: rows 16r ..), on the group's stages.
        const int cw = kGroups == 1 ? warp : warp % kColWarps, grp = kGroups == 1 ? 0 : warp / kColWarps;
        float total[kRowTiles][4] = {};
        int s = grp * kRing;
        uint32_t ph = 0;
        const int mat = lane / 8, r8 = lane % 8;
        const int prow = lane / 4, pcol = 8 * cw + 2 * (lane % 4);  // this lane's fragment in the tile
        int slot = 0;
        // Round ch0: this group's chunk ch0 + grp (none past the last chunk: no stages, c stays +0).
        for (int ch0 = rank; ch0 < nchunks; ch0 += kSplit * kGroups, ++slot) {
            const int ch = ch0 + grp;
            float c[kRowTiles][4] = {};  // the chunk's chains, from +0
            const int kb_end = min(nk, (ch + 1) * per);
            for (int kb = ch * per; kb < kb_end; ++kb) {
                GEMM_PERTURB(kPerturbConsumerWait, kb);
                mbar_wait(full(s), ph);
                GEMM_PERTURB(kPerturbConsumerRead, kb);
                const uint32_t a = sA0 + s * kABytes, b = sB0 + s * kBBytes;
#pragma unroll
                for (int kk = 0; kk < BK / kStepK; ++kk) {  // ascending k16 (TF32: k8) steps, 32 B of k each
                    // Row tile r's A fragment (rows 16r ..) and its mma against the one B fragment.
                    auto load_a = [&](int r, uint32_t& a0, uint32_t& a1, uint32_t& a2, uint32_t& a3) {
                        if constexpr (kAKMajor) {
                            // matrices (rows 0-7 | 8-15 of tile r) x (k 0-7 | 8-15; TF32: k 0-3 | 4-7, a float
                            // being two b16 of an ldmatrix row, so a lane gets (row g, k q) as m16n8k8 reads
                            // it); 128B swizzle: chunk ^= row % 8
                            const int row = 16 * r + r8 + 8 * (mat & 1), kc = kk * 2 + (mat >> 1);
                            ldsm_x4(a + row * 128 + ((kc ^ (row & 7)) << 4), a0, a1, a2, a3);
                        } else {
                            // k rows of M m (2M bytes); matrix (m 16r + 0-7 | 8-15) x (k 0-7 | 8-15),
                            // transposed; the 2M-byte swizzle XORs address bits [4,7) with [7,10)
                            constexpr int SWA = kARowBytes == 128 ? 7 : kARowBytes == 64 ? 3 : 1;
                            const int krow = kk * 16 + (mat >> 1) * 8 + r8, mc = 2 * r + (mat & 1);
                            ldsm_x4_trans(a + krow * kARowBytes + ((mc ^ (((krow * kARowBytes) >> 7) & SWA)) << 4), a0,
                                          a1, a2, a3);
                        }
                    };
                    auto step = [&](float (&acc)[4], uint32_t a0, uint32_t a1, uint32_t a2, uint32_t a3, uint32_t b0,
                                    uint32_t b1) {
                        if constexpr (kTf32) {
                            mma_m16n8k8_tf32(acc, tf32_bits(a0), tf32_bits(a1), tf32_bits(a2), tf32_bits(a3),
                                             tf32_bits(b0), tf32_bits(b1));
                        } else {
                            mma_m16n8k16<TAB>(acc, a0, a1, a2, a3, b0, b1);
                        }
                    };
                    // Row tile 0's A, then B, as the 16-row kernel always read them (its code is
                    // unchanged by the row tiles), then the other row tiles against the same B.
                    uint32_t a0, a1, a2, a3;
                    load_a(0, a0, a1, a2, a3);
                    uint32_t b0, b1;
                    if constexpr (kBKMajor) {
                        // n rows of 128 B of k: matrices k 0-7 | 8-15 (TF32: 0-3 | 4-7) of rows 8 * cw ..;
                        // 128B swizzle
                        const int nrow = cw * 8 + r8, kc = kk * 2 + (mat & 1);
                        ldsm_x2(b + nrow * 128 + ((kc ^ (nrow & 7)) << 4), b0, b1);
                    } else if constexpr (kTf32) {
                        // k rows of N floats (4N bytes): b0 (k q, n g), b1 (k q + 4, n g) of the warp's
                        // 8 columns, one 32-bit load each at the swizzled address (address bits [4,7)
                        // ^= [7,10), as many bits as the 4N-byte swizzle has)
                        constexpr int RB = BN * 4;
                        const int col = 8 * cw + lane / 4, k0 = kk * 8 + lane % 4;
                        auto at = [&](int kr) {  // (k kr, n col): its 16-byte chunk swizzled with kr's row
                            return b + kr * RB + ((((col >> 2) ^ ((kr * RB) >> 7)) & (RB / 16 - 1)) << 4) + 4 * (col & 3);
                        };
                        b0 = ld_shared_u32(at(k0));
                        b1 = ld_shared_u32(at(k0 + 4));
                    } else {
                        // k rows of N (2N bytes): lanes 0-15 give k rows 0..15; swizzle XORs address bits [4,7) with [7,10)
                        constexpr int RB = BN * 2, SWM = RB == 128 ? 7 : RB == 64 ? 3 : 1;
                        const int krow = kk * 16 + (lane % 16);
                        ldsm_x2_trans(b + krow * RB + ((cw ^ (((krow * RB) >> 7) & SWM)) << 4), b0, b1);
                    }
                    step(c[0], a0, a1, a2, a3, b0, b1);
#pragma unroll
                    for (int r = 1; r < kRowTiles; ++r) {  // independent chains, one B fragment
                        load_a(r, a0, a1, a2, a3);
                        step(c[r], a0, a1, a2, a3, b0, b1);
                    }
                }
                GEMM_PERTURB(kPerturbConsumerRelease, kb);
                // The stage was read by ldmatrix (generic proxy) and the next TMA load (async proxy)
                // overwrites it: fenced release, tc/smem_sync.cuh.
                mbar_release_after_generic_reads(empty(s), lane);
                if (++s == grp * kRing + kRing) { s = grp * kRing; ph ^= 1; }
            }
            if constexpr (kChunk == 0) {
#pragma unroll
                for (int r = 0; r < kRowTiles; ++r)
#pragma unroll
                    for (int i = 0; i < 4; ++i) total[r][i] = c[r][i];  // the one chain
            } else if constexpr (kGroups > 1) {
                fold_round(c, total, sP0 + kPartialBytes, grp, ch0, nchunks, prow, pcol);
            } else if constexpr (kSplit == 1) {
#pragma unroll
                for (int r = 0; r < kRowTiles; ++r)
#pragma unroll
                    for (int i = 0; i < 4; ++i) total[r][i] = __fadd_rn(total[r][i], c[r][i]);  // ascending fold
            } else {
                float* part = reinterpret_cast<float*>(tc_smem_raw + (sP0 - tc_smem_u32(tc_smem_raw))) + slot * BM * BN;
#pragma unroll
                for (int r = 0; r < kRowTiles; ++r) {
                    *reinterpret_cast<float2*>(part + (16 * r + prow) * BN + pcol) = make_float2(c[r][0], c[r][1]);
                    *reinterpret_cast<float2*>(part + (16 * r + prow + 8) * BN + pcol) = make_float2(c[r][2], c[r][3]);
                }
            }
        }
        if constexpr (kSplit > 1) {
            fold_split(p, sP0, rank, nchunks, m0, n0);
            return;
        }
        if constexpr (kGroups > 1) {
            if (grp != 0) return;  // group 0 holds the fold and stores the tile
        }
        GEMM_PERTURB(kPerturbEpilogue, 0);
        const int row = m0 + prow, col = n0 + pcol;
        const bool vec = tc_pairs_aligned<TC>(p) && n0 + BN <= p.n;
#pragma unroll
        for (int r = 0; r < kRowTiles; ++r) {
            tc_store_pair<TC>(p, row + 16 * r, col, total[r][0], total[r][1], vec);
            tc_store_pair<TC>(p, row + 16 * r + 8, col, total[r][2], total[r][3], vec);
        }
    }

    // Chunk groups, every consumer warp after round ch0 (chunks ch0 .. ch0 + G - 1; its own in
    // c): groups 1..G-1 leave their chunk in their slot of sG0, and group 0 adds the round's
    // chunks that exist to its fold in ascending order (its own first, then the slots').
    __device__ static void fold_round(const float (&c)[kRowTiles][4], float (&total)[kRowTiles][4], uint32_t sG0, int grp,
                                      int ch0, int nchunks, int prow, int pcol) {
        extern __shared__ __align__(1024) uint8_t tc_smem_raw[];
        float* slots = reinterpret_cast<float*>(tc_smem_raw + (sG0 - tc_smem_u32(tc_smem_raw)));
        GEMM_PERTURB(kPerturbEpilogue, ch0);  // seeded delays around the slots' writes and reads
        if (grp > 0 && ch0 + grp < nchunks) {
            float* part = slots + (grp - 1) * BM * BN;
#pragma unroll
            for (int r = 0; r < kRowTiles; ++r) {
                *reinterpret_cast<float2*>(part + (16 * r + prow) * BN + pcol) = make_float2(c[r][0], c[r][1]);
                *reinterpret_cast<float2*>(part + (16 * r + prow + 8) * BN + pcol) = make_float2(c[r][2], c[r][3]);
            }
        }
        named_bar_sync(1, 32 * kWarps);  // the round's partials are in their slots
        GEMM_PERTURB(kPerturbEpilogue, ch0);
        if (grp == 0) {
#pragma unroll
            for (int r = 0; r < kRowTiles; ++r)
#pragma unroll
                for (int i = 0; i < 4; ++i) total[r][i] = __fadd_rn(total[r][i], c[r][i]);
            for (int g = 1; g < kGroups && ch0 + g < nchunks; ++g) {
                const float* part = slots + (g - 1) * BM * BN;
#pragma unroll
                for (int r = 0; r < kRowTiles; ++r) {
                    const float2 lo = *reinterpret_cast<const float2*>(part + (16 * r + prow) * BN + pcol);
                    const float2 hi = *reinterpret_cast<const float2*>(part + (16 * r + prow + 8) * BN + pcol);
                    total[r][0] = __fadd_rn(total[r][0], lo.x);
                    total[r][1] = __fadd_rn(total[r][1], lo.y);
                    total[r][2] = __fadd_rn(total[r][2], hi.x);
                    total[r][3] = __fadd_rn(total[r][3], hi.y);
                }
            }
        }
        named_bar_sync(1, 32 * kWarps);  // the slots were read: the next round may write them
    }

    // Split K, every thread of every CTA of the cluster: the ascending fold of the chunks'
    // partials (chunk ch in slot ch / S of rank ch % S) for elements rank * E / S .. of the
    // tile, then the epilogue. Both cluster barriers are reached by every thread.
    template <class Args>
    __device__ static void fold_split(const Args& p, uint32_t sP0, int rank, int nchunks, int m0, int n0) {
        constexpr int E = BM * BN, kShare = E / kSplit;
        cluster_sync_all();  // every chunk's partials are in their slots, and visible
        GEMM_PERTURB(kPerturbEpilogue, 0);
        for (int e = rank * kShare + (int)threadIdx.x; e < (rank + 1) * kShare; e += kThreads) {
            const uint32_t at = sP0 + 4u * e;
            float v = 0.0f;
            int ch = 0;
            for (; ch + 8 <= nchunks; ch += 8) {  // eight loads in flight, added in order
                float t[8];
#pragma unroll
                for (int u = 0; u < 8; ++u)
                    t[u] = ld_shared_cluster_f32(at + 4u * E * ((ch + u) / kSplit), (ch + u) % kSplit);
#pragma unroll
                for (int u = 0; u < 8; ++u) v = __fadd_rn(v, t[u]);
            }
            for (; ch < nchunks; ++ch) v = __fadd_rn(v, ld_shared_cluster_f32(at + 4u * E * (ch / kSplit), ch % kSplit));
            const int row = m0 + e / BN, col = n0 + e % BN;
            if (row < p.m && col < p.n) epilogue_store<TC>(v, row, col, p);
        }
        __syncwarp();
        cluster_sync_all();  // no CTA leaves while a peer may still read its slots
    }
};
