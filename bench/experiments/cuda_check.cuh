// CHECK(call): a CUDA runtime call that must succeed; the experiment stops with the error and
// its place otherwise.
#pragma once
#include <cstdio>
#include <cstdlib>
#include <cuda_runtime.h>

#define CHECK(x)                                                                                         \
    do {                                                                                                 \
        cudaError_t e_ = (x);                                                                            \
        if (e_ != cudaSuccess) {                                                                         \
            printf("CUDA error %s at %s:%d\n", cudaGetErrorString(e_), __FILE__, __LINE__);             \
            exit(1);                                                                                     \
        }                                                                                                \
    } while (0)
