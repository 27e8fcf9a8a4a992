// Experiment: the register-batch decode kernel (fma_decode_gemm) against the shipped
// cp.async-staged one (fma_decode_staged) at two and three stages, for m = 1, 4, 8, 16 and the
// bench's (n, k), f32 and bf16 NN. Every staged output must equal the register-batch kernel's
// bit for bit (same contract); prints GB/s of operands.
// Its logs (bench/results/2026-11-29-h200-experiments/) come from earlier versions of this
// file, kept in git: decode_staged.log from this file and kernels-templates/ of commit b156d1e
// (fma_decode_staged staging B only, 2-6 stages); decode_staged_a.log from this file of commit
// 2e0dade (which adds a variant also staging A) with kernels-templates/ of b156d1e.
// fma_decode_staged has become that variant since.
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
    if (BM == 4) report("staged S=3", run<fma_decode_staged<TAB, float, kOpNN, Tile<BM, 3>>, TAB>(p, bs, c, ref, 15));
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
