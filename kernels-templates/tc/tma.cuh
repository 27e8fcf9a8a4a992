// TMA (cp.async.bulk.tensor) 2-D tile loads into shared memory, completing on an mbarrier, with
// and without cluster multicast; 2-D tile stores from shared memory (bulk groups) for the
// TMA-store epilogue; the 3-D forms for a strided batch's maps (the third coordinate the entry). The tensor map is the kernel argument's CUtensorMap (passed as
// `const __grid_constant__`), handed over as a generic pointer so that this header does not need
// <cuda.h>. Coordinates are (inner, outer) elements of the operand as stored; boxes that reach
// past the tensor are zero-filled by the hardware (the contract's zero padding); a store writes only
// the part of its box inside the tensor (rows >= m, columns >= n of C are never written).
#pragma once
#include <cstdint>
#include "tc/smem_sync.cuh"

__device__ __forceinline__ void tma_load_2d(uint32_t dst, const void* map, uint32_t bar, int c0, int c1) {
    asm volatile(
        "cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1, {%3, %4}], [%2];" ::"r"(dst),
        "l"((uint64_t)map), "r"(bar), "r"(c0), "r"(c1)
        : "memory");
}
// The box of entry c2 of a 3-D map (a strided batch: [entries, rows, cols]).
__device__ __forceinline__ void tma_load_3d(uint32_t dst, const void* map, uint32_t bar, int c0, int c1, int c2) {
    asm volatile(
        "cp.async.bulk.tensor.3d.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1, {%3, %4, %5}], [%2];" ::"r"(dst),
        "l"((uint64_t)map), "r"(bar), "r"(c0), "r"(c1), "r"(c2)
        : "memory");
}
// Writes the box to the same shared offset in every CTA of `mask` and signals each one's barrier.
__device__ __forceinline__ void tma_load_2d_multicast(uint32_t dst, const void* map, uint32_t bar, int c0, int c1,
                                                      uint16_t mask) {
    asm volatile(
        "cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes.multicast::cluster [%0], [%1, {%3, "
        "%4}], [%2], %5;" ::"r"(dst),
        "l"((uint64_t)map), "r"(bar), "r"(c0), "r"(c1), "h"(mask)
        : "memory");
}

// Writes the box at shared address `src` to the tensor at (c0, c1), as part of this thread's
// current bulk group. The shared-memory writes it reads must be made visible to the async proxy
// first (fence_proxy_async_shared by every writing thread, then a barrier).
__device__ __forceinline__ void tma_store_2d(const void* map, uint32_t src, int c0, int c1) {
    asm volatile("cp.async.bulk.tensor.2d.global.shared::cta.bulk_group [%0, {%2, %3}], [%1];" ::"l"((uint64_t)map), "r"(src),
                 "r"(c0), "r"(c1)
                 : "memory");
}
__device__ __forceinline__ void tma_store_3d(const void* map, uint32_t src, int c0, int c1, int c2) {
    asm volatile("cp.async.bulk.tensor.3d.global.shared::cta.bulk_group [%0, {%2, %3, %4}], [%1];" ::"l"((uint64_t)map), "r"(src),
                 "r"(c0), "r"(c1), "r"(c2)
                 : "memory");
}
__device__ __forceinline__ void bulk_commit_group() { asm volatile("cp.async.bulk.commit_group;" ::: "memory"); }
// This thread's bulk groups have finished reading shared memory (the source may be rewritten).
__device__ __forceinline__ void bulk_wait_group_read0() { asm volatile("cp.async.bulk.wait_group.read 0;" ::: "memory"); }
// This thread's bulk groups have completed (their global writes are done).
__device__ __forceinline__ void bulk_wait_group0() { asm volatile("cp.async.bulk.wait_group 0;" ::: "memory"); }
// fence_proxy_async_shared (tc/smem_sync.cuh) orders generic-proxy shared-memory accesses
// before the TMA operations that follow them.
