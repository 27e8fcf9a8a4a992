// Storage types <-> f32. Widening is exact; narrowing rounds to nearest even, once.
// The CPU model of every contract uses the same conversions (the `half` crate).
#pragma once
#include <cuda_bf16.h>
#include <cuda_fp16.h>

__device__ __forceinline__ float to_f32(float x) { return x; }
__device__ __forceinline__ float to_f32(__nv_bfloat16 x) { return __bfloat162float(x); }
__device__ __forceinline__ float to_f32(__half x) { return __half2float(x); }

// Contract tc-tf32-k8's truncation of an f32 bit pattern to TF32: the low 13 mantissa bits
// cleared (toward zero; infinities and NaNs stay what they are).
__device__ __forceinline__ unsigned tf32_bits(unsigned bits) { return bits & 0xffffe000u; }

template <typename T> __device__ __forceinline__ T from_f32(float x);
template <> __device__ __forceinline__ float from_f32<float>(float x) { return x; }
template <> __device__ __forceinline__ __nv_bfloat16 from_f32<__nv_bfloat16>(float x) { return __float2bfloat16_rn(x); }
template <> __device__ __forceinline__ __half from_f32<__half>(float x) { return __float2half_rn(x); }
