// Family `fmawa`, contract `fma-k256` (see common/fma_chunks.cuh): the exact policy's large-m
// tile for f32 operands, fed by a cp.async ring instead of fma_warp_gemm's registers.
//
// Why: fma_warp_gemm stages each k-tile through 16 registers (load, widen, store) and waits on a
// barrier every tile with only two, so at 128 registers a thread its shared-memory fragments
// cannot be double-buffered and it runs at 0.76-0.81 of pedantic SGEMM. f32 operands need no
// widening, so here they are copied to shared memory as stored, by cp.async, `Cfg::STAGES` k-tiles
// deep: no staging registers, and a barrier waits only for a tile issued STAGES - 1 tiles ago.
//
// Schedule: one block per Cfg::M x Cfg::N tile of C, 8 x 8 elements a thread, warps of 4 x 8
// threads. Each operand keeps its stored layout in shared memory:
//   rows contiguous (A of tn, B of nn and tn): [BK][R], a thread's 8 rows two runs of 4, R/2 apart,
//     read as two float4 a k (4 distinct addresses a warp for A, 8 for B: one wavefront);
//   k contiguous (A of nn and nt, B of nt): [R][BK + 4], a thread's 8 rows t, t + R/8, ... (the
//     padding puts a warp's 4 or 8 consecutive rows in distinct banks), read as float2 pairs of k.
// Vectors are 16-byte copies where the operand's base and leading dimension are 4-element
// aligned, 4-byte copies otherwise; both zero-fill past the matrix's edge.
//
// Chunk partials run in registers; at each chunk's end they are folded into the f32 totals in
// shared memory (each thread owns its slots: no barrier), as in fma_warp_gemm. Which thread runs
// an element and how the loads are shaped never changes its reduction order, so the bits are
// fma_warp_gemm's.
#pragma once
#include <cstdint>
#include "common/element.cuh"
#include "common/epilogue.cuh"
#include "common/fma_chunks.cuh"
#include "common/operand_layout.cuh"
#include "common/timing_perturbation.cuh"
#include "tc/cp_async.cuh"

// One operand's stage: R rows (m or n) by BK k, in its stored layout (see above).
template <int R, int BK, bool kContiguousK, int kThreads>
struct fma_async_operand {
    static constexpr int kLd = kContiguousK ? BK + 4 : R;  // floats between rows (k-contiguous) or ks
    static constexpr int kFloats = kContiguousK ? R * kLd : BK * R;
    static constexpr int kT = R / 8;                       // threads along R
    static constexpr int kVecs = R * BK / 4;               // 16-byte vectors a stage
    static_assert(kVecs % kThreads == 0, "fma_async_operand: whole vectors a thread");

    // Where element i (0..7) of thread t's rows lies along R.
    __device__ __forceinline__ static int row(int t, int i) {
        return kContiguousK ? t + kT * i : (i < 4 ? 0 : R / 2) + t * 4 + (i & 3);
    }
    __device__ __forceinline__ static int at(int r, int kk) { return kContiguousK ? r * kLd + kk : kk * R + r; }

    // Copies vector v of the stage at k0: `base` is the operand at (row0, 0), `rows` its valid rows
    // from there, `ks` the valid k from k0, `vec` 16-byte copies allowed.
    __device__ __forceinline__ static void copy(float* stage, const float* base, int ld, int rows, int ks, int k0,
                                                bool vec, int v) {
        int r, kk;
        if (kContiguousK) { r = v / (BK / 4); kk = 4 * (v % (BK / 4)); } else { kk = v / (R / 4); r = 4 * (v % (R / 4)); }
        // Valid elements of the 4 from (r, kk) along the vector's direction.
        const int along = kContiguousK ? ks - kk : rows - r;
        const int valid = r < rows && kk < ks ? (along < 4 ? along : 4) : 0;
        const size_t off = kContiguousK ? (size_t)r * ld + k0 + kk : (size_t)(k0 + kk) * ld + r;
        const uint32_t dst = static_cast<uint32_t>(__cvta_generic_to_shared(stage + at(r, kk)));
        if (vec) {
            cp_async16_zfill(dst, valid > 0 ? base + off : base, 4 * valid);
        } else {
            // One element at a time: in both layouts the vector's 4 elements are adjacent in
            // memory and in the stage.
#pragma unroll
            for (int q = 0; q < 4; ++q) cp_async4_zfill(dst + 4 * q, q < valid ? base + off + q : base, q < valid ? 4 : 0);
        }
    }

    // Thread t's 8 values at k pair (kk, kk + 1).
    __device__ __forceinline__ static void pair(const float* s, int t, int kk, float (&v)[2][8]) {
        if (kContiguousK) {
#pragma unroll
            for (int i = 0; i < 8; ++i) {
                const float2 x = *reinterpret_cast<const float2*>(s + at(row(t, i), kk));
                v[0][i] = x.x;
                v[1][i] = x.y;
            }
        } else {
#pragma unroll
            for (int h = 0; h < 2; ++h) {
                const float4 x0 = *reinterpret_cast<const float4*>(s + at(row(t, 0), kk + h));
                const float4 x1 = *reinterpret_cast<const float4*>(s + at(row(t, 4), kk + h));
                v[h][0] = x0.x; v[h][1] = x0.y; v[h][2] = x0.z; v[h][3] = x0.w;
                v[h][4] = x1.x; v[h][5] = x1.y; v[h][6] = x1.z; v[h][7] = x1.w;
            }
        }
    }
};

template <typename TAB, typename TC, int OP, typename Cfg>
struct fma_warp_async {
    static_assert(sizeof(TAB) == 4, "fma_warp_async: operands are copied as stored, so they must be f32");
    static constexpr int BM = Cfg::M, BN = Cfg::N, BK = Cfg::K;
    static constexpr int kStages = Cfg::STAGES;
    static constexpr int kChunk = Cfg::kChunk;  // the contract's K chunk
    static constexpr int kThreads = Cfg::kThreads;
    using Layout = OperandLayout<OP>;
    using OpA = fma_async_operand<BM, BK, Layout::kAContiguousK, kThreads>;
    using OpB = fma_async_operand<BN, BK, Layout::kBContiguousK, kThreads>;
    // Each stage is carved for the padded layout of both operands, whatever the op, so that the
    // manifest's shared memory does not depend on the op.
    static constexpr int kSlotA = BM * (BK + 4), kSlotB = BN * (BK + 4);
    static constexpr int kStageFloats = kSlotA + kSlotB;

    // The layout against the numbers the generator delivers from the manifest
    // (fma/fma_warp_async.toml): 8 x 8 elements a thread in warps of 4 x 8 threads, STAGES stages
    // of A and B then the chunk totals, whole k-tiles a chunk, the tier's cap.
    static_assert(kThreads == (BM / 8) * (BN / 8) && (BN / 8) % 8 == 0 && BK % 4 == 0 &&
                      Cfg::kSharedBytes == (kStages * kStageFloats + BM * BN) * (int)sizeof(float) &&
                      Cfg::kSharedBytes <= Cfg::kMaxSharedBytes && kChunk % BK == 0 && kStages >= 2,
                  "fma_warp_async: its layout does not match the config the generator delivered");

    // Warps of 4 x 8 threads: this thread's place along n and m.
    __device__ __forceinline__ static int thread_x() { return ((threadIdx.x / 32) % (BN / 64)) * 8 + threadIdx.x % 32 % 8; }
    __device__ __forceinline__ static int thread_y() { return ((threadIdx.x / 32) / (BN / 64)) * 4 + threadIdx.x % 32 / 8; }

    // Issues the copies of k-tile `kt` into stage `s`, as one cp.async group (empty past the last
    // tile, so that every thread's group count stays in step with the tile index).
    template <typename Args>
    __device__ __forceinline__ static void issue(float* smem, const Args& p, const float* a, const float* b,
                                                 bool vec_a, bool vec_b, int rows_a, int rows_b, int kt, int tiles) {
        if (kt < tiles) {
            float* stage = smem + (kt % kStages) * kStageFloats;
            const int k0 = kt * BK, ks = p.k - k0;
#pragma unroll
            for (int l = 0; l < OpA::kVecs / kThreads; ++l)
                OpA::copy(stage, a, p.lda, rows_a, ks, k0, vec_a, threadIdx.x + l * kThreads);
#pragma unroll
            for (int l = 0; l < OpB::kVecs / kThreads; ++l)
                OpB::copy(stage + kSlotA, b, p.ldb, rows_b, ks, k0, vec_b, threadIdx.x + l * kThreads);
        }
        cp_async_commit_group();
    }

    // One k into the chain: one FMA per element.
    __device__ __forceinline__ static void fma_k(const float (&av)[8], const float (&bv)[8], float (&acc)[8][8]) {
#pragma unroll
        for (int i = 0; i < 8; ++i)
#pragma unroll
            for (int j = 0; j < 8; ++j) acc[i][j] = fmaf(av[i], bv[j], acc[i][j]);
    }

    // Args: the family's ABI struct (a, b, bias, c, m, n, k, lda, ldb, ldc, beta, flags).
    template <typename Args>
    __device__ static void run(const Args& p) {
        extern __shared__ __align__(16) float smem[];
        const int m0 = blockIdx.x * BM;
        const int n0 = blockIdx.y * BN;
        const int tx = thread_x(), ty = thread_y();
        const float* a0 = static_cast<const float*>(p.a);
        const float* b0 = static_cast<const float*>(p.b);
        // The block's operands at (m0, 0) and (0, n0) in the layout's terms: rows along m (n), k
        // from 0; `copy` adds k.
        const float* a = a0 + (Layout::kAContiguousK ? (size_t)m0 * p.lda : (size_t)m0);
        const float* b = b0 + (Layout::kBContiguousK ? (size_t)n0 * p.ldb : (size_t)n0);
        const bool vec_a = p.lda % 4 == 0 && reinterpret_cast<uintptr_t>(a0) % 16 == 0;
        const bool vec_b = p.ldb % 4 == 0 && reinterpret_cast<uintptr_t>(b0) % 16 == 0;
        const int rows_a = p.m - m0, rows_b = p.n - n0;

        float acc[8][8];
        float* totals = smem + kStages * kStageFloats;
#pragma unroll
        for (int i = 0; i < 8; ++i)
#pragma unroll
            for (int j = 0; j < 8; ++j) acc[i][j] = 0.0f;

        const int tiles = (p.k + BK - 1) / BK;
        constexpr int kTilesPerChunk = kChunk / BK;
#pragma unroll
        for (int s = 0; s < kStages - 1; ++s) issue(smem, p, a, b, vec_a, vec_b, rows_a, rows_b, s, tiles);

        for (int kt = 0; kt < tiles; ++kt) {
            // Tile kt's group is done for this thread; the barrier makes every thread's copies
            // visible and ends every read of the stage the next issue overwrites (tile kt - 1's).
            cp_async_wait_group<kStages - 2>();
            GEMM_PERTURB(kPerturbConsumerRead, kt);
            __syncthreads();
            GEMM_PERTURB(kPerturbProducerIssue, kt + kStages - 1);
            issue(smem, p, a, b, vec_a, vec_b, rows_a, rows_b, kt + kStages - 1, tiles);

            const float* As = smem + (kt % kStages) * kStageFloats;
            const float* Bs = As + kSlotA;
            const int kcount = min(BK, p.k - kt * BK);
            if (kcount == BK) {
#pragma unroll
                for (int kk = 0; kk < BK; kk += 2) {
                    float av[2][8], bv[2][8];
                    OpA::pair(As, ty, kk, av);
                    OpB::pair(Bs, tx, kk, bv);
                    fma_k(av[0], bv[0], acc);
                    fma_k(av[1], bv[1], acc);
                }
            } else {
                // K's last k-tile: only its valid k (past K the stage holds zeros, and a zero step
                // would still change -0.0 to +0.0).
                for (int kk = 0; kk < kcount; ++kk) {
                    float av[8], bv[8];
#pragma unroll
                    for (int i = 0; i < 8; ++i) {
                        av[i] = As[OpA::at(OpA::row(ty, i), kk)];
                        bv[i] = Bs[OpB::at(OpB::row(tx, i), kk)];
                    }
                    fma_k(av, bv, acc);
                }
            }
            if ((kt + 1) % kTilesPerChunk == 0 || kt + 1 == tiles) {
                const int chunk = kt / kTilesPerChunk;
#pragma unroll
                for (int i = 0; i < 8; ++i)
#pragma unroll
                    for (int j = 0; j < 8; ++j) {
                        float* s = totals + OpA::row(ty, i) * BN + OpB::row(tx, j);
                        *s = fma_chunk_fold(chunk, *s, acc[i][j]);
                        acc[i][j] = 0.0f;
                    }
            }
        }
        cp_async_wait_group<0>();

        GEMM_PERTURB(kPerturbEpilogue, 0);
#pragma unroll
        for (int i = 0; i < 8; ++i) {
            const int r = OpA::row(ty, i);
            const int m = m0 + r;
#pragma unroll
            for (int j = 0; j < 8; ++j) {
                const int c = OpB::row(tx, j);
                const int n = n0 + c;
                const float v = tiles > 0 ? totals[r * BN + c] : 0.0f;
                if (m < p.m && n < p.n) epilogue_store<TC>(v, m, n, p);
            }
        }
    }
};
