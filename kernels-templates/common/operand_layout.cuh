// Row-major operand layouts per op, in the GEMM view C[m, n] = sum_k A(m, k) * B(k, n).
//   nn: A stored [m, k], B stored [k, n]      (forward Y = X * W)
//   tn: A stored [k, m], B stored [k, n]      (weight gradient dW = X^T * dY)
//   nt: A stored [m, k], B stored [n, k]      (input gradient dX = dY * W^T, tied LM head)
#pragma once
#include <cstddef>

enum GemmOp : int { kOpNN = 0, kOpTN = 1, kOpNT = 2 };

template <int OP> struct OperandLayout {
    static_assert(OP == kOpNN || OP == kOpTN || OP == kOpNT, "OperandLayout: OP must be kOpNN, kOpTN or kOpNT");
    // A is stored with k contiguous (nn, nt) or m contiguous (tn).
    static constexpr bool kAContiguousK = OP != kOpTN;
    // B is stored with n contiguous (nn, tn) or k contiguous (nt).
    static constexpr bool kBContiguousK = OP == kOpNT;

    __device__ __forceinline__ static size_t a_index(int m, int k, int lda) {
        return kAContiguousK ? (size_t)m * lda + k : (size_t)k * lda + m;
    }
    __device__ __forceinline__ static size_t b_index(int k, int n, int ldb) {
        return kBContiguousK ? (size_t)n * ldb + k : (size_t)k * ldb + n;
    }
};
