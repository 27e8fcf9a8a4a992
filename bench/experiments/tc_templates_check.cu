// Standalone GPU check of the tensor-core policy's templates (contract tc-k16, docs/tensor-core.md):
// kernels-templates/wgmma/wgmma_tma_gemm.cuh, mma/mma_decode_tma.cuh, mma/mma_gemm.cuh.
//
// Checks, on random data (random signs, exponents 2^-6..2^0, full mantissas; never zeros;
// outputs poisoned with NaN first, padding of every buffer NaN):
//  (a) the three kinds (and the extra configs: cluster 2, 64x128 one consumer, decode n16 / n64;
//      and the three wide configs again with flags bit 1 set, kGemmFlagCTensorMap: C written
//      through the TMA-store epilogue and p.c_map whenever C can take TMA) are bitwise equal to each other for nn, nt, tn x {bf16, f16} x {same-type, f32} out, over
//      odd n, k = 1, k not a multiple of 16, padded leading dimensions, m in {1, 7, 16, 17, 100,
//      300, 1000, 4096} and 2048 x 4096 x 4096; mma_gemm also at k = 0, with odd lda / ldb / ldc
//      and misaligned bases (same logical matrices); padding of C and rows past m stay NaN with the
//      bit off and on (the TMA store clips at the map's rows = m, columns = n);
//  (b) against a float64 host reference: |out - ref| <= u_out |ref| + 4 K16 2^-24 S
//      (S = sum |a b| + |bias| + |beta c|, K16 = k rounded up to 16, u_out = 2^-8 bf16, 2^-11 f16,
//      2^-24 f32);
//  (c) bias and beta (beta = 1 into f32: the tn weight-gradient case; beta = 0.5 into 16-bit);
//  (c') beta != 0 with the bit on and C TMA-able (the old C comes through TMA loads into the
//       staging buffer), ragged m / n, full grid and 7 CTAs: +tmaC and mma_gemm bitwise == bit off;
//       mode "beta" runs (c), (c') and (f'): tn 4096x14336x4096 f32 out, beta = 1, bit off vs on;
//  (d) row invariance: rows 0..m-1 at m in {1, ..., 1000} equal the first rows at m = 4096;
//  (e) the persistent wide kernel on half the SMs' worth of CTAs (and 37) equals the full grid;
//  (f) timing against cuBLAS (cublasGemmEx, default algorithm), nn, bf16 and f16; the wide
//      configs with the bit off and on (+tmaC).
// Build: see tc_templates_check.sh. Without -DHAVE_CUBLAS, cuBLAS is opened at run time (dlopen).
#include "tc_check_common.cuh"

// The kernels of one (op, operand type, output type): main wide, wide cluster 2, wide 64x128
// (one consumer), decode n32, decode n16, decode n64, mma_gemm, then the three wide ones with the
// TMA-store epilogue asked for (+tmaC).

template <typename TAB, typename TC, int OP>
static Combo make_combo() {
    Combo c{OP, __is_same(TAB, f16), __is_same(TC, float), {}};
    c.ks.push_back({"wide 128x256 s4", kWide, launch<kWide, wgmma_tma_gemm<TAB, TC, OP, WideCfg>>});
    c.ks.push_back({"wide 128x256 s4 cluster2", kWide, launch<kWide, wgmma_tma_gemm<TAB, TC, OP, WideC2Cfg>>});
    c.ks.push_back({"wide 64x128 s6", kWide, launch<kWide, wgmma_tma_gemm<TAB, TC, OP, WideSmallCfg>>});
    c.ks.push_back({"decode n32 s8", kDecode, launch<kDecode, mma_decode_tma<TAB, TC, OP, DecCfg>>});
    c.ks.push_back({"decode n16 s8", kDecode, launch<kDecode, mma_decode_tma<TAB, TC, OP, Dec16Cfg>>});
    c.ks.push_back({"decode n64 s8", kDecode, launch<kDecode, mma_decode_tma<TAB, TC, OP, Dec64Cfg>>});
    c.ks.push_back({"mma_gemm 64x64x32", kSlow, launch<kSlow, mma_gemm<TAB, TC, OP, SlowCfg>>});
    c.ks.push_back({"wide 128x256 s4 +tmaC", kWide, launch<kWide, wgmma_tma_gemm<TAB, TC, OP, WideCfg>, true>});
    c.ks.push_back({"wide 128x256 s4 c2 +tmaC", kWide, launch<kWide, wgmma_tma_gemm<TAB, TC, OP, WideC2Cfg>, true>});
    c.ks.push_back({"wide 64x128 s6 +tmaC", kWide, launch<kWide, wgmma_tma_gemm<TAB, TC, OP, WideSmallCfg>, true>});
    return c;
}
enum { kMain = 0, kC2 = 1, kSmall = 2, kDec = 3, kDec16 = 4, kDec64 = 5, kMma = 6, kMainT = 7, kC2T = 8, kSmallT = 9 };


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

// (c') beta != 0 through the TMA-store epilogue's TMA loads of the old C (bit on, n * size % 16
// == 0): the +tmaC kernels, on the full grid and on 7 CTAs (several tiles per CTA: the staging
// buffer and its mbarrier reused across tiles), and mma_gemm, bitwise equal to the main wide
// kernel with the bit off (direct path, old C through global loads); main against float64.
static void check_beta_tma(const Combo& cb, int m, int n, int k, long ldc, uint32_t seed, double& worst_ref) {
    Setup S(cb, m, n, k, 8, 0, ldc, seed);
    const float beta = cb.f32out ? 1.0f : 0.5f;
    const bool takes = (n * S.es) % 16 == 0 && (ldc * S.es) % 16 == 0;
    for (unsigned flags : {0u, 1u}) {
        std::vector<uint8_t> R = S.run(kMain, m, beta, flags);
        int nan = 0;
        double w = ref_check(S.L, R, ldc, m, n, k, beta, flags & 1, 300, &nan);
        worst_ref = std::max(worst_ref, w);
        char what[200];
        snprintf(what, sizeof what, "%s %s ldc=%ld bias=%u beta=%g (TMA load of old C: %s)", combo_name(cb).c_str(),
                 shape_str(m, n, k).c_str(), ldc, flags, beta, takes ? "yes" : "no");
        verdict(nan == 0 && w <= 1.0, std::string(what) + ": main (bit off) vs float64 (worst " + std::to_string(w) + ")");
        int bad = 0;
        std::string which;
        for (int ki : {kMainT, kC2T, kSmallT, kMma})
            for (int ctas : {0, 7}) {
                if (ki == kMma && ctas) continue;
                std::vector<uint8_t> X = S.run(ki, m, beta, flags, ki == kC2T && ctas ? 8 : ctas);
                if (!rows_equal(X, R, ldc, m, n, S.es)) { ++bad; which += std::string(" ") + cb.ks[ki].name + (ctas ? "@7" : ""); }
            }
        verdict(bad == 0, std::string(what) + ": +tmaC x {full grid, 7 CTAs} and mma_gemm bitwise == main bit off" + which);
    }
}

// (a) large + (e) persistent grid size.
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
    bad = 0;
    for (int ctas : {g_sms / 2, 37}) {
        std::vector<uint8_t> X = S.run(kMain, m, 0.f, 0, ctas);
        bad += !rows_equal(X, R, n, m, n, S.es);
        X = S.run(kC2, m, 0.f, 0, ctas / 2 * 2);
        bad += !rows_equal(X, R, n, m, n, S.es);
        X = S.run(kMainT, m, 0.f, 0, ctas);
        bad += !rows_equal(X, R, n, m, n, S.es);
        X = S.run(kC2T, m, 0.f, 0, ctas / 2 * 2);
        bad += !rows_equal(X, R, n, m, n, S.es);
    }
    verdict(bad == 0, base + ": persistent wide (c1, c2; bit off and on) on " + std::to_string(g_sms / 2) + " and 37/36 CTAs == full grid");
}

// mma_gemm alone: k = 0 (epilogue only, exact), and odd leading dimensions / misaligned bases.
static void check_slow_only(const Combo& cb, uint32_t seed) {
    const int m = 100, n = 257;
    {  // k = 0
        Setup S(cb, m, n, 0, 0, 0, n + 1, seed);
        const float beta = cb.f32out ? 1.0f : 0.5f;
        int bad = 0;
        for (unsigned flags : {0u, 1u})
            for (float be : {0.f, beta}) {
                std::vector<uint8_t> X = S.run(kMma, m, be, flags);
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
        verdict(bad == 0, combo_name(cb) + " mma_gemm k=0 (acc = +0; bias, beta): exact epilogue");
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
        cb.ks[kMma].f(pr, 0);
        CHECK(cudaDeviceSynchronize());
        std::vector<uint8_t> X = C2.fetch(m + 2);
        int bad = 0;
        for (int r = 0; r < m; ++r)
            bad += memcmp(&X[(size_t)r * C2.ld * S.es], &R[(size_t)r * n * S.es], (size_t)n * S.es) != 0;
        bad += !poison_intact(X, C2.ld, m, n, m + 1, S.es);
        verdict(bad == 0, combo_name(cb) + " mma_gemm with odd lda/ldb/ldc and misaligned bases == main wide (with bias)");
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

// Timing of the tn weight gradient (dW = X^T dY into f32, beta = 1) at M x N x K: the main wide
// kernel with the bit off (old C through global loads) and on (TMA loads), and beta = 0 for scale.
static void time_tn_beta(const Combo& cb, int M, int N, int K) {
    Mat A, B, C;
    A.alloc(K, M, M, 2); B.alloc(K, N, N, 2); C.alloc(M, N, N, 4);
    A.fill(2001, cb.f16); B.fill(2002, cb.f16); C.fill(2003, false);
    CHECK(cudaDeviceSynchronize());
    Timer tm;
    struct V { int ki; float beta; const char* name; } vs[] = {
        {kMain, 1.f, "wide beta=1 bit off"}, {kMainT, 1.f, "wide beta=1 bit on"}, {kMainT, 0.f, "wide beta=0 bit on"}};
    std::vector<std::vector<float>> t(3);
    for (int i = 0; i < 12 + 2; ++i)
        for (int j = 0; j < 3; ++j) {
            Problem pr{cb.op, cb.f16, cb.f32out, M, N, K, M, N, N, A.p, B.p, nullptr, C.p, vs[j].beta, 0u};
            float x = tm.time([&] { cb.ks[vs[j].ki].f(pr, 0); });
            if (i >= 2) t[j].push_back(x);
        }
    for (int j = 0; j < 3; ++j) {
        const float mo = median(t[j]);
        printf("  time %-5s tn f32 out %-16s %-22s %9.4f ms  %8.1f TFLOP/s\n", cb.f16 ? "f16" : "bf16", shape_str(M, N, K).c_str(),
               vs[j].name, mo, 2.0 * M * N * K / mo * 1e-9);
    }
    A.free_(); B.free_(); C.free_();
}

// ------------------------------------------------------------------------------------------
int main(int argc, char** argv) {
    setvbuf(stdout, nullptr, _IOLBF, 0);
    const bool small = argc > 1 && strcmp(argv[1], "small") == 0;  // for compute-sanitizer
    const bool no_timing = argc > 1 && strcmp(argv[1], "notime") == 0;
    const bool probe = argc > 1 && strcmp(argv[1], "probe") == 0;  // does this binary run here?
    const bool beta_only = argc > 1 && strcmp(argv[1], "beta") == 0;  // (c), (c') and the tn beta timing
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
    using D = mma_decode_tma<bf16, bf16, kOpNN, DecCfg>;
    using G = mma_gemm<bf16, bf16, kOpNN, SlowCfg>;
    CHECK(cudaFuncSetAttribute(tc_kernel<W>, cudaFuncAttributeMaxDynamicSharedMemorySize, W::kSharedBytes));
    printf("kernels: wide 128x256x64 s4: %d threads, %d B smem, %d co-resident CTAs; decode 16x32x64 s8: %d threads, %d B; "
           "mma_gemm 64x64x32: %d threads, %d B\n", W::kThreads, W::kSharedBytes, max_ctas<W>(), D::kThreads,
           D::kSharedBytes, G::kThreads, G::kSharedBytes);
    using WF = wgmma_tma_gemm<bf16, float, kOpNN, WideCfg>;
    using WS = wgmma_tma_gemm<bf16, bf16, kOpNN, WideSmallCfg>;
    printf("C tensor map (TMA-store epilogue, flags bit %u): box %d x %d, swizzle %d (16-bit C), %d x %d, swizzle %d (f32 C); "
           "staging %d B (128x256, any C), %d B (64x128); smem 128x256 s4 f32 C %d B, 64x128 s6 %d B\n",
           kGemmFlagCTensorMap, W::kCBoxInner, W::kCBoxOuter, W::kSwizzleC, WF::kCBoxInner, WF::kCBoxOuter, WF::kSwizzleC, W::kCBytes,
           WS::kCBytes, WF::kSharedBytes, WS::kSharedBytes);

    double worst = 0;
    if (beta_only) {
        uint32_t seed = 500;
        printf("\n== (c) bias and beta (beta = 1 into f32, 0.5 into 16-bit) ==\n");
        for (auto& cb : combos) {
            check_epilogue(cb, 300, 257, 77, 264, seed++, worst);
            check_epilogue(cb, 1000, 1000, 1000, 1008, seed++, worst);
        }
        for (auto& cb : combos)
            if (cb.op == kOpTN && cb.f32out) check_epilogue(cb, 1024, 1024, 8192, 1024, seed++, worst);  // dW = X^T dY, beta = 1
        printf("\n== (c') beta != 0 with the TMA-store epilogue (old C through TMA loads), ragged m / n ==\n");
        for (auto& cb : combos) {
            check_beta_tma(cb, 300, 264, 77, 264, seed++, worst);    // n past the last box, m past consumer 0 of a tile
            check_beta_tma(cb, 1000, 1000, 200, 1008, seed++, worst);
            check_beta_tma(cb, 77, 40, 64, 48, seed++, worst);       // one tile, n < a box
        }
    } else if (small) {  // a few launches of every kind, for compute-sanitizer
        for (int ci : {0, 7, 9}) {
            const Combo& cb = combos[ci];
            check_group(cb, 40, 70, 77, 8, 0, 70, 1, {1, 17}, worst);
            check_group(cb, 140, 70, 77, 8, 0, 72, 4, {1, 65}, worst);  // C takes TMA: +tmaC sets the bit
            check_epilogue(cb, 20, 40, 40, 41, 2, worst);
            check_epilogue(cb, 70, 100, 40, 104, 5, worst);
            check_slow_only(cb, 3);
        }
    } else {
        printf("\n== (a) (b) (d): all kernels x m in {1, 7, 16, 17, 100, 300, 1000} == first rows at m = 4096 ==\n");
        const std::vector<int> ms = {1, 7, 16, 17, 100, 300, 1000, 4096};
        struct G5 { int n, k, padA, padB; long ldc; } groups[] = {
            {333, 1, 0, 0, 333}, {257, 77, 8, 16, 264}, {1000, 1000, 0, 0, 1000}, {520, 4096, 8, 8, 526}, {200, 48, 0, 8, 201}, {1, 33, 8, 0, 1},
            // ldc * size a multiple of 16, so that +tmaC writes C through the tensor map (odd n, n < box, k < 16)
            {333, 1, 0, 0, 344}, {200, 48, 0, 8, 208}, {1, 33, 8, 0, 8},
        };
        uint32_t seed = 10;
        for (auto& cb : combos)
            for (auto& g : groups) check_group(cb, 4096, g.n, g.k, g.padA, g.padB, g.ldc, seed++, ms, worst);
        printf("\n== (c) bias and beta (beta = 1 into f32, 0.5 into 16-bit) ==\n");
        for (auto& cb : combos) {
            check_epilogue(cb, 300, 257, 77, 260, seed++, worst);
            check_epilogue(cb, 1000, 1000, 1000, 1001, seed++, worst);
            check_epilogue(cb, 300, 257, 77, 264, seed++, worst);     // C takes TMA (16-bit too)
            check_epilogue(cb, 1000, 1000, 1000, 1008, seed++, worst);
        }
        for (auto& cb : combos)
            if (cb.op == kOpTN && cb.f32out) check_epilogue(cb, 1024, 1024, 8192, 1024, seed++, worst);  // dW = X^T dY, beta = 1
        printf("\n== mma_gemm alone: k = 0, odd leading dimensions, misaligned bases ==\n");
        for (auto& cb : combos) check_slow_only(cb, seed++);
        printf("\n== (a) large 2048x4096x4096 and (e) persistent grid ==\n");
        for (auto& cb : combos) check_large(cb, 2048, 4096, 4096, seed++, worst);
    }
    printf("worst |err| / bound against float64: %.4f\n", worst);
    printf("+tmaC launches: %ld through the TMA-store epilogue, %ld with the bit set but n * size %% 16 != 0 (direct stores), "
           "%ld with the bit clear (C not TMA-able: direct stores)\n", g_tmac_on, g_tmac_n, g_tmac_off);
    printf("checks: %d, failed: %d\n", g_checks, g_fail);

    if (beta_only && !g_fail) {
        printf("\n== (f') tn weight gradient timing: f32 out, beta = 1, bit off vs on ==\n");
        time_tn_beta(combos[9], 4096, 14336, 4096);
    }
    if (!small && !no_timing && !beta_only) {
        g_have_cublas = cublas_open();
        if (!g_have_cublas) printf("cuBLAS not available: its columns are NaN\n");
        printf("\n== (f) timing (nn, out = operand type; medians of events; ratio = cuBLAS time / ours) ==\n");
        const int nk_pairs[4][2] = {{4096, 4096}, {14336, 4096}, {4096, 14336}, {8192, 8192}};
        for (int ci : {0, 2}) {
            const Combo& cb = combos[ci];
            for (int M : {4096, 8192, 1024, 256, 64})
                for (auto& p : nk_pairs) time_shape(cb, M, p[0], p[1], M >= 1024 ? std::vector<int>{kMain, kMainT, kC2, kC2T}
                                                                                 : std::vector<int>{kMain, kMainT, kC2T, kSmall, kSmallT}, false);
            for (int M : {1, 8, 16})
                for (int pi : {1, 2}) time_shape(cb, M, nk_pairs[pi][0], nk_pairs[pi][1], {kDec, kDec64}, true);
        }
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
