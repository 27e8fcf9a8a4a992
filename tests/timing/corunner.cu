// A hostile co-runner for the stress tests (tests/timing/tests/gpu_stress.rs) and the decode-race
// experiment (bench/experiments/decode_race.cu): launched on another stream beside the GEMMs, it
// keeps every SM busy for a while in the ways that move a pipeline's timing. It holds shared
// memory and warps so that GEMM CTAs share SMs with it, hammers the shared-memory pipe (ldmatrix,
// bank-conflicting loads and stores, shared atomics), streams global memory through L2, and
// sleeps at random, so the GEMM's warps see queues that fill and drain without a pattern.
//
// Launch: grid = a few CTAs an SM, kCorunnerThreads threads, kCorunnerSharedBytes dynamic shared
// memory (opt-in above 48 KiB); it runs until `cycles` SM clock cycles have passed since the CTA
// started. `sink` (one u32 a CTA) keeps the work from being optimised away; `src` is read.
#include <cstdint>

constexpr int kCorunnerThreads = 256;
constexpr int kCorunnerSharedBytes = 64 * 1024;

extern "C" __global__ void __launch_bounds__(kCorunnerThreads) hostile_corunner(const uint4* __restrict__ src,
                                                                                 unsigned long long src_elems,
                                                                                 uint32_t* __restrict__ sink,
                                                                                 long long cycles, uint32_t seed) {
    extern __shared__ __align__(16) uint32_t smem[];
    __shared__ uint32_t hot[8];  // the atomics' words
    constexpr int kWords = kCorunnerSharedBytes / 4;
    constexpr int kWarpWords = kWords / (kCorunnerThreads / 32);  // each warp touches its own region
    const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
    for (int i = threadIdx.x; i < kWords; i += blockDim.x) smem[i] = i * 2654435761u ^ seed;
    if (threadIdx.x < 8) hot[threadIdx.x] = 0;
    __syncthreads();
    // The step a warp takes comes from a warp-uniform hash (ldmatrix is .sync.aligned: all
    // 32 lanes must run it together); the lanes differ only in their addresses.
    uint32_t h = seed ^ (blockIdx.x * 0x9E3779B1u) ^ (warp * 0x85EBCA6Bu);
    uint32_t acc = 0;
    unsigned long long g = ((unsigned long long)blockIdx.x * blockDim.x + threadIdx.x) * 97u;
    const uint32_t base = (uint32_t)__cvta_generic_to_shared(smem);
    const long long t0 = clock64();
    // The warp leaves the loop together (lane 0's clock decides), so it stays converged.
    while (__shfl_sync(0xffffffffu, (int)(clock64() - t0 < cycles), 0)) {
        h ^= h << 13;
        h ^= h >> 17;
        h ^= h << 5;
        switch ((h >> 8) & 3u) {
            case 0: {  // ldmatrix of 16-byte rows at random places in the warp's region
                const uint32_t off = warp * kWarpWords + ((h >> 12) & 255u) * 4u + (lane & 15) * 4u;
                uint32_t r0, r1, r2, r3;
                asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0,%1,%2,%3}, [%4];"
                             : "=r"(r0), "=r"(r1), "=r"(r2), "=r"(r3)
                             : "r"(base + off * 4u)
                             : "memory");
                acc += r0 ^ r1 ^ r2 ^ r3;
                break;
            }
            case 1: {  // 32-way bank conflicts: every lane on the same bank, loads then stores
                const uint32_t col = (h >> 16) & 31u;
#pragma unroll
                for (int j = 0; j < 8; ++j) {
                    const uint32_t idx = warp * kWarpWords + lane * 32u + ((col + j) & 31u);
                    acc += smem[idx];
                    smem[idx] = acc;
                }
                break;
            }
            case 2:  // shared atomics on a few hot words
                atomicAdd(&hot[(h >> 20) & 7u], 1u);
                break;
            default: {  // stream global memory (through L2), then sometimes sleep
                if (src_elems != 0) {
                    const uint4 v = src[g % src_elems];
                    acc += v.x ^ v.y ^ v.z ^ v.w;
                    g += (unsigned long long)gridDim.x * blockDim.x;
                }
                if (((h >> 24) & 15u) == 0u) __nanosleep(((h >> 4) ^ lane) & 2047u);
                break;
            }
        }
    }
    // What the loop computed, kept live: one word a CTA.
    atomicXor(&hot[0], acc);
    __syncthreads();
    if (threadIdx.x == 0) sink[blockIdx.x] = hot[0];
}
