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
#include "tc_check_common.cuh"
using AsyncWide4 = MmaConfig<128, 128, 32, 2, 4, 4>;  // sm80, sm100a
using AsyncWide3 = MmaConfig<128, 128, 32, 2, 4, 3>;  // sm89, sm120
using AsyncMid = MmaConfig<64, 64, 32, 2, 2, 4>;
using AsyncDec = MmaConfig<16, 32, 64, 1, 2, 4>;
using AsyncWideK64 = MmaConfig<128, 128, 64, 2, 4, 3>;
using AsyncDec16 = MmaConfig<16, 16, 64, 1, 1, 4>;
using AsyncDec16s8 = MmaConfig<16, 16, 64, 1, 1, 8>;

// The kernels of one (op, operand type, output type): the main wide wgmma kernel (the reference),
// mma_gemm, then the mma_async_gemm configs (kernel ids in the enum below).

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
