// Does compute-sanitizer's racecheck model the synchronisation the split-K wide kernel
// (tcwidechunk, SPLIT_K > 1) uses between the CTAs of a cluster? Rank 0's threads write
// shared memory; rank 1's threads read it through distributed shared memory, ordered by:
//   mode 0: the kernel's own pattern: every thread fence.acq_rel.cluster, __syncwarp, lane 0
//           arrives (release, cluster scope) on rank 1's mbarrier; rank 1 waits (acquire);
//   mode 1: barrier.cluster arrive.release / wait.acquire (a whole-cluster barrier);
//   mode 2: nothing at all (a real race: the positive control).
// The reads are checked against the written values in every mode. Built with the kernels'
// helpers (kernels-templates/tc/smem_sync.cuh), so the probe runs their exact PTX.
//   nvcc -std=c++17 -arch=sm_90a -I kernels-templates/tc -o probe racecheck_cluster.cu
//   compute-sanitizer --tool racecheck ./probe 0   (then 1, 2)
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include "smem_sync.cuh"

__global__ void __cluster_dims__(2, 1, 1) probe(int mode, float* out) {
    __shared__ float buf[128];
    __shared__ alignas(8) uint64_t bar;
    uint32_t rank;
    asm volatile("mov.u32 %0, %%cluster_ctarank;" : "=r"(rank));
    const int tid = threadIdx.x, lane = tid % 32;
    const uint32_t b = (uint32_t)__cvta_generic_to_shared(&bar);
    if (tid == 0) asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;" ::"r"(b), "r"(4) : "memory");
    asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
    cluster_sync_all();  // the barriers are initialised before either CTA goes on
    if (rank == 0) {
        buf[tid] = 1.5f * tid + 1.0f;
        if (mode == 0) {
            fence_acq_rel_cluster();
            __syncwarp();
            if (lane == 0) mbar_arrive_release_cluster(b, 1);
        }
    }
    if (mode == 1) cluster_sync_all();
    if (rank == 1) {
        if (mode == 0) mbar_wait_acquire_cluster(b, 0);
        out[tid] = ld_shared_cluster_f32((uint32_t)__cvta_generic_to_shared(&buf[tid]), 0);
    }
    cluster_sync_all();  // rank 0 stays until rank 1 has read it
}

int main(int argc, char** argv) {
    const int mode = argc > 1 ? atoi(argv[1]) : 0;
    float* out;
    cudaMalloc(&out, 128 * sizeof(float));
    cudaMemset(out, 0, 128 * sizeof(float));
    probe<<<2, 128>>>(mode, out);
    cudaError_t e = cudaDeviceSynchronize();
    float h[128];
    cudaMemcpy(h, out, sizeof h, cudaMemcpyDeviceToHost);
    int bad = 0;
    for (int i = 0; i < 128; ++i) bad += h[i] != 1.5f * i + 1.0f;
    printf("mode %d (%s): %s, %d of 128 reads wrong\n", mode,
           mode == 0 ? "mbarrier release/acquire, the kernel's pattern" : mode == 1 ? "cluster barrier" : "no ordering",
           cudaGetErrorString(e), bad);
    return e != cudaSuccess;
}
