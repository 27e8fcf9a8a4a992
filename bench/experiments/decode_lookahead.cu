// decode_lookahead: what a one-stage look-ahead in the decode template would buy, and that it
// keeps the bits. Two variants of kernels-templates/mma/mma_decode_tma.cuh on the shipped decode
// tiles (dec16, dec32, dec64; NN bf16 -> bf16):
//   inline     the template as shipped: each stage's wait and ldmatrix right before its own
//              mma.sync chain;
//   lookahead  the template of commit 9f2959c (decode_lookahead.sh takes it from git): a consumer
//              warp waits for stage j + 1 and issues its ldmatrix before stage j's chain, so
//              their latency would land under the chain; stage j is released after its chain.
// Result (H100, bench/results/2026-12-05-session43/decode-lookahead/): bit-identical everywhere,
// and 0.58-1.03x the shipped template's speed. The ring is not bound by the chain's latency:
// holding stage j until stage j + 1 has landed delays every refill, so it was not adopted.
// Both run the same k16 steps in the same order, so every output must be bit-identical. For each
// (m, n, k) and tile the program checks that, then times both, interleaved (A B A B ...), with
// events, the median of `reps` launches each after warm-up; the weight is streamed from memory
// where it is larger than L2. Prints microseconds and the weight's GB/s.
// Build and run: decode_lookahead.sh.
#include "decode_harness.cuh"
#include "variants/mma_decode_tma_lookahead.cuh"

using Dec16Cfg = gemm_sm90a_tcdec_nn_bf16_bf16_f32_dec16_m16n16k64_cfg;

template <class Cfg>
struct Pair {
    static void ahead(const Problem& p, int) { launch_decode<mma_decode_tma_lookahead<bf16, bf16, kOpNN, Cfg>, Cfg>(p); }
    static void inl(const Problem& p, int) { launch_decode<mma_decode_tma<bf16, bf16, kOpNN, Cfg>, Cfg>(p); }
};
struct Tile {
    const char* name;
    LaunchFn ahead, inl;
};

int main(int argc, char** argv) {
    setvbuf(stdout, nullptr, _IOLBF, 0);
    const int reps = argc > 1 ? atoi(argv[1]) : 30;
    cudaDeviceProp prop;
    if (!harness_init(prop)) return 1;
    printf("device: %s, %d SMs, L2 %d MB; %d timed launches a variant\n", prop.name, g_sms, prop.l2CacheSize >> 20, reps);
    const Tile tiles[] = {
        {"dec16", Pair<Dec16Cfg>::ahead, Pair<Dec16Cfg>::inl},
        {"dec32", Pair<Dec32Cfg>::ahead, Pair<Dec32Cfg>::inl},
        {"dec64", Pair<Dec64Cfg>::ahead, Pair<Dec64Cfg>::inl},
    };
    // (n, k) of the model list's decode rows below 3.6 TB/s and two that reach it; m of decode.
    const int nks[][2] = {{3584, 14336}, {3584, 18944}, {4096, 14336}, {10240, 8192}, {14336, 3584},
                          {14336, 4096}, {28672, 4096}, {1024, 4096}, {4096, 4096}};
    const int ms[] = {1, 16, 32, 64};
    cudaEvent_t e0, e1;
    CHECK(cudaEventCreate(&e0));
    CHECK(cudaEventCreate(&e1));
    printf("%-6s %5s %6s %6s %10s %10s %8s %8s %7s %s\n", "tile", "m", "n", "k", "inline us", "ahead us", "inl GB/s",
           "ahd GB/s", "speedup", "bits");
    int bad = 0;
    for (const auto& nk : nks) {
        const int n = nk[0], k = nk[1];
        const int mmax = 64;
        Mat A, B, C1, C2;
        A.alloc(mmax, k, k, 2);
        B.alloc(k, n, n, 2);
        C1.alloc(mmax, n, n, 2);
        C2.alloc(mmax, n, n, 2);
        A.fill(21u + n, false);
        B.fill(22u + k, false);
        for (int m : ms) {
            for (const Tile& t : tiles) {
                Problem p1{kOpNN, false, false, m, n, k, (int)A.ld, (int)B.ld, (int)C1.ld, A.p, B.p, nullptr, C1.p, 0.f, 0};
                Problem p2 = p1;
                p2.C = C2.p;
                C1.poison();
                C2.poison();
                t.inl(p1, 0);
                t.ahead(p2, 0);
                CHECK(cudaDeviceSynchronize());
                const bool same = C1.fetch(m) == C2.fetch(m);
                bad += !same;
                std::vector<float> ti, ta;
                for (int w = 0; w < 3; ++w) { t.inl(p1, 0); t.ahead(p2, 0); }
                for (int r = 0; r < reps; ++r) {
                    for (int v = 0; v < 2; ++v) {
                        CHECK(cudaEventRecord(e0));
                        if (v == 0) t.inl(p1, 0); else t.ahead(p2, 0);
                        CHECK(cudaEventRecord(e1));
                        CHECK(cudaEventSynchronize(e1));
                        float ms_;
                        CHECK(cudaEventElapsedTime(&ms_, e0, e1));
                        (v == 0 ? ti : ta).push_back(ms_ * 1000.f);
                    }
                }
                const double mi = median(ti), ma = median(ta), wb = 2.0 * n * k;
                printf("%-6s %5d %6d %6d %10.1f %10.1f %8.0f %8.0f %7.3f %s\n", t.name, m, n, k, mi, ma, wb / mi / 1e3,
                       wb / ma / 1e3, mi / ma, same ? "same" : "DIFFER");
            }
        }
        A.free_(); B.free_(); C1.free_(); C2.free_();
    }
    printf("# %s\n", bad == 0 ? "every output bit-identical between the variants" : "OUTPUTS DIFFER");
    return bad == 0 ? 0 : 1;
}
