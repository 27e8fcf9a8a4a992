// fma_exact: the exact policy's large-m kernels (contract fma-k256) against each other and
// against cuBLAS SGEMM in pedantic math (no TF32), f32 in and out.
//
// Every kernel of the generated units fma.cu, fmaw.cu and fmaws.cu (sm90a, `gemm-aot build --no-cubins`)
// that fma_exact.sh lists runs on random data (uniform in [-1, 1), never zeros) at each shape;
// the reference bits are the shipped fma.tiled kernel's (the GPU suites check that one against
// the CPU model of fma-k256), and every other kernel must give them bit for bit, C poisoned
// before each run. Shapes include odd m, n, k and an odd leading dimension (the elementwise
// load path). Timing: CUDA events, each kernel and cuBLAS alternated, median of REPS launches.
// Output: one line a (shape, kernel): bits equal or the count that differ, median us, TFLOP/s,
// ratio = cuBLAS time / ours.
//
// Build and run: fma_exact.sh.
#include <cuda.h>
#include <cuda_runtime.h>
#include <dlfcn.h>
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <type_traits>
#include <vector>

#include "sm90a/fma.cu"
#include "sm90a/fmaw.cu"
#include "sm90a/fmaws.cu"

#include "cuda_check.cuh"

// cuBLAS through dlopen, so this builds with the compiler alone.
typedef int (*CublasCreate)(void**);
typedef int (*CublasSetMathMode)(void*, int);
typedef int (*CublasSgemm)(void*, int, int, int, int, int, const float*, const float*, int, const float*, int,
                           const float*, float*, int);
struct Cublas {
    void* h = nullptr;
    CublasSgemm sgemm = nullptr;
    bool load() {
        const char* names[] = {"libcublas.so", "libcublas.so.13", "libcublas.so.12"};
        void* lib = nullptr;
        for (const char* n : names)
            if ((lib = dlopen(n, RTLD_NOW))) break;
        if (!lib) return false;
        auto create = (CublasCreate)dlsym(lib, "cublasCreate_v2");
        auto math = (CublasSetMathMode)dlsym(lib, "cublasSetMathMode");
        sgemm = (CublasSgemm)dlsym(lib, "cublasSgemm_v2");
        if (!create || !math || !sgemm || create(&h) != 0) return false;
        return math(h, 2 /* CUBLAS_PEDANTIC_MATH */) == 0;
    }
    // Row-major C[m, n] = A[m, k] B[k, n] as column-major C^T = B^T A^T.
    void nn(const float* a, const float* b, float* c, int m, int n, int k, int lda, int ldb, int ldc) {
        const float one = 1.0f, zero = 0.0f;
        int st = sgemm(h, 0, 0, n, m, k, &one, b, ldb, a, lda, &zero, c, ldc);
        if (st != 0) { printf("cublasSgemm failed: %d\n", st); exit(1); }
    }
};

typedef void (*Entry)(const GemmArgs);
struct Kernel {
    const char* name;
    Entry entry;
    int bm, bn, threads, smem, split;  // split: CTAs a cluster along z sharing K (fmaws), else 1
};
// A config's SPLIT_K, 1 for kernels without one.
template <class C, class = void>
struct SplitOf { static constexpr int value = 1; };
template <class C>
struct SplitOf<C, std::void_t<decltype(C::SPLIT_K)>> { static constexpr int value = C::SPLIT_K; };
#define KERNEL(NAME) \
    Kernel{#NAME, NAME, NAME##_cfg::M, NAME##_cfg::N, NAME##_cfg::kThreads, NAME##_cfg::kSharedBytes, SplitOf<NAME##_cfg>::value}

#include "fma_exact_kernels.inc"  // KERNELS: the reference first (written by fma_exact.sh)

static void launch(const Kernel& kn, const GemmArgs& p) {
    dim3 grid((p.m + kn.bm - 1) / kn.bm, (p.n + kn.bn - 1) / kn.bn, kn.split);
    if (kn.split == 1) {
        kn.entry<<<grid, kn.threads, kn.smem>>>(p);
        return;
    }
    cudaLaunchConfig_t cfg = {};
    cfg.gridDim = grid;
    cfg.blockDim = dim3(kn.threads);
    cfg.dynamicSmemBytes = kn.smem;
    cudaLaunchAttribute attr[1];
    attr[0].id = cudaLaunchAttributeClusterDimension;
    attr[0].val.clusterDim.x = 1;
    attr[0].val.clusterDim.y = 1;
    attr[0].val.clusterDim.z = kn.split;
    cfg.attrs = attr;
    cfg.numAttrs = 1;
    CHECK(cudaLaunchKernelEx(&cfg, kn.entry, p));
}

struct Shape {
    int m, n, k, lda;  // lda: 0 for k
};

int main(int argc, char** argv) {
    const int reps = argc > 1 ? atoi(argv[1]) : 20;
    std::vector<Kernel> kernels = KERNELS;
    for (auto& kn : kernels) CHECK(cudaFuncSetAttribute(kn.entry, cudaFuncAttributeMaxDynamicSharedMemorySize, kn.smem));
    Cublas cublas;
    const bool have_cublas = cublas.load();
    if (!have_cublas) printf("# cuBLAS not found: no ratios\n");
    cudaDeviceProp prop;
    CHECK(cudaGetDeviceProperties(&prop, 0));
    printf("# fma_exact on %s, %d SMs, %d launches a median\n", prop.name, prop.multiProcessorCount, reps);
    const Shape shapes[] = {
        {1000, 1000, 333, 0}, {777, 1500, 1031, 1033}, {4096, 4096, 4096, 0}, {1024, 4096, 4096, 0},
        {4096, 14336, 4096, 0}, {1024, 4096, 14336, 0}, {2048, 2048, 8192, 0}, {512, 4096, 4096, 0},
        // Grids of too few tiles (narrow n, mid m: the K splits of fmaws), odd ones included.
        {32, 4096, 4096, 0}, {64, 1024, 4096, 0}, {128, 1024, 4096, 0}, {256, 1024, 4096, 0},
        {512, 1024, 4096, 0}, {1024, 1024, 4096, 0}, {64, 4096, 14336, 0}, {128, 4096, 14336, 0},
        {256, 4096, 14336, 0}, {128, 512, 3584, 0}, {256, 4096, 4096, 0}, {300, 1000, 5000, 5001},
    };
    std::mt19937 rng(7);
    std::uniform_real_distribution<float> uni(-1.0f, 1.0f);
    printf("%6s %6s %6s %6s  %-52s %10s %9s %8s %8s\n", "m", "n", "k", "lda", "kernel", "bits", "us", "TFLOP/s", "ratio");
    for (const Shape& s : shapes) {
        const int lda = s.lda ? s.lda : s.k;
        std::vector<float> ha((size_t)s.m * lda), hb((size_t)s.k * s.n);
        for (auto& x : ha) x = uni(rng);
        for (auto& x : hb) x = uni(rng);
        float *a, *b, *c;
        const size_t cn = (size_t)s.m * s.n;
        CHECK(cudaMalloc(&a, ha.size() * 4));
        CHECK(cudaMalloc(&b, hb.size() * 4));
        CHECK(cudaMalloc(&c, cn * 4));
        CHECK(cudaMemcpy(a, ha.data(), ha.size() * 4, cudaMemcpyHostToDevice));
        CHECK(cudaMemcpy(b, hb.data(), hb.size() * 4, cudaMemcpyHostToDevice));
        GemmArgs p{};
        p.a = a; p.b = b; p.c = c; p.bias = nullptr;
        p.m = s.m; p.n = s.n; p.k = s.k; p.lda = lda; p.ldb = s.n; p.ldc = s.n;
        p.beta = 0.0f; p.flags = 0;
        std::vector<float> ref(cn), out(cn);
        cudaEvent_t e0, e1;
        CHECK(cudaEventCreate(&e0));
        CHECK(cudaEventCreate(&e1));
        auto time_one = [&](auto&& fn) {
            fn();
            CHECK(cudaEventRecord(e0));
            fn();
            CHECK(cudaEventRecord(e1));
            CHECK(cudaEventSynchronize(e1));
            float ms;
            CHECK(cudaEventElapsedTime(&ms, e0, e1));
            return ms * 1000.0f;
        };
        std::vector<std::vector<float>> times(kernels.size() + 1);
        for (size_t i = 0; i < kernels.size(); ++i) {
            CHECK(cudaMemset(c, 0xFF, cn * 4));  // NaN poison
            launch(kernels[i], p);
            CHECK(cudaGetLastError());
            CHECK(cudaDeviceSynchronize());
            CHECK(cudaMemcpy(i == 0 ? ref.data() : out.data(), c, cn * 4, cudaMemcpyDeviceToHost));
            if (i > 0) {
                size_t diff = 0;
                for (size_t e = 0; e < cn; ++e) diff += memcmp(&ref[e], &out[e], 4) != 0;
                times[i].push_back((float)diff);  // first entry: the differing count
            } else {
                size_t nan = 0;
                for (float v : ref) nan += v != v;
                times[0].push_back((float)nan);
            }
        }
        for (int r = 0; r < reps; ++r) {
            for (size_t i = 0; i < kernels.size(); ++i) times[i].push_back(time_one([&] { launch(kernels[i], p); }));
            if (have_cublas) times[kernels.size()].push_back(time_one([&] { cublas.nn(a, b, c, s.m, s.n, s.k, lda, s.n, s.n); }));
        }
        CHECK(cudaGetLastError());
        auto median = [](std::vector<float> v) {
            std::sort(v.begin(), v.end());
            return v.empty() ? 0.0f : v[v.size() / 2];
        };
        const double flop = 2.0 * s.m * s.n * s.k;
        const float cub = have_cublas ? median(times[kernels.size()]) : 0.0f;
        for (size_t i = 0; i < kernels.size(); ++i) {
            std::vector<float> t(times[i].begin() + 1, times[i].end());
            const float us = median(t);
            char bits[32];
            if (i == 0) snprintf(bits, sizeof bits, "ref%s", times[i][0] ? "+NaN" : "");
            else snprintf(bits, sizeof bits, times[i][0] == 0 ? "equal" : "%.0f diff", times[i][0]);
            printf("%6d %6d %6d %6d  %-52s %10s %9.1f %8.2f %8.3f\n", s.m, s.n, s.k, lda, kernels[i].name, bits, us,
                   flop / us * 1e-6, cub > 0 ? cub / us : 0.0);
        }
        if (have_cublas)
            printf("%6d %6d %6d %6d  %-52s %10s %9.1f %8.2f\n", s.m, s.n, s.k, lda, "cublasSgemm (pedantic)", "-", cub,
                   flop / cub * 1e-6);
        CHECK(cudaEventDestroy(e0));
        CHECK(cudaEventDestroy(e1));
        CHECK(cudaFree(a));
        CHECK(cudaFree(b));
        CHECK(cudaFree(c));
    }
    return 0;
}
