// cp.async (sm_80+) 16-byte copies with zero fill, and the XOR-swizzled shared-memory rows that
// mma_async_gemm stages its operands in. Kept apart from the math so the pipeline's ordering can
// be read in the kernel alone.
#pragma once
#include <cstdint>

// Copies `src_bytes` (0..16) bytes from global `src` to shared `dst` and zero-fills the rest of
// the 16 bytes. `src` and `dst` must be 16-byte aligned; with src_bytes = 0 nothing is read.
__device__ __forceinline__ void cp_async16_zfill(uint32_t dst, const void* src, int src_bytes) {
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(dst), "l"(src), "r"(src_bytes) : "memory");
}
__device__ __forceinline__ void cp_async_commit_group() { asm volatile("cp.async.commit_group;\n" ::: "memory"); }
// Waits until at most N of this thread's committed groups are still in flight.
template <int N>
__device__ __forceinline__ void cp_async_wait_group() { asm volatile("cp.async.wait_group %0;\n" ::"n"(N) : "memory"); }

// A shared-memory tile of ROWS rows of ROW_BYTES bytes, its 16-byte chunks XOR-swizzled so that
// the 8 row addresses of one ldmatrix (8 consecutive rows, one chunk column) fall in 8 different
// 16-byte bank groups: rows of 128 bytes or more XOR the chunk with row % 8; shorter rows share a
// 128-byte line with 128 / ROW_BYTES - 1 others and XOR with the line's index modulo the chunks a
// row has.
template <int ROWS, int ROW_BYTES>
struct SwizzledRows {
    static constexpr int kRowBytes = ROW_BYTES;
    static constexpr int kChunks = ROW_BYTES / 16;  // 16-byte chunks a row
    static constexpr int kBytes = ROWS * kRowBytes;
    static_assert(ROW_BYTES == 16 || ROW_BYTES == 32 || ROW_BYTES == 64 || ROW_BYTES % 128 == 0,
                  "SwizzledRows: a row must be 16, 32 or 64 bytes or a multiple of 128 bytes");
    __device__ __forceinline__ static uint32_t offset(int row, int chunk) {
        const int x = kRowBytes >= 128 ? (row & 7) : ((row / (128 / kRowBytes)) & (kChunks - 1));
        return (uint32_t)(row * kRowBytes + ((chunk ^ x) << 4));
    }
};
