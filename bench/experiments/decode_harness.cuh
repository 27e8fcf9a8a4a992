// The harness of decode_race.cu: the generated decode kernels' configs and argument struct,
// hashed random data, tensor-map encoding as the runtime does it, a launch of a decode kernel,
// stored matrices with NaN padding. Nothing here restates a number of the templates: the
// configs (tiles, threads, shared memory, boxes, swizzles) and TcGemmArgs come from the
// generator's sm90a output (decode_race.sh builds it with `gemm-aot build --no-cubins`), whose
// unit tcdec.cu this includes.
#pragma once
#include <cuda.h>
#include <cuda_runtime.h>
#include <cuda_bf16.h>
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "sm90a/tcdec.cu"  // gemm_abi.h, mma/mma_decode_tma.cuh and every tcdec kernel's config

#include "cuda_check.cuh"

using bf16 = __nv_bfloat16;
// The shipped decode tiles (sm90a.toml: tcdec.dec64, tcdec.dec32), NN bf16 -> bf16.
using Dec64Cfg = gemm_sm90a_tcdec_nn_bf16_bf16_f32_dec64_m16n64k64_cfg;
using Dec32Cfg = gemm_sm90a_tcdec_nn_bf16_bf16_f32_dec32_m16n32k64_cfg;

// The entry of one variant, with the launch bounds the generated entries of tcdec.cu have.
template <class K, class Cfg>
__global__ void __launch_bounds__(Cfg::kThreads) decode_kernel(const __grid_constant__ TcGemmArgs p) {
    K::run(p);
}

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
static int g_sms = 0;

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

// One launch of decode kernel K (template instance) with config Cfg: its maps encoded from the
// config's boxes, grid (ceil(m / 16), ceil(n / N)).
template <class K, class Cfg>
static void launch_decode(const Problem& pr, int = 0) {
    static bool init = false;
    if (!init) {
        CHECK(cudaFuncSetAttribute(decode_kernel<K, Cfg>, cudaFuncAttributeMaxDynamicSharedMemorySize, Cfg::kSharedBytes));
        init = true;
    }
    TcGemmArgs p;
    memset(&p, 0, sizeof p);
    p.a = pr.A; p.b = pr.B; p.bias = pr.bias; p.c = pr.C;
    p.m = pr.m; p.n = pr.n; p.k = pr.k; p.lda = pr.lda; p.ldb = pr.ldb; p.ldc = pr.ldc;
    p.beta = pr.beta; p.flags = pr.flags;
    const bool a_kmaj = pr.op != kOpTN, b_kmaj = pr.op == kOpNT;
    p.a_map = a_kmaj ? make_map(pr.A, pr.f16, pr.k, pr.m, pr.lda, Cfg::kABoxInner, Cfg::kABoxOuter, Cfg::kSwizzleA)
                     : make_map(pr.A, pr.f16, pr.m, pr.k, pr.lda, Cfg::kABoxInner, Cfg::kABoxOuter, Cfg::kSwizzleA);
    p.b_map = b_kmaj ? make_map(pr.B, pr.f16, pr.k, pr.n, pr.ldb, Cfg::kBBoxInner, Cfg::kBBoxOuter, Cfg::kSwizzleB)
                     : make_map(pr.B, pr.f16, pr.n, pr.k, pr.ldb, Cfg::kBBoxInner, Cfg::kBBoxOuter, Cfg::kSwizzleB);
    decode_kernel<K, Cfg><<<dim3((pr.m + Cfg::M - 1) / Cfg::M, (pr.n + Cfg::N - 1) / Cfg::N), Cfg::kThreads, Cfg::kSharedBytes>>>(p);
    CHECK(cudaGetLastError());
}
typedef void (*LaunchFn)(const Problem&, int);

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

static float median(std::vector<float> v) { std::sort(v.begin(), v.end()); return v[v.size() / 2]; }

// The device's properties, g_sms and the driver's tensor-map encoder; false (with a message)
// when the driver has no cuTensorMapEncodeTiled.
static bool harness_init(cudaDeviceProp& prop) {
    CHECK(cudaGetDeviceProperties(&prop, 0));
    g_sms = prop.multiProcessorCount;
    cudaDriverEntryPointQueryResult q;
    CHECK(cudaGetDriverEntryPointByVersion("cuTensorMapEncodeTiled", (void**)&g_encode, 12000, cudaEnableDefault, &q));
    if (!g_encode || q != cudaDriverEntryPointSuccess) { printf("no cuTensorMapEncodeTiled\n"); return false; }
    return true;
}
