// tile_loads: how fast the TMA ring of a narrow-deep GEMM can be filled, with no math, as the
// grid's CTAs share the operand tiles or not. Session 48's profiles (bench/results/
// 2026-12-06-session48/) found that splitting K over 2 or 4 times the SMs left the aggregate
// load rate where it was (about 400 cycles a 16 KB stage on 32 SMs, 870 on 64, 1500 on 120)
// with L2 throughput at 17-29%. This probe asks why, with the kernels' own ring (tc/
// smem_sync.cuh, tc/tma.cuh: full/empty mbarriers, 64 x 64 bf16 boxes, 128-byte swizzle):
//   gemm     CTA (tm, tn, rank) loads A box (k, tm) and B box (tn, k) of an NN GEMM, as
//            tcwidechunk's mid64 tiles do; a split's rank r takes 512-k chunks r, r + S, ...;
//            every A tile is read by n / 64 CTAs at about the same time, every B tile by m / 64;
//   rotated  the same CTAs, tiles and bytes as gemm, but each CTA starts its walk over its stages
//            at its own offset, so the CTAs sharing a tile read it at different times;
//   mcastA   gemm with clusters of 2 along n: each CTA loads half of the A box and multicasts
//            it to both (A's requests halved), its own B box;
//   gemmC    gemm with the split's ranks in one cluster along z, as the split kernels launch
//            (cluster barriers at the start and the end, nothing shared).
// Then the fixed cost of a launch: the same kernel with no stage (prologue, cluster barriers,
// epilogue), 128 CTAs in clusters of 1, 2, 4 or 8 along z, 20 launches back to back timed
// together, as the bench times a group.
// The consumer is one warp that waits for each stage, optionally spins `work` cycles (the
// tensor cores' share), and releases the stage. Prints, per case: the kernel's median time
// (events, 20 runs after 3 warm-ups), the cycles a stage takes per CTA, and GB/s into shared memory.
// Build here and run on the GPU machine with bench/experiments/tile_loads.sh (build | run).
#include <cuda.h>
#include <cuda_runtime.h>
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <vector>

#include "cuda_check.cuh"
#include "tc/smem_sync.cuh"
#include "tc/tma.cuh"

constexpr int kBox = 64 * 64 * 2;  // one 64 x 64 bf16 box: 8 KB
constexpr int kChunkBoxes = 8;      // 512 k in 64-k boxes (tc-k16-c512's chunk)

enum Mode { kGemm = 0, kRotated = 1, kMcastA = 2, kGemmCluster = 3 };

struct Args {
    CUtensorMap a, b;  // A (k inner, m outer), B (n inner, k outer)
    int mt, nt, nk, split, mode, work, stages;
    long long* cycles;  // per CTA: clock64 from the first issue to the last release
};

__global__ void __launch_bounds__(64, 1) loads(const __grid_constant__ Args p) {
    extern __shared__ __align__(1024) unsigned char smem[];
    const uint32_t base = (tc_smem_u32(smem) + 1023) & ~1023u;
    const int S = p.stages;
    const uint32_t bars = base + S * 2 * kBox;
    auto full = [&](int s) { return bars + 8u * s; };
    auto empty = [&](int s) { return bars + 8u * (S + s); };
    const bool mc = p.mode == kMcastA;
    const bool clustered = mc || p.mode == kGemmCluster;
    const uint32_t rank = mc ? cluster_ctarank() : 0;
    const int cta = blockIdx.x, kr = blockIdx.z;
    const int tm = cta / p.nt, tn = cta % p.nt;
    if (threadIdx.x == 0) {
        for (int s = 0; s < S; ++s) {
            mbar_init(full(s), 1);
            mbar_init(empty(s), mc ? 2 : 1);  // with multicast, both CTAs' consumers release a stage
        }
        mbar_init_fence();
    }
    if (clustered) {
        asm volatile("barrier.cluster.arrive.release.aligned; barrier.cluster.wait.acquire.aligned;" ::: "memory");
    } else {
        __syncthreads();
    }
    const int nchunks = (p.nk + kChunkBoxes - 1) / kChunkBoxes;
    long long t0 = clock64();
    // This CTA's stages: chunks kr, kr + split, ... of 8 boxes each; stage j of `count` is box kb_of(j).
    const int mine = (nchunks - kr + p.split - 1) / p.split;
    const int count = mine * kChunkBoxes;  // every case's K is a whole number of chunks
    const int off = p.mode == kRotated ? (cta * 5) % max(count, 1) : 0;
    auto kb_of = [&](int j) {
        const int i = (j + off) % count;
        return (kr + (i / kChunkBoxes) * p.split) * kChunkBoxes + i % kChunkBoxes;
    };
    if (threadIdx.x == 0) {  // producer
        int s = 0;
        uint32_t ph = 0;
        for (int j = 0; j < count; ++j) {
            const int kb = kb_of(j);
            mbar_wait(empty(s), ph ^ 1);
            mbar_arrive_expect_tx(full(s), 2 * kBox);
            const uint32_t a = base + s * 2 * kBox, b = a + kBox;
            if (mc) {  // rows rank * 32 .. + 31 of the A box, to both CTAs
                tma_load_2d_multicast(a + rank * (kBox / 2), &p.a, full(s), kb * 64, tm * 64 + (int)rank * 32, 3);
            } else {
                tma_load_2d(a, &p.a, full(s), kb * 64, tm * 64);
            }
            tma_load_2d(b, &p.b, full(s), tn * 64, kb * 64);
            if (++s == S) { s = 0; ph ^= 1; }
        }
    } else if (threadIdx.x == 32) {  // consumer
        int s = 0;
        uint32_t ph = 0;
        for (int j = 0; j < count; ++j) {
            mbar_wait(full(s), ph);
            if (p.work > 0) {
                const long long w0 = clock64();
                while (clock64() - w0 < p.work) {}
            }
            if (mc) {
                mbar_arrive_cluster(empty(s), 0);
                mbar_arrive_cluster(empty(s), 1);
            } else {
                mbar_arrive(empty(s));
            }
            if (++s == S) { s = 0; ph ^= 1; }
        }
        p.cycles[(size_t)blockIdx.z * gridDim.x + cta] = clock64() - t0;
    }
    if (clustered) asm volatile("barrier.cluster.arrive.release.aligned; barrier.cluster.wait.acquire.aligned;" ::: "memory");
}

typedef CUresult (*EncodeFn)(CUtensorMap*, CUtensorMapDataType, cuuint32_t, void*, const cuuint64_t*, const cuuint64_t*,
                             const cuuint32_t*, const cuuint32_t*, CUtensorMapInterleave, CUtensorMapSwizzle,
                             CUtensorMapL2promotion, CUtensorMapFloatOOBfill);
static EncodeFn g_encode;

// A row-major bf16 matrix of `outer` rows of `inner` elements, read in boxes of `box_outer` rows.
static CUtensorMap map2d(void* p, uint64_t inner, uint64_t outer, int box_outer) {
    CUtensorMap m;
    cuuint64_t dims[2] = {inner, outer}, strides[1] = {inner * 2};
    cuuint32_t box[2] = {64, (cuuint32_t)box_outer}, es[2] = {1, 1};
    CUresult r = g_encode(&m, CU_TENSOR_MAP_DATA_TYPE_BFLOAT16, 2, p, dims, strides, box, es, CU_TENSOR_MAP_INTERLEAVE_NONE,
                          CU_TENSOR_MAP_SWIZZLE_128B, CU_TENSOR_MAP_L2_PROMOTION_L2_256B, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
    if (r != CUDA_SUCCESS) { printf("cuTensorMapEncodeTiled: %d\n", (int)r); exit(1); }
    return m;
}

int main() {
    cudaDeviceProp prop;
    CHECK(cudaGetDeviceProperties(&prop, 0));
    cudaDriverEntryPointQueryResult q;
    CHECK(cudaGetDriverEntryPointByVersion("cuTensorMapEncodeTiled", (void**)&g_encode, 12000, cudaEnableDefault, &q));
    int clk_khz = 0;
    CHECK(cudaDeviceGetAttribute(&clk_khz, cudaDevAttrClockRate, 0));
    printf("# tile_loads on %s, %d SMs, %d MHz\n", prop.name, prop.multiProcessorCount, clk_khz / 1000);
    printf("%-8s %5s %6s %6s %3s %5s %6s %5s %9s %11s %8s\n", "mode", "n", "k", "m", "S", "work", "stages", "CTAs", "us",
           "cyc/stage", "GB/s");
    const size_t big = 32ull << 20;  // 32 MB each: room for every case's A and B
    void *A, *B;
    CHECK(cudaMalloc(&A, big));
    CHECK(cudaMalloc(&B, big));
    CHECK(cudaMemset(A, 0x3c, big));
    CHECK(cudaMemset(B, 0x3c, big));
    long long* cyc;
    CHECK(cudaMalloc(&cyc, 1024 * sizeof(long long)));
    CHECK(cudaFuncSetAttribute(loads, cudaFuncAttributeMaxDynamicSharedMemorySize, 227 * 1024));
    cudaEvent_t e0, e1;
    CHECK(cudaEventCreate(&e0));
    CHECK(cudaEventCreate(&e1));

    // How many clusters of 1, 2, 4, 8 CTAs along z fit at once with one CTA an SM (about 200 KB of
    // shared memory, as the split tiles take): a grid of more runs in two waves.
    for (int cz : {1, 2, 4, 8}) {
        cudaLaunchConfig_t lc{};
        lc.gridDim = dim3(1, 1, cz);
        lc.blockDim = dim3(64);
        lc.dynamicSmemBytes = 200 * 1024;
        cudaLaunchAttribute at[1];
        at[0].id = cudaLaunchAttributeClusterDimension;
        at[0].val.clusterDim.x = 1;
        at[0].val.clusterDim.y = 1;
        at[0].val.clusterDim.z = cz;
        lc.attrs = at;
        lc.numAttrs = 1;
        int n = 0;
        CHECK(cudaOccupancyMaxActiveClusters(&n, loads, &lc));
        printf("# clusters of %d at once (200 KB of shared memory a CTA): %d (%d CTAs)\n", cz, n, n * cz);
    }
    struct Case { int n, k, m; };
    const Case cases[] = {{512, 3584, 256}, {1024, 8192, 128}, {1024, 4096, 256}};
    for (const Case& c : cases) {
        for (int mode : {kGemm, kRotated, kMcastA, kGemmCluster}) {
            for (int split : {1, 2, 4}) {
                if (mode == kGemmCluster && split == 1) continue;
                for (int work : {0, 160}) {
                    for (int stages : {8, 12}) {
                        Args p{};
                        p.mt = c.m / 64;
                        p.nt = c.n / 64;
                        p.nk = c.k / 64;
                        p.split = split;
                        p.mode = mode;
                        p.work = work;
                        p.stages = stages;
                        p.cycles = cyc;
                        const int ctas = p.mt * p.nt;
                        p.a = map2d(A, c.k, c.m, mode == kMcastA ? 32 : 64);
                        p.b = map2d(B, c.n, c.k, 64);
                        const size_t smem = stages * 2 * kBox + 2 * stages * 8 + 1024;
                        cudaLaunchConfig_t lc{};
                        lc.gridDim = dim3(ctas, 1, split);
                        lc.blockDim = dim3(64);
                        lc.dynamicSmemBytes = smem;
                        cudaLaunchAttribute at[1];
                        at[0].id = cudaLaunchAttributeClusterDimension;
                        at[0].val.clusterDim.x = mode == kMcastA ? 2 : 1;
                        at[0].val.clusterDim.y = 1;
                        at[0].val.clusterDim.z = mode == kGemmCluster ? split : 1;
                        lc.attrs = at;
                        lc.numAttrs = 1;
                        std::vector<float> ms;
                        for (int r = 0; r < 23; ++r) {
                            CHECK(cudaEventRecord(e0));
                            CHECK(cudaLaunchKernelEx(&lc, loads, p));
                            CHECK(cudaEventRecord(e1));
                            CHECK(cudaEventSynchronize(e1));
                            float t;
                            CHECK(cudaEventElapsedTime(&t, e0, e1));
                            if (r >= 3) ms.push_back(t);
                        }
                        std::sort(ms.begin(), ms.end());
                        std::vector<long long> cy(ctas * split);
                        CHECK(cudaMemcpy(cy.data(), cyc, cy.size() * sizeof(long long), cudaMemcpyDeviceToHost));
                        const double us = ms[ms.size() / 2] * 1e3;
                        const int stages_per_cta = ((p.nk / kChunkBoxes + split - 1) / split) * kChunkBoxes;  // the busiest rank's
                        long long cmax = *std::max_element(cy.begin(), cy.end());
                        const double bytes = (double)ctas * p.nk * 2 * kBox;
                        printf("%-8s %5d %6d %6d %3d %5d %6d %5d %9.2f %11.0f %8.0f\n",
                               mode == kGemm ? "gemm" : mode == kRotated ? "rotated" : mode == kMcastA ? "mcastA" : "gemmC",
                               c.n, c.k, c.m, split, work,
                               stages, ctas * split, us, (double)cmax / stages_per_cta, bytes / (us * 1e3));
                    }
                }
            }
        }
    }
    printf("# fixed cost: no stages, 128 CTAs, 12-stage ring's shared memory, 20 launches timed together\n");
    printf("%-8s %8s %12s\n", "cluster", "CTAs", "us/launch");
    for (int cz : {1, 2, 4, 8}) {
        Args p{};
        p.mt = 1;
        p.nt = 128 / cz;
        p.nk = 0;
        p.split = cz;
        p.mode = cz > 1 ? kGemmCluster : kGemm;
        p.stages = 12;
        p.cycles = cyc;
        p.a = map2d(A, 512, 64, 64);
        p.b = map2d(B, 64, 512, 64);
        cudaLaunchConfig_t lc{};
        lc.gridDim = dim3(128 / cz, 1, cz);
        lc.blockDim = dim3(64);
        lc.dynamicSmemBytes = 12 * 2 * kBox + 2 * 12 * 8 + 1024;
        cudaLaunchAttribute at[1];
        at[0].id = cudaLaunchAttributeClusterDimension;
        at[0].val.clusterDim.x = 1;
        at[0].val.clusterDim.y = 1;
        at[0].val.clusterDim.z = cz;
        lc.attrs = at;
        lc.numAttrs = 1;
        std::vector<float> ms;
        for (int r = 0; r < 13; ++r) {
            CHECK(cudaEventRecord(e0));
            for (int i = 0; i < 20; ++i) CHECK(cudaLaunchKernelEx(&lc, loads, p));
            CHECK(cudaEventRecord(e1));
            CHECK(cudaEventSynchronize(e1));
            float t;
            CHECK(cudaEventElapsedTime(&t, e0, e1));
            if (r >= 3) ms.push_back(t / 20);
        }
        std::sort(ms.begin(), ms.end());
        printf("%-8d %8d %12.2f\n", cz, 128, ms[ms.size() / 2] * 1e3);
    }
    return 0;
}
