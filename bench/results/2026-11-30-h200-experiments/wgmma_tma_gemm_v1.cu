// Experiment: a batch-invariant wgmma + TMA bf16 GEMM for Hopper (sm_90a), against cuBLAS.
//
// GEMM view, NN: C[m, n] = sum_k A[m, k] * B[k, n] (+ bias[n]); A is M x K row-major (K-major),
// B is K x N row-major (N-major), bf16 in, f32 accumulate, bf16 (or f32) out.
//
// Numeric contract (what makes it batch-invariant): every output element is ONE f32 accumulator
// chained over ascending k16 steps (one wgmma / mma k16 step after the other, K ascending, no
// split-K, no atomics), then the optional bias add, then one rounding at the store. Tile size, SM
// count, cluster shape and tile order only choose WHO computes a tile, never how.
//
// Wide kernel (wide_gemm<BN, STAGES, CM, OutT>):
//   * CTA tile 128 x BN x 64 (BN = 256 or 128); 3 warpgroups: WG0 = producer (one thread issues
//     TMA), WG1/WG2 = consumers, each owning 64 rows x BN with wgmma m64nBNk16 (B read MN-major
//     through the descriptor's transpose bit), accumulators in registers; setmaxnreg 24 / 240.
//   * TMA (cp.async.bulk.tensor.2d) into 128B-swizzled stages: A box 64(k) x 128(m), B boxes
//     64(n) x 64(k); STAGES-deep full/empty mbarrier ring.
//   * Persistent grid (one CTA per SM, or fewer when asked), fixed grouped tile order; clusters
//     of CM CTAs along M share the B tile through TMA multicast (each CTA loads 1/CM of it).
//   * Epilogue straight from registers (bf16x2 / float2 stores), rows >= M skipped.
// Decode kernel (decode_gemm<OutT>), m <= 16: mma.sync m16n8k16, one f32 chain over ascending k16
//   per output, warp-specialised TMA ring (A box 64 x 16, B box 32 x 64, 64B swizzle), CTA = 32
//   columns, all of K; bit-equal to the wide kernel by contract (checked below).
//
// Build on the device (H200):  see wgmma_tma_gemm.sh
//   nvcc -O3 -std=c++17 -gencode=arch=compute_90a,code=sm_90a -DHAVE_CUBLAS wgmma_tma_gemm.cu -lcublas
// Local syntax check without cuBLAS: same command without -DHAVE_CUBLAS / -lcublas (add -c).
#include <cuda.h>
#include <cuda_runtime.h>
#include <cuda_bf16.h>
#include <cstdio>
#include <cstdlib>
#include <cstdint>
#include <cstring>
#include <cmath>
#include <vector>
#include <algorithm>
#include <string>
#ifdef HAVE_CUBLAS
#include <cublas_v2.h>
#endif

#define CHECK(x) do { cudaError_t e_ = (x); if (e_ != cudaSuccess) { printf("CUDA error %s at %s:%d\n", cudaGetErrorString(e_), __FILE__, __LINE__); exit(1); } } while (0)

typedef __nv_bfloat16 bf16;

// ------------------------------------------------------------------------------------------
// Device helpers: shared addresses, mbarriers, TMA, wgmma
// ------------------------------------------------------------------------------------------
__device__ __forceinline__ uint32_t smem_u32(const void* p) { return (uint32_t)__cvta_generic_to_shared(p); }

__device__ __forceinline__ void mbar_init(uint32_t bar, uint32_t count) {
    asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;" :: "r"(bar), "r"(count) : "memory");
}
__device__ __forceinline__ void mbar_expect_tx(uint32_t bar, uint32_t bytes) {
    asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" :: "r"(bar), "r"(bytes) : "memory");
}
__device__ __forceinline__ void mbar_arrive(uint32_t bar) {
    asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];" :: "r"(bar) : "memory");
}
// Arrive on the barrier at the same shared offset in CTA `rank` of this cluster.
__device__ __forceinline__ void mbar_arrive_cluster(uint32_t bar, uint32_t rank) {
    asm volatile("{\n.reg .b32 ra;\nmapa.shared::cluster.u32 ra, %0, %1;\n"
                 "mbarrier.arrive.release.cluster.shared::cluster.b64 _, [ra];\n}"
                 :: "r"(bar), "r"(rank) : "memory");
}
__device__ __forceinline__ void mbar_wait(uint32_t bar, uint32_t parity) {
    uint32_t done = 0;
    do {
        asm volatile("{\n.reg .pred p;\nmbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2;\nselp.u32 %0, 1, 0, p;\n}"
                     : "=r"(done) : "r"(bar), "r"(parity) : "memory");
    } while (!done);
}
__device__ __forceinline__ void tma_load_2d(uint32_t dst, const CUtensorMap* map, uint32_t bar, int c0, int c1) {
    asm volatile("cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1, {%3, %4}], [%2];"
                 :: "r"(dst), "l"((uint64_t)map), "r"(bar), "r"(c0), "r"(c1) : "memory");
}
__device__ __forceinline__ void tma_load_2d_mc(uint32_t dst, const CUtensorMap* map, uint32_t bar, int c0, int c1, uint16_t mask) {
    asm volatile("cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes.multicast::cluster [%0], [%1, {%3, %4}], [%2], %5;"
                 :: "r"(dst), "l"((uint64_t)map), "r"(bar), "r"(c0), "r"(c1), "h"(mask) : "memory");
}
__device__ __forceinline__ uint32_t cluster_ctarank() { uint32_t r; asm volatile("mov.u32 %0, %%cluster_ctarank;" : "=r"(r)); return r; }
__device__ __forceinline__ uint32_t cluster_id_x() { uint32_t r; asm volatile("mov.u32 %0, %%clusterid.x;" : "=r"(r)); return r; }
__device__ __forceinline__ uint32_t nclusters_x() { uint32_t r; asm volatile("mov.u32 %0, %%nclusterid.x;" : "=r"(r)); return r; }
__device__ __forceinline__ void cluster_sync() {
    asm volatile("barrier.cluster.arrive.release.aligned;\nbarrier.cluster.wait.acquire.aligned;" ::: "memory");
}

// wgmma shared-memory descriptor, 128B swizzle. Addresses and offsets in bytes.
__device__ __forceinline__ uint64_t gmma_desc(uint32_t saddr, uint32_t lbo, uint32_t sbo) {
    uint64_t d = 0;
    d |= (uint64_t)((saddr & 0x3FFFF) >> 4);
    d |= (uint64_t)((lbo >> 4) & 0x3FFF) << 16;
    d |= (uint64_t)((sbo >> 4) & 0x3FFF) << 32;
    d |= (uint64_t)1 << 62;  // SWIZZLE_128B
    return d;
}
__device__ __forceinline__ void wgmma_fence() { asm volatile("wgmma.fence.sync.aligned;" ::: "memory"); }
__device__ __forceinline__ void wgmma_commit() { asm volatile("wgmma.commit_group.sync.aligned;" ::: "memory"); }
template <int N> __device__ __forceinline__ void wgmma_wait() { asm volatile("wgmma.wait_group.sync.aligned %0;" :: "n"(N) : "memory"); }
__device__ __forceinline__ void reg_fence(float& r) { asm volatile("" : "+f"(r) :: "memory"); }

// D(64 x N, f32) += A(64 x 16, K-major, smem desc) * B(16 x N, MN-major = transposed, smem desc).
// scale-d is 1 always: the accumulators start from explicit zeros, so every k16 step is D = A*B + D.
__device__ __forceinline__ void wgmma_m64n256k16(float* d, uint64_t da, uint64_t db) {
    asm volatile(
        "{\n.reg .pred p;\nsetp.ne.b32 p, 1, 0;\n"
        "wgmma.mma_async.sync.aligned.m64n256k16.f32.bf16.bf16 {"
        "%0,%1,%2,%3,%4,%5,%6,%7,%8,%9,%10,%11,%12,%13,%14,%15,"
        "%16,%17,%18,%19,%20,%21,%22,%23,%24,%25,%26,%27,%28,%29,%30,%31,"
        "%32,%33,%34,%35,%36,%37,%38,%39,%40,%41,%42,%43,%44,%45,%46,%47,"
        "%48,%49,%50,%51,%52,%53,%54,%55,%56,%57,%58,%59,%60,%61,%62,%63,"
        "%64,%65,%66,%67,%68,%69,%70,%71,%72,%73,%74,%75,%76,%77,%78,%79,"
        "%80,%81,%82,%83,%84,%85,%86,%87,%88,%89,%90,%91,%92,%93,%94,%95,"
        "%96,%97,%98,%99,%100,%101,%102,%103,%104,%105,%106,%107,%108,%109,%110,%111,"
        "%112,%113,%114,%115,%116,%117,%118,%119,%120,%121,%122,%123,%124,%125,%126,%127"
        "}, %128, %129, p, 1, 1, 0, 1;\n}\n"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]),
          "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]),
          "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]),
          "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31]),
          "+f"(d[32]), "+f"(d[33]), "+f"(d[34]), "+f"(d[35]), "+f"(d[36]), "+f"(d[37]), "+f"(d[38]), "+f"(d[39]),
          "+f"(d[40]), "+f"(d[41]), "+f"(d[42]), "+f"(d[43]), "+f"(d[44]), "+f"(d[45]), "+f"(d[46]), "+f"(d[47]),
          "+f"(d[48]), "+f"(d[49]), "+f"(d[50]), "+f"(d[51]), "+f"(d[52]), "+f"(d[53]), "+f"(d[54]), "+f"(d[55]),
          "+f"(d[56]), "+f"(d[57]), "+f"(d[58]), "+f"(d[59]), "+f"(d[60]), "+f"(d[61]), "+f"(d[62]), "+f"(d[63]),
          "+f"(d[64]), "+f"(d[65]), "+f"(d[66]), "+f"(d[67]), "+f"(d[68]), "+f"(d[69]), "+f"(d[70]), "+f"(d[71]),
          "+f"(d[72]), "+f"(d[73]), "+f"(d[74]), "+f"(d[75]), "+f"(d[76]), "+f"(d[77]), "+f"(d[78]), "+f"(d[79]),
          "+f"(d[80]), "+f"(d[81]), "+f"(d[82]), "+f"(d[83]), "+f"(d[84]), "+f"(d[85]), "+f"(d[86]), "+f"(d[87]),
          "+f"(d[88]), "+f"(d[89]), "+f"(d[90]), "+f"(d[91]), "+f"(d[92]), "+f"(d[93]), "+f"(d[94]), "+f"(d[95]),
          "+f"(d[96]), "+f"(d[97]), "+f"(d[98]), "+f"(d[99]), "+f"(d[100]), "+f"(d[101]), "+f"(d[102]), "+f"(d[103]),
          "+f"(d[104]), "+f"(d[105]), "+f"(d[106]), "+f"(d[107]), "+f"(d[108]), "+f"(d[109]), "+f"(d[110]), "+f"(d[111]),
          "+f"(d[112]), "+f"(d[113]), "+f"(d[114]), "+f"(d[115]), "+f"(d[116]), "+f"(d[117]), "+f"(d[118]), "+f"(d[119]),
          "+f"(d[120]), "+f"(d[121]), "+f"(d[122]), "+f"(d[123]), "+f"(d[124]), "+f"(d[125]), "+f"(d[126]), "+f"(d[127])
        : "l"(da), "l"(db));
}

__device__ __forceinline__ void wgmma_m64n128k16(float* d, uint64_t da, uint64_t db) {
    asm volatile(
        "{\n.reg .pred p;\nsetp.ne.b32 p, 1, 0;\n"
        "wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16 {"
        "%0,%1,%2,%3,%4,%5,%6,%7,%8,%9,%10,%11,%12,%13,%14,%15,"
        "%16,%17,%18,%19,%20,%21,%22,%23,%24,%25,%26,%27,%28,%29,%30,%31,"
        "%32,%33,%34,%35,%36,%37,%38,%39,%40,%41,%42,%43,%44,%45,%46,%47,"
        "%48,%49,%50,%51,%52,%53,%54,%55,%56,%57,%58,%59,%60,%61,%62,%63"
        "}, %64, %65, p, 1, 1, 0, 1;\n}\n"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]),
          "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]),
          "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]),
          "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31]),
          "+f"(d[32]), "+f"(d[33]), "+f"(d[34]), "+f"(d[35]), "+f"(d[36]), "+f"(d[37]), "+f"(d[38]), "+f"(d[39]),
          "+f"(d[40]), "+f"(d[41]), "+f"(d[42]), "+f"(d[43]), "+f"(d[44]), "+f"(d[45]), "+f"(d[46]), "+f"(d[47]),
          "+f"(d[48]), "+f"(d[49]), "+f"(d[50]), "+f"(d[51]), "+f"(d[52]), "+f"(d[53]), "+f"(d[54]), "+f"(d[55]),
          "+f"(d[56]), "+f"(d[57]), "+f"(d[58]), "+f"(d[59]), "+f"(d[60]), "+f"(d[61]), "+f"(d[62]), "+f"(d[63])
        : "l"(da), "l"(db));
}

template <int BN> __device__ __forceinline__ void wgmma_bn(float* d, uint64_t da, uint64_t db) {
    if constexpr (BN == 256) wgmma_m64n256k16(d, da, db); else wgmma_m64n128k16(d, da, db);
}

// ------------------------------------------------------------------------------------------
// Wide kernel
// ------------------------------------------------------------------------------------------
constexpr int BM = 128, BK = 64;

template <int BN, int STAGES>
struct WideSmem {
    static constexpr int kABytes = BM * BK * 2;          // 16 KiB
    static constexpr int kBBytes = BK * BN * 2;          // 32 KiB at BN = 256
    static constexpr int kStageBytes = kABytes + kBBytes;
    static constexpr int kBytes = STAGES * kStageBytes + 2 * STAGES * 8 + 1024;  // + barriers + alignment slack
};

struct TileSched {
    int tiles_m, tiles_n, group;  // tiles_m counts cluster rows (BM * CM each)
    __device__ __forceinline__ void tile(int t, int& tm, int& tn) const {
        int per_group = group * tiles_n;
        int g = t / per_group, r = t - g * per_group;
        int first = g * group;
        int gs = min(group, tiles_m - first);
        tm = first + r % gs;
        tn = r / gs;
    }
};

template <int BN, int STAGES, int CM, typename OutT>
__global__ void __launch_bounds__(384, 1)
wide_gemm(const __grid_constant__ CUtensorMap tmA, const __grid_constant__ CUtensorMap tmB,
          OutT* __restrict__ C, const float* __restrict__ bias, int M, int N, int K, int group) {
    using S = WideSmem<BN, STAGES>;
    extern __shared__ uint8_t smem_raw[];
    uint8_t* smem = (uint8_t*)(((uintptr_t)smem_raw + 1023) & ~(uintptr_t)1023);
    const uint32_t sbase = smem_u32(smem);
    const uint32_t sA0 = sbase, sB0 = sbase + STAGES * S::kABytes;
    const uint32_t bar0 = sbase + STAGES * S::kStageBytes;  // full[s] at bar0 + 8s, empty[s] at bar0 + 8(STAGES + s)
    auto full = [&](int s) { return bar0 + 8 * s; };
    auto empty = [&](int s) { return bar0 + 8 * (STAGES + s); };

    const int wg = threadIdx.x / 128;
    const int tid = threadIdx.x % 128;
    const uint32_t rank = (CM > 1) ? cluster_ctarank() : 0;
    const int cid = (CM > 1) ? (int)cluster_id_x() : (int)blockIdx.x;
    const int ncl = (CM > 1) ? (int)nclusters_x() : (int)gridDim.x;

    if (threadIdx.x == 0) {
        for (int s = 0; s < STAGES; ++s) {
            mbar_init(full(s), 1);
            mbar_init(empty(s), 8 * CM);  // one arrive per consumer warp of every CTA in the cluster
        }
        asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
    }
    if (CM > 1) cluster_sync(); else __syncthreads();

    TileSched sched{(M + BM * CM - 1) / (BM * CM), N / BN, group};
    const int ntiles = sched.tiles_m * sched.tiles_n;
    const int nk = K / BK;

    if (wg == 0) {
        asm volatile("setmaxnreg.dec.sync.aligned.u32 24;");
        if (tid == 0) {
            int s = 0; uint32_t ph = 0;
            constexpr int kChunks = BN / 64, kMine = kChunks / CM;
            for (int t = cid; t < ntiles; t += ncl) {
                int tm, tn; sched.tile(t, tm, tn);
                const int m0 = (tm * CM + (int)rank) * BM, n0 = tn * BN;
                for (int kb = 0; kb < nk; ++kb) {
                    mbar_wait(empty(s), ph ^ 1);
                    mbar_expect_tx(full(s), S::kStageBytes);
                    tma_load_2d(sA0 + s * S::kABytes, &tmA, full(s), kb * BK, m0);
                    #pragma unroll
                    for (int c = 0; c < kMine; ++c) {
                        const int ch = (int)rank * kMine + c;
                        const uint32_t dst = sB0 + s * S::kBBytes + ch * (BK * 128);
                        if (CM > 1) tma_load_2d_mc(dst, &tmB, full(s), n0 + ch * 64, kb * BK, (uint16_t)((1u << CM) - 1));
                        else tma_load_2d(dst, &tmB, full(s), n0 + ch * 64, kb * BK);
                    }
                    if (++s == STAGES) { s = 0; ph ^= 1; }
                }
            }
        }
    } else {
        asm volatile("setmaxnreg.inc.sync.aligned.u32 240;");
        const int cw = wg - 1;             // consumer index: rows cw*64 .. +63 of the tile
        const int warp = tid / 32, lane = tid % 32;
        float d[BN / 2];
        int s = 0; uint32_t ph = 0;
        for (int t = cid; t < ntiles; t += ncl) {
            int tm, tn; sched.tile(t, tm, tn);
            const int m0 = (tm * CM + (int)rank) * BM, n0 = tn * BN;
            #pragma unroll
            for (int i = 0; i < BN / 2; ++i) d[i] = 0.f;
            int prev = -1;
            for (int kb = 0; kb < nk; ++kb) {
                mbar_wait(full(s), ph);
                const uint32_t a = sA0 + s * S::kABytes + cw * (64 * 128);
                const uint32_t b = sB0 + s * S::kBBytes;
                wgmma_fence();
                #pragma unroll
                for (int kk = 0; kk < BK / 16; ++kk)  // ascending k16 steps: the contract's chain
                    wgmma_bn<BN>(d, gmma_desc(a + kk * 32, 16, 1024), gmma_desc(b + kk * 2048, BK * 128, 1024));
                wgmma_commit();
                if (prev >= 0) {
                    wgmma_wait<1>();
                    if (lane == 0) {
                        if (CM > 1) { for (int r = 0; r < CM; ++r) mbar_arrive_cluster(empty(prev), r); }
                        else mbar_arrive(empty(prev));
                    }
                }
                prev = s;
                if (++s == STAGES) { s = 0; ph ^= 1; }
            }
            wgmma_wait<0>();
            if (lane == 0) {
                if (CM > 1) { for (int r = 0; r < CM; ++r) mbar_arrive_cluster(empty(prev), r); }
                else mbar_arrive(empty(prev));
            }
            #pragma unroll
            for (int i = 0; i < BN / 2; ++i) reg_fence(d[i]);
            // Epilogue: fragment j covers columns 8j..8j+7; this thread has (row, 2c..2c+1) and (row+8, ...).
            const int row = m0 + cw * 64 + warp * 16 + lane / 4;
            const int colb = n0 + 2 * (lane % 4);
            #pragma unroll
            for (int j = 0; j < BN / 8; ++j) {
                const int col = colb + 8 * j;
                float b0 = 0.f, b1 = 0.f;
                if (bias) { b0 = bias[col]; b1 = bias[col + 1]; }
                #pragma unroll
                for (int h = 0; h < 2; ++h) {
                    const int r = row + 8 * h;
                    if (r < M) {
                        float v0 = d[4 * j + 2 * h], v1 = d[4 * j + 2 * h + 1];
                        if (bias) { v0 += b0; v1 += b1; }
                        if constexpr (sizeof(OutT) == 2) {
                            *reinterpret_cast<__nv_bfloat162*>(C + (size_t)r * N + col) = __floats2bfloat162_rn(v0, v1);
                        } else {
                            *reinterpret_cast<float2*>(C + (size_t)r * N + col) = make_float2(v0, v1);
                        }
                    }
                }
            }
        }
    }
    __syncwarp();
    if (CM > 1) cluster_sync();
}

// ------------------------------------------------------------------------------------------
// Decode kernel (m <= 16): mma.sync m16n8k16, same contract
// ------------------------------------------------------------------------------------------
constexpr int DNB = 32, DSTAGES = 8;
constexpr int DA_BYTES = 16 * BK * 2, DB_BYTES = BK * DNB * 2;
constexpr int DSMEM = DSTAGES * (DA_BYTES + DB_BYTES) + 2 * DSTAGES * 8 + 1024;

template <typename OutT>
__global__ void __launch_bounds__(160)
decode_gemm(const __grid_constant__ CUtensorMap tmA, const __grid_constant__ CUtensorMap tmB,
            OutT* __restrict__ C, const float* __restrict__ bias, int M, int N, int K) {
    extern __shared__ uint8_t smem_raw[];
    uint8_t* smem = (uint8_t*)(((uintptr_t)smem_raw + 1023) & ~(uintptr_t)1023);
    const uint32_t sbase = smem_u32(smem);
    const uint32_t sA0 = sbase, sB0 = sbase + DSTAGES * DA_BYTES;
    const uint32_t bar0 = sB0 + DSTAGES * DB_BYTES;
    auto full = [&](int s) { return bar0 + 8 * s; };
    auto empty = [&](int s) { return bar0 + 8 * (DSTAGES + s); };
    const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
    const int n0 = blockIdx.x * DNB;
    const int nk = K / BK;
    if (threadIdx.x == 0) {
        for (int s = 0; s < DSTAGES; ++s) { mbar_init(full(s), 1); mbar_init(empty(s), 4); }
        asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
    }
    __syncthreads();
    if (warp == 4) {
        if (lane == 0) {
            int s = 0; uint32_t ph = 0;
            for (int kb = 0; kb < nk; ++kb) {
                mbar_wait(empty(s), ph ^ 1);
                mbar_expect_tx(full(s), DA_BYTES + DB_BYTES);
                tma_load_2d(sA0 + s * DA_BYTES, &tmA, full(s), kb * BK, 0);
                tma_load_2d(sB0 + s * DB_BYTES, &tmB, full(s), n0, kb * BK);
                if (++s == DSTAGES) { s = 0; ph ^= 1; }
            }
        }
        return;
    }
    // Consumer warp `warp` owns columns n0 + 8*warp .. +7, all 16 (padded) rows.
    float c[4] = {0.f, 0.f, 0.f, 0.f};
    int s = 0; uint32_t ph = 0;
    const int mat = lane / 8, r8 = lane % 8;
    const int arow = r8 + 8 * (mat & 1);   // A ldmatrix.x4: matrices (rows 0-7|8-15) x (k 0-7|8-15)
    const int akc = mat >> 1;
    const int l16 = lane % 16;             // B ldmatrix.x2.trans: lanes 0-15 give k rows 0..15
    for (int kb = 0; kb < nk; ++kb) {
        mbar_wait(full(s), ph);
        const uint32_t a = sA0 + s * DA_BYTES, b = sB0 + s * DB_BYTES;
        #pragma unroll
        for (int kk = 0; kk < BK / 16; ++kk) {
            uint32_t a0, a1, a2, a3, b0, b1;
            const int kc = kk * 2 + akc;    // 16-byte chunk of the 128-byte A row (128B swizzle)
            const uint32_t aaddr = a + arow * 128 + ((kc ^ (arow & 7)) << 4);
            asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0,%1,%2,%3}, [%4];"
                         : "=r"(a0), "=r"(a1), "=r"(a2), "=r"(a3) : "r"(aaddr) : "memory");
            const int krow = kk * 16 + l16;  // 64-byte B row (32 columns), 64B swizzle
            const uint32_t baddr = b + krow * 64 + ((warp ^ ((krow >> 1) & 3)) << 4);
            asm volatile("ldmatrix.sync.aligned.m8n8.x2.trans.shared.b16 {%0,%1}, [%2];"
                         : "=r"(b0), "=r"(b1) : "r"(baddr) : "memory");
            asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};"
                         : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
                         : "r"(a0), "r"(a1), "r"(a2), "r"(a3), "r"(b0), "r"(b1));
        }
        __syncwarp();
        if (lane == 0) mbar_arrive(empty(s));
        if (++s == DSTAGES) { s = 0; ph ^= 1; }
    }
    const int g = lane / 4, col = n0 + 8 * warp + 2 * (lane % 4);
    float bb0 = 0.f, bb1 = 0.f;
    if (bias) { bb0 = bias[col]; bb1 = bias[col + 1]; }
    #pragma unroll
    for (int h = 0; h < 2; ++h) {
        const int r = g + 8 * h;
        if (r < M) {
            float v0 = c[2 * h], v1 = c[2 * h + 1];
            if (bias) { v0 += bb0; v1 += bb1; }
            if constexpr (sizeof(OutT) == 2)
                *reinterpret_cast<__nv_bfloat162*>(C + (size_t)r * N + col) = __floats2bfloat162_rn(v0, v1);
            else
                *reinterpret_cast<float2*>(C + (size_t)r * N + col) = make_float2(v0, v1);
        }
    }
}

// Random bf16 in [-1, 1): a hash of (seed, index), never zeros-only data.
__global__ void fill_random(bf16* p, size_t n, uint32_t seed) {
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x) {
        uint32_t x = (uint32_t)i * 0x9E3779B1u ^ seed ^ (uint32_t)(i >> 32) * 0x85EBCA6Bu;
        x ^= x >> 16; x *= 0x7FEB352Du; x ^= x >> 15; x *= 0x846CA68Bu; x ^= x >> 16;
        p[i] = __float2bfloat16((float)(x >> 8) * (2.0f / 16777216.0f) - 1.0f);
    }
}
__global__ void fill_random_f32(float* p, size_t n, uint32_t seed) {
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x) {
        uint32_t x = (uint32_t)i * 0x9E3779B1u ^ seed;
        x ^= x >> 16; x *= 0x7FEB352Du; x ^= x >> 15; x *= 0x846CA68Bu; x ^= x >> 16;
        p[i] = (float)(x >> 8) * (2.0f / 16777216.0f) - 1.0f;
    }
}

// ------------------------------------------------------------------------------------------
// Host side
// ------------------------------------------------------------------------------------------
typedef CUresult (*EncodeTiledFn)(CUtensorMap*, CUtensorMapDataType, cuuint32_t, void*, const cuuint64_t*,
                                  const cuuint64_t*, const cuuint32_t*, const cuuint32_t*, CUtensorMapInterleave,
                                  CUtensorMapSwizzle, CUtensorMapL2promotion, CUtensorMapFloatOOBfill);
static EncodeTiledFn g_encode = nullptr;
static int g_sms = 0;

// 2-D bf16 map over a row-major matrix: `inner` contiguous elements per row, `outer` rows, `ld` elements apart.
static CUtensorMap make_map(const void* p, uint64_t inner, uint64_t outer, uint64_t ld, uint32_t box_inner,
                            uint32_t box_outer, CUtensorMapSwizzle sw) {
    CUtensorMap m;
    cuuint64_t dims[2] = {inner, outer};
    cuuint64_t strides[1] = {ld * 2};
    cuuint32_t box[2] = {box_inner, box_outer};
    cuuint32_t es[2] = {1, 1};
    CUresult r = g_encode(&m, CU_TENSOR_MAP_DATA_TYPE_BFLOAT16, 2, const_cast<void*>(p), dims, strides, box, es,
                          CU_TENSOR_MAP_INTERLEAVE_NONE, sw, CU_TENSOR_MAP_L2_PROMOTION_L2_256B,
                          CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
    if (r != CUDA_SUCCESS) { printf("cuTensorMapEncodeTiled failed: %d\n", (int)r); exit(1); }
    return m;
}

template <int BN, int ST, int CM, typename OutT>
struct Wide {
    static constexpr int kSmem = WideSmem<BN, ST>::kBytes;
    static std::string name() {
        char b[96];
        snprintf(b, sizeof b, "wgmma %dx%dx%d s%d c%d %s", BM, BN, BK, ST, CM, sizeof(OutT) == 2 ? "bf16" : "f32");
        return b;
    }
    static int max_ctas() {  // co-resident CTAs (whole clusters) for the persistent grid
        CHECK(cudaFuncSetAttribute(wide_gemm<BN, ST, CM, OutT>, cudaFuncAttributeMaxDynamicSharedMemorySize, kSmem));
        if (CM == 1) return g_sms;
        cudaLaunchConfig_t cfg = {};
        cfg.gridDim = dim3(g_sms / CM * CM); cfg.blockDim = dim3(384); cfg.dynamicSmemBytes = kSmem;
        cudaLaunchAttribute at[1]; at[0].id = cudaLaunchAttributeClusterDimension;
        at[0].val.clusterDim.x = CM; at[0].val.clusterDim.y = 1; at[0].val.clusterDim.z = 1;
        cfg.attrs = at; cfg.numAttrs = 1;
        int ncl = 0;
        CHECK(cudaOccupancyMaxActiveClusters(&ncl, wide_gemm<BN, ST, CM, OutT>, &cfg));
        return ncl * CM;
    }
    // ctas <= 0: all co-resident CTAs.
    static void launch(const CUtensorMap& a, const CUtensorMap& b, OutT* C, const float* bias, int M, int N, int K,
                       int ctas = 0, int group = 8) {
        static int maxc = max_ctas();
        if (N % BN || K % BK) { printf("shape not supported\n"); exit(1); }
        const int tiles = ((M + BM * CM - 1) / (BM * CM)) * (N / BN);
        int g = (ctas > 0 ? std::min(ctas, maxc) : maxc) / CM;
        g = std::max(1, std::min(g, tiles));
        cudaLaunchConfig_t cfg = {};
        cfg.gridDim = dim3(g * CM); cfg.blockDim = dim3(384); cfg.dynamicSmemBytes = kSmem;
        cudaLaunchAttribute at[1]; at[0].id = cudaLaunchAttributeClusterDimension;
        at[0].val.clusterDim.x = CM; at[0].val.clusterDim.y = 1; at[0].val.clusterDim.z = 1;
        cfg.attrs = at; cfg.numAttrs = 1;
        CHECK(cudaLaunchKernelEx(&cfg, wide_gemm<BN, ST, CM, OutT>, a, b, C, bias, M, N, K, group));
        CHECK(cudaGetLastError());
    }
};

template <typename OutT>
static void launch_decode(const CUtensorMap& a, const CUtensorMap& b, OutT* C, const float* bias, int M, int N, int K) {
    static bool init = false;
    if (!init) { CHECK(cudaFuncSetAttribute(decode_gemm<OutT>, cudaFuncAttributeMaxDynamicSharedMemorySize, DSMEM)); init = true; }
    if (M > 16 || N % DNB || K % BK) { printf("decode shape not supported\n"); exit(1); }
    decode_gemm<OutT><<<N / DNB, 160, DSMEM>>>(a, b, C, bias, M, N, K);
    CHECK(cudaGetLastError());
}

static inline float bf2f(uint16_t h) { uint32_t u = (uint32_t)h << 16; float f; memcpy(&f, &u, 4); return f; }
template <typename T> static inline float to_f(T v);
template <> inline float to_f<bf16>(bf16 v) { uint16_t h; memcpy(&h, &v, 2); return bf2f(h); }
template <> inline float to_f<float>(float v) { return v; }

struct Host {
    int M, N, K;
    std::vector<uint16_t> A, B;  // bf16 bits
    std::vector<float> bias;
};

struct CheckResult { double worst; double rel_rms; int nan_count; };

// Sampled outputs against a float64 reference. Bound per element (u_out = 2^-8 for bf16, 2^-24 for f32):
//   |out - ref| <= u_out * |ref| + (1 + u_out) * 2 * K * 2^-24 * sum_k |a_k b_k|
// (f32 chain of K terms, with a factor 2 of slack for the tensor core's internal k16 sums).
template <typename T>
static CheckResult check(const Host& h, const std::vector<T>& out, int M, bool with_bias, uint32_t seed) {
    CheckResult r{0, 0, 0};
    for (size_t i = 0; i < (size_t)M * h.N; ++i) { float v = to_f(out[i]); if (v != v) ++r.nan_count; }
    const double uo = sizeof(T) == 2 ? 1.0 / 256 : 1.0 / 16777216;
    uint64_t st = 0x9E3779B97F4A7C15ull ^ seed;
    auto rnd = [&]() { st ^= st << 13; st ^= st >> 7; st ^= st << 17; return st; };
    double se = 0, sr = 0;
    const int ns = 768;
    for (int s = 0; s < ns; ++s) {
        int row = (int)(rnd() % M), col = (int)(rnd() % h.N);
        if (s == 0) { row = 0; col = 0; }
        if (s == 1) { row = M - 1; col = h.N - 1; }
        double ref = 0, abs = 0;
        for (int k = 0; k < h.K; ++k) {
            double p = (double)bf2f(h.A[(size_t)row * h.K + k]) * (double)bf2f(h.B[(size_t)k * h.N + col]);
            ref += p; abs += fabs(p);
        }
        if (with_bias) { ref += h.bias[col]; abs += fabs(h.bias[col]); }
        double o = to_f(out[(size_t)row * h.N + col]);
        double bound = uo * fabs(ref) + (1 + uo) * 2.0 * h.K * std::ldexp(1.0, -24) * abs;
        double e = fabs(o - ref);
        if (!(e <= bound * 1e30)) e = INFINITY;
        r.worst = std::max(r.worst, e / bound);
        se += (o - ref) * (o - ref); sr += ref * ref;
    }
    r.rel_rms = sqrt(se / sr);
    return r;
}

template <typename T> static void poison(T* p, size_t n) { CHECK(cudaMemset(p, 0xFF, n * sizeof(T))); }  // NaN in bf16 and f32
template <typename T> static std::vector<T> fetch(const T* p, size_t n) {
    std::vector<T> v(n); CHECK(cudaMemcpy(v.data(), p, n * sizeof(T), cudaMemcpyDeviceToHost)); return v;
}
static bool all_ff(const void* p, size_t bytes) {
    const uint8_t* b = (const uint8_t*)p;
    for (size_t i = 0; i < bytes; ++i) if (b[i] != 0xFF) return false;
    return true;
}

static float median(std::vector<float> v) { std::sort(v.begin(), v.end()); return v[v.size() / 2]; }

struct Timer {
    cudaEvent_t e0, e1;
    Timer() { CHECK(cudaEventCreate(&e0)); CHECK(cudaEventCreate(&e1)); }
    template <typename F> float time(F f) {
        CHECK(cudaEventRecord(e0)); f(); CHECK(cudaEventRecord(e1)); CHECK(cudaEventSynchronize(e1));
        float ms; CHECK(cudaEventElapsedTime(&ms, e0, e1)); return ms;
    }
};

static int g_fail = 0;
static void verdict(bool ok, const char* what) { printf("  %-66s %s\n", what, ok ? "PASS" : "FAIL"); if (!ok) ++g_fail; }

using V0 = Wide<256, 4, 1, bf16>;   // main: 128x256, 4 stages, no cluster
using V1 = Wide<256, 4, 2, bf16>;   // cluster of 2 along M, B multicast
using V2 = Wide<128, 6, 1, bf16>;   // 128x128 tile, 6 stages (contract cross-check + speed)
using VF = Wide<256, 4, 1, float>;  // f32 out: stronger bitwise checks

#ifdef HAVE_CUBLAS
static cublasHandle_t g_cublas;
static void cublas_gemm(const bf16* A, const bf16* B, void* C, cudaDataType ct, int M, int N, int K) {
    float alpha = 1.f, beta = 0.f;
    // Row-major C[M,N] = A[M,K] B[K,N]  <=>  column-major C^T[N,M] = B^T[N,K] A^T[K,M].
    cublasStatus_t s = cublasGemmEx(g_cublas, CUBLAS_OP_N, CUBLAS_OP_N, N, M, K, &alpha, B, CUDA_R_16BF, N, A,
                                    CUDA_R_16BF, K, &beta, C, ct, N, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT);
    if (s != CUBLAS_STATUS_SUCCESS) { printf("cublasGemmEx failed: %d\n", (int)s); exit(1); }
}
#endif

struct Row { std::string shape, what; double ours_tf, cub_tf, ratio; float ours_ms, cub_ms; };
static std::vector<Row> g_table;

static void run_shape(int M, int N, int K, uint32_t seed, int reps, bool decode) {
    printf("\n=== M=%d N=%d K=%d ===\n", M, N, K);
    Host h{M, N, K, {}, {}, {}};
    bf16 *dA, *dB; float* dbias;
    CHECK(cudaMalloc(&dA, (size_t)M * K * 2)); CHECK(cudaMalloc(&dB, (size_t)K * N * 2)); CHECK(cudaMalloc(&dbias, N * 4));
    fill_random<<<1024, 256>>>(dA, (size_t)M * K, seed * 2 + 1);
    fill_random<<<1024, 256>>>(dB, (size_t)K * N, seed * 2 + 2);
    fill_random_f32<<<64, 256>>>(dbias, N, seed * 2 + 3);
    CHECK(cudaGetLastError()); CHECK(cudaDeviceSynchronize());
    h.A.resize((size_t)M * K); h.B.resize((size_t)K * N); h.bias.resize(N);
    CHECK(cudaMemcpy(h.A.data(), dA, h.A.size() * 2, cudaMemcpyDeviceToHost));
    CHECK(cudaMemcpy(h.B.data(), dB, h.B.size() * 2, cudaMemcpyDeviceToHost));
    CHECK(cudaMemcpy(h.bias.data(), dbias, N * 4, cudaMemcpyDeviceToHost));
    bf16 *dC, *dC2; float *dF, *dF2;
    const size_t mn = (size_t)M * N;
    CHECK(cudaMalloc(&dC, mn * 2)); CHECK(cudaMalloc(&dC2, mn * 2));
    CHECK(cudaMalloc(&dF, mn * 4)); CHECK(cudaMalloc(&dF2, mn * 4));
    CUtensorMap mA = make_map(dA, K, M, K, 64, BM, CU_TENSOR_MAP_SWIZZLE_128B);
    CUtensorMap mB = make_map(dB, N, K, N, 64, 64, CU_TENSOR_MAP_SWIZZLE_128B);
    char buf[160];

    // 1. main kernel, bf16 out: NaN-poisoned output, float64 reference on samples.
    poison(dC, mn); V0::launch(mA, mB, dC, nullptr, M, N, K); CHECK(cudaDeviceSynchronize());
    std::vector<bf16> c0 = fetch(dC, mn);
    CheckResult r = check(h, c0, M, false, seed);
    printf("  %-22s unwritten(NaN)=%d  max err/bound=%.4f  rel rms err=%.3e\n", V0::name().c_str(), r.nan_count, r.worst, r.rel_rms);
    verdict(r.nan_count == 0 && r.worst <= 1.0, "V0 against float64 reference (bound above)");
    // bias path (f32 bias added to the f32 accumulator, then one rounding)
    poison(dC2, mn); V0::launch(mA, mB, dC2, dbias, M, N, K); CHECK(cudaDeviceSynchronize());
    { std::vector<bf16> cb = fetch(dC2, mn); CheckResult rb = check(h, cb, M, true, seed + 7);
      printf("  %-22s unwritten(NaN)=%d  max err/bound=%.4f  rel rms err=%.3e\n", "V0 + bias", rb.nan_count, rb.worst, rb.rel_rms);
      verdict(rb.nan_count == 0 && rb.worst <= 1.0, "V0 with bias against float64 reference"); }
    // 2. other tiles / cluster: same contract, so bitwise equal to V0.
    poison(dC2, mn); V1::launch(mA, mB, dC2, nullptr, M, N, K); CHECK(cudaDeviceSynchronize());
    { std::vector<bf16> c = fetch(dC2, mn); verdict(memcmp(c.data(), c0.data(), mn * 2) == 0, "V1 (cluster 2, multicast) bitwise == V0, all outputs"); }
    poison(dC2, mn); V2::launch(mA, mB, dC2, nullptr, M, N, K); CHECK(cudaDeviceSynchronize());
    { std::vector<bf16> c = fetch(dC2, mn); verdict(memcmp(c.data(), c0.data(), mn * 2) == 0, "V2 (128x128 tile, wgmma n128) bitwise == V0, all outputs"); }
    // 3. persistent grid size (who computes a tile) must not matter.
    for (int ctas : {100, 37}) {
        poison(dC2, mn); V0::launch(mA, mB, dC2, nullptr, M, N, K, ctas); CHECK(cudaDeviceSynchronize());
        std::vector<bf16> c = fetch(dC2, mn);
        snprintf(buf, sizeof buf, "V0 on a %d-CTA persistent grid bitwise == V0 on all SMs", ctas);
        verdict(memcmp(c.data(), c0.data(), mn * 2) == 0, buf);
    }
    // 4. f32 out (no final rounding hides differences).
    poison(dF, mn); VF::launch(mA, mB, dF, nullptr, M, N, K); CHECK(cudaDeviceSynchronize());
    std::vector<float> f0 = fetch(dF, mn);
    r = check(h, f0, M, false, seed + 3);
    printf("  %-22s unwritten(NaN)=%d  max err/bound=%.4f  rel rms err=%.3e\n", VF::name().c_str(), r.nan_count, r.worst, r.rel_rms);
    verdict(r.nan_count == 0 && r.worst <= 1.0, "VF (f32 out) against float64 reference");
    { bool same = true; for (size_t i = 0; i < mn && same; ++i) { bf16 x = __float2bfloat16(f0[i]); same = memcmp(&x, &c0[i], 2) == 0; }
      verdict(same, "bf16(VF) == V0 bitwise (one rounding at the store)"); }
    // 5. row invariance: the kernel on the first m rows only gives the same bits as on all M rows.
    for (int m : {1, 7, 64, 129, 1000}) {
        if (m > M) continue;
        CUtensorMap mAm = make_map(dA, K, m, K, 64, BM, CU_TENSOR_MAP_SWIZZLE_128B);
        const size_t chk = (size_t)std::min(M, m + 256) * N;  // m rows plus rows after them (must stay poisoned)
        poison(dC2, mn); V0::launch(mAm, mB, dC2, nullptr, m, N, K); CHECK(cudaDeviceSynchronize());
        std::vector<bf16> c = fetch(dC2, chk);
        bool ok = memcmp(c.data(), c0.data(), (size_t)m * N * 2) == 0 && all_ff(c.data() + (size_t)m * N, (chk - (size_t)m * N) * 2);
        poison(dC2, mn); V1::launch(mAm, mB, dC2, nullptr, m, N, K); CHECK(cudaDeviceSynchronize());
        c = fetch(dC2, chk);
        bool ok1 = memcmp(c.data(), c0.data(), (size_t)m * N * 2) == 0 && all_ff(c.data() + (size_t)m * N, (chk - (size_t)m * N) * 2);
        poison(dF2, mn); VF::launch(mAm, mB, dF2, nullptr, m, N, K); CHECK(cudaDeviceSynchronize());
        std::vector<float> f = fetch(dF2, (size_t)m * N);
        bool okf = memcmp(f.data(), f0.data(), (size_t)m * N * 4) == 0;
        snprintf(buf, sizeof buf, "rows 0..%d: V0, V1 (bf16) and VF (f32) at M=%d bitwise == at M=%d", m - 1, m, M);
        verdict(ok && ok1 && okf, buf);
    }
    // 6. decode kernel (mma.sync m16n8k16), same contract: bitwise equal to the wide kernel's rows.
    if (decode) {
        CUtensorMap mBd = make_map(dB, N, K, N, DNB, 64, CU_TENSOR_MAP_SWIZZLE_64B);
        for (int m : {1, 2, 7, 8, 13, 16}) {
            CUtensorMap mAd = make_map(dA, K, m, K, 64, 16, CU_TENSOR_MAP_SWIZZLE_128B);
            poison(dF2, mn); launch_decode<float>(mAd, mBd, dF2, nullptr, m, N, K); CHECK(cudaDeviceSynchronize());
            std::vector<float> f = fetch(dF2, (size_t)(m + 1) * N);
            bool okf = memcmp(f.data(), f0.data(), (size_t)m * N * 4) == 0 && all_ff(f.data() + (size_t)m * N, (size_t)N * 4);
            size_t diff = 0; for (size_t i = 0; i < (size_t)m * N; ++i) diff += memcmp(&f[i], &f0[i], 4) != 0;
            poison(dC2, mn); launch_decode<bf16>(mAd, mBd, dC2, nullptr, m, N, K); CHECK(cudaDeviceSynchronize());
            std::vector<bf16> c = fetch(dC2, (size_t)m * N);
            bool ok = memcmp(c.data(), c0.data(), (size_t)m * N * 2) == 0;
            snprintf(buf, sizeof buf, "decode m=%d: f32 and bf16 out bitwise == wide rows (f32 diffs %zu)", m, diff);
            verdict(ok && okf, buf);
        }
        { // with bias, f32 out, against the wide kernel with bias at M = 16
            CUtensorMap mAd = make_map(dA, K, 16, K, 64, 16, CU_TENSOR_MAP_SWIZZLE_128B);
            CUtensorMap mAw = make_map(dA, K, 16, K, 64, BM, CU_TENSOR_MAP_SWIZZLE_128B);
            poison(dF2, mn); launch_decode<float>(mAd, mBd, dF2, dbias, 16, N, K);
            poison(dF, mn); VF::launch(mAw, mB, dF, dbias, 16, N, K); CHECK(cudaDeviceSynchronize());
            std::vector<float> a = fetch(dF2, (size_t)16 * N), b = fetch(dF, (size_t)16 * N);
            verdict(memcmp(a.data(), b.data(), a.size() * 4) == 0, "decode m=16 with bias, f32 out, bitwise == VF with bias");
        }
    }

    // 7. timing, ours and cuBLAS interleaved (one input set: A + B exceed the 60 MiB L2 for these shapes).
    Timer tm;
    const double flop = 2.0 * M * N * K;
#ifdef HAVE_CUBLAS
    poison(dC2, mn); cublas_gemm(dA, dB, dC2, CUDA_R_16BF, M, N, K); CHECK(cudaDeviceSynchronize());
    { std::vector<bf16> c = fetch(dC2, mn); CheckResult rc = check(h, c, M, false, seed);
      size_t diff = 0; for (size_t i = 0; i < mn; ++i) diff += memcmp(&c[i], &c0[i], 2) != 0;
      printf("  cuBLAS                 unwritten(NaN)=%d  max err/bound=%.4f  rel rms err=%.3e  (bf16 outputs differing from V0: %.2f%%)\n",
             rc.nan_count, rc.worst, rc.rel_rms, 100.0 * diff / mn); }
#endif
    std::vector<float> t0, t1, t2, tc;
    for (int i = 0; i < reps + 5; ++i) {
        float a = tm.time([&] { V0::launch(mA, mB, dC, nullptr, M, N, K); });
        float b = tm.time([&] { V1::launch(mA, mB, dC, nullptr, M, N, K); });
        float c = tm.time([&] { V2::launch(mA, mB, dC, nullptr, M, N, K); });
#ifdef HAVE_CUBLAS
        float d = tm.time([&] { cublas_gemm(dA, dB, dC2, CUDA_R_16BF, M, N, K); });
#else
        float d = 1.f;
#endif
        if (i >= 5) { t0.push_back(a); t1.push_back(b); t2.push_back(c); tc.push_back(d); }
    }
    const float mc = median(tc);
    snprintf(buf, sizeof buf, "%dx%dx%d", M, N, K);
    auto add = [&](const std::string& what, float ms) {
        g_table.push_back({buf, what, flop / ms * 1e-9, flop / mc * 1e-9, mc / ms, ms, mc});
        printf("  time %-24s %8.3f ms %7.1f TFLOP/s   cuBLAS %8.3f ms %7.1f TFLOP/s   ratio %.3f\n", what.c_str(), ms, flop / ms * 1e-9, mc, flop / mc * 1e-9, mc / ms);
    };
    add(V0::name(), median(t0)); add(V1::name(), median(t1)); add(V2::name(), median(t2));
    std::vector<float> sp; for (size_t i = 0; i < t0.size(); ++i) sp.push_back(t0[i]);
    std::sort(sp.begin(), sp.end());
    printf("  V0 spread: min %.3f  median %.3f  max %.3f ms (%zu runs)\n", sp.front(), sp[sp.size() / 2], sp.back(), sp.size());

    // 8. decode timing against cuBLAS at the same m (weight streamed: K*N*2 bytes).
    if (decode) {
        CUtensorMap mBd = make_map(dB, N, K, N, DNB, 64, CU_TENSOR_MAP_SWIZZLE_64B);
        for (int m : {1, 8, 16}) {
            CUtensorMap mAd = make_map(dA, K, m, K, 64, 16, CU_TENSOR_MAP_SWIZZLE_128B);
            std::vector<float> td, tcb;
            for (int i = 0; i < 3 * reps + 5; ++i) {
                float a = tm.time([&] { launch_decode<bf16>(mAd, mBd, dC2, nullptr, m, N, K); });
#ifdef HAVE_CUBLAS
                float b = tm.time([&] { cublas_gemm(dA, dB, dC, CUDA_R_16BF, m, N, K); });
#else
                float b = 1.f;
#endif
                if (i >= 5) { td.push_back(a); tcb.push_back(b); }
            }
            const float md = median(td), mcb = median(tcb);
            const double bytes = (double)K * N * 2 + (double)m * K * 2 + (double)m * N * 2;
            printf("  decode m=%-3d %8.2f us %7.0f GB/s   cuBLAS %8.2f us %7.0f GB/s   ratio %.3f\n", m, md * 1e3,
                   bytes / md * 1e-6, mcb * 1e3, bytes / mcb * 1e-6, mcb / md);
            char w[64]; snprintf(w, sizeof w, "decode mma.sync m=%d (GB/s)", m);
            char s2[64]; snprintf(s2, sizeof s2, "%dx%dx%d", m, N, K);
            g_table.push_back({s2, w, bytes / md * 1e-6, bytes / mcb * 1e-6, mcb / md, md, mcb});
        }
    }
    CHECK(cudaFree(dA)); CHECK(cudaFree(dB)); CHECK(cudaFree(dbias)); CHECK(cudaFree(dC)); CHECK(cudaFree(dC2));
    CHECK(cudaFree(dF)); CHECK(cudaFree(dF2));
}

int main(int argc, char** argv) {
    setvbuf(stdout, nullptr, _IOLBF, 0);
    cudaDeviceProp p; CHECK(cudaGetDeviceProperties(&p, 0));
    g_sms = p.multiProcessorCount;
    int clk = 0, mclk = 0; cudaDeviceGetAttribute(&clk, cudaDevAttrClockRate, 0); cudaDeviceGetAttribute(&mclk, cudaDevAttrMemoryClockRate, 0);
    int drv = 0, rt = 0; cudaDriverGetVersion(&drv); cudaRuntimeGetVersion(&rt);
    printf("device: %s, %d SMs, L2 %d MiB, smem/block opt-in %zu B, clock %d MHz, mem clock %d MHz, driver %d, runtime %d\n",
           p.name, g_sms, p.l2CacheSize >> 20, p.sharedMemPerBlockOptin, clk / 1000, mclk / 1000, drv, rt);
    cudaDriverEntryPointQueryResult q;
    CHECK(cudaGetDriverEntryPointByVersion("cuTensorMapEncodeTiled", (void**)&g_encode, 12000, cudaEnableDefault, &q));
    if (!g_encode || q != cudaDriverEntryPointSuccess) { printf("no cuTensorMapEncodeTiled\n"); return 1; }
#ifdef HAVE_CUBLAS
    if (cublasCreate(&g_cublas) != CUBLAS_STATUS_SUCCESS) { printf("cublasCreate failed\n"); return 1; }
    int cv = 0; cublasGetVersion(g_cublas, &cv); printf("cuBLAS %d\n", cv);
#else
    printf("built without cuBLAS: its columns are placeholders\n");
#endif
    printf("kernels: V0 = %s (%d B smem, %d co-resident CTAs), V1 = %s (%d B, %d CTAs), V2 = %s (%d B), VF = %s\n",
           V0::name().c_str(), V0::kSmem, V0::max_ctas(), V1::name().c_str(), V1::kSmem, V1::max_ctas(),
           V2::name().c_str(), V2::kSmem, VF::name().c_str());
    int reps = argc > 1 ? atoi(argv[1]) : 30;
    run_shape(4096, 4096, 4096, 1, reps, true);
    run_shape(4096, 14336, 4096, 2, reps, true);
    run_shape(8192, 8192, 8192, 3, reps, false);

    printf("\n%-18s %-28s %10s %10s %8s\n", "shape MxNxK", "kernel", "ours", "cuBLAS", "ratio");
    for (auto& r : g_table)
        printf("%-18s %-28s %10.1f %10.1f %8.3f\n", r.shape.c_str(), r.what.c_str(), r.ours_tf, r.cub_tf, r.ratio);
    printf("(TFLOP/s for GEMMs, GB/s for decode rows; ratio = cuBLAS time / our time)\n");
    printf("%s: %d check(s) failed\n", g_fail ? "FAILED" : "ALL CHECKS PASSED", g_fail);
    return g_fail ? 1 : 0;
}
