// torch's own out= kernels, reached past the dispatcher: the batch-invariant mode replaces
// aten's out= overloads (dispatch.cpp), so an allowed fallback cannot reach torch's kernels
// through them. These call torch's CPU or CUDA kernel of each directly (at::cpu::mm_out,
// at::cuda::mm_out, ...: TORCH_API functions of libtorch_cpu and libtorch_cuda), as the ops
// gemm_aot_torch::<op>_out, which the Python overrides' fallbacks call (gemm_aot/torch.py,
// _torch_out). Included by dispatch.cpp only; GEMM_AOT_TORCH_CUDA where torch has CUDA.
#pragma once

#include <ATen/core/Tensor.h>
#include <ATen/core/dispatch/Dispatcher.h>
#include <torch/library.h>

#include <cstring>
#include <optional>
#include <string>

#include <ATen/ops/_addmm_activation_cpu_dispatch.h>
#include <ATen/ops/_log_softmax_cpu_dispatch.h>
#include <ATen/ops/_softmax_cpu_dispatch.h>
#include <ATen/ops/addbmm_cpu_dispatch.h>
#include <ATen/ops/addmm_cpu_dispatch.h>
#include <ATen/ops/addmv_cpu_dispatch.h>
#include <ATen/ops/baddbmm_cpu_dispatch.h>
#include <ATen/ops/bmm_cpu_dispatch.h>
#include <ATen/ops/mean_cpu_dispatch.h>
#include <ATen/ops/mm_cpu_dispatch.h>
#ifdef GEMM_AOT_TORCH_CUDA
#include <ATen/ops/_addmm_activation_cuda_dispatch.h>
#include <ATen/ops/_log_softmax_cuda_dispatch.h>
#include <ATen/ops/_softmax_cuda_dispatch.h>
#include <ATen/ops/addbmm_cuda_dispatch.h>
#include <ATen/ops/addmm_cuda_dispatch.h>
#include <ATen/ops/addmv_cuda_dispatch.h>
#include <ATen/ops/baddbmm_cuda_dispatch.h>
#include <ATen/ops/bmm_cuda_dispatch.h>
#include <ATen/ops/mean_cuda_dispatch.h>
#include <ATen/ops/mm_cuda_dispatch.h>
#endif

namespace gemm_aot_torch_out {

// torch's own out= kernels at a backend, called directly (at::cpu::, at::cuda::): past the
// dispatcher, where the mode's kernels have replaced them. The allowed fallbacks' route to
// cuBLAS (to torch's CPU kernels at the tests' CPU key), as the ops gemm_aot_torch::<op>_out.
#define GEMM_AOT_TORCH_OUT_KERNELS(backend)                                                      \
  namespace torch_##backend {                                                                    \
  at::Tensor& mm_out(const at::Tensor& a, const at::Tensor& b, at::Tensor& out) {                 \
    return at::backend::mm_out(out, a, b);                                                       \
  }                                                                                              \
  at::Tensor& bmm_out(const at::Tensor& a, const at::Tensor& b, at::Tensor& out) {                \
    return at::backend::bmm_out(out, a, b);                                                      \
  }                                                                                              \
  at::Tensor& addmm_out(const at::Tensor& s, const at::Tensor& m1, const at::Tensor& m2,          \
                        const c10::Scalar& beta, const c10::Scalar& alpha, at::Tensor& out) {     \
    return at::backend::addmm_out(out, s, m1, m2, beta, alpha);                                  \
  }                                                                                              \
  at::Tensor& baddbmm_out(const at::Tensor& s, const at::Tensor& b1, const at::Tensor& b2,        \
                          const c10::Scalar& beta, const c10::Scalar& alpha, at::Tensor& out) {   \
    return at::backend::baddbmm_out(out, s, b1, b2, beta, alpha);                                \
  }                                                                                              \
  at::Tensor& addmv_out(const at::Tensor& s, const at::Tensor& m, const at::Tensor& v,            \
                        const c10::Scalar& beta, const c10::Scalar& alpha, at::Tensor& out) {     \
    return at::backend::addmv_out(out, s, m, v, beta, alpha);                                    \
  }                                                                                              \
  /* torch's addbmm_out adds each entry by addmm_ through the dispatcher, the mode's own: */    \
  /* its loop here, on this backend's addmm_out (beta on the first entry, then 1). */           \
  at::Tensor& addbmm_out(const at::Tensor& s, const at::Tensor& b1, const at::Tensor& b2,         \
                         const c10::Scalar& beta, const c10::Scalar& alpha, at::Tensor& out) {    \
    if (b1.dim() != 3 || b2.dim() != 3 || b1.size(0) == 0 || b1.size(0) != b2.size(0)) {         \
      return at::backend::addbmm_out(out, s, b1, b2, beta, alpha); /* no addmm_ call */          \
    }                                                                                            \
    at::backend::addmm_out(out, s, b1[0], b2[0], beta, alpha);                                   \
    for (int64_t i = 1; i < b1.size(0); ++i) {                                                   \
      at::backend::addmm_out(out, out, b1[i], b2[i], 1, alpha);                                  \
    }                                                                                            \
    return out;                                                                                  \
  }                                                                                              \
  at::Tensor& addmm_activation_out(const at::Tensor& s, const at::Tensor& m1,                    \
                                   const at::Tensor& m2, const c10::Scalar& beta,                \
                                   const c10::Scalar& alpha, bool gelu, at::Tensor& out) {        \
    return at::backend::_addmm_activation_out(out, s, m1, m2, beta, alpha, gelu);                \
  }                                                                                              \
  at::Tensor& softmax_out(const at::Tensor& x, int64_t dim, bool h2f, at::Tensor& out) {          \
    return at::backend::_softmax_out(out, x, dim, h2f);                                          \
  }                                                                                              \
  at::Tensor& log_softmax_out(const at::Tensor& x, int64_t dim, bool h2f, at::Tensor& out) {      \
    return at::backend::_log_softmax_out(out, x, dim, h2f);                                      \
  }                                                                                              \
  at::Tensor& mean_out(const at::Tensor& x, at::OptionalIntArrayRef dim, bool keepdim,            \
                       std::optional<at::ScalarType> dtype, at::Tensor& out) {                   \
    return at::backend::mean_out(out, x, dim, keepdim, dtype);                                   \
  }                                                                                              \
  void impl(torch::Library& library) {                                                           \
    library.impl("mm_out", TORCH_FN(mm_out));                                                    \
    library.impl("bmm_out", TORCH_FN(bmm_out));                                                  \
    library.impl("addmm_out", TORCH_FN(addmm_out));                                              \
    library.impl("baddbmm_out", TORCH_FN(baddbmm_out));                                          \
    library.impl("addmv_out", TORCH_FN(addmv_out));                                              \
    library.impl("addbmm_out", TORCH_FN(addbmm_out));                                            \
    library.impl("_addmm_activation_out", TORCH_FN(addmm_activation_out));                       \
    library.impl("_softmax_out", TORCH_FN(softmax_out));                                         \
    library.impl("_log_softmax_out", TORCH_FN(log_softmax_out));                                 \
    library.impl("mean_out", TORCH_FN(mean_out));                                                \
  }                                                                                              \
  }

GEMM_AOT_TORCH_OUT_KERNELS(cpu)
#ifdef GEMM_AOT_TORCH_CUDA
GEMM_AOT_TORCH_OUT_KERNELS(cuda)
#endif

// The out_dtype overloads have CUDA kernels only, in torch 2.8 and later
// (GEMM_AOT_TORCH_OUT_DTYPE: gemm_aot/_dispatch.py sets it where torch has aten::mm.dtype).
#if defined(GEMM_AOT_TORCH_CUDA) && defined(GEMM_AOT_TORCH_OUT_DTYPE)
namespace torch_cuda {
at::Tensor& mm_dtype_out(const at::Tensor& a, const at::Tensor& b, at::ScalarType t,
                         at::Tensor& out) {
  return at::cuda::mm_out(out, a, b, t);
}
at::Tensor& bmm_dtype_out(const at::Tensor& a, const at::Tensor& b, at::ScalarType t,
                          at::Tensor& out) {
  return at::cuda::bmm_out(out, a, b, t);
}
at::Tensor& addmm_dtype_out(const at::Tensor& s, const at::Tensor& m1, const at::Tensor& m2,
                            at::ScalarType t, const c10::Scalar& beta, const c10::Scalar& alpha,
                            at::Tensor& out) {
  return at::cuda::addmm_out(out, s, m1, m2, t, beta, alpha);
}
at::Tensor& baddbmm_dtype_out(const at::Tensor& s, const at::Tensor& b1, const at::Tensor& b2,
                              at::ScalarType t, const c10::Scalar& beta, const c10::Scalar& alpha,
                              at::Tensor& out) {
  return at::cuda::baddbmm_out(out, s, b1, b2, t, beta, alpha);
}
void impl_dtype(torch::Library& library) {
  library.impl("mm_dtype_out", TORCH_FN(mm_dtype_out));
  library.impl("bmm_dtype_out", TORCH_FN(bmm_dtype_out));
  library.impl("addmm_dtype_out", TORCH_FN(addmm_dtype_out));
  library.impl("baddbmm_dtype_out", TORCH_FN(baddbmm_dtype_out));
}
}  // namespace torch_cuda
#endif
#undef GEMM_AOT_TORCH_OUT_KERNELS

// The schemas of gemm_aot_torch::<op>_out: each its aten op's out= overload.
constexpr const char* kTorchOutSchemas[] = {
    "mm_out(Tensor self, Tensor mat2, *, Tensor(a!) out) -> Tensor(a!)",
    "bmm_out(Tensor self, Tensor mat2, *, Tensor(a!) out) -> Tensor(a!)",
    "addmm_out(Tensor self, Tensor mat1, Tensor mat2, *, Scalar beta=1, Scalar alpha=1, Tensor(a!) out) -> Tensor(a!)",
    "baddbmm_out(Tensor self, Tensor batch1, Tensor batch2, *, Scalar beta=1, Scalar alpha=1, Tensor(a!) out) -> Tensor(a!)",
    "addmv_out(Tensor self, Tensor mat, Tensor vec, *, Scalar beta=1, Scalar alpha=1, Tensor(a!) out) -> Tensor(a!)",
    "addbmm_out(Tensor self, Tensor batch1, Tensor batch2, *, Scalar beta=1, Scalar alpha=1, Tensor(a!) out) -> Tensor(a!)",
    "_addmm_activation_out(Tensor self, Tensor mat1, Tensor mat2, *, Scalar beta=1, Scalar alpha=1, bool use_gelu=False, Tensor(a!) out) -> Tensor(a!)",
    "_softmax_out(Tensor self, int dim, bool half_to_float, *, Tensor(a!) out) -> Tensor(a!)",
    "_log_softmax_out(Tensor self, int dim, bool half_to_float, *, Tensor(a!) out) -> Tensor(a!)",
    "mean_out(Tensor self, int[1]? dim, bool keepdim=False, *, ScalarType? dtype=None, Tensor(a!) out) -> Tensor(a!)",
    "mm_dtype_out(Tensor self, Tensor mat2, ScalarType out_dtype, *, Tensor(a!) out) -> Tensor(a!)",
    "bmm_dtype_out(Tensor self, Tensor mat2, ScalarType out_dtype, *, Tensor(a!) out) -> Tensor(a!)",
    "addmm_dtype_out(Tensor self, Tensor mat1, Tensor mat2, ScalarType out_dtype, *, Scalar beta=1, Scalar alpha=1, Tensor(a!) out) -> Tensor(a!)",
    "baddbmm_dtype_out(Tensor self, Tensor batch1, Tensor batch2, ScalarType out_dtype, *, Scalar beta=1, Scalar alpha=1, Tensor(a!) out) -> Tensor(a!)",
};

// Whether the torch loaded has the aten operator `name`.`overload`.
bool has_aten_op(const char* name, const char* overload) {
  return c10::Dispatcher::singleton()
      .findSchema({std::string("aten::") + name, overload})
      .has_value();
}

// Defines gemm_aot_torch::<op>_out once, with kernels at CPU and (where torch has CUDA) CUDA;
// the caller serializes calls. The libraries are never destroyed: these ops outlive any
// registration of the mode, and a static destructor would run after torch's dispatcher is gone.
void define_torch_out_ops() {
  // Set first: a definition that throws is not tried again (a second DEF of the namespace
  // would fail, and with it every later registration of the mode).
  static bool defined = false;
  if (defined) return;
  defined = true;
  auto* defs = new torch::Library(torch::Library::DEF, "gemm_aot_torch", std::nullopt, __FILE__,
                                  __LINE__);
  for (const char* schema : kTorchOutSchemas) {
    // The out_dtype ones only where torch has the overloads they call.
    if (std::strstr(schema, "out_dtype") == nullptr || has_aten_op("mm", "dtype")) defs->def(schema);
  }
  auto* cpu = new torch::Library(torch::Library::IMPL, "gemm_aot_torch", c10::DispatchKey::CPU,
                                 __FILE__, __LINE__);
  torch_cpu::impl(*cpu);
#ifdef GEMM_AOT_TORCH_CUDA
  auto* cuda = new torch::Library(torch::Library::IMPL, "gemm_aot_torch", c10::DispatchKey::CUDA,
                                  __FILE__, __LINE__);
  torch_cuda::impl(*cuda);
#endif
#if defined(GEMM_AOT_TORCH_CUDA) && defined(GEMM_AOT_TORCH_OUT_DTYPE)
  if (has_aten_op("mm", "dtype")) torch_cuda::impl_dtype(*cuda);
#endif
}

}  // namespace gemm_aot_torch_out
