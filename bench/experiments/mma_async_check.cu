// Standalone GPU check of kernels-templates/mma/mma_async_gemm.cuh (the portable tensor-core kind:
// mma.sync m16n8k16 from ldmatrix, cp.async pipeline) against wgmma_tma_gemm and mma_gemm, contract
// tc-k16 (docs/tensor-core.md), built for sm_90a so all three run on one H200.
//
// Checks, on random data (random signs, exponents 2^-6..2^0, full mantissas; outputs poisoned with
// NaN first, padding of every buffer NaN):
//  (a) every mma_async_gemm config (the tiles the portable tiers ship: 128x128x32 at 4 and 3
//      stages, with and without min_blocks = 2, 64x64x32, 16-row decode tiles of 32 and 16
//      columns; and 128x128x64) and mma_gemm bitwise equal to the wide wgmma kernel
//      for nn, nt, tn x {bf16, f16} x {same-type, f32} out, over odd n, k = 1, k not a multiple of
//      16, padded leading dimensions, m in {1, 7, 16, 17, 100, 300, 1000, 4096}, and 2048x4096x4096;
//      padding of C and rows past m stay NaN;
//  (b) against a float64 host reference: |out - ref| <= u_out |ref| + 4 K16 2^-24 S;
//  (c) bias and beta (beta = 1 into f32: the tn weight-gradient case; beta = 0.5 into 16-bit);
//  (d) row invariance: rows 0..m-1 at every m equal the first rows at m = 4096;
//  (e) k = 0 (epilogue alone, exact) and odd lda / ldb / ldc with misaligned bases (mma_async_gemm's
//      element-by-element path, which the runtime avoids by routing such operands to mma_gemm);
//  (f) timing against the wide wgmma kernel and cuBLAS (cublasGemmEx, default algorithm), nn;
//  (g) TF32 (f32 operands, contract tc-tf32-k8): every async config bitwise equal to mma_gemm's
//      TF32 path, with bias, beta, k = 0, odd n, ragged m; and its timing.
// Build: see mma_async_check.sh. Without -DHAVE_CUBLAS, cuBLAS is opened at run time (dlopen).
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
using AsyncWide4 = MmaConfig<128, 128, 32, 2, 4, 4>;  // sm80, sm100a
using AsyncWide3 = MmaConfig<128, 128, 32, 2, 4, 3>;  // sm89, sm120
using AsyncMid = MmaConfig<64, 64, 32, 2, 2, 4>;
using AsyncDec = MmaConfig<16, 32, 64, 1, 2, 4>;
using AsyncWideK64 = MmaConfig<128, 128, 64, 2, 4, 3>;
using AsyncDec16 = MmaConfig<16, 16, 64, 1, 1, 4>;
using AsyncDec16s8 = MmaConfig<16, 16, 64, 1, 1, 8>;

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

// The kernels of one (op, operand type, output type): main wide, wide cluster 2, wide 64x128
// (one consumer), decode n32, decode n16, decode n64, mma_gemm, then the three wide ones with the
// TMA-store epilogue asked for (+tmaC).
typedef void (*LaunchFn)(const Problem&, int);
struct Kern { const char* name; int kind; LaunchFn f; };
struct Combo { int op; bool f16, f32out; std::vector<Kern> ks; };

template <typename TAB, typename TC, int OP>
static Combo make_combo() {
    Combo c{OP, __is_same(TAB, f16), __is_same(TC, float), {}};
    c.ks.push_back({"wide 128x256 s4", kWide, launch<kWide, wgmma_tma_gemm<TAB, TC, OP, WideCfg>>});
    c.ks.push_back({"mma_gemm 64x64x32", kSlow, launch<kSlow, mma_gemm<TAB, TC, OP, SlowCfg>>});
    c.ks.push_back({"async 128x128x32 s4", kSlow, launch<kSlow, mma_async_gemm<TAB, TC, OP, AsyncWide4>>});
    c.ks.push_back({"async 128x128x32 s3", kSlow, launch<kSlow, mma_async_gemm<TAB, TC, OP, AsyncWide3>>});
    c.ks.push_back({"async 64x64x32 s4", kSlow, launch<kSlow, mma_async_gemm<TAB, TC, OP, AsyncMid>>});
    c.ks.push_back({"async 16x32x64 s4", kSlow, launch<kSlow, mma_async_gemm<TAB, TC, OP, AsyncDec>>});
    c.ks.push_back({"async 128x128x64 s3", kSlow, launch<kSlow, mma_async_gemm<TAB, TC, OP, AsyncWideK64>>});
    // min_blocks = 2 (__launch_bounds__(256, 2): at most 128 registers, two CTAs an SM)
    c.ks.push_back({"async 128x128x32 s4 mb2", kSlow, launch<kSlow, mma_async_gemm<TAB, TC, OP, AsyncWide4>, false, 2>});
    c.ks.push_back({"async 128x128x32 s3 mb2", kSlow, launch<kSlow, mma_async_gemm<TAB, TC, OP, AsyncWide3>, false, 2>});
    c.ks.push_back({"async 16x16x64 s4", kSlow, launch<kSlow, mma_async_gemm<TAB, TC, OP, AsyncDec16>>});
    c.ks.push_back({"async 16x16x64 s8", kSlow, launch<kSlow, mma_async_gemm<TAB, TC, OP, AsyncDec16s8>>});
    return c;
}
enum { kMain = 0, kMma = 1, kAsync4 = 2, kAsync3 = 3, kAsyncMid = 4, kAsyncDec = 5, kAsyncK64 = 6, kAsync4mb2 = 7, kAsync3mb2 = 8,
       kAsyncDec16 = 9, kAsyncDec16s8 = 10, kKernels = 11 };

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

// (a) + (b) + (d): every kernel at every m equals the main wide kernel's first rows at M.
static void check_group(const Combo& cb, int M, int n, int k, int padA, int padB, long ldc, uint32_t seed,
                        const std::vector<int>& ms, double& worst_ref) {
    Setup S(cb, M, n, k, padA, padB, ldc, seed);
    const std::string base = combo_name(cb) + " n=" + std::to_string(n) + " k=" + std::to_string(k) + " lda=" +
                             std::to_string(S.A.ld) + " ldb=" + std::to_string(S.B.ld) + " ldc=" + std::to_string(ldc);
    std::vector<uint8_t> R = S.run(kMain, M);
    int nan = 0;
    double w = ref_check(S.L, R, ldc, M, n, k, 0.f, false, 300, &nan);
    worst_ref = std::max(worst_ref, w);
    verdict(nan == 0 && w <= 1.0, base + ": main wide at m=" + std::to_string(M) + " vs float64 (worst " + std::to_string(w) + ")");
    verdict(poison_intact(R, ldc, M, n, M + 2, S.es), base + ": main wide writes only rows < m, cols < n");
    int bad = 0, bad_values = 0;
    std::string first_bad;
    for (size_t ki = 0; ki < cb.ks.size(); ++ki) {
        for (int m : ms) {
            if (m > M || (ki == kMain && m == M)) continue;
            std::vector<uint8_t> X = S.run((int)ki, m);
            const bool values = rows_equal(X, R, ldc, m, n, S.es);
            bool ok = values && poison_intact(X, ldc, m, n, std::min(m + 2, M + 2), S.es);
            bad_values += !values;
            if (!ok) { if (!bad) first_bad = std::string(cb.ks[ki].name) + " m=" + std::to_string(m); ++bad; }
        }
    }
    verdict(bad == 0, base + ": all " + std::to_string(cb.ks.size()) + " kernels x m in {1..," + std::to_string(M) + "} bitwise == main wide rows at m=" +
                          std::to_string(M) + " and poison intact" +
                          (bad ? " (" + std::to_string(bad) + " bad, " + std::to_string(bad_values) + " in values, first " + first_bad + ")" : ""));
}

// (c) bias and beta: all kernels bitwise equal, main against float64.
static void check_epilogue(const Combo& cb, int m, int n, int k, long ldc, uint32_t seed, double& worst_ref) {
    Setup S(cb, m, n, k, 8, 0, ldc, seed);
    const float beta = cb.f32out ? 1.0f : 0.5f;
    struct E { float beta; unsigned flags; } es[3] = {{0.f, 1u}, {beta, 0u}, {beta, 1u}};
    for (auto e : es) {
        std::vector<uint8_t> R = S.run(kMain, m, e.beta, e.flags);
        int nan = 0;
        double w = ref_check(S.L, R, ldc, m, n, k, e.beta, e.flags & 1, 300, &nan);
        worst_ref = std::max(worst_ref, w);
        char what[200];
        snprintf(what, sizeof what, "%s %s bias=%u beta=%g", combo_name(cb).c_str(), shape_str(m, n, k).c_str(), e.flags, e.beta);
        verdict(nan == 0 && w <= 1.0, std::string(what) + ": main vs float64 (worst " + std::to_string(w) + ")");
        int bad = 0, bad_poison = 0;
        for (size_t ki = 1; ki < cb.ks.size(); ++ki) {
            std::vector<uint8_t> X = S.run((int)ki, m, e.beta, e.flags);
            bad += !(rows_equal(X, R, ldc, m, n, S.es));
            if (e.beta == 0.f) bad_poison += !poison_intact(X, ldc, m, n, m + 2, S.es);
        }
        verdict(bad == 0 && bad_poison == 0, std::string(what) + ": all " + std::to_string(cb.ks.size()) + " kernels bitwise equal" +
                                                 (e.beta == 0.f ? ", poison intact" : "") +
                                                 (bad || bad_poison ? " (" + std::to_string(bad) + " differ, " +
                                                                          std::to_string(bad_poison) + " wrote padding)" : ""));
    }
}

// (a) large.
static void check_large(const Combo& cb, int m, int n, int k, uint32_t seed, double& worst_ref) {
    Setup S(cb, m, n, k, 0, 0, n, seed);
    const std::string base = combo_name(cb) + " " + shape_str(m, n, k);
    std::vector<uint8_t> R = S.run(kMain, m);
    int nan = 0;
    double w = ref_check(S.L, R, n, m, n, k, 0.f, false, 200, &nan);
    worst_ref = std::max(worst_ref, w);
    verdict(nan == 0 && w <= 1.0, base + ": main vs float64 (worst " + std::to_string(w) + ")");
    int bad = 0;
    std::string which;
    for (size_t ki = 1; ki < cb.ks.size(); ++ki) {
        std::vector<uint8_t> X = S.run((int)ki, m);
        if (!rows_equal(X, R, n, m, n, S.es)) { ++bad; which += std::string(" ") + cb.ks[ki].name; }
    }
    verdict(bad == 0, base + ": all " + std::to_string(cb.ks.size()) + " kernels bitwise equal" + which);
}

// The plain-load kernels: k = 0 (epilogue only, exact), and odd leading dimensions / misaligned bases.
static void check_slow_only(const Combo& cb, uint32_t seed) {
    const int m = 100, n = 257;
    {  // k = 0
        Setup S(cb, m, n, 0, 0, 0, n + 1, seed);
        const float beta = cb.f32out ? 1.0f : 0.5f;
        int bad = 0;
        for (unsigned flags : {0u, 1u})
            for (float be : {0.f, beta}) {
                for (int ki = kMma; ki < kKernels; ++ki) {
                std::vector<uint8_t> X = S.run(ki, m, be, flags);
                for (int r = 0; r < m; ++r)
                    for (int c = 0; c < n; ++c) {
                        float v = 0.0f;
                        if (flags) v = v + S.L.bias(c);
                        if (be != 0.f) v = std::fmaf(be, S.L.c(r, c), v);
                        size_t idx = (size_t)r * S.C.ld + c;
                        if (cb.f32out) { bad += memcmp(&X[idx * 4], &v, 4) != 0; }
                        else {
                            uint16_t e;
                            if (cb.f16) { __half h = __float2half_rn(v); memcpy(&e, &h, 2); }
                            else { __nv_bfloat16 h = __float2bfloat16_rn(v); memcpy(&e, &h, 2); }
                            bad += memcmp(&X[idx * 2], &e, 2) != 0;
                        }
                    }
                bad += !poison_intact(X, S.C.ld, m, n, m + 2, S.es) && be == 0.f;
                }
            }
        verdict(bad == 0, combo_name(cb) + " mma_gemm and every async config at k=0 (acc = +0; bias, beta): exact epilogue");
    }
    {  // odd lda / ldb / ldc, bases off by 1 / 3 / 1 elements, same logical matrices
        const int k = 77;
        Setup S(cb, m, n, k, 0, 0, n, seed + 100);
        std::vector<uint8_t> R = S.run(kMain, m, 0.f, 1u);
        Mat A2, B2, C2;
        if (cb.op == kOpTN) A2.alloc(k, m, m + 1, 2, 1); else A2.alloc(m, k, k + 1, 2, 1);
        if (cb.op == kOpNT) B2.alloc(n, k, k + 3, 2, 3); else B2.alloc(k, n, n + 3, 2, 3);
        C2.alloc(m + 2, n, n + 1, S.es, 1);
        A2.fill(S.L.sa, cb.f16);
        B2.fill(S.L.sb, cb.f16);
        CHECK(cudaDeviceSynchronize());
        Problem pr{cb.op, cb.f16, cb.f32out, m, n, k, (int)A2.ld, (int)B2.ld, (int)C2.ld, A2.p, B2.p, S.bias.p, C2.p, 0.f, 1u};
        int bad = 0;
        for (int ki = kMma; ki < kKernels; ++ki) {
            C2.poison();
            cb.ks[ki].f(pr, 0);
            CHECK(cudaDeviceSynchronize());
            std::vector<uint8_t> X = C2.fetch(m + 2);
            for (int r = 0; r < m; ++r)
                bad += memcmp(&X[(size_t)r * C2.ld * S.es], &R[(size_t)r * n * S.es], (size_t)n * S.es) != 0;
            bad += !poison_intact(X, C2.ld, m, n, m + 1, S.es);
        }
        verdict(bad == 0, combo_name(cb) + " mma_gemm and every async config with odd lda/ldb/ldc and misaligned bases == main wide (with bias)");
        A2.free_(); B2.free_(); C2.free_();
    }
}

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

static void time_shape(const Combo& cb, int M, int N, int K, const std::vector<int>& kis, bool decode) {
    const size_t ba = (size_t)M * K * 2, bb = (size_t)K * N * 2, bc = (size_t)M * N * 2;
    const int sets = (int)std::min<size_t>(8, std::max<size_t>(1, (2 * (size_t)g_l2 + ba + bb + bc - 1) / (ba + bb + bc)));
    std::vector<Mat> As(sets), Bs(sets), Cs(sets);
    for (int s = 0; s < sets; ++s) {
        As[s].alloc(M, K, K, 2); Bs[s].alloc(K, N, N, 2); Cs[s].alloc(M, N, N, 2);
        As[s].fill(1000 + 2 * s, cb.f16); Bs[s].fill(1001 + 2 * s, cb.f16);
    }
    CHECK(cudaDeviceSynchronize());
    Timer tm;
    const int reps = (double)M * N * K > 1e11 ? 15 : 40;
    std::vector<std::vector<float>> t(kis.size());
    std::vector<float> tc;
    int s = 0;
    for (int i = 0; i < reps + 3; ++i) {
        for (size_t j = 0; j < kis.size(); ++j) {
            Problem pr{cb.op, cb.f16, cb.f32out, M, N, K, K, N, N, As[s].p, Bs[s].p, nullptr, Cs[s].p, 0.f, 0u};
            float x = tm.time([&] { cb.ks[kis[j]].f(pr, 0); });
            if (i >= 3) t[j].push_back(x);
            s = (s + 1) % sets;
        }
        if (g_have_cublas) {
            float x = tm.time([&] { cublas_gemm_nn(As[s].p, Bs[s].p, Cs[s].p, cb.f16, M, N, K); });
            if (i >= 3) tc.push_back(x);
            s = (s + 1) % sets;
        }
    }
    const float mc = g_have_cublas ? median(tc) : NAN;
    const double flop = 2.0 * M * N * K, bytes = (double)ba + bb + bc;
    for (size_t j = 0; j < kis.size(); ++j) {
        const float mo = median(t[j]);
        Row r{cb.f16 ? "f16" : "bf16", shape_str(M, N, K), cb.ks[kis[j]].name, 0, 0, mc / mo, decode};
        r.ours = decode ? bytes / mo * 1e-6 : flop / mo * 1e-9;
        r.cub = decode ? bytes / mc * 1e-6 : flop / mc * 1e-9;
        printf("  time %-5s %-18s %-26s %9.4f ms  %8.1f %s   cuBLAS %9.4f ms %8.1f   ratio %.3f  (%d input sets)\n", r.dtype.c_str(),
               r.shape.c_str(), r.kernel.c_str(), mo, r.ours, decode ? "GB/s   " : "TFLOP/s", mc, r.cub, r.ratio, sets);
        g_rows.push_back(r);
    }
    for (int q = 0; q < sets; ++q) { As[q].free_(); Bs[q].free_(); Cs[q].free_(); }
}

// ------------------------------------------------------------------------------------------
// (g) TF32 (contract tc-tf32-k8): mma_async_gemm<float> bitwise equal to mma_gemm<float> (the
// TF32 path of the any-alignment kernel), f32 operands with full 23-bit mantissas (so the
// truncation to TF32 matters), nn / nt / tn, bias, beta = 1, odd n, k = 0, 1, 17, ragged m.
// ------------------------------------------------------------------------------------------
__global__ void fill_f32_full(float* p, long count, uint32_t seed) {
    for (long i = blockIdx.x * (long)blockDim.x + threadIdx.x; i < count; i += (long)gridDim.x * blockDim.x) {
        uint32_t h = mix(mix(seed * 0x9E3779B1u ^ (uint32_t)i) ^ (uint32_t)(i >> 32));
        uint32_t sign = h >> 31, e = (h >> 23) % 7;  // 2^-6 .. 2^0, full mantissa
        p[i] = __uint_as_float((sign << 31) | ((127 - e) << 23) | (mix(h) & 0x7FFFFF));
    }
}
using Tf32Launch = void (*)(const Problem&, int);
struct Tf32Kern { const char* name; Tf32Launch f; };
template <int OP>
static std::vector<Tf32Kern> tf32_kernels() {
    return {{"mma_gemm tf32 64x64x32", launch<kSlow, mma_gemm<float, float, OP, SlowCfg>>},
            {"async tf32 128x128x32 s3", launch<kSlow, mma_async_gemm<float, float, OP, AsyncWide3>>},
            {"async tf32 64x64x32 s4", launch<kSlow, mma_async_gemm<float, float, OP, AsyncMid>>},
            {"async tf32 16x32x64 s4", launch<kSlow, mma_async_gemm<float, float, OP, AsyncDec>>}};
}
static void check_tf32(int op, const std::vector<Tf32Kern>& ks, uint32_t seed) {
    struct S { int m, n, k; long pad; } shapes[] = {{1, 333, 1, 0}, {17, 257, 17, 4}, {300, 1000, 77, 0}, {100, 64, 0, 0},
                                                    {1000, 520, 1000, 8}, {2048, 1024, 2048, 0}, {300, 1000, 77, 1}};  // pad 1: rows off 16 bytes
    for (auto sh : shapes) {
        const int m = sh.m, n = sh.n, k = sh.k;
        const long lda = (op == kOpTN ? (m + 3) / 4 * 4 : (k + 3) / 4 * 4) + sh.pad, ldb = (op == kOpNT ? (k + 3) / 4 * 4 : (n + 3) / 4 * 4) + sh.pad;
        const long ldc = n + 4;
        const long arows = op == kOpTN ? std::max(k, 1) : m, brows = op == kOpNT ? n : std::max(k, 1);
        float *A, *B, *bias, *C, *C0;
        CHECK(cudaMalloc(&A, arows * lda * 4)); CHECK(cudaMalloc(&B, brows * ldb * 4));
        CHECK(cudaMalloc(&bias, n * 4)); CHECK(cudaMalloc(&C, (m + 2) * ldc * 4)); CHECK(cudaMalloc(&C0, (m + 2) * ldc * 4));
        fill_f32_full<<<256, 256>>>(A, arows * lda, seed * 7 + 1);
        fill_f32_full<<<256, 256>>>(B, brows * ldb, seed * 7 + 2);
        fill_f32_full<<<64, 256>>>(bias, n, seed * 7 + 3);
        fill_f32_full<<<256, 256>>>(C0, (m + 2) * ldc, seed * 7 + 4);
        CHECK(cudaDeviceSynchronize());
        for (auto e : {std::make_pair(0.f, 0u), std::make_pair(0.f, 1u), std::make_pair(1.f, 1u)}) {
            std::vector<std::vector<uint8_t>> outs;
            for (auto& kn : ks) {
                if (e.first != 0.f) CHECK(cudaMemcpy(C, C0, (m + 2) * ldc * 4, cudaMemcpyDeviceToDevice));
                else CHECK(cudaMemset(C, 0xFF, (m + 2) * ldc * 4));
                Problem pr{op, false, true, m, n, k, (int)lda, (int)ldb, (int)ldc, A, B, bias, C, e.first, e.second};
                kn.f(pr, 0);
                CHECK(cudaDeviceSynchronize());
                std::vector<uint8_t> h((m + 2) * ldc * 4);
                CHECK(cudaMemcpy(h.data(), C, h.size(), cudaMemcpyDeviceToHost));
                outs.push_back(h);
            }
            int bad = 0;
            std::string which;
            for (size_t i = 1; i < outs.size(); ++i) {
                bool ok = rows_equal(outs[i], outs[0], ldc, m, n, 4) && (e.first != 0.f || poison_intact(outs[i], ldc, m, n, m + 2, 4));
                if (!ok) { ++bad; which += std::string(" ") + ks[i].name; }
            }
            char what[200];
            snprintf(what, sizeof what, "tf32 %s %dx%dx%d lda=%ld ldb=%ld bias=%u beta=%g", op_name(op), m, n, k, lda, ldb, e.second, e.first);
            verdict(bad == 0, std::string(what) + ": every async config bitwise == mma_gemm tf32" + which);
        }
        CHECK(cudaFree(A)); CHECK(cudaFree(B)); CHECK(cudaFree(bias)); CHECK(cudaFree(C)); CHECK(cudaFree(C0));
    }
}
static void time_tf32(const std::vector<Tf32Kern>& ks, int M, int N, int K) {
    float *A, *B, *C;
    CHECK(cudaMalloc(&A, (size_t)M * K * 4)); CHECK(cudaMalloc(&B, (size_t)K * N * 4)); CHECK(cudaMalloc(&C, (size_t)M * N * 4));
    fill_f32_full<<<1024, 256>>>(A, (long)M * K, 5); fill_f32_full<<<1024, 256>>>(B, (long)K * N, 6);
    CHECK(cudaDeviceSynchronize());
    Timer tm;
    for (auto& kn : ks) {
        std::vector<float> t;
        for (int i = 0; i < 12; ++i) {
            Problem pr{kOpNN, false, true, M, N, K, K, N, N, A, B, nullptr, C, 0.f, 0u};
            float x = tm.time([&] { kn.f(pr, 0); });
            if (i >= 2) t.push_back(x);
        }
        const float mo = median(t);
        printf("  time tf32 nn %-16s %-26s %9.4f ms  %8.1f TFLOP/s\n", shape_str(M, N, K).c_str(), kn.name, mo, 2.0 * M * N * K / mo * 1e-9);
    }
    CHECK(cudaFree(A)); CHECK(cudaFree(B)); CHECK(cudaFree(C));
}

// ------------------------------------------------------------------------------------------
int main(int argc, char** argv) {
    setvbuf(stdout, nullptr, _IOLBF, 0);
    const bool small = argc > 1 && strcmp(argv[1], "small") == 0;  // for compute-sanitizer
    const bool no_timing = argc > 1 && strcmp(argv[1], "notime") == 0;
    const bool probe = argc > 1 && strcmp(argv[1], "probe") == 0;  // does this binary run here?
    cudaDeviceProp prop;
    CHECK(cudaGetDeviceProperties(&prop, 0));
    g_sms = prop.multiProcessorCount;
    g_l2 = prop.l2CacheSize;
    int drv = 0, rt = 0;
    cudaDriverGetVersion(&drv);
    cudaRuntimeGetVersion(&rt);
    printf("device: %s, %d SMs, L2 %d MiB, driver %d, runtime %d\n", prop.name, g_sms, g_l2 >> 20, drv, rt);
    cudaDriverEntryPointQueryResult q;
    CHECK(cudaGetDriverEntryPointByVersion("cuTensorMapEncodeTiled", (void**)&g_encode, 12000, cudaEnableDefault, &q));
    if (!g_encode || q != cudaDriverEntryPointSuccess) { printf("no cuTensorMapEncodeTiled\n"); return 1; }
    if (probe) return 0;

    std::vector<Combo> combos = {
        make_combo<bf16, bf16, kOpNN>(), make_combo<bf16, float, kOpNN>(), make_combo<f16, f16, kOpNN>(), make_combo<f16, float, kOpNN>(),
        make_combo<bf16, bf16, kOpNT>(), make_combo<bf16, float, kOpNT>(), make_combo<f16, f16, kOpNT>(), make_combo<f16, float, kOpNT>(),
        make_combo<bf16, bf16, kOpTN>(), make_combo<bf16, float, kOpTN>(), make_combo<f16, f16, kOpTN>(), make_combo<f16, float, kOpTN>(),
    };
    using W = wgmma_tma_gemm<bf16, bf16, kOpNN, WideCfg>;
    using A4 = mma_async_gemm<bf16, bf16, kOpNN, AsyncWide4>;
    using A3 = mma_async_gemm<bf16, bf16, kOpNN, AsyncWide3>;
    using AM = mma_async_gemm<bf16, bf16, kOpNN, AsyncMid>;
    using AD = mma_async_gemm<bf16, bf16, kOpNN, AsyncDec>;
    printf("kernels: wide 128x256x64 s4: %d threads, %d B; async 128x128x32 s4 %d threads %d B, s3 %d B; 64x64x32 s4 %d threads "
           "%d B; 16x32x64 s4 %d threads %d B\n", W::kThreads, W::kSharedBytes, A4::kThreads, A4::kSharedBytes, A3::kSharedBytes,
           AM::kThreads, AM::kSharedBytes, AD::kThreads, AD::kSharedBytes);

    double worst = 0;
    if (argc > 1 && strcmp(argv[1], "tf32") == 0) {  // (g) and (g') alone
        printf("\n== (g) TF32: mma_async_gemm<float> == mma_gemm<float> bitwise ==\n");
        check_tf32(kOpNN, tf32_kernels<kOpNN>(), 900);
        check_tf32(kOpNT, tf32_kernels<kOpNT>(), 901);
        check_tf32(kOpTN, tf32_kernels<kOpTN>(), 902);
        printf("checks: %d, failed: %d\n", g_checks, g_fail);
        printf("\n== (g') TF32 timing ==\n");
        for (int M : {4096, 1024}) time_tf32(tf32_kernels<kOpNN>(), M, 4096, 4096);
        for (size_t i = 0; i < g_failures.size() && i < 40; ++i) printf("  FAILED %s\n", g_failures[i].c_str());
        printf(g_fail ? "TF32 CHECKS FAILED\n" : "ALL TF32 CHECKS PASSED (%d checks)\n", g_checks);
        return g_fail ? 1 : 0;
    }
    if (small) {  // a few launches of every kind, for compute-sanitizer
        for (int ci : {0, 7, 9}) {
            const Combo& cb = combos[ci];
            check_group(cb, 40, 70, 77, 8, 0, 70, 1, {1, 17}, worst);
            check_group(cb, 140, 70, 77, 8, 0, 72, 4, {1, 65}, worst);
            check_epilogue(cb, 20, 40, 40, 41, 2, worst);
            check_epilogue(cb, 70, 100, 40, 104, 5, worst);
            check_slow_only(cb, 3);
        }
    } else {
        printf("\n== (a) (b) (d): all kernels x m in {1, 7, 16, 17, 100, 300, 1000} == wide wgmma rows at m = 4096 ==\n");
        const std::vector<int> ms = {1, 7, 16, 17, 100, 300, 1000, 4096};
        struct G5 { int n, k, padA, padB; long ldc; } groups[] = {
            {333, 1, 0, 0, 333}, {257, 77, 8, 16, 264}, {1000, 1000, 0, 0, 1000}, {520, 4096, 8, 8, 526}, {200, 48, 0, 8, 201}, {1, 33, 8, 0, 1},
            {333, 1, 0, 0, 344}, {200, 48, 0, 8, 208}, {1, 33, 8, 0, 8}, {64, 17, 0, 0, 64},
        };
        uint32_t seed = 10;
        for (auto& cb : combos)
            for (auto& g : groups) check_group(cb, 4096, g.n, g.k, g.padA, g.padB, g.ldc, seed++, ms, worst);
        printf("\n== (c) bias and beta (beta = 1 into f32, 0.5 into 16-bit) ==\n");
        for (auto& cb : combos) {
            check_epilogue(cb, 300, 257, 77, 260, seed++, worst);
            check_epilogue(cb, 1000, 1000, 1000, 1001, seed++, worst);
            check_epilogue(cb, 300, 257, 77, 264, seed++, worst);
            check_epilogue(cb, 1000, 1000, 1000, 1008, seed++, worst);
        }
        for (auto& cb : combos)
            if (cb.op == kOpTN && cb.f32out) check_epilogue(cb, 1024, 1024, 8192, 1024, seed++, worst);  // dW = X^T dY, beta = 1
        printf("\n== plain-load kernels: k = 0, odd leading dimensions, misaligned bases ==\n");
        for (auto& cb : combos) check_slow_only(cb, seed++);
        printf("\n== (a) large 2048x4096x4096 ==\n");
        for (auto& cb : combos) check_large(cb, 2048, 4096, 4096, seed++, worst);
        printf("\n== (g) TF32: mma_async_gemm<float> == mma_gemm<float> bitwise ==\n");
        check_tf32(kOpNN, tf32_kernels<kOpNN>(), seed++);
        check_tf32(kOpNT, tf32_kernels<kOpNT>(), seed++);
        check_tf32(kOpTN, tf32_kernels<kOpTN>(), seed++);
    }
    printf("worst |err| / bound against float64: %.4f\n", worst);
    printf("checks: %d, failed: %d\n", g_checks, g_fail);

    if (!small && !no_timing) {
        g_have_cublas = cublas_open();
        if (!g_have_cublas) printf("cuBLAS not available: its columns are NaN\n");
        printf("\n== (f) timing (nn, out = operand type; medians of events; ratio = cuBLAS time / ours) ==\n");
        const int nk_pairs[4][2] = {{4096, 4096}, {14336, 4096}, {4096, 14336}, {8192, 8192}};
        for (int ci : {0, 2}) {
            const Combo& cb = combos[ci];
            for (int M : {4096, 1024})
                for (auto& p : nk_pairs) time_shape(cb, M, p[0], p[1], {kMain, kAsync4, kAsync3, kAsync4mb2, kAsync3mb2}, false);
            for (int M : {256, 64})
                for (int pi : {0, 1}) time_shape(cb, M, nk_pairs[pi][0], nk_pairs[pi][1], {kMain, kAsync4mb2, kAsyncMid}, false);
            for (int M : {1, 16})
                for (int pi : {0, 1, 2}) time_shape(cb, M, nk_pairs[pi][0], nk_pairs[pi][1], {kAsyncDec, kAsyncDec16, kAsyncDec16s8}, true);
        }
        printf("\n== (g') TF32 timing ==\n");
        for (int M : {4096, 1024}) time_tf32(tf32_kernels<kOpNN>(), M, 4096, 4096);
        printf("\n%-5s %-18s %-26s %10s %10s %7s\n", "type", "MxNxK", "kernel", "ours", "cuBLAS", "ratio");
        for (auto& r : g_rows)
            printf("%-5s %-18s %-26s %10.1f %10.1f %7.3f%s\n", r.dtype.c_str(), r.shape.c_str(), r.kernel.c_str(), r.ours, r.cub,
                   r.ratio, r.gbs ? "  GB/s" : "");
        printf("(TFLOP/s, or GB/s for decode rows: bytes = A + B + C once)\n");
    }
    if (g_fail) {
        printf("FAILURES (%d of %d checks):\n", g_fail, g_checks);
        for (size_t i = 0; i < g_failures.size() && i < 40; ++i) printf("  %s\n", g_failures[i].c_str());
        return 1;
    }
    printf("ALL CHECKS PASSED (%d checks)\n", g_checks);
    return 0;
}
