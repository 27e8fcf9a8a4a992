// TMA (cp.async.bulk.tensor) 2-D tile loads into shared memory, completing on an mbarrier, with
// and without cluster multicast. The tensor map is the kernel argument's CUtensorMap (passed as
// `const __grid_constant__`), handed over as a generic pointer so that this header does not need
// <cuda.h>. Coordinates are (inner, outer) elements of the operand as stored; boxes that reach
// past the tensor are zero-filled by the hardware (the contract's zero padding).
#pragma once
#include <cstdint>

__device__ __forceinline__ void tma_load_2d(uint32_t dst, const void* map, uint32_t bar, int c0, int c1) {
    asm volatile(
        "cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1, {%3, %4}], [%2];" ::"r"(dst),
        "l"((uint64_t)map), "r"(bar), "r"(c0), "r"(c1)
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
