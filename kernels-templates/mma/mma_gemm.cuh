// Kind `mma_gemm` (any shape) of the tensor-core policy, contract tc-k16 (docs/tensor-core.md §1):
// the slow path that takes what TMA cannot (unaligned bases, any lda / ldb / ldc, k = 0).
//
// A CTA computes Cfg::M x Cfg::N of C (grid (ceil(m / M), ceil(n / N))). Each K step, the block
// loads A (M x K) and B (K x N) with plain predicated element loads (zeros past m, n and k) into
// shared memory, both stored k-contiguous ([M][K + 8] and [N][K + 8] 16-bit elements, the 8 of
// padding keep the fragment reads free of bank conflicts); with STAGES = 2 the next step's loads
// are in flight in registers while this step computes. WARPS_M x WARPS_N warps each own a
// (M / WARPS_M) x (N / WARPS_N) block of m16n8 fragments and run mma.sync m16n8k16 over the
// step's k16 slices in ascending order. Every output element is one f32 accumulator from +0 over
// the k16 steps in ascending order, the last padded with zeros; k = 0 leaves it +0 and runs the
// epilogue alone. Same bits as wgmma_tma_gemm and mma_decode_tma.
//
// Launch: kThreads threads, dynamic shared memory
//   kSharedBytes = (M + N) * (K + 8) * sizeof(TAB).
#pragma once
#include <cstdint>
#include "common/element.cuh"
#include "common/epilogue.cuh"
#include "common/operand_layout.cuh"
#include "common/tc_config.cuh"
#include "tc/mma_sync.cuh"
#include "tc/tc_epilogue.cuh"

template <typename TAB, typename TC, int OP, typename Cfg>
struct mma_gemm {
    static constexpr int BM = Cfg::M, BN = Cfg::N, BK = Cfg::K, kStages = Cfg::STAGES;
    static constexpr int kWarpsM = Cfg::WARPS_M, kWarpsN = Cfg::WARPS_N;
    static constexpr int WM = BM / kWarpsM, WN = BN / kWarpsN;  // per-warp block
    static constexpr int MI = WM / 16, NI = WN / 8;              // fragments per warp
    static constexpr int kThreads = 32 * kWarpsM * kWarpsN;
    static constexpr int kClusterM = 1;
    static constexpr int kLd = BK + 8;  // shared row length in elements
    static constexpr int kSharedBytes = (BM + BN) * kLd * (int)sizeof(TAB);
    static constexpr int kLoadsA = (BM * BK + kThreads - 1) / kThreads;
    static constexpr int kLoadsB = (BK * BN + kThreads - 1) / kThreads;
    using Layout = OperandLayout<OP>;

    static_assert(__is_same(TAB, __nv_bfloat16) || __is_same(TAB, __half),
                  "mma_gemm: TAB must be __nv_bfloat16 or __half (tf32 has its own contract)");
    static_assert(__is_same(TC, __nv_bfloat16) || __is_same(TC, __half) || __is_same(TC, float),
                  "mma_gemm: TC must be __nv_bfloat16, __half or float");
    static_assert(OP == kOpNN || OP == kOpNT || OP == kOpTN, "mma_gemm: OP must be kOpNN, kOpNT or kOpTN");
    static_assert(BK % 16 == 0, "mma_gemm: tile k must be a multiple of 16 (whole k16 steps)");
    static_assert(BM % kWarpsM == 0 && WM % 16 == 0, "mma_gemm: tile m / warps_m must be a multiple of 16");
    static_assert(BN % kWarpsN == 0 && WN % 8 == 0, "mma_gemm: tile n / warps_n must be a multiple of 8");
    static_assert(kThreads <= 1024, "mma_gemm: at most 1024 threads (warps_m * warps_n <= 32)");
    static_assert(kStages == 1 || kStages == 2, "mma_gemm: stages must be 1 or 2");
    static_assert(kSharedBytes <= 232448, "mma_gemm: shared memory exceeds the 227 KiB a CTA can have on sm_90");

    // Element e of a step, placed so that consecutive threads read consecutive addresses.
    __device__ __forceinline__ static void a_coord(int e, int& i, int& kk) {
        if (Layout::kAContiguousK) { i = e / BK; kk = e % BK; } else { kk = e / BM; i = e % BM; }
    }
    __device__ __forceinline__ static void b_coord(int e, int& kk, int& j) {
        if (Layout::kBContiguousK) { j = e / BK; kk = e % BK; } else { kk = e / BN; j = e % BN; }
    }

    template <class Args>
    __device__ __forceinline__ static void load(const Args& p, int m0, int n0, int k0, uint16_t (&ra)[kLoadsA],
                                                uint16_t (&rb)[kLoadsB]) {
        const uint16_t* a = static_cast<const uint16_t*>(p.a);
        const uint16_t* b = static_cast<const uint16_t*>(p.b);
#pragma unroll
        for (int l = 0; l < kLoadsA; ++l) {
            int e = threadIdx.x + l * kThreads, i, kk;
            a_coord(e, i, kk);
            const bool ok = e < BM * BK && m0 + i < p.m && k0 + kk < p.k;
            ra[l] = ok ? a[Layout::a_index(m0 + i, k0 + kk, p.lda)] : (uint16_t)0;  // +0 past m and k
        }
#pragma unroll
        for (int l = 0; l < kLoadsB; ++l) {
            int e = threadIdx.x + l * kThreads, kk, j;
            b_coord(e, kk, j);
            const bool ok = e < BK * BN && n0 + j < p.n && k0 + kk < p.k;
            rb[l] = ok ? b[Layout::b_index(k0 + kk, n0 + j, p.ldb)] : (uint16_t)0;  // +0 past n and k
        }
    }
    __device__ __forceinline__ static void store(uint16_t* As, uint16_t* Bs, const uint16_t (&ra)[kLoadsA],
                                                 const uint16_t (&rb)[kLoadsB]) {
#pragma unroll
        for (int l = 0; l < kLoadsA; ++l) {
            int e = threadIdx.x + l * kThreads, i, kk;
            a_coord(e, i, kk);
            if (e < BM * BK) As[i * kLd + kk] = ra[l];
        }
#pragma unroll
        for (int l = 0; l < kLoadsB; ++l) {
            int e = threadIdx.x + l * kThreads, kk, j;
            b_coord(e, kk, j);
            if (e < BK * BN) Bs[j * kLd + kk] = rb[l];
        }
    }

    template <class Args>
    __device__ static void run(const Args& p) {
        extern __shared__ __align__(1024) uint8_t tc_smem_raw[];
        uint16_t* As = reinterpret_cast<uint16_t*>(tc_smem_raw);
        uint16_t* Bs = As + BM * kLd;
        const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
        const int wm = warp / kWarpsN, wn = warp % kWarpsN;
        const int g = lane / 4, q = lane % 4;
        const int m0 = blockIdx.x * BM, n0 = blockIdx.y * BN;
        const int nk = (p.k + BK - 1) / BK;

        float acc[MI][NI][4];
#pragma unroll
        for (int i = 0; i < MI; ++i)
#pragma unroll
            for (int j = 0; j < NI; ++j)
#pragma unroll
                for (int r = 0; r < 4; ++r) acc[i][j][r] = 0.0f;

        uint16_t ra[kLoadsA], rb[kLoadsB];
        if (nk > 0) load(p, m0, n0, 0, ra, rb);
        for (int kb = 0; kb < nk; ++kb) {
            __syncthreads();  // everyone is done reading the previous step
            store(As, Bs, ra, rb);
            __syncthreads();
            if (kStages == 2 && kb + 1 < nk) load(p, m0, n0, (kb + 1) * BK, ra, rb);
#pragma unroll
            for (int ks = 0; ks < BK / 16; ++ks) {  // ascending k16 steps
                const int kc = ks * 16 + 2 * q;
                uint32_t af[MI][4], bf[NI][2];
#pragma unroll
                for (int i = 0; i < MI; ++i) {
                    const uint16_t* r0 = As + (wm * WM + i * 16 + g) * kLd + kc;
                    const uint16_t* r1 = r0 + 8 * kLd;
                    af[i][0] = *reinterpret_cast<const uint32_t*>(r0);
                    af[i][1] = *reinterpret_cast<const uint32_t*>(r1);
                    af[i][2] = *reinterpret_cast<const uint32_t*>(r0 + 8);
                    af[i][3] = *reinterpret_cast<const uint32_t*>(r1 + 8);
                }
#pragma unroll
                for (int j = 0; j < NI; ++j) {
                    const uint16_t* r = Bs + (wn * WN + j * 8 + g) * kLd + kc;
                    bf[j][0] = *reinterpret_cast<const uint32_t*>(r);
                    bf[j][1] = *reinterpret_cast<const uint32_t*>(r + 8);
                }
#pragma unroll
                for (int i = 0; i < MI; ++i)
#pragma unroll
                    for (int j = 0; j < NI; ++j)
                        mma_m16n8k16<TAB>(acc[i][j], af[i][0], af[i][1], af[i][2], af[i][3], bf[j][0], bf[j][1]);
            }
            if (kStages == 1 && kb + 1 < nk) load(p, m0, n0, (kb + 1) * BK, ra, rb);
        }

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
