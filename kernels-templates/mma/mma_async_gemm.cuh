// Kind `mma_async_gemm` (portable, sm_80 and later) of the tensor-core policy, contract tc-k16
// for bf16 / f16 operands and tc-tf32-k8 for f32 operands (docs/tensor-core.md §1, §7): mma.sync
// (m16n8k16, or m16n8k8 .tf32) fed by a STAGES-deep cp.async pipeline. No TMA, no wgmma, so one
// source serves sm_80, sm_89, sm_90, sm_100 and sm_120.
//
// A CTA computes Cfg::M x Cfg::N of C (grid (ceil(m / M), ceil(n / N))). Each stage holds K
// consecutive k of A and B exactly as they are stored (A [M][K] for nn / nt, [K][M] for tn;
// B [K][N] for nn / tn, [N][K] for nt), rows XOR-swizzled in 16-byte chunks (tc/cp_async.cuh) so
// ldmatrix (transposed for the m- or n-contiguous operand) reads without bank conflicts.
// cp.async copies 16-byte chunks and zero-fills past m, n and k, so the padded last k16 step adds
// nothing. WARPS_M x WARPS_N warps each own (M / WARPS_M) x (N / WARPS_N) of C as m16n8
// fragments and run the stage's k16 steps in ascending order: every output element is one f32
// accumulator from +0 over ascending k16 steps; k = 0 leaves it +0 and runs the epilogue alone.
// Same bits as wgmma_tma_gemm, mma_decode_tma and mma_gemm. Under the chunked contract
// (Cfg::kChunk > 0, tc-k16-c512) the chain restarts from +0 every kChunk k and a second set
// folds the chunks in ascending order (tc/chunk_fold.cuh), as those kernels do.
//
// TF32 (TAB = float): the same stages of 32-bit elements and k8 steps; k-contiguous fragments
// come by ldmatrix too (an 8 x 8 b16 matrix is 8 rows of 4 floats, the m16n8k8 fragment's
// layout), m- or n-contiguous ones by 32-bit shared loads; every element is truncated to TF32
// (bits & 0xffffe000) in the register the mma reads. Same bits as mma_gemm's TF32 path.
//
// Alignment: cp.async needs 16-byte aligned chunks, i.e. A and B 16-byte aligned and
// lda * 2, ldb * 2 multiples of 16. The runtime sends other single calls to the route's
// `unaligned` kernel; a batch kernel takes every entry of a strided batch, aligned or not, and for
// such operands (a batch entry's, or any that arrive here) the kernel copies element by element into the
// same layout (a choice from addresses and leading dimensions, uniform over the grid, never from
// m), which changes the speed, never a bit.
//
// A batch kernel (manifest `batch`, listed by its tier, Cfg::kBatch): grid z walks the entries of a strided batch, each at its batch
// strides (tc/batch_entry.cuh); the alignment choice above is then each entry's own.
//
// Launch (from the manifest): kThreads = 32 * WARPS_M * WARPS_N threads, dynamic shared memory
//   kSharedBytes = STAGES * (M * K + K * N) * sizeof(TAB).
#pragma once
#include <cstdint>
#include <type_traits>
#include "common/element.cuh"
#include "common/epilogue.cuh"
#include "common/operand_layout.cuh"
#include "common/timing_perturbation.cuh"
#include "tc/batch_entry.cuh"
#include "tc/cp_async.cuh"
#include "tc/chunk_fold.cuh"
#include "tc/mma_sync.cuh"
#include "tc/tc_epilogue.cuh"

template <typename TAB, typename TC, int OP, typename Cfg>
struct mma_async_gemm {
    static constexpr int BM = Cfg::M, BN = Cfg::N, BK = Cfg::K, kStages = Cfg::STAGES;
    static constexpr int kWarpsM = Cfg::WARPS_M, kWarpsN = Cfg::WARPS_N;
    static constexpr int WM = BM / kWarpsM, WN = BN / kWarpsN;  // per-warp block
    static constexpr int MI = WM / 16, NI = WN / 8;              // m16 / n8 fragments per warp
    static constexpr int kThreads = Cfg::kThreads;
    static constexpr bool kAKMajor = OperandLayout<OP>::kAContiguousK;
    static constexpr bool kBKMajor = OperandLayout<OP>::kBContiguousK;
    static constexpr bool kTf32 = sizeof(TAB) == 4;  // f32 operands: contract tc-tf32-k8
    static constexpr int kStepK = Cfg::kStepK;       // k of one mma.sync: the contract's step
    static constexpr int kChunk = Cfg::kChunk;       // 0: one chain over K
    static constexpr int kChunkSteps = kChunk > 0 ? kChunk / BK : 1;
    static constexpr int kVec = 16 / (int)sizeof(TAB);  // elements a 16-byte chunk
    using Raw = typename std::conditional<kTf32, uint32_t, uint16_t>::type;  // an element's bits
    // A stage of each operand as stored: (rows, bytes a row).
    using ATile = SwizzledRows<kAKMajor ? BM : BK, (kAKMajor ? BK : BM) * (int)sizeof(TAB)>;
    using BTile = SwizzledRows<kBKMajor ? BN : BK, (kBKMajor ? BK : BN) * (int)sizeof(TAB)>;
    static constexpr int kStageBytes = ATile::kBytes + BTile::kBytes;
    static constexpr int kSharedBytes = Cfg::kSharedBytes;

    // The layout against the numbers the generator delivers from the manifest
    // (mma/mma_async_gemm.toml): the stages of swizzled rows, one warp per fragment block (B
    // fragments in n8 pairs), the contract's k step, the tier's cap.
    static_assert(kSharedBytes == kStages * kStageBytes && kSharedBytes <= Cfg::kMaxSharedBytes &&
                      kThreads == 32 * kWarpsM * kWarpsN && MI * 16 * kWarpsM == BM && NI * 8 * kWarpsN == BN &&
                      NI % 2 == 0 && kStepK == (kTf32 ? 8 : 16) && kChunk % BK == 0,
                  "mma_async_gemm: its layout does not match the config the generator delivered");

    // Copies a stage of one operand: rows `outer0 ..` (< outer_lim) by elements `inner0 ..`
    // (< inner_lim) of `g` (leading dimension ld) into the swizzled tile at `dst`; zeros outside.
    template <typename Tile>
    __device__ __forceinline__ static void copy_stage(uint32_t dst, const Raw* g, int ld, int outer0,
                                                      int outer_lim, int inner0, int inner_lim, bool aligned) {
        constexpr int kTotal = Tile::kBytes / 16;
#pragma unroll
        for (int l = 0; l < (kTotal + kThreads - 1) / kThreads; ++l) {
            const int c = threadIdx.x + l * kThreads;
            if (kTotal % kThreads != 0 && c >= kTotal) break;
            const int r = c / Tile::kChunks, ch = c % Tile::kChunks;
            const int go = outer0 + r, gi = inner0 + ch * kVec;
            const int left = inner_lim - gi;
            const int valid = go < outer_lim ? (left < 0 ? 0 : left > kVec ? kVec : left) : 0;
            const Raw* src = g + (size_t)(valid > 0 ? go : 0) * ld + (valid > 0 ? gi : 0);
            const uint32_t d = dst + Tile::offset(r, ch);
            if (aligned) {
                cp_async16_zfill(d, src, valid * (int)sizeof(TAB));
            } else {
                uint32_t w[4];
#pragma unroll
                for (int e = 0; e < 4; ++e) {
                    if constexpr (kTf32) {
                        w[e] = e < valid ? src[e] : 0u;
                    } else {
                        const uint32_t lo = 2 * e < valid ? src[2 * e] : 0u;
                        const uint32_t hi = 2 * e + 1 < valid ? src[2 * e + 1] : 0u;
                        w[e] = lo | (hi << 16);
                    }
                }
                asm volatile("st.shared.v4.b32 [%0], {%1, %2, %3, %4};" ::"r"(d), "r"(w[0]), "r"(w[1]), "r"(w[2]),
                             "r"(w[3])
                             : "memory");
            }
        }
    }

    template <class Args>
    __device__ __forceinline__ static void issue_stage(const Args& p, uint32_t stage, int m0, int n0, int k0,
                                                       bool aligned) {
        const Raw* a = static_cast<const Raw*>(p.a);
        const Raw* b = static_cast<const Raw*>(p.b);
        if constexpr (kAKMajor) copy_stage<ATile>(stage, a, p.lda, m0, p.m, k0, p.k, aligned);
        else copy_stage<ATile>(stage, a, p.lda, k0, p.k, m0, p.m, aligned);
        if constexpr (kBKMajor) copy_stage<BTile>(stage + ATile::kBytes, b, p.ldb, n0, p.n, k0, p.k, aligned);
        else copy_stage<BTile>(stage + ATile::kBytes, b, p.ldb, k0, p.k, n0, p.n, aligned);
    }

    // One k16 step `kk` of a stage for this warp: fragments by ldmatrix, then MI x NI mma.sync.
    __device__ __forceinline__ static void step_half(float (&acc)[MI][NI][4], uint32_t sa, uint32_t sb, int kk, int wm,
                                                int wn, int lane) {
        uint32_t af[MI][4], bf[NI][2];
#pragma unroll
        for (int i = 0; i < MI; ++i) {
            const int mb = wm * WM + i * 16;
            if constexpr (kAKMajor) {  // matrices (m 0-7 | 8-15) x (k 0-7 | 8-15)
                const int row = mb + (lane & 7) + ((lane >> 3) & 1) * 8, ch = kk * 2 + (lane >> 4);
                ldsm_x4(sa + ATile::offset(row, ch), af[i][0], af[i][1], af[i][2], af[i][3]);
            } else {  // k rows of m: matrices (k 0-7 | 8-15) x (m 0-7 | 8-15), transposed
                const int krow = kk * 16 + (lane & 7) + (lane >> 4) * 8, ch = mb / 8 + ((lane >> 3) & 1);
                ldsm_x4_trans(sa + ATile::offset(krow, ch), af[i][0], af[i][1], af[i][2], af[i][3]);
            }
        }
#pragma unroll
        for (int j = 0; j < NI; j += 2) {  // two n8 fragments a load
            const int nb = wn * WN + j * 8;
            if constexpr (kBKMajor) {  // n rows of k: (n 0-7, k 0-7 | 8-15), (n 8-15, ...)
                const int nrow = nb + (lane & 7) + (lane >> 4) * 8, ch = kk * 2 + ((lane >> 3) & 1);
                ldsm_x4(sb + BTile::offset(nrow, ch), bf[j][0], bf[j][1], bf[j + 1][0], bf[j + 1][1]);
            } else {  // k rows of n, transposed: (k 0-7 | 8-15) of n 0-7, then of n 8-15
                const int krow = kk * 16 + (lane & 15), ch = nb / 8 + (lane >> 4);
                ldsm_x4_trans(sb + BTile::offset(krow, ch), bf[j][0], bf[j][1], bf[j + 1][0], bf[j + 1][1]);
            }
        }
#pragma unroll
        for (int i = 0; i < MI; ++i)
#pragma unroll
            for (int j = 0; j < NI; ++j)
                mma_m16n8k16<TAB>(acc[i][j], af[i][0], af[i][1], af[i][2], af[i][3], bf[j][0], bf[j][1]);
    }

    // Element (row, col) of a swizzled stage of 32-bit elements, as stored.
    template <typename Tile>
    __device__ __forceinline__ static uint32_t ld_elem(uint32_t tile, int row, int col) {
        uint32_t v;
        asm volatile("ld.shared.b32 %0, [%1];" : "=r"(v) : "r"(tile + Tile::offset(row, col / kVec) + (col % kVec) * 4));
        return v;
    }

    // One k8 step `kk` of a stage of f32 operands for this warp (m16n8k8 .tf32 fragments, PTX ISA:
    // a0 (g, q), a1 (g+8, q), a2 (g, q+4), a3 (g+8, q+4); b0 (k q, n g), b1 (k q+4, n g)).
    __device__ __forceinline__ static void step_tf32(float (&acc)[MI][NI][4], uint32_t sa, uint32_t sb, int kk, int wm,
                                                     int wn, int lane) {
        const int g = lane / 4, q = lane % 4, k = kk * 8 + q;
        uint32_t af[MI][4], bf[NI][2];
#pragma unroll
        for (int i = 0; i < MI; ++i) {
            const int mb = wm * WM + i * 16;
            if constexpr (kAKMajor) {  // matrices (m 0-7 | 8-15) x (k 0-3 | 4-7), 4 floats a row
                const int row = mb + (lane & 7) + ((lane >> 3) & 1) * 8, ch = kk * 2 + (lane >> 4);
                ldsm_x4(sa + ATile::offset(row, ch), af[i][0], af[i][1], af[i][2], af[i][3]);
            } else {  // k rows of m
                af[i][0] = ld_elem<ATile>(sa, k, mb + g);
                af[i][1] = ld_elem<ATile>(sa, k, mb + g + 8);
                af[i][2] = ld_elem<ATile>(sa, k + 4, mb + g);
                af[i][3] = ld_elem<ATile>(sa, k + 4, mb + g + 8);
            }
#pragma unroll
            for (int r = 0; r < 4; ++r) af[i][r] = tf32_bits(af[i][r]);
        }
#pragma unroll
        for (int j = 0; j < NI; j += 2) {
            const int nb = wn * WN + j * 8;
            if constexpr (kBKMajor) {  // n rows of k: (n 0-7, k 0-3 | 4-7), (n 8-15, ...)
                const int nrow = nb + (lane & 7) + (lane >> 4) * 8, ch = kk * 2 + ((lane >> 3) & 1);
                ldsm_x4(sb + BTile::offset(nrow, ch), bf[j][0], bf[j][1], bf[j + 1][0], bf[j + 1][1]);
            } else {  // k rows of n
                bf[j][0] = ld_elem<BTile>(sb, k, nb + g);
                bf[j][1] = ld_elem<BTile>(sb, k + 4, nb + g);
                bf[j + 1][0] = ld_elem<BTile>(sb, k, nb + 8 + g);
                bf[j + 1][1] = ld_elem<BTile>(sb, k + 4, nb + 8 + g);
            }
#pragma unroll
            for (int r = 0; r < 2; ++r) {
                bf[j][r] = tf32_bits(bf[j][r]);
                bf[j + 1][r] = tf32_bits(bf[j + 1][r]);
            }
        }
#pragma unroll
        for (int i = 0; i < MI; ++i)
#pragma unroll
            for (int j = 0; j < NI; ++j)
                mma_m16n8k8_tf32(acc[i][j], af[i][0], af[i][1], af[i][2], af[i][3], bf[j][0], bf[j][1]);
    }

    // A batch kernel (Cfg::kBatch) runs grid z's entry of a strided batch; any other kernel
    // reads its arguments as they are (no registers spent on an entry it does not have).
    template <class Args>
    __device__ static void run(const Args& args) {
        if constexpr (Cfg::kBatch) run_entry(batch_entry<TAB, TC>(args));
        else run_entry(args);
    }

    template <class Args>
    __device__ static void run_entry(const Args& p) {
        extern __shared__ __align__(1024) uint8_t tc_smem_raw[];
        const uint32_t s0 = (uint32_t)__cvta_generic_to_shared(tc_smem_raw);
        const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
        const int wm = warp / kWarpsN, wn = warp % kWarpsN;
        const int m0 = blockIdx.x * BM, n0 = blockIdx.y * BN;
        const int nk = (p.k + BK - 1) / BK;
        // cp.async's 16-byte chunks: both bases and both row pitches on 16 bytes.
        const bool aligned = (((uintptr_t)p.a | (uintptr_t)p.b) % 16) == 0 && (p.lda * 2) % 16 == 0 &&
                             (p.ldb * 2) % 16 == 0;

        float acc[MI][NI][4];
        tc_zero_fragments(acc);
        float fold[MI][NI][4];  // the chunks folded so far (chunked contract; unused otherwise)
        tc_zero_fragments(fold);

        // Prologue: stages 0 .. STAGES - 2 in flight, one commit group each (empty past K).
#pragma unroll
        for (int s = 0; s < kStages - 1; ++s) {
            GEMM_PERTURB(kPerturbProducerIssue, s);
            if (s < nk) issue_stage(p, s0 + s * kStageBytes, m0, n0, s * BK, aligned);
            cp_async_commit_group();
        }
        for (int kb = 0; kb < nk; ++kb) {
            GEMM_PERTURB(kPerturbConsumerWait, kb);
            cp_async_wait_group<kStages - 2>();  // stage kb has landed (for this thread)
            GEMM_PERTURB(kPerturbProducerAcquire, kb);
            __syncthreads();                     // ... for every thread; stage kb - 1 is free
            const int next = kb + kStages - 1;
            GEMM_PERTURB(kPerturbProducerIssue, next);
            if (next < nk) issue_stage(p, s0 + (next % kStages) * kStageBytes, m0, n0, next * BK, aligned);
            cp_async_commit_group();
            GEMM_PERTURB(kPerturbConsumerRead, kb);
            const uint32_t sa = s0 + (kb % kStages) * kStageBytes, sb = sa + ATile::kBytes;
#pragma unroll
            for (int kk = 0; kk < BK / kStepK; ++kk) {  // ascending k16 (k8 for TF32) steps
                if constexpr (kTf32) step_tf32(acc, sa, sb, kk, wm, wn, lane);
                else step_half(acc, sa, sb, kk, wm, wn, lane);
            }
            GEMM_PERTURB(kPerturbConsumerRelease, kb);  // the next iteration's barrier frees the stage
            if constexpr (kChunk > 0) {
                if ((kb + 1) % kChunkSteps == 0 || kb + 1 == nk) tc_fold_chunk(fold, acc);  // a chunk ends
            }
        }
        if constexpr (kChunk > 0) tc_take_fold(acc, fold);
        cp_async_wait_group<0>();
        GEMM_PERTURB(kPerturbEpilogue, 0);

        const int g = lane / 4, q = lane % 4;
        const bool vec = tc_pairs_aligned<TC>(p) && n0 + BN <= p.n;
#pragma unroll
        for (int i = 0; i < MI; ++i) {
            const int row = m0 + wm * WM + i * 16 + g;
#pragma unroll
            for (int j = 0; j < NI; ++j) {
                const int col = n0 + wn * WN + j * 8 + 2 * q;
                tc_store_pair<TC>(p, row, col, acc[i][j][0], acc[i][j][1], vec);
                tc_store_pair<TC>(p, row + 8, col, acc[i][j][2], acc[i][j][3], vec);
            }
        }
    }
};
