// Family `fmadecs`, contract `fma-k256` (see common/fma_chunks.cuh), for small m (decode),
// nn only (A stored [m, k], B stored [k, n]).
//
// Like fma_decode_gemm: a block covers Cfg::M rows and 32 columns, its Cfg::K_SPLIT warps
// reduce K chunks in parallel, and the chunk results are folded in ascending chunk order. The
// difference is how the operands arrive: each warp streams its chunk through Cfg::STAGES
// shared-memory stages, each a slice of kRows k-rows of B ([kRows][32]) and of A
// ([M][kRows]), copied with cp.async, so several stages per warp are in flight while the FMA
// chain consumes the oldest. Decode is bound by how many bytes of B are in flight (a register
// batch of loads kept too few) and by the instructions a slice costs: a slice wholly inside K, n
// and m with aligned operands is issued without per-piece checks, and A is read four k at a time
// (one 16-byte read a row for four FMA steps; the FMAs keep their order).
//
// Cfg::COPY_BYTES == 4 (f32 only): an operand whose address or leading dimension is off 16
// bytes (an odd vocabulary) is copied 4 bytes a lane, a slice row at a time, instead of element
// by element through registers; such a tile is a route's `unaligned` kernel, so the aligned
// tiles keep their code. The shared-memory layout and the FMA chain are the same.
#pragma once
#include "common/element.cuh"
#include "common/epilogue.cuh"
#include "common/fma_chunks.cuh"
#include "common/operand_layout.cuh"
#include "common/timing_perturbation.cuh"

template <typename TAB, typename TC, int OP, typename Cfg>
struct fma_decode_staged {
    static constexpr int BM = Cfg::M, BN = Cfg::N, KS = Cfg::K_SPLIT, S = Cfg::STAGES;
    static constexpr int kChunk = Cfg::kChunk;  // the contract's K chunk
    // k-rows of B in one slice: one per lane.
    static constexpr int kRows = 32;
    static constexpr int kThreads = Cfg::kThreads;
    static constexpr int kSliceElems = kRows * BN;
    static constexpr int kASliceElems = BM * kRows;
    static constexpr int kStageElems = kSliceElems + kASliceElems;
    static constexpr int kSharedBytes = Cfg::kSharedBytes;
    // 16-byte pieces of one slice row, and elements in a piece.
    static constexpr int kPieceElems = 16 / (int)sizeof(TAB);
    static constexpr int kRowPieces = BN / kPieceElems;
    // Operands off 16 bytes copied 4 bytes at a time (f32 elements only: 16-bit ones at odd
    // offsets cannot be).
    static constexpr bool kNarrow = Cfg::COPY_BYTES == 4 && sizeof(TAB) == 4;
    using Layout = OperandLayout<OP>;
    static_assert(Layout::kAContiguousK && !Layout::kBContiguousK, "fma_decode_staged: nn only (A [m][k], B [k][n])");

    // The layout against the numbers the generator delivers from the manifest
    // (fma/fma_decode_staged.toml): per warp S stages of a B slice and an A slice, then the
    // partials of every warp; whole slices a chunk, split evenly over the lanes; the tier's cap.
    static_assert(kThreads == BN * KS && BN == 32 &&
                      kSharedBytes == KS * S * kStageElems * (int)sizeof(TAB) + KS * BM * BN * (int)sizeof(float) &&
                      kSharedBytes <= Cfg::kMaxSharedBytes && kChunk % kRows == 0 && (kRows * kRowPieces) % 32 == 0,
                  "fma_decode_staged: its layout does not match the config the generator delivered");

    __device__ __forceinline__ static void cp_async16(void* smem, const void* gmem) {
        const unsigned s = static_cast<unsigned>(__cvta_generic_to_shared(smem));
        asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n" ::"r"(s), "l"(gmem) : "memory");
    }
    __device__ __forceinline__ static void cp_async4(void* smem, const void* gmem) {
        const unsigned s = static_cast<unsigned>(__cvta_generic_to_shared(smem));
        asm volatile("cp.async.ca.shared.global [%0], [%1], 4;\n" ::"r"(s), "l"(gmem) : "memory");
    }
    // "memory": the compiler must not move the plain shared-memory reads of a stage across the
    // wait (the __syncwarp after it also keeps them there).
    __device__ __forceinline__ static void cp_async_commit() { asm volatile("cp.async.commit_group;\n" ::: "memory"); }
    template <int N>
    __device__ __forceinline__ static void cp_async_wait() { asm volatile("cp.async.wait_group %0;\n" ::"n"(N) : "memory"); }

    // Copies one 16-byte piece by cp.async when it is aligned and wholly valid; otherwise
    // element by element through registers, invalid elements as zeros (never used).
    __device__ __forceinline__ static void copy_piece(TAB* d, const TAB* src, int valid) {
        if (valid == kPieceElems && (reinterpret_cast<size_t>(src) & 15) == 0) {
            cp_async16(d, src);
        } else {
#pragma unroll
            for (int e = 0; e < kPieceElems; ++e) d[e] = e < valid ? src[e] : from_f32<TAB>(0.0f);
        }
    }

    // Starts copying stage `s` of the chunk [k0, k1) into `dst`: the B slice [kRows][BN], then
    // the A slice [BM][kRows] (rows past k1, columns past n and rows past m become zeros).
    // `vec_a` / `vec_b`: every piece of the operand starts on a copy width (16 bytes; 4 in a
    // kNarrow kernel, `wide_a` / `wide_b` saying whether 16): such a slice inside K (and n) is
    // copied without per-piece checks; A's rows past m are then not copied at all (they are
    // never read).
    template <typename Args>
    __device__ __forceinline__ static void issue_stage(TAB* dst, const TAB* a, const TAB* b, int s, int k0, int k1,
                                                       int m0, int j0, int lane, bool vec_a, bool vec_b,
                                                       const Args& p, bool wide_a, bool wide_b) {
        const int kr0 = k0 + s * kRows;
        constexpr int kAPieces = BM * kRows / kPieceElems;
        const bool whole_k = kr0 + kRows <= k1;
        if (whole_k && vec_b && j0 + BN <= p.n && vec_a) {
            // Lane l copies B pieces (row l / kRowPieces + i * kBRowsStep, column piece l % kRowPieces)
            // and A pieces (row l / kAPiecesRow + i * kARowsStep, piece l % kAPiecesRow): one
            // pointer each, advanced by whole rows (NN: B is [k][n], A is [m][k]).
            constexpr int kBRowsStep = 32 / kRowPieces, kAPiecesRow = kRows / kPieceElems, kARowsStep = 32 / kAPiecesRow;
            if (!kNarrow || wide_b) {
                const int brow = lane / kRowPieces, bcol = (lane % kRowPieces) * kPieceElems;
                const TAB* bl = b + Layout::b_index(kr0 + brow, j0 + bcol, p.ldb);
                const size_t bstep = (size_t)kBRowsStep * p.ldb;
#pragma unroll
                for (int i = 0; i < kRows / kBRowsStep; ++i)
                    cp_async16(dst + (brow + i * kBRowsStep) * BN + bcol, bl + i * bstep);
            } else if constexpr (kNarrow) {
                // Lane l copies column j0 + l of each of the slice's k-rows: 128 bytes a row, one
                // pointer advanced a row at a time (a partial unroll: 32 addresses held at once spill).
                const TAB* bl = b + Layout::b_index(kr0, j0 + lane, p.ldb);
#pragma unroll 8
                for (int i = 0; i < kRows; ++i) {
                    cp_async4(dst + i * BN + lane, bl);
                    bl += p.ldb;
                }
            }
            if (!kNarrow || wide_a) {
                const int arow = lane / kAPiecesRow, au = (lane % kAPiecesRow) * kPieceElems;
                const TAB* al = a + Layout::a_index(m0 + arow, kr0 + au, p.lda);
                const size_t astep = (size_t)kARowsStep * p.lda;
#pragma unroll
                for (int i = 0; i < (BM + kARowsStep - 1) / kARowsStep; ++i) {
                    const int r = arow + i * kARowsStep;
                    if (r < BM && m0 + r < p.m) cp_async16(dst + kSliceElems + r * kRows + au, al + i * astep);
                }
            } else if constexpr (kNarrow) {
                // Lane l copies k = kr0 + l of each of the block's rows.
                const TAB* al = a + Layout::a_index(m0, kr0 + lane, p.lda);
#pragma unroll
                for (int r = 0; r < BM; ++r)
                    if (m0 + r < p.m) cp_async4(dst + kSliceElems + r * kRows + lane, al + (size_t)r * p.lda);
            }
            cp_async_commit();
            return;
        }
#pragma unroll
        for (int i = 0; i < kRows * kRowPieces / 32; ++i) {
            const int q = lane + 32 * i;
            const int row = q / kRowPieces;
            const int col = (q % kRowPieces) * kPieceElems;
            const int k = kr0 + row;
            const int valid = k < k1 ? min(kPieceElems, p.n - (j0 + col)) : 0;
            copy_piece(dst + row * BN + col, b + Layout::b_index(k, j0 + col, p.ldb), valid);
        }
#pragma unroll
        for (int i = 0; i < (kAPieces + 31) / 32; ++i) {
            const int q = lane + 32 * i;
            if (q < kAPieces) {
                const int r = q / (kRows / kPieceElems);
                const int u = (q % (kRows / kPieceElems)) * kPieceElems;
                const int valid = m0 + r < p.m ? min(kPieceElems, k1 - (kr0 + u)) : 0;
                copy_piece(dst + kSliceElems + r * kRows + u, a + Layout::a_index(m0 + r, kr0 + u, p.lda), valid);
            }
        }
        cp_async_commit();
    }

    // Whether an operand at `x` with leading dimension `ld` has every row start on `B` bytes.
    template <int B>
    __device__ __forceinline__ static bool aligned_to(const TAB* x, int ld) {
        return (reinterpret_cast<size_t>(x) & (B - 1)) == 0 && (size_t)ld * sizeof(TAB) % B == 0;
    }

    // A at (row, u .. u + 3) of a slice as f32: one 16-byte read (8 for 16-bit A); u % 4 == 0.
    __device__ __forceinline__ static float4 a4(const TAB* sa, int r, int u) {
        if constexpr (sizeof(TAB) == 4) {
            return *reinterpret_cast<const float4*>(sa + r * kRows + u);
        } else {
            const uint2 raw = *reinterpret_cast<const uint2*>(sa + r * kRows + u);
            const TAB* h = reinterpret_cast<const TAB*>(&raw);
            return make_float4(to_f32(h[0]), to_f32(h[1]), to_f32(h[2]), to_f32(h[3]));
        }
    }
    __device__ __forceinline__ static float lane_of(const float4& v, int q) {
        return q == 0 ? v.x : q == 1 ? v.y : q == 2 ? v.z : v.w;
    }

    // Chunk c's chain into `part` (zeros on entry): the block's rows at column j0 + lane, k
    // ascending, streamed through this warp's S stages at `mine`. Shared with fma_decode_split.
    template <typename Args>
    __device__ __forceinline__ static void run_chunk(float (&part)[BM], TAB* mine, const TAB* a, const TAB* b, int c,
                                                     int m0, int j0, int lane, int rows, bool vec_a, bool vec_b,
                                                     const Args& p, bool wide_a = true, bool wide_b = true) {
        const int k0 = c * kChunk;
        const int k1 = min(k0 + kChunk, p.k);
        const int nslices = (k1 - k0 + kRows - 1) / kRows;
        // Prologue: S - 1 stages in flight. Every issue commits a group (empty past
        // the last slice), so "at most S - 1 groups pending" means slice s arrived.
#pragma unroll
        for (int s = 0; s < S - 1; ++s) {
            GEMM_PERTURB(kPerturbProducerIssue, s);
            if (s < nslices) issue_stage(mine + s * kStageElems, a, b, s, k0, k1, m0, j0, lane, vec_a, vec_b, p, wide_a, wide_b);
            else cp_async_commit();
        }
        for (int s = 0; s < nslices; ++s) {
            const int next = s + S - 1;
            GEMM_PERTURB(kPerturbProducerIssue, next);
            if (next < nslices) issue_stage(mine + (next % S) * kStageElems, a, b, next, k0, k1, m0, j0, lane, vec_a, vec_b, p, wide_a, wide_b);
            else cp_async_commit();
            GEMM_PERTURB(kPerturbConsumerWait, s);
            cp_async_wait<S - 1>();
            __syncwarp();
            GEMM_PERTURB(kPerturbConsumerRead, s);
            const TAB* slice = mine + (s % S) * kStageElems;
            const TAB* sa = slice + kSliceElems;
            const int kb = k0 + s * kRows;
            if (kb + kRows <= k1) {
#pragma unroll
                for (int u = 0; u < kRows; u += 4) {
                    float4 av[BM];
#pragma unroll
                    for (int r = 0; r < BM; ++r) av[r] = r < rows ? a4(sa, r, u) : make_float4(0.f, 0.f, 0.f, 0.f);
#pragma unroll
                    for (int q = 0; q < 4; ++q) {
                        const float bv = to_f32(slice[(u + q) * BN + lane]);
#pragma unroll
                        for (int r = 0; r < BM; ++r)
                            if (r < rows) part[r] = fmaf(lane_of(av[r], q), bv, part[r]);
                    }
                }
            } else {
                for (int u = 0; u < k1 - kb; ++u) {
                    const float bv = to_f32(slice[u * BN + lane]);
#pragma unroll
                    for (int r = 0; r < BM; ++r)
                        if (r < rows) part[r] = fmaf(to_f32(sa[r * kRows + u]), bv, part[r]);
                }
            }
            // Every lane is done with slice s before the next issue overwrites it.
            GEMM_PERTURB(kPerturbConsumerRelease, s);
            __syncwarp();
        }
        cp_async_wait<0>();
    }

    template <typename Args>
    __device__ static void run(const Args& p) {
        extern __shared__ __align__(16) unsigned char shared_raw[];
        TAB* stages = reinterpret_cast<TAB*>(shared_raw);  // [KS][S] x (B [kRows][BN], A [BM][kRows])
        float* partials = reinterpret_cast<float*>(shared_raw + KS * S * kStageElems * sizeof(TAB));  // [KS][BM][BN]
        const TAB* a = static_cast<const TAB*>(p.a);
        const TAB* b = static_cast<const TAB*>(p.b);
        const int lane = threadIdx.x % BN;
        const int warp = threadIdx.x / BN;
        const int m0 = blockIdx.x * BM;
        const int j0 = blockIdx.y * BN;
        const int j = j0 + lane;
        const int rows = min(BM, p.m - m0);
        const bool col_ok = j < p.n;
        const int chunks = fma_chunk_count<kChunk>(p.k);
        const int rounds = (chunks + KS - 1) / KS;
        TAB* mine = stages + warp * S * kStageElems;
        const int fr = threadIdx.x / BN;
        const bool wide_a = aligned_to<16>(a, p.lda), wide_b = aligned_to<16>(b, p.ldb);
        const bool vec_a = wide_a || (kNarrow && aligned_to<4>(a, p.lda));
        const bool vec_b = wide_b || (kNarrow && aligned_to<4>(b, p.ldb));
        float total = 0.0f;

        for (int round = 0; round < rounds; ++round) {
            const int c = round * KS + warp;
            float part[BM];
#pragma unroll
            for (int r = 0; r < BM; ++r) part[r] = 0.0f;
            if (c < chunks) run_chunk(part, mine, a, b, c, m0, j0, lane, rows, vec_a, vec_b, p, wide_a, wide_b);
            total = fma_fold_round<BM, BN, KS>(partials, part, warp, lane, fr, round, chunks, total);
        }
        if (fr < rows && col_ok) epilogue_store<TC>(total, m0 + fr, j, p);
    }
};
