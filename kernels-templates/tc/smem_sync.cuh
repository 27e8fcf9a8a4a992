// Shared-memory addresses, mbarriers, named barriers and cluster primitives (sm_90): the
// synchronisation the TMA rings of wgmma_tma_gemm and mma_decode_tma are built from. Kept apart
// from the copy and math wrappers so that each kernel's ordering can be read in one place.
#pragma once
#include <cstdint>

__device__ __forceinline__ uint32_t tc_smem_u32(const void* p) { return (uint32_t)__cvta_generic_to_shared(p); }

__device__ __forceinline__ void mbar_init(uint32_t bar, uint32_t count) {
    asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;" ::"r"(bar), "r"(count) : "memory");
}
// Makes the barrier inits visible to the async proxy and to the other CTAs of the cluster.
__device__ __forceinline__ void mbar_init_fence() { asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory"); }
// One arrive that also adds `bytes` to the transaction count the phase waits for.
__device__ __forceinline__ void mbar_arrive_expect_tx(uint32_t bar, uint32_t bytes) {
    asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(bar), "r"(bytes) : "memory");
}
__device__ __forceinline__ void mbar_arrive(uint32_t bar) {
    asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];" ::"r"(bar) : "memory");
}
// Arrive on the barrier at the same shared offset in CTA `rank` of this cluster.
__device__ __forceinline__ void mbar_arrive_cluster(uint32_t bar, uint32_t rank) {
    asm volatile("{\n.reg .b32 ra;\nmapa.shared::cluster.u32 ra, %0, %1;\n"
                 "mbarrier.arrive.shared::cluster.b64 _, [ra];\n}" ::"r"(bar), "r"(rank) : "memory");
}
__device__ __forceinline__ void mbar_wait(uint32_t bar, uint32_t parity) {
    uint32_t done = 0;
    do {
        asm volatile("{\n.reg .pred p;\nmbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2;\nselp.u32 %0, 1, 0, p;\n}"
                     : "=r"(done) : "r"(bar), "r"(parity) : "memory");
    } while (!done);
}
// Orders this thread's generic-proxy shared-memory accesses (stores and loads, ldmatrix and
// stmatrix included) before its later async-proxy ones, and before what a later barrier or
// mbarrier arrive hands to another thread's async-proxy operation (a TMA load or store, wgmma).
__device__ __forceinline__ void fence_proxy_async_shared() { asm volatile("fence.proxy.async.shared::cta;" ::: "memory"); }
// A warp's release of a ring stage it read with generic-proxy loads (ldmatrix, ld.shared) so
// that a TMA load may overwrite it: every lane fences its reads, then one lane arrives on `bar`
// (counted once a warp). The PTX memory model asks for the fence between a generic-proxy access
// and an async-proxy one to the same bytes; without it ptxas issues the arrive as soon as the
// last ldmatrix is issued (it waits for the registers only at the mma that reads them), so the
// producer's refill could overwrite the stage before that ldmatrix read it. Compiled, the fence is
// MEMBAR.ALL.CTA + FENCE.VIEW.ASYNC.S before the arrive.
__device__ __forceinline__ void mbar_release_after_generic_reads(uint32_t bar, int lane) {
    fence_proxy_async_shared();
    __syncwarp();
    if (lane == 0) mbar_arrive(bar);
}
__device__ __forceinline__ uint32_t cluster_ctarank() {
    uint32_t r;
    asm volatile("mov.u32 %0, %%cluster_ctarank;" : "=r"(r));
    return r;
}
// Cluster-scope signalling between consumers of different CTAs (the wgmma K split): a
// fence.acq_rel.cluster orders this thread's earlier shared-memory accesses (its stores, and its
// loads' completion) before a later release arrive by its warp; the arrive releases at cluster
// scope on the barrier at the same offset in CTA `rank`; the wait acquires at cluster scope.
__device__ __forceinline__ void fence_acq_rel_cluster() { asm volatile("fence.acq_rel.cluster;" ::: "memory"); }
__device__ __forceinline__ void mbar_arrive_release_cluster(uint32_t bar, uint32_t rank) {
    asm volatile("{\n.reg .b32 ra;\nmapa.shared::cluster.u32 ra, %0, %1;\n"
                 "mbarrier.arrive.release.cluster.shared::cluster.b64 _, [ra];\n}" ::"r"(bar), "r"(rank) : "memory");
}
__device__ __forceinline__ void mbar_wait_acquire_cluster(uint32_t bar, uint32_t parity) {
    uint32_t done = 0;
    do {
        asm volatile("{\n.reg .pred p;\nmbarrier.try_wait.parity.acquire.cluster.shared::cta.b64 p, [%1], %2;\nselp.u32 %0, 1, 0, p;\n}"
                     : "=r"(done) : "r"(bar), "r"(parity) : "memory");
    } while (!done);
}
// The 32 bits at shared offset `addr` (a TF32 fragment entry no ldmatrix can deliver).
__device__ __forceinline__ uint32_t ld_shared_u32(uint32_t addr) {
    uint32_t v;
    asm volatile("ld.shared.b32 %0, [%1];" : "=r"(v) : "r"(addr) : "memory");
    return v;
}
__device__ __forceinline__ void st_shared_f32(uint32_t addr, float v) {
    asm volatile("st.shared.f32 [%0], %1;" ::"r"(addr), "f"(v) : "memory");
}
// The f32 at shared offset `addr` of CTA `rank` of this cluster (distributed shared memory).
__device__ __forceinline__ float ld_shared_cluster_f32(uint32_t addr, uint32_t rank) {
    float v;
    asm volatile("{\n.reg .b32 ra;\nmapa.shared::cluster.u32 ra, %1, %2;\nld.shared::cluster.f32 %0, [ra];\n}"
                 : "=f"(v) : "r"(addr), "r"(rank) : "memory");
    return v;
}
// The four f32 at shared offset `addr` (16-byte aligned) of CTA `rank` of this cluster.
__device__ __forceinline__ float4 ld_shared_cluster_v4(uint32_t addr, uint32_t rank) {
    float4 v;
    asm volatile("{\n.reg .b32 ra;\nmapa.shared::cluster.u32 ra, %4, %5;\nld.shared::cluster.v4.f32 {%0, %1, %2, %3}, [ra];\n}"
                 : "=f"(v.x), "=f"(v.y), "=f"(v.z), "=f"(v.w) : "r"(addr), "r"(rank) : "memory");
    return v;
}
// Four f32 into shared offset `addr` (16-byte aligned) of CTA `rank` of this cluster.
__device__ __forceinline__ void st_shared_cluster_v4(uint32_t addr, uint32_t rank, float x, float y, float z, float w) {
    asm volatile("{\n.reg .b32 ra;\nmapa.shared::cluster.u32 ra, %0, %1;\nst.shared::cluster.v4.f32 [ra], {%2, %3, %4, %5};\n}"
                 ::"r"(addr), "r"(rank), "f"(x), "f"(y), "f"(z), "f"(w) : "memory");
}
// The shared::cluster address of shared offset `addr` in CTA `rank` of this cluster.
__device__ __forceinline__ uint32_t cluster_addr(uint32_t addr, uint32_t rank) {
    uint32_t ra;
    asm volatile("mapa.shared::cluster.u32 %0, %1, %2;" : "=r"(ra) : "r"(addr), "r"(rank));
    return ra;
}
// Four f32 into the shared::cluster address `ra` (16-byte aligned; cluster_addr) without waiting:
// the store completes 16 bytes of the transaction count of the mbarrier at shared::cluster
// address `rbar`, which lies in the same CTA as `ra`. A thread that waits on that barrier's phase
// sees the bytes; the writer needs no fence and no arrive (st.async, sm_90).
__device__ __forceinline__ void st_async_v4(uint32_t ra, float x, float y, float z, float w, uint32_t rbar) {
    asm volatile("st.async.shared::cluster.mbarrier::complete_tx::bytes.v4.b32 [%0], {%1, %2, %3, %4}, [%5];"
                 ::"r"(ra), "f"(x), "f"(y), "f"(z), "f"(w), "r"(rbar) : "memory");
}
// The four f32 at shared offset `addr` (16-byte aligned) of this CTA.
__device__ __forceinline__ float4 ld_shared_v4(uint32_t addr) {
    float4 v;
    asm volatile("ld.shared.v4.f32 {%0, %1, %2, %3}, [%4];" : "=f"(v.x), "=f"(v.y), "=f"(v.z), "=f"(v.w) : "r"(addr) : "memory");
    return v;
}
// The two halves of cluster_sync_all, for work between them: arrive releases this thread's
// earlier shared-memory accesses at cluster scope, wait acquires every thread's arrival. Each
// thread alternates them (warp-aligned).
__device__ __forceinline__ void cluster_arrive_release() { asm volatile("barrier.cluster.arrive.release.aligned;" ::: "memory"); }
__device__ __forceinline__ void cluster_wait_acquire() { asm volatile("barrier.cluster.wait.acquire.aligned;" ::: "memory"); }
// Every thread of every CTA of the cluster (warp-aligned).
__device__ __forceinline__ void cluster_sync_all() {
    cluster_arrive_release();
    cluster_wait_acquire();
}
// Named barrier `id` (1..15; 0 is __syncthreads) over `count` threads (whole warps).
__device__ __forceinline__ void named_bar_sync(int id, int count) {
    asm volatile("bar.sync %0, %1;" ::"r"(id), "r"(count) : "memory");
}
