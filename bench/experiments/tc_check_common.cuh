// The harness the standalone tensor-core checks share (tc_templates_check.cu, mma_async_check.cu):
// the argument struct of docs/tensor-core.md §3, a kernel entry point, the shipped configs of the
// sm90a templates, hashed random data, tensor-map encoding as the runtime does it, launching a
// kernel of each kind, stored matrices with NaN padding, the float64 reference check, and the
// cuBLAS (linked or opened at run time) and event timing of the benches. Include it first.
#pragma once
#include <cuda.h>
#include <cuda_runtime.h>
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <dlfcn.h>
#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>
#ifdef HAVE_CUBLAS
#include <cublas_v2.h>
#endif

#include "wgmma/wgmma_tma_gemm.cuh"
#include "mma/mma_decode_tma.cuh"
#include "mma/mma_gemm.cuh"
#include "mma/mma_async_gemm.cuh"

#define CHECK(x)                                                                                         \
    do {                                                                                                 \
        cudaError_t e_ = (x);                                                                            \
        if (e_ != cudaSuccess) {                                                                         \
            printf("CUDA error %s at %s:%d\n", cudaGetErrorString(e_), __FILE__, __LINE__);             \
            exit(1);                                                                                     \
        }                                                                                                \
    } while (0)

// The ABI of docs/tensor-core.md §3, field for field, with c_map after b_map. CUtensorMap is
// declared alignas(128) by <cuda.h> (CUDA 12 and 13), so the struct is 128-aligned and 512 bytes
// long, although every field offset is what a 64-aligned layout gives (a at 384, ..., flags at 444).
struct TcGemmArgs {
    CUtensorMap a_map;
    CUtensorMap b_map;
    CUtensorMap c_map;
    const void* a;
    const void* b;
    const void* bias;
    void* c;
    int m, n, k, lda, ldb, ldc;
    float beta;
    unsigned flags;
};

static_assert(offsetof(TcGemmArgs, b_map) == 128 && offsetof(TcGemmArgs, c_map) == 256 && offsetof(TcGemmArgs, a) == 384 &&
                  offsetof(TcGemmArgs, c) == 408 && offsetof(TcGemmArgs, m) == 416 && offsetof(TcGemmArgs, beta) == 440 &&
                  offsetof(TcGemmArgs, flags) == 444,
              "TcGemmArgs: field offsets of docs/tensor-core.md section 3");

template <class K, int MINB = 1>
__global__ void __launch_bounds__(K::kThreads, MINB) tc_kernel(const __grid_constant__ TcGemmArgs p) {
    K::run(p);
}

using bf16 = __nv_bfloat16;
using f16 = __half;
using WideCfg = WgmmaConfig<128, 256, 64, 4, 2, 1>;
using WideC2Cfg = WgmmaConfig<128, 256, 64, 4, 2, 2>;
using WideSmallCfg = WgmmaConfig<64, 128, 64, 6, 1, 1>;
using DecCfg = MmaDecodeConfig<16, 32, 64, 8>;
using Dec16Cfg = MmaDecodeConfig<16, 16, 64, 8>;
using Dec64Cfg = MmaDecodeConfig<16, 64, 64, 8>;
using SlowCfg = MmaConfig<64, 64, 32, 2, 2, 2>;

// What the generator static_asserts and the runtime encodes for C's tensor map (elements of C
// as stored, inner = contiguous n; swizzle in bytes), and the shared memory of the shipped tiles.
static_assert(wgmma_tma_gemm<bf16, bf16, kOpNN, WideCfg>::kCBoxInner == 64 && wgmma_tma_gemm<f16, f16, kOpNT, WideCfg>::kCBoxInner == 64 &&
                  wgmma_tma_gemm<bf16, float, kOpTN, WideCfg>::kCBoxInner == 32 &&
                  wgmma_tma_gemm<bf16, float, kOpTN, WideCfg>::kCBoxOuter == 64 && wgmma_tma_gemm<bf16, bf16, kOpNN, WideCfg>::kCBoxOuter == 64 &&
                  wgmma_tma_gemm<bf16, float, kOpNN, WideSmallCfg>::kSwizzleC == 128,
              "C box: 128-byte swizzled rows of 64 16-bit or 32 f32 values x 64 rows");
static_assert(wgmma_tma_gemm<bf16, bf16, kOpNN, WideCfg>::kSharedBytes == 230464 &&
                  wgmma_tma_gemm<bf16, float, kOpNN, WideCfg>::kSharedBytes == 230464 &&
                  wgmma_tma_gemm<bf16, bf16, kOpNN, WideSmallCfg>::kSharedBytes == 164960,
              "shared memory of the shipped wide tiles with the C staging");

// ------------------------------------------------------------------------------------------
// Data: element (r, c) of a stored matrix is a hash of (seed, r, c), whatever the leading dimension
// ------------------------------------------------------------------------------------------
__host__ __device__ inline uint32_t mix(uint32_t x) {
    x ^= x >> 16; x *= 0x7FEB352Du; x ^= x >> 15; x *= 0x846CA68Bu; x ^= x >> 16;
    return x;
}
// 16-bit pattern of a random value: sign, exponent -6..0, full mantissa. f16: dtype is __half.
__host__ __device__ inline uint16_t gen_bits(uint32_t seed, uint32_t r, uint32_t c, bool f16) {
    uint32_t h = mix(mix(seed * 0x9E3779B1u ^ r) ^ (c * 0x85EBCA6Bu + 0x632BE5ABu));
    uint32_t sign = h >> 31, e = (h >> 24) % 7;  // 2^-6 .. 2^0
    if (f16) return (uint16_t)((sign << 15) | ((15 - e) << 10) | (h & 0x3FF));
    return (uint16_t)((sign << 15) | ((127 - e) << 7) | (h & 0x7F));
}
static float bits_to_f(uint16_t b, bool f16) {
    if (!f16) { uint32_t u = (uint32_t)b << 16; float f; memcpy(&f, &u, 4); return f; }
    int s = b >> 15, e = (b >> 10) & 31, m = b & 0x3FF;
    float v = e == 0 ? std::ldexp((float)m, -24) : e == 31 ? (m ? NAN : INFINITY) : std::ldexp(1.0f + m / 1024.0f, e - 15);
    return s ? -v : v;
}
__global__ void fill_u16(uint16_t* p, int rows, int cols, long ld, uint32_t seed, bool f16) {
    long total = (long)rows * cols;
    for (long i = blockIdx.x * (long)blockDim.x + threadIdx.x; i < total; i += (long)gridDim.x * blockDim.x) {
        int r = (int)(i / cols), c = (int)(i % cols);
        p[(long)r * ld + c] = gen_bits(seed, r, c, f16);
    }
}
__global__ void fill_f32(float* p, int rows, int cols, long ld, uint32_t seed) {
    long total = (long)rows * cols;
    for (long i = blockIdx.x * (long)blockDim.x + threadIdx.x; i < total; i += (long)gridDim.x * blockDim.x) {
        int r = (int)(i / cols), c = (int)(i % cols);
        uint32_t u = (uint32_t)gen_bits(seed, r, c, false) << 16;
        p[(long)r * ld + c] = __uint_as_float(u);
    }
}

// ------------------------------------------------------------------------------------------
// Tensor maps
// ------------------------------------------------------------------------------------------
typedef CUresult (*EncodeTiledFn)(CUtensorMap*, CUtensorMapDataType, cuuint32_t, void*, const cuuint64_t*, const cuuint64_t*,
                                  const cuuint32_t*, const cuuint32_t*, CUtensorMapInterleave, CUtensorMapSwizzle,
                                  CUtensorMapL2promotion, CUtensorMapFloatOOBfill);
static EncodeTiledFn g_encode = nullptr;
static int g_sms = 0, g_fail = 0, g_checks = 0;
// +tmaC launches: bit set and n * size % 16 == 0 (the kernel takes the TMA-store epilogue), bit set
// but n * size % 16 != 0 (the kernel keeps the direct stores), bit cleared (C not TMA-able).
static long g_tmac_on = 0, g_tmac_n = 0, g_tmac_off = 0;
static std::vector<std::string> g_failures;

// dtype: bf16 (f16 = false), f16, or f32 (f32 = true).
static CUtensorMap make_map(const void* p, bool f16, uint64_t inner, uint64_t outer, uint64_t ld, int box_inner, int box_outer,
                            int swizzle, bool f32 = false) {
    CUtensorMap m;
    cuuint64_t dims[2] = {inner, outer};
    cuuint64_t strides[1] = {ld * (f32 ? 4 : 2)};
    cuuint32_t box[2] = {(cuuint32_t)box_inner, (cuuint32_t)box_outer};
    cuuint32_t es[2] = {1, 1};
    CUtensorMapSwizzle sw = swizzle == 128 ? CU_TENSOR_MAP_SWIZZLE_128B : swizzle == 64 ? CU_TENSOR_MAP_SWIZZLE_64B
                          : swizzle == 32 ? CU_TENSOR_MAP_SWIZZLE_32B : CU_TENSOR_MAP_SWIZZLE_NONE;
    const CUtensorMapDataType dt = f32 ? CU_TENSOR_MAP_DATA_TYPE_FLOAT32 : f16 ? CU_TENSOR_MAP_DATA_TYPE_FLOAT16
                                             : CU_TENSOR_MAP_DATA_TYPE_BFLOAT16;
    CUresult r = g_encode(&m, dt, 2, const_cast<void*>(p),
                          dims, strides, box, es, CU_TENSOR_MAP_INTERLEAVE_NONE, sw, CU_TENSOR_MAP_L2_PROMOTION_L2_256B,
                          CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
    if (r != CUDA_SUCCESS) {
        printf("cuTensorMapEncodeTiled failed: %d (inner %llu outer %llu ld %llu box %d x %d sw %d)\n", (int)r,
               (unsigned long long)inner, (unsigned long long)outer, (unsigned long long)ld, box_inner, box_outer, swizzle);
        exit(1);
    }
    return m;
}

// One GEMM call: op, dtypes, shape, buffers (stored as docs/tensor-core.md says for the op).
struct Problem {
    int op;    // kOpNN, kOpTN, kOpNT
    bool f16;  // operands __half (else bf16)
    bool f32out;
    int m, n, k, lda, ldb, ldc;
    const void *A, *B, *bias;
    void* C;
    float beta;
    unsigned flags;
};

enum Kind { kWide = 0, kDecode = 1, kSlow = 2 };

// Co-resident CTAs of a wide kernel (whole clusters), for the persistent grid.
template <class K>
static int max_ctas() {
    if (K::kClusterM == 1) {
        int per = 0;
        CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per, tc_kernel<K>, K::kThreads, K::kSharedBytes));
        return std::max(1, per) * g_sms;
    }
    cudaLaunchConfig_t cfg = {};
    cfg.gridDim = dim3(g_sms / K::kClusterM * K::kClusterM);
    cfg.blockDim = dim3(K::kThreads);
    cfg.dynamicSmemBytes = K::kSharedBytes;
    cudaLaunchAttribute at[1];
    at[0].id = cudaLaunchAttributeClusterDimension;
    at[0].val.clusterDim.x = K::kClusterM; at[0].val.clusterDim.y = 1; at[0].val.clusterDim.z = 1;
    cfg.attrs = at; cfg.numAttrs = 1;
    int ncl = 0;
    CHECK(cudaOccupancyMaxActiveClusters(&ncl, tc_kernel<K>, &cfg));
    return ncl * K::kClusterM;
}

// Maps of A and B for kernel K (boxes and swizzles from its constants), as the runtime would encode them.
template <class K>
static void encode_maps(const Problem& pr, TcGemmArgs& p) {
    const bool a_kmaj = pr.op != kOpTN, b_kmaj = pr.op == kOpNT;
    p.a_map = a_kmaj ? make_map(pr.A, pr.f16, pr.k, pr.m, pr.lda, K::kABoxInner, K::kABoxOuter, K::kSwizzleA)
                     : make_map(pr.A, pr.f16, pr.m, pr.k, pr.lda, K::kABoxInner, K::kABoxOuter, K::kSwizzleA);
    p.b_map = b_kmaj ? make_map(pr.B, pr.f16, pr.k, pr.n, pr.ldb, K::kBBoxInner, K::kBBoxOuter, K::kSwizzleB)
                     : make_map(pr.B, pr.f16, pr.n, pr.k, pr.ldb, K::kBBoxInner, K::kBBoxOuter, K::kSwizzleB);
}

// The host's rule for kGemmFlagCTensorMap: C's base 16-byte aligned and ldc * sizeof(TC) a
// multiple of 16 (addresses and ldc only, never m).
static bool c_takes_tma(const Problem& pr) {
    const long es = pr.f32out ? 4 : 2;
    return (uintptr_t)pr.C % 16 == 0 && ((long)pr.ldc * es) % 16 == 0 && pr.n >= 1 && pr.ldc >= pr.n;
}

// ctas > 0 caps the persistent grid of a wide kernel. TMAC: a wide kernel asked to write C through
// its TMA-store epilogue (bit set, c_map encoded: rows = m, columns = n) when C can take TMA.
template <int KIND, class K, bool TMAC = false, int MINB = 1>
static void launch(const Problem& pr, int ctas = 0) {
    static bool init = false;
    static int maxc = 0;
    if (!init) {
        CHECK(cudaFuncSetAttribute(tc_kernel<K, MINB>, cudaFuncAttributeMaxDynamicSharedMemorySize, K::kSharedBytes));
        if constexpr (KIND == kWide) maxc = max_ctas<K>();
        init = true;
    }
    TcGemmArgs p;
    memset(&p, 0, sizeof p);
    p.a = pr.A; p.b = pr.B; p.bias = pr.bias; p.c = pr.C;
    p.m = pr.m; p.n = pr.n; p.k = pr.k; p.lda = pr.lda; p.ldb = pr.ldb; p.ldc = pr.ldc;
    p.beta = pr.beta; p.flags = pr.flags;
    cudaLaunchConfig_t cfg = {};
    cudaLaunchAttribute at[1];
    cfg.blockDim = dim3(K::kThreads);
    cfg.dynamicSmemBytes = K::kSharedBytes;
    cfg.attrs = at;
    cfg.numAttrs = 0;
    if constexpr (KIND == kWide) {
        encode_maps<K>(pr, p);
        if (TMAC) {
            if (c_takes_tma(pr) && pr.m >= 1) {
                p.c_map = make_map(pr.C, pr.f16, pr.n, pr.m, pr.ldc, K::kCBoxInner, K::kCBoxOuter, K::kSwizzleC, pr.f32out);
                p.flags |= kGemmFlagCTensorMap;
                if ((pr.n * (pr.f32out ? 4 : 2)) % 16 == 0) ++g_tmac_on; else ++g_tmac_n;
            } else {
                ++g_tmac_off;
            }
        }
        const int cm = K::kClusterM;
        const long tiles = (long)((pr.m + K::BM * cm - 1) / (K::BM * cm)) * ((pr.n + K::BN - 1) / K::BN);
        long g = (ctas > 0 ? std::min(ctas, maxc) : maxc) / cm;
        g = std::max(1L, std::min(g, tiles));
        cfg.gridDim = dim3((unsigned)(g * cm));
        at[0].id = cudaLaunchAttributeClusterDimension;
        at[0].val.clusterDim.x = cm; at[0].val.clusterDim.y = 1; at[0].val.clusterDim.z = 1;
        cfg.numAttrs = 1;
    } else if constexpr (KIND == kDecode) {
        encode_maps<K>(pr, p);
        cfg.gridDim = dim3((pr.m + 15) / 16, (pr.n + K::BN - 1) / K::BN);
    } else {
        cfg.gridDim = dim3((pr.m + K::BM - 1) / K::BM, (pr.n + K::BN - 1) / K::BN);
    }
    CHECK(cudaLaunchKernelEx(&cfg, tc_kernel<K, MINB>, p));
    CHECK(cudaGetLastError());
}

// A kernel to check: its name, kind (how it is launched) and launch function.
typedef void (*LaunchFn)(const Problem&, int);
struct Kern { const char* name; int kind; LaunchFn f; };
struct Combo { int op; bool f16, f32out; std::vector<Kern> ks; };

static const char* op_name(int op) { return op == kOpNN ? "nn" : op == kOpTN ? "tn" : "nt"; }
static std::string combo_name(const Combo& c) {
    return std::string(op_name(c.op)) + (c.f16 ? " f16" : " bf16") + (c.f32out ? "->f32" : c.f16 ? "->f16" : "->bf16");
}

// ------------------------------------------------------------------------------------------
// Buffers and the host reference
// ------------------------------------------------------------------------------------------
struct Mat {  // a stored matrix with NaN padding
    void* p = nullptr;
    int rows = 0, cols = 0;
    long ld = 0;
    int esize = 2;
    size_t bytes = 0;
    void alloc(int r, int c, long l, int es, long offset_elems = 0) {
        rows = r; cols = c; ld = l; esize = es;
        bytes = (size_t)(std::max(r, 1) * ld + offset_elems + 64) * es;
        void* base;
        CHECK(cudaMalloc(&base, bytes));
        CHECK(cudaMemset(base, 0xFF, bytes));
        raw = base;
        p = (char*)base + offset_elems * es;
    }
    void fill(uint32_t seed, bool f16) {
        if (rows * (long)cols == 0) return;
        if (esize == 2) fill_u16<<<1024, 256>>>((uint16_t*)p, rows, cols, ld, seed, f16);
        else fill_f32<<<1024, 256>>>((float*)p, rows, cols, ld, seed);
        CHECK(cudaGetLastError());
    }
    void poison() { CHECK(cudaMemset(raw, 0xFF, bytes)); }
    void free_() { if (raw) CHECK(cudaFree(raw)); raw = p = nullptr; }
    std::vector<uint8_t> fetch(int r) const {  // the first r stored rows (ld apart)
        std::vector<uint8_t> v((size_t)r * ld * esize);
        if (r) CHECK(cudaMemcpy(v.data(), p, v.size(), cudaMemcpyDeviceToHost));
        return v;
    }
    void* raw = nullptr;
};

// The logical values of a problem, from the seeds (host side, exact).
struct Logical {
    int op; bool f16, f32out;
    uint32_t sa, sb, sbias, sc;
    float a(int m, int k) const { return bits_to_f(op == kOpTN ? gen_bits(sa, k, m, f16) : gen_bits(sa, m, k, f16), f16); }
    float b(int k, int n) const { return bits_to_f(op == kOpNT ? gen_bits(sb, n, k, f16) : gen_bits(sb, k, n, f16), f16); }
    float bias(int n) const { return bits_to_f(gen_bits(sbias, 0, n, f16 && !f32out), f16 && !f32out); }
    float c(int m, int n) const { return bits_to_f(gen_bits(sc, m, n, f16 && !f32out), f16 && !f32out); }
};

static double out_value(const std::vector<uint8_t>& v, long idx, bool f32out, bool f16) {
    if (f32out) { float f; memcpy(&f, &v[idx * 4], 4); return f; }
    uint16_t b; memcpy(&b, &v[idx * 2], 2);
    return bits_to_f(b, f16);
}

static void verdict(bool ok, const std::string& what) {
    ++g_checks;
    if (!ok) { ++g_fail; g_failures.push_back(what); printf("  FAIL %s\n", what.c_str()); }
}

// Reference check of C (rows < m) against float64; returns the worst err / bound.
static double ref_check(const Logical& L, const std::vector<uint8_t>& out, long ldc, int m, int n, int k, float beta,
                        bool bias, int samples, int* nan_count) {
    const double uo = L.f32out ? std::ldexp(1.0, -24) : L.f16 ? std::ldexp(1.0, -11) : std::ldexp(1.0, -8);
    const double k16 = 16.0 * ((k + 15) / 16);
    double worst = 0;
    uint64_t st = 0x9E3779B97F4A7C15ull ^ (uint64_t)(m * 131 + n * 7 + k);
    auto rnd = [&]() { st ^= st << 13; st ^= st >> 7; st ^= st << 17; return st; };
    const bool all = (double)m * n <= samples;
    const long cnt = all ? (long)m * n : samples;
    *nan_count = 0;
    for (long s = 0; s < cnt; ++s) {
        int r, c;
        if (all) { r = (int)(s / n); c = (int)(s % n); }
        else if (s == 0) { r = 0; c = 0; }
        else if (s == 1) { r = m - 1; c = n - 1; }
        else { r = (int)(rnd() % m); c = (int)(rnd() % n); }
        double ref = 0, S = 0;
        for (int kk = 0; kk < k; ++kk) { double pr = (double)L.a(r, kk) * L.b(kk, c); ref += pr; S += fabs(pr); }
        if (bias) { ref += L.bias(c); S += fabs(L.bias(c)); }
        if (beta != 0.f) { double cv = (double)beta * L.c(r, c); ref += cv; S += fabs(cv); }
        double o = out_value(out, (long)r * ldc + c, L.f32out, L.f16);
        if (o != o) { ++*nan_count; worst = INFINITY; continue; }
        double bound = uo * fabs(ref) + 4.0 * k16 * std::ldexp(1.0, -24) * S + 1e-30;
        worst = std::max(worst, fabs(o - ref) / bound);
    }
    return worst;
}

// Bitwise equality of the first m rows (n columns each) of two C images with the same ldc.
static bool rows_equal(const std::vector<uint8_t>& x, const std::vector<uint8_t>& y, long ldc, int m, int n, int es) {
    for (int r = 0; r < m; ++r)
        if (memcmp(&x[(size_t)r * ldc * es], &y[(size_t)r * ldc * es], (size_t)n * es) != 0) return false;
    return true;
}
// Everything outside rows < m, columns < n of the first `rows` stored rows is still poison.
static bool poison_intact(const std::vector<uint8_t>& x, long ldc, int m, int n, int rows, int es) {
    for (int r = 0; r < rows; ++r)
        for (long c = (r < m ? n : 0); c < ldc; ++c)
            for (int b = 0; b < es; ++b)
                if (x[((size_t)r * ldc + c) * es + b] != 0xFF) return false;
    return true;
}

static long round8(long x) { return (x + 7) / 8 * 8; }

// ------------------------------------------------------------------------------------------
// One combo's operands at (max rows M, n, k), with padded leading dimensions
// ------------------------------------------------------------------------------------------
struct Setup {
    const Combo* cb;
    Logical L;
    Mat A, B, bias, C, Cinit;
    int M, n, k;
    int es;  // bytes of an output element
    Setup(const Combo& c, int M_, int n_, int k_, int padA, int padB, long ldc, uint32_t seed) : cb(&c), M(M_), n(n_), k(k_) {
        L = Logical{c.op, c.f16, c.f32out, seed * 4 + 1, seed * 4 + 2, seed * 4 + 3, seed * 4 + 4};
        es = c.f32out ? 4 : 2;
        if (c.op == kOpTN) A.alloc(k, M, round8(M) + padA, 2); else A.alloc(M, k, round8(k) + padA, 2);
        if (c.op == kOpNT) B.alloc(n, k, round8(k) + padB, 2); else B.alloc(k, n, round8(n) + padB, 2);
        A.fill(L.sa, c.f16);
        B.fill(L.sb, c.f16);
        bias.alloc(1, n, n, es);
        C.alloc(M + 2, n, ldc, es);
        Cinit.alloc(M + 2, n, ldc, es);
        if (es == 2) { bias.fill(L.sbias, c.f16); Cinit.fill(L.sc, c.f16); Cinit.rows = M + 2; }
        else { bias.fill(L.sbias, false); Cinit.fill(L.sc, false); }
        CHECK(cudaDeviceSynchronize());
    }
    ~Setup() { A.free_(); B.free_(); bias.free_(); C.free_(); Cinit.free_(); }
    Problem problem(int m, float beta = 0.f, unsigned flags = 0) const {
        return Problem{cb->op, cb->f16, cb->f32out, m, n, k, (int)A.ld, (int)B.ld, (int)C.ld, A.p, B.p, bias.p, C.p, beta, flags};
    }
    // Runs kernel ki at m (C poisoned, or C = Cinit when beta != 0) and returns rows 0..m+1 of C.
    std::vector<uint8_t> run(int ki, int m, float beta = 0.f, unsigned flags = 0, int ctas = 0) {
        if (beta != 0.f) CHECK(cudaMemcpy(C.raw, Cinit.raw, C.bytes, cudaMemcpyDeviceToDevice));
        else C.poison();
        cb->ks[ki].f(problem(m, beta, flags), ctas);
        CHECK(cudaDeviceSynchronize());
        return C.fetch(std::min(m + 2, C.rows));
    }
};

static std::string shape_str(int m, int n, int k) { char b[64]; snprintf(b, sizeof b, "%dx%dx%d", m, n, k); return b; }

// ------------------------------------------------------------------------------------------
// (f) timing against cuBLAS
// ------------------------------------------------------------------------------------------
#ifdef HAVE_CUBLAS
static cublasHandle_t g_cublas = nullptr;
static bool cublas_open() { return cublasCreate(&g_cublas) == CUBLAS_STATUS_SUCCESS; }
static void cublas_gemm_nn(const void* A, const void* B, void* C, bool f16, int M, int N, int K) {
    float alpha = 1.f, beta = 0.f;
    cudaDataType t = f16 ? CUDA_R_16F : CUDA_R_16BF;
    // Row-major C[M,N] = A[M,K] B[K,N]  <=>  column-major C^T[N,M] = B^T[N,K] A^T[K,M].
    cublasStatus_t s = cublasGemmEx(g_cublas, CUBLAS_OP_N, CUBLAS_OP_N, N, M, K, &alpha, B, t, N, A, t, K, &beta, C, t, N,
                                    CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT);
    if (s != CUBLAS_STATUS_SUCCESS) { printf("cublasGemmEx failed: %d\n", (int)s); exit(1); }
}
#else
// cuBLAS opened at run time: the few entry points and enum values this program uses.
typedef int (*CublasCreateFn)(void**);
typedef int (*CublasGemmExFn)(void*, int, int, int, int, int, const void*, const void*, int, int, const void*, int, int,
                              const void*, void*, int, int, int, int);
static void* g_cublas = nullptr;
static CublasGemmExFn g_gemmex = nullptr;
static bool cublas_open() {
    const char* names[] = {"libcublas.so.13", "libcublas.so.12", "libcublas.so"};
    void* h = nullptr;
    for (const char* nm : names) if ((h = dlopen(nm, RTLD_NOW | RTLD_GLOBAL))) { printf("cuBLAS: %s\n", nm); break; }
    if (!h) return false;
    auto create = (CublasCreateFn)dlsym(h, "cublasCreate_v2");
    g_gemmex = (CublasGemmExFn)dlsym(h, "cublasGemmEx");
    return create && g_gemmex && create(&g_cublas) == 0;
}
static void cublas_gemm_nn(const void* A, const void* B, void* C, bool f16, int M, int N, int K) {
    float alpha = 1.f, beta = 0.f;
    const int t = f16 ? (int)CUDA_R_16F : (int)CUDA_R_16BF;
    const int kCompute32F = 68, kGemmDefault = -1, kOpN = 0;
    int s = g_gemmex(g_cublas, kOpN, kOpN, N, M, K, &alpha, B, t, N, A, t, K, &beta, C, t, N, kCompute32F, kGemmDefault);
    if (s != 0) { printf("cublasGemmEx failed: %d\n", s); exit(1); }
}
#endif
static bool g_have_cublas = false;

__global__ void spin(long long cycles) { long long t0 = clock64(); while (clock64() - t0 < cycles) {} }
struct Timer {
    cudaEvent_t e0, e1;
    Timer() { CHECK(cudaEventCreate(&e0)); CHECK(cudaEventCreate(&e1)); }
    template <typename F> float time(F f) {
        spin<<<1, 1>>>(50000);  // the events then time the kernel, not the host's launch latency
        CHECK(cudaEventRecord(e0)); f(); CHECK(cudaEventRecord(e1)); CHECK(cudaEventSynchronize(e1));
        float ms; CHECK(cudaEventElapsedTime(&ms, e0, e1)); return ms;
    }
};
static float median(std::vector<float> v) { std::sort(v.begin(), v.end()); return v[v.size() / 2]; }

struct Row { std::string dtype, shape, kernel; double ours, cub, ratio; bool gbs; };
static std::vector<Row> g_rows;
static int g_l2 = 0;
