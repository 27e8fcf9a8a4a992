// decode_race: the mma_decode_tma release race (docs/timing.md), reproduced and shown fixed.
//
// The setup of the report: a two-GEMM tensor-core decode step, bf16, m = 5, 3584 -> 18944 -> 3584,
// the first GEMM on the dec64 tile (n 64 a CTA: 296 CTAs, 56 k-blocks), the second on dec32
// (112 CTAs, 296 k-blocks), 8 stages, as sm90a ships them. Three variants of the decode template,
// all with the same timing-perturbation sites (common/timing_perturbation.cuh):
//   fixed  kernels-templates/mma/mma_decode_tma.cuh: a consumer warp fences its ldmatrix reads
//          (fence.proxy.async) before it releases the stage for the next TMA load;
//   legacy the template before the fix (decode_race.sh derives it): release right after the
//          stage's last ldmatrix is issued, unfenced;
//   early  a deliberate race, the negative control: a warp releases the stage right after its
//          wait, before reading it.
// Modes (each runs every variant; the reference bits are fixed's first quiet run, checked
// against float64):
//   quiet R         R decode steps alone;
//   corunner R      R steps while a hostile kernel (tests/timing/corunner.cu) keeps every SM busy
//                   on another stream (launched before each GEMM, one CTA an SM, running ~2 ms);
//   perturb R       built with -DGEMM_AOT_TIMING_PERTURBATION: R steps, seeds 1..R;
//   time R          the cost of the fix: each GEMM of fixed and legacy alone, median of R.
// Each line: variant, mode, steps, GEMMs whose bits differ from the reference, and the worst
// error against float64 as a fraction of the tests' bound (worst_err: at most 1 when right).
// Build and run: decode_race.sh.
#include "decode_harness.cuh"
#include "variants/mma_decode_tma_legacy.cuh"
#include "variants/mma_decode_tma_early.cuh"
#include "../../tests/timing/corunner.cu"

using Dec64Fixed = mma_decode_tma<bf16, bf16, kOpNN, Dec64Cfg>;
using Dec32Fixed = mma_decode_tma<bf16, bf16, kOpNN, Dec32Cfg>;
using Dec64Legacy = mma_decode_tma_legacy<bf16, bf16, kOpNN, Dec64Cfg>;
using Dec32Legacy = mma_decode_tma_legacy<bf16, bf16, kOpNN, Dec32Cfg>;
using Dec64Early = mma_decode_tma_early<bf16, bf16, kOpNN, Dec64Cfg>;
using Dec32Early = mma_decode_tma_early<bf16, bf16, kOpNN, Dec32Cfg>;

struct Variant {
    const char* name;
    LaunchFn dec64, dec32;
};

static const int M = 5, HID = 3584, FF = 18944;

// C = A B in float64 for row-major bf16 A [m, k] and B [k, n] (bits), and S = |A| |B| (the
// bound's magnitude): returned as (C, S).
static std::pair<std::vector<double>, std::vector<double>> ref_gemm(const std::vector<uint16_t>& a,
                                                                    const std::vector<uint16_t>& b, int m, int n, int k) {
    std::vector<double> c((size_t)m * n, 0.0), s((size_t)m * n, 0.0);
    std::vector<double> bf((size_t)n);
    for (int kk = 0; kk < k; ++kk) {
        for (int j = 0; j < n; ++j) bf[j] = bits_to_f(b[(size_t)kk * n + j], false);
        for (int r = 0; r < m; ++r) {
            const double av = bits_to_f(a[(size_t)r * k + kk], false);
            double* row = &c[(size_t)r * n];
            double* mrow = &s[(size_t)r * n];
            for (int j = 0; j < n; ++j) {
                row[j] += av * bf[j];
                mrow[j] += fabs(av * bf[j]);
            }
        }
    }
    return {c, s};
}

static std::vector<uint16_t> fetch16(const void* p, size_t n) {
    std::vector<uint16_t> v(n);
    CHECK(cudaMemcpy(v.data(), p, n * 2, cudaMemcpyDeviceToHost));
    return v;
}

// The worst |out - ref| over the bound of the tensor-core tests (runtime/tests/gpu_tensor_core.rs):
// u_out |ref| + 4 K16 2^-24 S, S = sum |a b|; at most 1 when right (the f32 chain of k16 steps
// may lose up to that much: its error grows with k and the sizes of the products, not with
// |ref|, so rows whose sum cancels would otherwise look wrong).
static double worst_err(const std::vector<uint16_t>& out, const std::vector<double>& ref, const std::vector<double>& mag,
                        int k) {
    const double u = std::ldexp(1.0, -8), k16 = 16.0 * ((k + 15) / 16);
    double w = 0;
    for (size_t i = 0; i < out.size(); ++i) {
        const double o = bits_to_f(out[i], false);
        if (o != o) return INFINITY;
        w = std::max(w, fabs(o - ref[i]) / (u * fabs(ref[i]) + 4.0 * k16 * std::ldexp(1.0, -24) * mag[i] + 1e-30));
    }
    return w;
}

struct Buffers {
    Mat X, W1, H, W2, Y;
    uint4* junk = nullptr;  // what the co-runner streams
    size_t junk_elems = 0;
    uint32_t* sink = nullptr;
};

static void set_seed(uint32_t seed) {
#if defined(GEMM_AOT_TIMING_PERTURBATION)
    CHECK(cudaMemcpyToSymbol(gemm_aot_perturb_seed, &seed, sizeof seed));
#else
    (void)seed;
#endif
}

static void corunner(const Buffers& B, cudaStream_t s, uint32_t seed) {
    // One CTA an SM with 64 KiB: a dec64 CTA (80 KiB, 288 threads) still fits beside it.
    hostile_corunner<<<g_sms, kCorunnerThreads, kCorunnerSharedBytes, s>>>(B.junk, B.junk_elems, B.sink, 4000000ll, seed);
    CHECK(cudaGetLastError());
}

// One decode step H = X W1, Y = H W2 with the variant's kernels; the co-runner on `other` first
// when asked. Launches go to the legacy default stream (the harness's launch()), which the
// co-runner's non-blocking stream does not wait for.
static void step(const Variant& v, Buffers& B, bool with_corunner, cudaStream_t other, uint32_t seed) {
    Problem p1{kOpNN, false, false, M, FF, HID, (int)B.X.ld, (int)B.W1.ld, (int)B.H.ld, B.X.p, B.W1.p, nullptr, B.H.p, 0.f, 0};
    Problem p2{kOpNN, false, false, M, HID, FF, (int)B.H.ld, (int)B.W2.ld, (int)B.Y.ld, B.H.p, B.W2.p, nullptr, B.Y.p, 0.f, 0};
    B.H.poison();
    B.Y.poison();
    if (with_corunner) corunner(B, other, seed);
    v.dec64(p1, 0);
    if (with_corunner) corunner(B, other, seed + 1);
    v.dec32(p2, 0);
    CHECK(cudaDeviceSynchronize());
}

// Mode `time`: each variant's two GEMMs alone, `reps` timed launches after a warm-up, median
// with events; the weights (135 MB each) are larger than L2, so every launch streams them from
// memory. Prints microseconds and the weight's GB/s.
static void time_variants(const Variant* vs, int nv, Buffers& B, int reps) {
    Problem p1{kOpNN, false, false, M, FF, HID, (int)B.X.ld, (int)B.W1.ld, (int)B.H.ld, B.X.p, B.W1.p, nullptr, B.H.p, 0.f, 0};
    Problem p2{kOpNN, false, false, M, HID, FF, (int)B.H.ld, (int)B.W2.ld, (int)B.Y.ld, B.H.p, B.W2.p, nullptr, B.Y.p, 0.f, 0};
    cudaEvent_t e0, e1;
    CHECK(cudaEventCreate(&e0));
    CHECK(cudaEventCreate(&e1));
    printf("%-7s %22s %22s\n", "variant", "dec64 5x18944x3584", "dec32 5x3584x18944");
    for (int v = 0; v < nv; ++v) {
        double med[2];
        for (int g = 0; g < 2; ++g) {
            const Problem& p = g == 0 ? p1 : p2;
            LaunchFn f = g == 0 ? vs[v].dec64 : vs[v].dec32;
            for (int w = 0; w < 5; ++w) f(p, 0);
            std::vector<float> t;
            for (int r = 0; r < reps; ++r) {
                CHECK(cudaEventRecord(e0));
                f(p, 0);
                CHECK(cudaEventRecord(e1));
                CHECK(cudaEventSynchronize(e1));
                float ms;
                CHECK(cudaEventElapsedTime(&ms, e0, e1));
                t.push_back(ms);
            }
            std::sort(t.begin(), t.end());
            med[g] = t[t.size() / 2] * 1000.0;
        }
        const double wbytes = 2.0 * HID * FF;
        printf("%-7s %10.1f us %6.0f GB/s %10.1f us %6.0f GB/s\n", vs[v].name, med[0], wbytes / med[0] / 1e3, med[1],
               wbytes / med[1] / 1e3);
    }
}

int main(int argc, char** argv) {
    setvbuf(stdout, nullptr, _IOLBF, 0);
    const char* mode = argc > 1 ? argv[1] : "quiet";
    const int reps = argc > 2 ? atoi(argv[2]) : 10;
    cudaDeviceProp prop;
    if (!harness_init(prop)) return 1;
#if defined(GEMM_AOT_TIMING_PERTURBATION)
    const bool perturbed = true;
#else
    const bool perturbed = false;
#endif
    printf("device: %s, %d SMs; mode %s, %d steps; build %s\n", prop.name, g_sms, mode, reps,
           perturbed ? "with timing perturbation" : "plain");
    if (strcmp(mode, "perturb") == 0 && !perturbed) { printf("mode perturb needs the perturbed build\n"); return 2; }
    CHECK(cudaFuncSetAttribute(hostile_corunner, cudaFuncAttributeMaxDynamicSharedMemorySize, kCorunnerSharedBytes));

    Buffers B;
    B.X.alloc(M, HID, HID, 2);
    B.W1.alloc(HID, FF, FF, 2);
    B.H.alloc(M, FF, FF, 2);
    B.W2.alloc(FF, HID, HID, 2);
    B.Y.alloc(M, HID, HID, 2);
    B.X.fill(11, false);
    B.W1.fill(12, false);
    B.W2.fill(13, false);
    B.junk_elems = (size_t)256 << 20 >> 4;  // 256 MiB: more than L2
    CHECK(cudaMalloc(&B.junk, B.junk_elems * 16));
    CHECK(cudaMemset(B.junk, 0x5A, B.junk_elems * 16));
    CHECK(cudaMalloc(&B.sink, 4096 * 4));
    cudaStream_t other;
    CHECK(cudaStreamCreateWithFlags(&other, cudaStreamNonBlocking));
    CHECK(cudaDeviceSynchronize());

    const Variant variants[] = {
        {"fixed", launch_decode<Dec64Fixed, Dec64Cfg>, launch_decode<Dec32Fixed, Dec32Cfg>},
        {"legacy", launch_decode<Dec64Legacy, Dec64Cfg>, launch_decode<Dec32Legacy, Dec32Cfg>},
        {"early", launch_decode<Dec64Early, Dec64Cfg>, launch_decode<Dec32Early, Dec32Cfg>},
    };

    if (strcmp(mode, "time") == 0) {  // fixed and legacy only: the control's bits are wrong anyway
        time_variants(variants, 2, B, reps);
        return 0;
    }
    // The reference: fixed, quiet, seed 0; checked against float64.
    set_seed(0);
    step(variants[0], B, false, other, 0);
    const std::vector<uint16_t> h_ref = fetch16(B.H.p, (size_t)M * FF), y_ref = fetch16(B.Y.p, (size_t)M * HID);
    const std::vector<uint16_t> xh = fetch16(B.X.p, (size_t)M * HID), w1h = fetch16(B.W1.p, (size_t)HID * FF),
                                w2h = fetch16(B.W2.p, (size_t)FF * HID);
    const auto h64 = ref_gemm(xh, w1h, M, FF, HID), y64 = ref_gemm(h_ref, w2h, M, HID, FF);
    printf("reference (fixed, quiet): H vs float64 %.3g of the bound, Y vs float64 (of the reference H) %.3g\n",
           worst_err(h_ref, h64.first, h64.second, HID), worst_err(y_ref, y64.first, y64.second, FF));

    printf("%-7s %-9s %6s %12s %12s %14s %14s\n", "variant", "mode", "steps", "H differs", "Y differs", "H err/bound", "Y err/bound");
    int fixed_bad = 0;
    for (const Variant& v : variants) {
        int h_bad = 0, y_bad = 0;
        double h_w = 0, y_w = 0;
        for (int r = 0; r < reps; ++r) {
            const uint32_t seed = strcmp(mode, "perturb") == 0 ? (uint32_t)(r + 1) : 0u;
            set_seed(seed);
            step(v, B, strcmp(mode, "corunner") == 0, other, 1000u + r);
            const std::vector<uint16_t> h = fetch16(B.H.p, (size_t)M * FF), y = fetch16(B.Y.p, (size_t)M * HID);
            h_bad += h != h_ref;
            y_bad += y != y_ref;
            h_w = std::max(h_w, worst_err(h, h64.first, h64.second, HID));
            // Y against float64 of this run's own H, so a wrong H does not count twice (the
            // reference's when H is the reference's).
            const auto yr = h == h_ref ? y64 : ref_gemm(h, w2h, M, HID, FF);
            y_w = std::max(y_w, worst_err(y, yr.first, yr.second, FF));
        }
        printf("%-7s %-9s %6d %9d/%-2d %9d/%-2d %14.3g %14.3g\n", v.name, mode, reps, h_bad, reps, y_bad, reps, h_w, y_w);
        if (&v == &variants[0]) fixed_bad = h_bad + y_bad;
    }
    set_seed(0);
    printf("# fixed variant: %s\n", fixed_bad == 0 ? "bit-exact in every step" : "DIFFERS");
    return fixed_bad == 0 ? 0 : 1;
}
