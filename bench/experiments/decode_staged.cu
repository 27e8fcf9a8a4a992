// Experiment, two rounds on 2026-11-29 (logs in bench/results/2026-11-29-h200-experiments/):
// decode_staged.log ran when fma_decode_staged staged B only; decode_staged_a.log added
// `decode_staged_a` below (A staged with B), which fma_decode_staged has become since, so a
// rerun measures the two alike. The register-batch decode kernel (fma_decode_gemm) against
// fma_decode_staged (cp.async shared-memory stages) at several stage counts, for m = 1, 4, 8, 16 and the bench's (n, k), f32 and bf16 NN. Every staged output
// must equal the shipped kernel's bit for bit (same contract); prints GB/s of operands.
// Build (from the repository root, with the generated gemm_abi.h in INC):
//   nvcc -O3 -std=c++17 -arch=sm_90a -I kernels-templates -I $INC bench/experiments/decode_staged.cu
#include <cuda_runtime.h>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>
#include <algorithm>
#include "gemm_abi.h"
#include "fma/fma_decode_gemm.cuh"
#include "fma/fma_decode_staged.cuh"

// Variant: A staged with B (each stage also holds A[m0..m0+BM, slice] as [BM][32]).
template <typename TAB, typename TC, int OP, typename Tile>
struct decode_staged_a {
    static constexpr int BM = Tile::M, BN = Tile::N, KS = Tile::K_SPLIT, S = Tile::STAGES;
    // k-rows of B in one slice: one per lane.
    static constexpr int kRows = 32;
    static constexpr int kThreads = BN * KS;
    static constexpr int kSliceElems = kRows * BN;
    static constexpr int kASliceElems = BM * kRows;
    static constexpr int kStageElems = kSliceElems + kASliceElems;
    static constexpr int kSharedBytes =
        KS * S * kStageElems * (int)sizeof(TAB) + KS * BM * BN * (int)sizeof(float);
    // 16-byte pieces of one slice row, and elements in a piece.
    static constexpr int kPieceElems = 16 / (int)sizeof(TAB);
    static constexpr int kRowPieces = BN / kPieceElems;
    using Layout = OperandLayout<OP>;

    static_assert(OP == kOpNN, "experiment: nn only");
    static_assert(BN == 32 && Tile::THREAD_N == 1, "fma_decode_staged: a block is one warp (32 columns) wide");
    static_assert(Tile::THREAD_M == BM, "fma_decode_staged: each thread computes all of the block's rows");
    static_assert(Tile::K == kFmaChunk, "fma_decode_staged: tile k must equal the contract's chunk (256)");
    static_assert(kFmaChunk % kRows == 0, "fma_decode_staged: slices must divide the chunk");
    static_assert(S >= 2, "fma_decode_staged: at least two stages, one loading while one is read");
    static_assert(KS >= BM, "fma_decode_staged: k_split must be at least tile m (the fold uses one thread per element)");
    static_assert((kRows * kRowPieces) % 32 == 0, "fma_decode_staged: a slice must split evenly over the lanes");

    __device__ __forceinline__ static void cp_async16(void* smem, const void* gmem) {
        const unsigned s = static_cast<unsigned>(__cvta_generic_to_shared(smem));
        asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n" ::"r"(s), "l"(gmem));
    }
    __device__ __forceinline__ static void cp_async_commit() { asm volatile("cp.async.commit_group;\n" ::); }
    template <int N>
    __device__ __forceinline__ static void cp_async_wait() { asm volatile("cp.async.wait_group %0;\n" ::"n"(N)); }

    // Starts copying slice `s` of the chunk [k0, k1) into `dst`. A 16-byte piece goes by
    // cp.async when it is aligned and wholly inside B; otherwise element by element through
    // registers (rows past k1 and columns past n become zeros, and are never used).
    template <typename Args>
    __device__ __forceinline__ static void issue_slice(TAB* dst, const TAB* b, int s, int k0, int k1, int j0,
                                                       int lane, const Args& p, const TAB* a_, int m0_) {
        const int kr0 = k0 + s * kRows;
#pragma unroll
        for (int i = 0; i < kRows * kRowPieces / 32; ++i) {
            const int q = lane + 32 * i;
            const int row = q / kRowPieces;
            const int col = (q % kRowPieces) * kPieceElems;
            TAB* d = dst + row * BN + col;
            const int k = kr0 + row;
            const TAB* src = b + Layout::b_index(k, j0 + col, p.ldb);
            const bool whole = k < k1 && j0 + col + kPieceElems <= p.n;
            if (whole && (reinterpret_cast<size_t>(src) & 15) == 0) {
                cp_async16(d, src);
            } else {
#pragma unroll
                for (int e = 0; e < kPieceElems; ++e)
                    d[e] = (k < k1 && j0 + col + e < p.n) ? src[e] : from_f32<TAB>(0.0f);
            }
        }
        // A slice [BM][kRows] (nn: rows of A are k-contiguous).
        TAB* da = dst + kSliceElems;
        constexpr int kAPieces = BM * kRows / kPieceElems;
#pragma unroll
        for (int i = 0; i < (kAPieces + 31) / 32; ++i) {
            const int q = lane + 32 * i;
            if (q < kAPieces) {
                const int r = q / (kRows / kPieceElems);
                const int u0 = (q % (kRows / kPieceElems)) * kPieceElems;
                TAB* d = da + r * kRows + u0;
                const int mr = m0_ + r;
                const TAB* src = a_ + (size_t)mr * p.lda + kr0 + u0;
                const bool whole = mr < p.m && kr0 + u0 + kPieceElems <= k1;
                if (whole && (reinterpret_cast<size_t>(src) & 15) == 0) {
                    cp_async16(d, src);
                } else {
#pragma unroll
                    for (int e = 0; e < kPieceElems; ++e)
                        d[e] = (mr < p.m && kr0 + u0 + e < k1) ? src[e] : from_f32<TAB>(0.0f);
                }
            }
        }
        cp_async_commit();
    }

    template <typename Args>
    __device__ static void run(const Args& p) {
        extern __shared__ __align__(16) unsigned char shared_raw[];
        TAB* slices = reinterpret_cast<TAB*>(shared_raw);                                          // [KS][S][kRows][BN]
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
        const int chunks = fma_chunk_count(p.k);
        const int rounds = (chunks + KS - 1) / KS;
        TAB* mine = slices + warp * S * kStageElems;
        const int fr = threadIdx.x / BN;
        float total = 0.0f;

        for (int round = 0; round < rounds; ++round) {
            const int c = round * KS + warp;
            float part[BM];
#pragma unroll
            for (int r = 0; r < BM; ++r) part[r] = 0.0f;
            if (c < chunks) {
                const int k0 = c * kFmaChunk;
                const int k1 = min(k0 + kFmaChunk, p.k);
                const int nslices = (k1 - k0 + kRows - 1) / kRows;
                // Prologue: S - 1 slices in flight. Every issue commits a group (empty past
                // the last slice), so "at most S - 1 groups pending" means slice s arrived.
#pragma unroll
                for (int s = 0; s < S - 1; ++s) {
                    if (s < nslices) issue_slice(mine + s * kStageElems, b, s, k0, k1, j0, lane, p, a, m0);
                    else cp_async_commit();
                }
                for (int s = 0; s < nslices; ++s) {
                    const int next = s + S - 1;
                    if (next < nslices) issue_slice(mine + (next % S) * kStageElems, b, next, k0, k1, j0, lane, p, a, m0);
                    else cp_async_commit();
                    cp_async_wait<S - 1>();
                    __syncwarp();
                    const TAB* slice = mine + (s % S) * kStageElems;
                    const TAB* sa = slice + kSliceElems;
                    const int kb = k0 + s * kRows;
                    if (kb + kRows <= k1) {
#pragma unroll
                        for (int u = 0; u < kRows; ++u) {
                            const float bv = to_f32(slice[u * BN + lane]);
#pragma unroll
                            for (int r = 0; r < BM; ++r)
                                if (r < rows) part[r] = fmaf(to_f32(sa[r * kRows + u]), bv, part[r]);
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
                    __syncwarp();
                }
                cp_async_wait<0>();
            }
#pragma unroll
            for (int r = 0; r < BM; ++r) partials[(warp * BM + r) * BN + lane] = part[r];
            __syncthreads();
            if (fr < BM) {
                for (int s = 0; s < KS && round * KS + s < chunks; ++s)
                    total = fma_chunk_fold(round * KS + s, total, partials[(s * BM + fr) * BN + lane]);
            }
            __syncthreads();
        }
        if (fr < rows && col_ok) epilogue_store<TC>(total, m0 + fr, j, p);
    }
};


#define CHECK(x) do { cudaError_t e = (x); if (e != cudaSuccess) { printf("CUDA error %s at %s:%d\n", cudaGetErrorString(e), __FILE__, __LINE__); exit(1); } } while (0)

template <typename K> __global__ void __launch_bounds__(K::kThreads) entry(const GemmArgs args) { K::run(args); }

template <int BM, int S> using Tile = TileConfig<BM, 32, 256, S, BM, 1, 16>;

struct Result { float ms; bool equal; };

template <typename K, typename TAB>
Result run(const GemmArgs& base, const std::vector<const void*>& bs, float* c, const std::vector<float>& ref, int reps) {
    CHECK(cudaFuncSetAttribute(entry<K>, cudaFuncAttributeMaxDynamicSharedMemorySize, K::kSharedBytes));
    dim3 grid((base.m + K::BM - 1) / K::BM, (base.n + 31) / 32), block(K::kThreads);
    GemmArgs a = base;
    std::vector<float> times;
    cudaEvent_t e0, e1;
    CHECK(cudaEventCreate(&e0)); CHECK(cudaEventCreate(&e1));
    for (int i = 0; i < reps + 3; ++i) {
        a.b = bs[i % bs.size()];
        CHECK(cudaEventRecord(e0));
        entry<K><<<grid, block, K::kSharedBytes>>>(a);
        CHECK(cudaEventRecord(e1));
        CHECK(cudaEventSynchronize(e1));
        float ms; CHECK(cudaEventElapsedTime(&ms, e0, e1));
        if (i >= 3) times.push_back(ms);
    }
    CHECK(cudaGetLastError());
    // Correctness run on B set 0, output poisoned first.
    CHECK(cudaMemset(c, 0xff, sizeof(float) * base.m * base.n));
    a.b = bs[0];
    entry<K><<<grid, block, K::kSharedBytes>>>(a);
    CHECK(cudaDeviceSynchronize());
    std::vector<float> got(base.m * base.n);
    CHECK(cudaMemcpy(got.data(), c, got.size() * 4, cudaMemcpyDeviceToHost));
    bool equal = ref.empty() || memcmp(got.data(), ref.data(), got.size() * 4) == 0;
    std::sort(times.begin(), times.end());
    if (ref.empty()) const_cast<std::vector<float>&>(ref) = got;
    return {times[times.size() / 2], equal};
}

static unsigned long long rng = 0x1234567887654321ull;
static float rnd() { rng = rng * 6364136223846793005ull + 1442695040888963407ull; float v = ((rng >> 40) / 16777216.0f) * 2 - 1; return v == 0 ? 0.25f : v; }

template <typename TAB> TAB cvt(float x);
template <> float cvt<float>(float x) { return x; }
template <> __nv_bfloat16 cvt<__nv_bfloat16>(float x) { return __float2bfloat16_rn(x); }

template <typename TAB, int BM>
void shape(int m, int n, int k, const char* dt) {
    GemmArgs p{};
    std::vector<TAB> ha((size_t)m * k), hb((size_t)k * n);
    for (auto& x : ha) x = cvt<TAB>(rnd());
    void* da; CHECK(cudaMalloc(&da, ha.size() * sizeof(TAB)));
    CHECK(cudaMemcpy(da, ha.data(), ha.size() * sizeof(TAB), cudaMemcpyHostToDevice));
    std::vector<const void*> bs;
    for (int s = 0; s < 3; ++s) {
        for (auto& x : hb) x = cvt<TAB>(rnd());
        void* db; CHECK(cudaMalloc(&db, hb.size() * sizeof(TAB)));
        CHECK(cudaMemcpy(db, hb.data(), hb.size() * sizeof(TAB), cudaMemcpyHostToDevice));
        bs.push_back(db);
    }
    float* c; CHECK(cudaMalloc(&c, sizeof(float) * m * n));
    p.a = da; p.c = c; p.m = m; p.n = n; p.k = k; p.lda = k; p.ldb = n; p.ldc = n; p.beta = 0; p.flags = 0;
    const double bytes = ((double)m * k + (double)k * n) * sizeof(TAB) + (double)m * n * 4;
    std::vector<float> ref;
    auto report = [&](const char* name, Result r) {
        printf("%-5s m=%-3d n=%-6d k=%-6d %-16s %8.1f us %7.0f GB/s  %s\n", dt, m, n, k, name, r.ms * 1e3, bytes / (r.ms * 1e-3) / 1e9,
               r.equal ? "bits equal" : "BITS DIFFER");
    };
    report("shipped", run<fma_decode_gemm<TAB, float, kOpNN, Tile<BM, 1>>, TAB>(p, bs, c, ref, 15));
    report("staged S=2", run<fma_decode_staged<TAB, float, kOpNN, Tile<BM, 2>>, TAB>(p, bs, c, ref, 15));
    report("staged+A S=2", run<decode_staged_a<TAB, float, kOpNN, Tile<BM, 2>>, TAB>(p, bs, c, ref, 15));
    if (BM == 4) report("staged+A S=3", run<decode_staged_a<TAB, float, kOpNN, Tile<BM, 3>>, TAB>(p, bs, c, ref, 15));
    for (auto b : bs) CHECK(cudaFree((void*)b));
    CHECK(cudaFree(da)); CHECK(cudaFree(c));
}

int main() {
    const int nk[][2] = {{4096, 4096}, {14336, 4096}, {4096, 14336}, {4095, 1000}};
    for (auto& s : nk) {
        shape<float, 4>(1, s[0], s[1], "f32");
        shape<float, 4>(4, s[0], s[1], "f32");
        shape<float, 16>(8, s[0], s[1], "f32");
        shape<float, 16>(16, s[0], s[1], "f32");
        shape<__nv_bfloat16, 4>(1, s[0], s[1], "bf16");
        shape<__nv_bfloat16, 16>(8, s[0], s[1], "bf16");
    }
    return 0;
}
