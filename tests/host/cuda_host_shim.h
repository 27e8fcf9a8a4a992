// CUDA's thread model on the CPU, for the kinds whose manifest says `host_emulation = true`
// (plain CUDA C++: threads, blocks, dynamic shared memory, __syncthreads, __shfl_xor_sync and
// __shfl_sync where every thread of the block reaches each shuffle; no inline PTX, asynchronous
// copies or other warp intrinsics). tests/host_kernels.rs compiles the generated entries
// of those kernels with the host C++ compiler against this file and runs them. Blocks run one
// after another; a block's threads are fibers (ucontext) on one OS thread: each runs until its
// next __syncthreads, then the next, so every thread reaches barrier r before any passes it.
// The order the threads run in between two barriers is a seeded shuffle, new at every barrier,
// so a read of shared memory that a barrier does not separate from its write shows as wrong
// bits. The dynamic shared memory a template declares (`extern __shared__ T name[]`) is one
// host array of that name, which the generated driver defines. CUDA's own headers give the
// types (float4, uint3, __nv_bfloat16) and the host versions of the conversions.
#pragma once
#include <cuda_runtime.h>
#include <ucontext.h>
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <vector>

// Qualifiers that mean nothing on the host (CUDA's host headers make some of them attributes
// that the host compiler would warn about).
#undef __device__
#undef __global__
#undef __shared__
#undef __forceinline__
#undef __launch_bounds__
#undef __align__
#define __device__
#define __global__
#define __shared__
#define __forceinline__ inline
#define __launch_bounds__(...)
#define __align__(n) __attribute__((aligned(n)))

using std::max;
using std::min;

// The built-in variables of the thread running now (gridDim: set by the driver for the grid it
// runs).
inline uint3 threadIdx;
inline uint3 blockIdx;
inline uint3 gridDim;

// One block's threads as fibers, each given the block's function.
struct GemmHostBlock {
    static constexpr size_t kStack = 64 * 1024;
    struct Fiber {
        ucontext_t ctx;
        std::vector<char> stack;
        bool done = false;
    };
    std::vector<Fiber> fibers;
    ucontext_t scheduler;
    int current = -1;
    const std::function<void()>* body = nullptr;
    uint64_t seed;
    std::vector<uint64_t> lanes;  // each thread's value in a shuffle

    static GemmHostBlock*& running() {
        static GemmHostBlock* b = nullptr;
        return b;
    }
    static void entry() {
        GemmHostBlock* b = running();
        (*b->body)();
        b->fibers[b->current].done = true;
        swapcontext(&b->fibers[b->current].ctx, &b->scheduler);
    }
    // Back to the scheduler; resumed once every thread of the block got here.
    void barrier() { swapcontext(&fibers[current].ctx, &scheduler); }

    // Runs `threads` threads of block `block` to their end.
    void run(int threads, uint3 block, const std::function<void()>& f, uint64_t seed_) {
        body = &f;
        seed = seed_ ^ (0x9e3779b97f4a7c15ull * (block.x + 1)) ^ (0xbf58476d1ce4e5b9ull * (block.y + 1));
        fibers.resize(threads);
        running() = this;
        for (int t = 0; t < threads; ++t) {
            Fiber& fb = fibers[t];
            fb.done = false;
            fb.stack.resize(kStack);
            getcontext(&fb.ctx);
            fb.ctx.uc_stack.ss_sp = fb.stack.data();
            fb.ctx.uc_stack.ss_size = kStack;
            fb.ctx.uc_link = nullptr;
            makecontext(&fb.ctx, entry, 0);
        }
        std::vector<int> order(threads);
        for (int t = 0; t < threads; ++t) order[t] = t;
        for (;;) {
            // A new order for this phase (between two barriers).
            for (int i = threads - 1; i > 0; --i) {
                seed ^= seed << 13; seed ^= seed >> 7; seed ^= seed << 17;
                std::swap(order[i], order[seed % (uint64_t)(i + 1)]);
            }
            int alive = 0;
            for (int t : order) {
                if (fibers[t].done) continue;
                current = t;
                threadIdx = make_uint3(t, 0, 0);
                blockIdx = block;
                swapcontext(&scheduler, &fibers[t].ctx);
                alive += !fibers[t].done;
            }
            if (alive == 0) break;
            // Threads that returned while others wait at a barrier have left the block: fine
            // on the GPU (they take no part in later barriers), as here.
        }
        running() = nullptr;
    }
};

#define __syncthreads() GemmHostBlock::running()->barrier()

// A warp shuffle as a block-wide exchange: each thread posts its value, a barrier, each reads
// its source's (lane `source(lane)` of its warp), a barrier before the next post. So every
// thread of the block must reach every shuffle, as in a kernel whose control flow is uniform
// across the block (row_reduce.cuh keeps it so for this reason).
template <class T, class Source>
inline T gemm_host_shuffle(T v, Source source) {
    static_assert(sizeof(T) <= sizeof(uint64_t), "a shuffle moves at most 8 bytes");
    GemmHostBlock* b = GemmHostBlock::running();
    if (b->lanes.size() < b->fibers.size()) b->lanes.resize(b->fibers.size());
    const unsigned t = threadIdx.x;
    uint64_t bits = 0;
    std::memcpy(&bits, &v, sizeof(T));
    b->lanes[t] = bits;
    __syncthreads();
    const uint64_t got = b->lanes[(t & ~31u) | (source(t & 31u) & 31u)];
    __syncthreads();
    T out;
    std::memcpy(&out, &got, sizeof(T));
    return out;
}

// The lane `lane_mask` away.
template <class T>
inline T __shfl_xor_sync(unsigned /*mask*/, T v, int lane_mask) {
    return gemm_host_shuffle(v, [=](unsigned lane) { return lane ^ static_cast<unsigned>(lane_mask); });
}

// Lane `src` (an indexed shuffle).
template <class T>
inline T __shfl_sync(unsigned /*mask*/, T v, int src) {
    return gemm_host_shuffle(v, [=](unsigned) { return static_cast<unsigned>(src); });
}

template <class T>
inline T __ldg(const T* p) {
    return *p;
}
inline float __fadd_rn(float a, float b) { return a + b; }
