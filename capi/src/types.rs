//! The values and structs of the C ABI. Every item here is written into
//! `include/gemm_aot.h` by the header generator (tests/header.rs): a constant becomes a
//! `#define`, a `#[repr(C)]` struct a `typedef struct`, with its doc comment.

use std::ffi::c_void;

/// The call succeeded.
pub const GEMM_AOT_OK: i32 = 0;
/// An argument is wrong before any shape is looked at: a null context or argument struct,
/// an unknown op, dtype, policy or mode value.
pub const GEMM_AOT_ERROR_INVALID_ARGUMENT: i32 = 1;
/// No CUDA driver could be loaded.
pub const GEMM_AOT_ERROR_NO_DRIVER: i32 = 2;
/// The device cannot be served: no tier for its compute capability, or a library built
/// without cubins.
pub const GEMM_AOT_ERROR_NO_DEVICE: i32 = 3;
/// No kernel serves this (policy, op, dtype) on the device's tier, or n is above what the
/// tier launches.
pub const GEMM_AOT_ERROR_NO_ROUTE: i32 = 4;
/// A dimension or leading dimension is out of range, or a leading dimension is shorter than
/// its row.
pub const GEMM_AOT_ERROR_SHAPE: i32 = 5;
/// A null pointer, a pointer misaligned to its element, or a span that runs past the
/// allocation the driver reports for it.
pub const GEMM_AOT_ERROR_POINTER: i32 = 6;
/// The output overlaps an input.
pub const GEMM_AOT_ERROR_OVERLAP: i32 = 7;
/// A CUDA driver or cuBLAS call failed.
pub const GEMM_AOT_ERROR_CUDA: i32 = 8;
/// Anything else the library refused (the message says what).
pub const GEMM_AOT_ERROR_OTHER: i32 = 9;
/// A bug: the library caught a panic (the message says where). Please report it.
pub const GEMM_AOT_ERROR_INTERNAL: i32 = 10;

/// `A` `[m, k]`, `B` `[k, n]` (row-major).
pub const GEMM_AOT_OP_NN: i32 = 0;
/// `A` `[m, k]`, `B` stored `[n, k]`: `C = A B^T` (a linear layer with a `[out, in]`
/// weight).
pub const GEMM_AOT_OP_NT: i32 = 1;
/// `A` stored `[k, m]`, `B` `[k, n]`: `C = A^T B` (a weight gradient).
pub const GEMM_AOT_OP_TN: i32 = 2;

/// IEEE binary32.
pub const GEMM_AOT_F32: i32 = 0;
/// bfloat16.
pub const GEMM_AOT_BF16: i32 = 1;
/// IEEE binary16.
pub const GEMM_AOT_F16: i32 = 2;

/// The context's default: tensor cores for bf16 and f16 where routed, exact FMA for f32.
pub const GEMM_AOT_POLICY_DEFAULT: i32 = 0;
/// Scalar FMA, bit-exact to a CPU model of the contract (`fma-k256`).
pub const GEMM_AOT_POLICY_EXACT: i32 = 1;
/// Tensor-core instructions (f32 runs as TF32); still batch-invariant.
pub const GEMM_AOT_POLICY_TENSOR_CORE: i32 = 2;

/// The generated kernels only: batch-invariant and reproducible (the default).
pub const GEMM_AOT_MODE_DETERMINISTIC: i32 = 0;
/// cuBLAS with its default math. Not batch-invariant: for comparisons.
pub const GEMM_AOT_MODE_CUBLAS: i32 = 1;

/// Row op: `y = exp(x - max x) / sum exp(x - max x)` along each row.
pub const GEMM_AOT_ROW_SOFTMAX: i32 = 0;
/// Row op: `y = (x - max x) - log sum exp(x - max x)` along each row.
pub const GEMM_AOT_ROW_LOG_SOFTMAX: i32 = 1;
/// Row op: `y = sum x / cols`, one element a row.
pub const GEMM_AOT_ROW_MEAN: i32 = 2;

/// One GEMM, `C[m, n] = A · B (+ bias[n]) (+ beta C)`, over device pointers. Every matrix is
/// row-major with its own leading dimension (row stride, in elements); `ld` below a row's
/// length is refused. Elements of A and B are `ab_dtype`, of C and the bias `c_dtype`.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct gemm_aot_gemm_args {
    /// `GEMM_AOT_OP_NN`, `GEMM_AOT_OP_NT` or `GEMM_AOT_OP_TN`.
    pub op: i32,
    /// Element type of A and B (`GEMM_AOT_BF16`, ...).
    pub ab_dtype: i32,
    /// Element type of C and the bias.
    pub c_dtype: i32,
    /// `GEMM_AOT_POLICY_*`.
    pub policy: i32,
    /// `GEMM_AOT_MODE_*`.
    pub mode: i32,
    /// Rows of C.
    pub m: u64,
    /// Columns of C.
    pub n: u64,
    /// Reduction length (0 runs only the epilogue).
    pub k: u64,
    /// A: `[m, k]`, or `[k, m]` for `GEMM_AOT_OP_TN`.
    pub a: *const c_void,
    /// Leading dimension of A.
    pub lda: u64,
    /// B: `[k, n]`, or `[n, k]` for `GEMM_AOT_OP_NT`.
    pub b: *const c_void,
    /// Leading dimension of B.
    pub ldb: u64,
    /// n elements added to every row, or NULL.
    pub bias: *const c_void,
    /// The output `[m, n]`.
    pub c: *mut c_void,
    /// Leading dimension of C.
    pub ldc: u64,
    /// 0 overwrites C; otherwise `C = fma(beta, C, result)`.
    pub beta: f32,
}

/// What a successful call launched.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub struct gemm_aot_launch {
    /// The generated kernel's id, or -1 when nothing was launched (an empty output, cuBLAS).
    pub kernel: i64,
    /// The route (1-based, as in the tier's spec file) that chose the kernel.
    pub route: u32,
    /// The grid's x, y and z.
    pub grid: [u32; 3],
    /// 1 when an operand was copied into aligned scratch first (bits unchanged).
    pub repacked: u32,
    /// 1 when the route's unaligned kernel ran (same contract, slower path).
    pub unaligned: u32,
}

/// A device opened for GEMMs: its kernels loaded on first use, shared by every stream the
/// calls name. Opaque; thread-safe; made by `gemm_aot_open`, freed by `gemm_aot_close`.
pub struct gemm_aot_context {
    pub(crate) inner: crate::context::Opened,
}
