// Kind `mma_gemm` (any shape) of the tensor-core policy, contract tc-k16 for bf16 / f16 operands
// and tc-tf32-k8 for f32 operands (docs/tensor-core.md §1, §7): the slow path that takes what TMA
// cannot (unaligned bases, any lda / ldb / ldc, k = 0), and the TF32 kernels.
//
// A CTA computes Cfg::M x Cfg::N of C (grid (ceil(m / M), ceil(n / N))). Each K step, the block
// loads A (M x K) and B (K x N) with plain predicated element loads (zeros past m, n and k) into
// shared memory, both stored k-contiguous ([M][K + P] and [N][K + P] elements, P = 16 bytes of
// padding that keep the fragment reads free of bank conflicts); with STAGES = 2 the next step's
// loads are in flight in registers while this step computes. WARPS_M x WARPS_N warps each own a
// (M / WARPS_M) x (N / WARPS_N) block of m16n8 fragments and run mma.sync over the step's k16
// (half) or k8 (tf32: each f32 truncated to TF32, bits & 0xffffe000, as it is stored) slices in
// ascending order. Every output element is one f32 accumulator from +0 over those steps in
// ascending order, the last padded with zeros; k = 0 leaves it +0 and runs the epilogue alone.
// Same bits as wgmma_tma_gemm and mma_decode_tma for half operands. Under a chunked contract
// (Cfg::kChunk > 0, tc-k16-c512) the accumulators restart from +0 every kChunk k and a second
// set folds the chunks from +0 in ascending order, as those kernels do.
//
// A batch kernel (manifest `batch`, listed by its tier, Cfg::kBatch): grid z walks the entries of a strided batch; entry z's operands sit
// its batch strides past entry 0's (tc/batch_entry.cuh), and it runs as the one GEMM would.
//
// Launch (from the manifest): kThreads threads, dynamic shared memory
//   kSharedBytes = (M + N) * (K * sizeof(TAB) + 16).
#pragma once
#include <cstdint>
#include <type_traits>
#include "common/element.cuh"
#include "common/epilogue.cuh"
#include "common/operand_layout.cuh"
#include "common/timing_perturbation.cuh"
#include "tc/batch_entry.cuh"
#include "tc/chunk_fold.cuh"
#include "tc/mma_sync.cuh"
#include "tc/tc_epilogue.cuh"

template <typename TAB, typename TC, int OP, typename Cfg>
struct mma_gemm {
    static constexpr int BM = Cfg::M, BN = Cfg::N, BK = Cfg::K, kStages = Cfg::STAGES;
    static constexpr int kWarpsM = Cfg::WARPS_M, kWarpsN = Cfg::WARPS_N;
    static constexpr int WM = BM / kWarpsM, WN = BN / kWarpsN;  // per-warp block
    static constexpr int MI = WM / 16, NI = WN / 8;              // fragments per warp
    static constexpr int kThreads = Cfg::kThreads;
    static constexpr bool kTf32 = sizeof(TAB) == 4;  // f32 operands: contract tc-tf32-k8
    static constexpr int kStepK = Cfg::kStepK;       // k of one mma.sync: the contract's step
    static constexpr int kChunk = Cfg::kChunk;       // 0: one chain over K
    static constexpr int kChunkSteps = kChunk > 0 ? kChunk / BK : 1;
    using Raw = typename std::conditional<kTf32, uint32_t, uint16_t>::type;  // an element's bits
    static constexpr int kLd = BK + 16 / (int)sizeof(TAB);  // shared row length in elements (16 bytes of padding)
    static constexpr int kSharedBytes = Cfg::kSharedBytes;
    static constexpr int kLoadsA = (BM * BK + kThreads - 1) / kThreads;
    static constexpr int kLoadsB = (BK * BN + kThreads - 1) / kThreads;
    using Layout = OperandLayout<OP>;

    // The layout against the numbers the generator delivers from the manifest
    // (mma/mma_gemm.toml): both operands k-contiguous in padded rows, one warp per fragment
    // block, whole k16 steps (k8 steps of TF32 for f32 operands), the tier's cap.
    static_assert(kSharedBytes == (BM + BN) * kLd * (int)sizeof(TAB) && kSharedBytes <= Cfg::kMaxSharedBytes &&
                      kThreads == 32 * kWarpsM * kWarpsN && MI * 16 * kWarpsM == BM && NI * 8 * kWarpsN == BN &&
                      kStepK == (kTf32 ? 8 : 16) && BK % 16 == 0 && kChunk % BK == 0,
                  "mma_gemm: its layout does not match the config the generator delivered");

    // Element e of a step, placed so that consecutive threads read consecutive addresses.
    __device__ __forceinline__ static void a_coord(int e, int& i, int& kk) {
        if (Layout::kAContiguousK) { i = e / BK; kk = e % BK; } else { kk = e / BM; i = e % BM; }
    }
    __device__ __forceinline__ static void b_coord(int e, int& kk, int& j) {
        if (Layout::kBContiguousK) { j = e / BK; kk = e % BK; } else { kk = e / BN; j = e % BN; }
    }

    template <class Args>
    __device__ __forceinline__ static void load(const Args& p, int m0, int n0, int k0, Raw (&ra)[kLoadsA],
                                                Raw (&rb)[kLoadsB]) {
        const Raw* a = static_cast<const Raw*>(p.a);
        const Raw* b = static_cast<const Raw*>(p.b);
#pragma unroll
        for (int l = 0; l < kLoadsA; ++l) {
            int e = threadIdx.x + l * kThreads, i, kk;
            a_coord(e, i, kk);
            const bool ok = e < BM * BK && m0 + i < p.m && k0 + kk < p.k;
            ra[l] = ok ? a[Layout::a_index(m0 + i, k0 + kk, p.lda)] : (Raw)0;  // +0 past m and k
        }
#pragma unroll
        for (int l = 0; l < kLoadsB; ++l) {
            int e = threadIdx.x + l * kThreads, kk, j;
            b_coord(e, kk, j);
            const bool ok = e < BK * BN && n0 + j < p.n && k0 + kk < p.k;
            rb[l] = ok ? b[Layout::b_index(k0 + kk, n0 + j, p.ldb)] : (Raw)0;  // +0 past n and k
        }
    }
    // TF32 truncation of contract tc-tf32-k8: the low 13 mantissa bits cleared.
    __device__ __forceinline__ static Raw operand_bits(Raw x) {
        if constexpr (kTf32) return tf32_bits(x);
        else return x;
    }
    __device__ __forceinline__ static void store(Raw* As, Raw* Bs, const Raw (&ra)[kLoadsA],
                                                 const Raw (&rb)[kLoadsB]) {
#pragma unroll
        for (int l = 0; l < kLoadsA; ++l) {
            int e = threadIdx.x + l * kThreads, i, kk;
            a_coord(e, i, kk);
            if (e < BM * BK) As[i * kLd + kk] = operand_bits(ra[l]);
        }
#pragma unroll
        for (int l = 0; l < kLoadsB; ++l) {
            int e = threadIdx.x + l * kThreads, kk, j;
            b_coord(e, kk, j);
            if (e < BK * BN) Bs[j * kLd + kk] = operand_bits(rb[l]);
        }
    }

    // One shared step of half operands: k16 slices in ascending order.
    __device__ __forceinline__ static void compute_half(const Raw* As, const Raw* Bs, int wm, int wn, int g, int q,
                                                        float (&acc)[MI][NI][4]) {
#pragma unroll
        for (int ks = 0; ks < BK / 16; ++ks) {  // ascending k16 steps
            const int kc = ks * 16 + 2 * q;
            uint32_t af[MI][4], bf[NI][2];
#pragma unroll
            for (int i = 0; i < MI; ++i) {
                const Raw* r0 = As + (wm * WM + i * 16 + g) * kLd + kc;
                const Raw* r1 = r0 + 8 * kLd;
                af[i][0] = *reinterpret_cast<const uint32_t*>(r0);
                af[i][1] = *reinterpret_cast<const uint32_t*>(r1);
                af[i][2] = *reinterpret_cast<const uint32_t*>(r0 + 8);
                af[i][3] = *reinterpret_cast<const uint32_t*>(r1 + 8);
            }
#pragma unroll
            for (int j = 0; j < NI; ++j) {
                const Raw* r = Bs + (wn * WN + j * 8 + g) * kLd + kc;
                bf[j][0] = *reinterpret_cast<const uint32_t*>(r);
                bf[j][1] = *reinterpret_cast<const uint32_t*>(r + 8);
            }
#pragma unroll
            for (int i = 0; i < MI; ++i)
#pragma unroll
                for (int j = 0; j < NI; ++j)
                    mma_m16n8k16<TAB>(acc[i][j], af[i][0], af[i][1], af[i][2], af[i][3], bf[j][0], bf[j][1]);
        }
    }
    // One shared step of TF32 operands (already truncated): k8 slices in ascending order.
    // Fragments (PTX ISA, m16n8k8 .tf32): a0 (g, q), a1 (g+8, q), a2 (g, q+4), a3 (g+8, q+4);
    // b0 (k q, n g), b1 (k q+4, n g).
    __device__ __forceinline__ static void compute_tf32(const Raw* As, const Raw* Bs, int wm, int wn, int g, int q,
                                                        float (&acc)[MI][NI][4]) {
#pragma unroll
        for (int ks = 0; ks < BK / 8; ++ks) {  // ascending k8 steps
            const int kc = ks * 8 + q;
            uint32_t af[MI][4], bf[NI][2];
#pragma unroll
            for (int i = 0; i < MI; ++i) {
                const Raw* r0 = As + (wm * WM + i * 16 + g) * kLd + kc;
                const Raw* r1 = r0 + 8 * kLd;
                af[i][0] = r0[0];
                af[i][1] = r1[0];
                af[i][2] = r0[4];
                af[i][3] = r1[4];
            }
#pragma unroll
            for (int j = 0; j < NI; ++j) {
                const Raw* r = Bs + (wn * WN + j * 8 + g) * kLd + kc;
                bf[j][0] = r[0];
                bf[j][1] = r[4];
            }
#pragma unroll
            for (int i = 0; i < MI; ++i)
#pragma unroll
                for (int j = 0; j < NI; ++j)
                    mma_m16n8k8_tf32(acc[i][j], af[i][0], af[i][1], af[i][2], af[i][3], bf[j][0], bf[j][1]);
        }
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
        Raw* As = reinterpret_cast<Raw*>(tc_smem_raw);
        Raw* Bs = As + BM * kLd;
        const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
        const int wm = warp / kWarpsN, wn = warp % kWarpsN;
        const int g = lane / 4, q = lane % 4;
        const int m0 = blockIdx.x * BM, n0 = blockIdx.y * BN;
        const int nk = (p.k + BK - 1) / BK;

        float acc[MI][NI][4];
        tc_zero_fragments(acc);

        float fold[MI][NI][4];  // the chunks folded so far (chunked contract; unused otherwise)
        tc_zero_fragments(fold);
        Raw ra[kLoadsA], rb[kLoadsB];
        if (nk > 0) load(p, m0, n0, 0, ra, rb);
        for (int kb = 0; kb < nk; ++kb) {
            GEMM_PERTURB(kPerturbProducerAcquire, kb);
            __syncthreads();  // everyone is done reading the previous step
            GEMM_PERTURB(kPerturbProducerIssue, kb);
            store(As, Bs, ra, rb);
            __syncthreads();
            GEMM_PERTURB(kPerturbConsumerRead, kb);
            if (kStages == 2 && kb + 1 < nk) load(p, m0, n0, (kb + 1) * BK, ra, rb);
            if constexpr (kTf32) compute_tf32(As, Bs, wm, wn, g, q, acc);
            else compute_half(As, Bs, wm, wn, g, q, acc);
            if (kStages == 1 && kb + 1 < nk) load(p, m0, n0, (kb + 1) * BK, ra, rb);
            if constexpr (kChunk > 0) {
                if ((kb + 1) % kChunkSteps == 0 || kb + 1 == nk) tc_fold_chunk(fold, acc);  // a chunk ends
            }
        }
        if constexpr (kChunk > 0) tc_take_fold(acc, fold);

        GEMM_PERTURB(kPerturbEpilogue, 0);
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
