// gemm_aot's native dispatch for torch: the batch-invariant mode's kernels for aten::mm, addmm,
// bmm, mv, dot, vdot, _softmax, _log_softmax and mean.dim (and baddbmm, addmv, _addmm_activation
// and addbmm, handed to their Python overrides), and for the out= and out_dtype overloads of all
// of them and the in-place addmm_, baddbmm_, addmv_ and addbmm_, registered at a dispatch key
// (CUDA) as C++ kernels. torch's dispatcher calls them with no Python frame, no boxing and no
// GIL: a call reads its tensors, allocates its output with torch's allocator and hands both to
// the package's native module through a table of C functions (python/src/dispatch_abi.rs), which
// plans and launches exactly what the Python overrides would (the same fast path, the same bits).
//
// A call the native module declines (anything uncommon, any error) goes, unchanged, to the
// Python override through the op gemm_aot::<op>_fallback, which gemm_aot/_dispatch.py defines
// with the Python override as its kernel: the Python path words every refusal, and its
// exceptions reach the caller through torch as they are. So this file needs torch's C++
// headers and no Python headers.
//
// The out= overloads (mm.out, ...: what torch.compile's generated code and `torch.mm(a, b,
// out=c)` call) write into `out` directly where it already is the output torch would allocate
// (shape, dtype, a layout the kernels take); otherwise the mode's kernel computes the result,
// which is copied into `out` (resized as torch resizes an out=), so no out= call reaches
// cuBLAS. Since torch's own out= kernels are then ours too, an allowed fallback reaches them
// through the ops gemm_aot_torch::<op>_out (torch_out.h).
//
// Built on first use by gemm_aot/_dispatch.py against the torch installed (c++ -shared), cached;
// with -DGEMM_AOT_TORCH_CUDA and libtorch_cuda where torch has CUDA.

#include <ATen/core/Tensor.h>
#include <ATen/core/dispatch/Dispatcher.h>
#include <ATen/MemoryOverlap.h>
#include <ATen/native/Resize.h>
#include <ATen/ops/empty.h>
#include <c10/core/impl/DeviceGuardImplInterface.h>
#include <torch/library.h>

#include "torch_out.h"
#include "view_abi.h"

#include <atomic>
#include <initializer_list>
#include <cstdint>
#include <cstring>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

extern "C" {
// The layout of python/src/dispatch_abi.rs (ABI 1); GemmAotView is view_abi.h's.
struct GemmAotApi {
  uint32_t abi;
  int32_t (*gemm)(const GemmAotView* a, const GemmAotView* b, const GemmAotView* out,
                  const GemmAotView* bias, int32_t batched, uint64_t stream, uint32_t flags);
  int32_t (*rows)(int32_t op, const GemmAotView* x, int32_t to, uint64_t out, uint64_t stream,
                  uint32_t flags);
};
}

namespace {

constexpr uint32_t kAbi = 1;
constexpr int32_t kServed = 0;
constexpr uint32_t kHost = 1;  // flags: host tensors (a test's CPU key), recorded only

// Read by the kernels on any thread, written by a registration.
std::atomic<const GemmAotApi*> g_api{nullptr};
std::atomic<c10::DeviceType> g_device_type{c10::DeviceType::CUDA};
std::unique_ptr<torch::Library> g_library;
std::mutex g_mutex;  // g_library and g_error
std::string g_error;
std::atomic<uint64_t> g_served{0};
std::atomic<uint64_t> g_declined{0};

int32_t dtype_code(at::ScalarType t) {
  switch (t) {
    case at::kFloat: return 0;
    case at::kBFloat16: return 1;
    case at::kHalf: return 2;
    default: return -1;
  }
}

// Whether t is a tensor of the registered device type on its current device, of a served
// dtype, with at most 4 dimensions: the fast path's tensors.
bool eligible(const at::Tensor& t) {
  const c10::DeviceType type = g_device_type.load();
  // A negated or conjugated view holds other values than it reads as: the Python override
  // refuses it, naming the op.
  if (!t.defined() || t.device().type() != type || t.dim() > 4 ||
      dtype_code(t.scalar_type()) < 0 || t.is_neg() || t.is_conj()) {
    return false;
  }
  if (type == c10::DeviceType::CPU) {
    return true;
  }
  // Another device than the current one: the Python override makes it current around the call.
  const auto* impl = c10::impl::getDeviceGuardImpl(type);
  return impl->getDevice().index() == t.device().index();
}

GemmAotView view_of(const at::Tensor& t) {
  GemmAotView v{};
  v.ptr = reinterpret_cast<uint64_t>(t.data_ptr());
  v.nd = static_cast<int32_t>(t.dim());
  v.dtype = dtype_code(t.scalar_type());
  v.device = g_device_type.load() == c10::DeviceType::CPU ? 0 : t.device().index();
  for (int64_t i = 0; i < t.dim(); ++i) {
    v.shape[i] = t.size(i);
    v.stride[i] = t.stride(i);
  }
  return v;
}

uint32_t flags() { return g_device_type.load() == c10::DeviceType::CPU ? kHost : 0; }

uint64_t stream_of(const at::Tensor& t) {
  const c10::DeviceType type = g_device_type.load();
  if (type == c10::DeviceType::CPU) {
    return 0;
  }
  const auto* impl = c10::impl::getDeviceGuardImpl(type);
  return reinterpret_cast<uint64_t>(impl->getStream(t.device()).native_handle());
}

bool is_one(const c10::Scalar& s) {
  if (s.isIntegral(false)) return s.toLong() == 1;
  if (s.isFloatingPoint()) return s.toDouble() == 1.0;
  return false;
}

bool served(int32_t status) {
  if (status == kServed) {
    g_served.fetch_add(1, std::memory_order_relaxed);
    return true;
  }
  g_declined.fetch_add(1, std::memory_order_relaxed);
  return false;
}

// The GEMM a call is: mm, bmm (3-D), mv (matrix times vector), dot (vector times vector).
enum class Shape { kMm, kBmm, kMv, kDot };

// A 1-D view as a one-row matrix [1, k] (dot's first operand).
GemmAotView as_row(GemmAotView v) {
  v.nd = 2;
  v.shape[1] = v.shape[0];
  v.stride[1] = v.stride[0];
  v.shape[0] = 1;
  v.stride[0] = v.shape[1] * v.stride[1];
  return v;
}

// A 1-D view as a one-column matrix [k, 1] (mv's and dot's second operand).
GemmAotView as_column(GemmAotView v) {
  v.nd = 2;
  v.shape[1] = 1;
  v.stride[1] = 1;
  return v;
}

// The sizes of the output torch allocates for a GEMM of this shape.
std::vector<int64_t> gemm_sizes(const at::Tensor& a, const at::Tensor& b, Shape shape) {
  switch (shape) {
    case Shape::kDot: return {};
    case Shape::kMv: return {a.size(0)};
    case Shape::kBmm: return {a.size(0), a.size(1), b.size(2)};
    case Shape::kMm: break;
  }
  return {a.size(0), b.size(1)};
}

// out = a @ b (+ bias), natively, rounded once to `to` (default: the operands' dtype): into
// `into` when given, which must already be the output torch would allocate (its sizes and
// dtype, on the device; the native module checks its layout and that it overlaps no input),
// else into a new tensor. An undefined tensor when declined. A call with `into` counts only
// when served: a declined one is computed again by the caller, through the functional kernel,
// which counts it.
at::Tensor native_gemm(const at::Tensor& a, const at::Tensor& b, const at::Tensor* bias,
                       Shape shape, const at::Tensor* into = nullptr,
                       std::optional<at::ScalarType> to = std::nullopt) {
  auto decline = [&]() {
    if (into == nullptr) g_declined.fetch_add(1, std::memory_order_relaxed);
    return at::Tensor();
  };
  const at::ScalarType out_type = to.value_or(a.scalar_type());
  if (!eligible(a) || !eligible(b) || (bias != nullptr && !eligible(*bias)) ||
      a.scalar_type() != b.scalar_type() || dtype_code(out_type) < 0) {
    return decline();
  }
  const int64_t dims_a = shape == Shape::kBmm ? 3 : shape == Shape::kDot ? 1 : 2;
  const int64_t dims_b = shape == Shape::kBmm ? 3 : shape == Shape::kMm ? 2 : 1;
  if (a.dim() != dims_a || b.dim() != dims_b) {
    return decline();
  }
  const std::vector<int64_t> sizes = gemm_sizes(a, b, shape);
  at::Tensor out;
  if (into == nullptr) {
    out = at::empty(sizes, a.options().dtype(out_type));
  } else if (into->sizes() == at::IntArrayRef(sizes) && into->scalar_type() == out_type &&
             eligible(*into)) {
    out = *into;
  } else {
    return decline();
  }
  GemmAotView va = view_of(a), vb = view_of(b), vo = view_of(out);
  const bool batched = shape == Shape::kBmm;
  if (shape == Shape::kDot) {
    // A 1 x 1 product into a 0-dimensional output, viewed as [1, 1].
    va = as_row(va);
    vb = as_column(vb);
    vo.nd = 2;
    vo.shape[0] = vo.shape[1] = 1;
    vo.stride[0] = vo.stride[1] = 1;
  } else if (shape == Shape::kMv) {
    // mv: b as a one-column matrix, the output as an [m, 1] view of an m-vector.
    vb = as_column(vb);
    vo = as_column(vo);
  }
  GemmAotView vbias{};
  if (bias != nullptr) vbias = view_of(*bias);
  const int32_t status = g_api.load()->gemm(&va, &vb, &vo, bias != nullptr ? &vbias : nullptr,
                                            batched ? 1 : 0, stream_of(a), flags());
  if (status == kServed) {
    g_served.fetch_add(1, std::memory_order_relaxed);
    return out;
  }
  return decline();
}

// op (0 softmax, 1 log_softmax, 2 mean) of x along its last dimension into `to`, natively:
// into `into` when given (it must already be the output torch would allocate, contiguous),
// else into a new tensor. An undefined tensor when declined; counted as native_gemm counts.
at::Tensor native_rows(int32_t op, const at::Tensor& x, int64_t dim, at::ScalarType to,
                       bool keepdim, const at::Tensor* into = nullptr) {
  auto decline = [&]() {
    if (into == nullptr) g_declined.fetch_add(1, std::memory_order_relaxed);
    return at::Tensor();
  };
  const int64_t nd = x.dim();
  if (!eligible(x) || nd == 0 || (dim != -1 && dim != nd - 1) || dtype_code(to) < 0) {
    return decline();
  }
  std::vector<int64_t> shape(x.sizes().begin(), x.sizes().end());
  if (op == 2) {
    if (keepdim) {
      shape.back() = 1;
    } else {
      shape.pop_back();
    }
  }
  at::Tensor out;
  if (into == nullptr) {
    out = at::empty(shape, x.options().dtype(to));
  } else if (into->sizes() == at::IntArrayRef(shape) && into->scalar_type() == to &&
             eligible(*into) && into->is_contiguous() && !into->is_same(x)) {
    out = *into;
  } else {
    return decline();
  }
  const GemmAotView vx = view_of(x);
  const int32_t status = g_api.load()->rows(op, &vx, dtype_code(to),
                                            reinterpret_cast<uint64_t>(out.data_ptr()),
                                            stream_of(x), flags());
  if (status == kServed) {
    g_served.fetch_add(1, std::memory_order_relaxed);
    return out;
  }
  return decline();
}

// The Python override of `name`, as the op gemm_aot::<name>_fallback.
c10::OperatorHandle fallback(const char* name) {
  return c10::Dispatcher::singleton().findSchemaOrThrow(
      (std::string("gemm_aot::") + name + "_fallback").c_str(), "");
}

at::Tensor mm(const at::Tensor& a, const at::Tensor& b) {
  at::Tensor out = native_gemm(a, b, nullptr, Shape::kMm);
  if (out.defined()) return out;
  static const auto op = fallback("mm").typed<at::Tensor(const at::Tensor&, const at::Tensor&)>();
  return op.call(a, b);
}

at::Tensor bmm(const at::Tensor& a, const at::Tensor& b) {
  at::Tensor out = native_gemm(a, b, nullptr, Shape::kBmm);
  if (out.defined()) return out;
  static const auto op = fallback("bmm").typed<at::Tensor(const at::Tensor&, const at::Tensor&)>();
  return op.call(a, b);
}

at::Tensor mv(const at::Tensor& a, const at::Tensor& v) {
  at::Tensor out = native_gemm(a, v, nullptr, Shape::kMv);
  if (out.defined()) return out;
  static const auto op = fallback("mv").typed<at::Tensor(const at::Tensor&, const at::Tensor&)>();
  return op.call(a, v);
}

at::Tensor addmm(const at::Tensor& self, const at::Tensor& mat1, const at::Tensor& mat2,
                 const c10::Scalar& beta, const c10::Scalar& alpha) {
  // linear's addmm: a 1-D self of n elements is the bias.
  if (is_one(beta) && is_one(alpha) && self.dim() == 1 && mat2.dim() == 2 &&
      self.size(0) == mat2.size(1)) {
    at::Tensor out = native_gemm(mat1, mat2, &self, Shape::kMm);
    if (out.defined()) return out;
  } else {
    g_declined.fetch_add(1, std::memory_order_relaxed);
  }
  static const auto op =
      fallback("addmm")
          .typed<at::Tensor(const at::Tensor&, const at::Tensor&, const at::Tensor&,
                            const c10::Scalar&, const c10::Scalar&)>();
  return op.call(self, mat1, mat2, beta, alpha);
}

at::Tensor dot(const at::Tensor& a, const at::Tensor& b) {
  at::Tensor out = native_gemm(a, b, nullptr, Shape::kDot);
  if (out.defined()) return out;
  static const auto op = fallback("dot").typed<at::Tensor(const at::Tensor&, const at::Tensor&)>();
  return op.call(a, b);
}

// vdot conjugates its first operand: nothing to do for the real dtypes served natively.
at::Tensor vdot(const at::Tensor& a, const at::Tensor& b) {
  at::Tensor out = native_gemm(a, b, nullptr, Shape::kDot);
  if (out.defined()) return out;
  static const auto op = fallback("vdot").typed<at::Tensor(const at::Tensor&, const at::Tensor&)>();
  return op.call(a, b);
}

// The ops with scaled epilogues (or none served: addbmm) go to their Python override at once,
// which runs the GEMM into f32 and the epilogue elementwise, or words the refusal.
using Scaled = at::Tensor(const at::Tensor&, const at::Tensor&, const at::Tensor&,
                          const c10::Scalar&, const c10::Scalar&);

at::Tensor baddbmm(const at::Tensor& self, const at::Tensor& b1, const at::Tensor& b2,
                   const c10::Scalar& beta, const c10::Scalar& alpha) {
  g_declined.fetch_add(1, std::memory_order_relaxed);
  static const auto op = fallback("baddbmm").typed<Scaled>();
  return op.call(self, b1, b2, beta, alpha);
}

at::Tensor addmv(const at::Tensor& self, const at::Tensor& mat, const at::Tensor& vec,
                 const c10::Scalar& beta, const c10::Scalar& alpha) {
  g_declined.fetch_add(1, std::memory_order_relaxed);
  static const auto op = fallback("addmv").typed<Scaled>();
  return op.call(self, mat, vec, beta, alpha);
}

at::Tensor addbmm(const at::Tensor& self, const at::Tensor& b1, const at::Tensor& b2,
                  const c10::Scalar& beta, const c10::Scalar& alpha) {
  g_declined.fetch_add(1, std::memory_order_relaxed);
  static const auto op = fallback("addbmm").typed<Scaled>();
  return op.call(self, b1, b2, beta, alpha);
}

at::Tensor addmm_activation(const at::Tensor& self, const at::Tensor& mat1, const at::Tensor& mat2,
                            const c10::Scalar& beta, const c10::Scalar& alpha, bool use_gelu) {
  g_declined.fetch_add(1, std::memory_order_relaxed);
  static const auto op =
      fallback("_addmm_activation")
          .typed<at::Tensor(const at::Tensor&, const at::Tensor&, const at::Tensor&,
                            const c10::Scalar&, const c10::Scalar&, bool)>();
  return op.call(self, mat1, mat2, beta, alpha, use_gelu);
}

// The out_dtype overloads (torch.mm(a, b, out_dtype=torch.float32), ...): the product rounded
// once to out_dtype. mm and bmm natively; addmm and baddbmm (an epilogue in f32) and anything
// declined through their Python overrides.
// torch's rule for out_dtype: the operands' dtype, or f32 from 16-bit operands (the Python
// override words the refusal of anything else).
bool out_dtype_allowed(const at::Tensor& a, at::ScalarType t) {
  return t == a.scalar_type() ||
         (t == at::kFloat && (a.scalar_type() == at::kBFloat16 || a.scalar_type() == at::kHalf));
}

using GemmDtype = at::Tensor(const at::Tensor&, const at::Tensor&, at::ScalarType);

// mm.dtype or bmm.dtype (`shape`); declined calls go to `python` (their Python override).
at::Tensor gemm_dtype(const at::Tensor& a, const at::Tensor& b, at::ScalarType out_dtype,
                      Shape shape, const c10::TypedOperatorHandle<GemmDtype>& python) {
  if (out_dtype_allowed(a, out_dtype)) {
    at::Tensor out = native_gemm(a, b, nullptr, shape, nullptr, out_dtype);
    if (out.defined()) return out;
  } else {
    g_declined.fetch_add(1, std::memory_order_relaxed);
  }
  return python.call(a, b, out_dtype);
}

at::Tensor mm_dtype(const at::Tensor& a, const at::Tensor& b, at::ScalarType out_dtype) {
  static const auto op = fallback("mm_dtype").typed<GemmDtype>();
  return gemm_dtype(a, b, out_dtype, Shape::kMm, op);
}

at::Tensor bmm_dtype(const at::Tensor& a, const at::Tensor& b, at::ScalarType out_dtype) {
  static const auto op = fallback("bmm_dtype").typed<GemmDtype>();
  return gemm_dtype(a, b, out_dtype, Shape::kBmm, op);
}

using ScaledDtype = at::Tensor(const at::Tensor&, const at::Tensor&, const at::Tensor&,
                               at::ScalarType, const c10::Scalar&, const c10::Scalar&);

at::Tensor addmm_dtype(const at::Tensor& self, const at::Tensor& mat1, const at::Tensor& mat2,
                       at::ScalarType out_dtype, const c10::Scalar& beta,
                       const c10::Scalar& alpha) {
  g_declined.fetch_add(1, std::memory_order_relaxed);
  static const auto op = fallback("addmm_dtype").typed<ScaledDtype>();
  return op.call(self, mat1, mat2, out_dtype, beta, alpha);
}

at::Tensor baddbmm_dtype(const at::Tensor& self, const at::Tensor& b1, const at::Tensor& b2,
                         at::ScalarType out_dtype, const c10::Scalar& beta,
                         const c10::Scalar& alpha) {
  g_declined.fetch_add(1, std::memory_order_relaxed);
  static const auto op = fallback("baddbmm_dtype").typed<ScaledDtype>();
  return op.call(self, b1, b2, out_dtype, beta, alpha);
}

at::Tensor softmax(const at::Tensor& x, int64_t dim, bool half_to_float) {
  at::Tensor out = native_rows(0, x, dim, half_to_float ? at::kFloat : x.scalar_type(), false);
  if (out.defined()) return out;
  static const auto op =
      fallback("_softmax").typed<at::Tensor(const at::Tensor&, int64_t, bool)>();
  return op.call(x, dim, half_to_float);
}

at::Tensor log_softmax(const at::Tensor& x, int64_t dim, bool half_to_float) {
  at::Tensor out = native_rows(1, x, dim, half_to_float ? at::kFloat : x.scalar_type(), false);
  if (out.defined()) return out;
  static const auto op =
      fallback("_log_softmax").typed<at::Tensor(const at::Tensor&, int64_t, bool)>();
  return op.call(x, dim, half_to_float);
}

at::Tensor mean(const at::Tensor& x, at::OptionalIntArrayRef dim, bool keepdim,
                std::optional<at::ScalarType> dtype) {
  if (dim.has_value() && dim->size() == 1) {
    at::Tensor out = native_rows(2, x, (*dim)[0], dtype.value_or(x.scalar_type()), keepdim);
    if (out.defined()) return out;
  } else {
    g_declined.fetch_add(1, std::memory_order_relaxed);
  }
  static const auto op =
      fallback("mean_dim")
          .typed<at::Tensor(const at::Tensor&, at::OptionalIntArrayRef, bool,
                            std::optional<at::ScalarType>)>();
  return op.call(x, dim, keepdim, dtype);
}

// The out= overloads. Each writes into `out` directly where it already is the output torch
// would allocate, and otherwise copies the functional kernel's result (above: the mode's
// kernel, or its Python override, which words a refusal or runs an allowed fallback) into it.

// The messages below are built as strings (c10's toString, Device::str, std::to_string), never
// by streaming numbers or sizes: a std::ostream built in this library, fed an integer, called
// through another facet than num_put and crashed the process (a segfault in
// ostream::_M_insert<long> at `bias.addmm_(x, w)`, GCC 13 against torch 2.11's libraries,
// bench/results/2026-12-06-session49/call4-segv/run.log). Strings pass through intact.
std::string sizes_str(at::IntArrayRef sizes) {
  std::string s = "[";
  for (size_t i = 0; i < sizes.size(); ++i) {
    if (i > 0) s += ", ";
    s += std::to_string(sizes[i]);
  }
  return s + "]";
}

// torch's checks of an out= call's `out` against the result it will get (its dtype, on the
// operands' device), made before anything runs: a mismatch is torch's error, not a refusal or
// a fallback of the op.
void check_out(const at::Tensor& out, at::ScalarType dtype, const at::Tensor& operand,
               const char* op) {
  TORCH_CHECK(out.scalar_type() == dtype,
              std::string("aten::") + op + ": expected out tensor to have dtype " +
                  c10::toString(dtype) + ", but got " + c10::toString(out.scalar_type()) +
                  " instead");
  TORCH_CHECK(out.device() == operand.device(),
              std::string("aten::") + op + ": expected out tensor on " + operand.device().str() +
                  ", but got one on " + out.device().str());
}

// `result` into `out` as torch's out= kernels leave it: the same dtype and device, `out`
// resized to the result's sizes (with torch's warning when it held other sizes), then copied.
at::Tensor& into_out(const at::Tensor& result, at::Tensor& out, const char* op) {
  TORCH_CHECK(out.scalar_type() == result.scalar_type(),
              std::string("aten::") + op + ": expected out tensor to have dtype " +
                  c10::toString(result.scalar_type()) + ", but got " +
                  c10::toString(out.scalar_type()) + " instead");
  TORCH_CHECK(out.device() == result.device(),
              std::string("aten::") + op + ": expected out tensor on " + result.device().str() +
                  ", but got one on " + out.device().str());
  at::native::resize_output(out, result.sizes());
  out.copy_(result);
  return out;
}

// Whether `out` may be written directly by a kernel reading `inputs`: no byte of it is one of
// theirs (an aliasing out= goes through a copy, as torch's kernels handle it).
// Tensors of other storages are apart whatever their layouts (get_overlap_status gives up,
// TooHard, on any view that is not dense, such as a slice of a fused QKV weight).
bool apart(const at::Tensor& out, std::initializer_list<const at::Tensor*> inputs) {
  for (const at::Tensor* t : inputs) {
    if (t == nullptr || !t->defined()) continue;
    if (out.has_storage() && t->has_storage() && !out.storage().is_alias_of(t->storage())) {
      continue;
    }
    if (at::get_overlap_status(out, *t) != at::MemOverlapStatus::No) return false;
  }
  return true;
}

at::Tensor& mm_out(const at::Tensor& a, const at::Tensor& b, at::Tensor& out) {
  check_out(out, a.scalar_type(), a, "mm.out");
  if (apart(out, {&a, &b}) && native_gemm(a, b, nullptr, Shape::kMm, &out).defined()) return out;
  return into_out(::mm(a, b), out, "mm.out");
}

at::Tensor& mv_out(const at::Tensor& a, const at::Tensor& v, at::Tensor& out) {
  check_out(out, a.scalar_type(), a, "mv.out");
  if (apart(out, {&a, &v}) && native_gemm(a, v, nullptr, Shape::kMv, &out).defined()) return out;
  return into_out(::mv(a, v), out, "mv.out");
}

at::Tensor& mm_dtype_out(const at::Tensor& a, const at::Tensor& b, at::ScalarType out_dtype,
                         at::Tensor& out) {
  check_out(out, out_dtype, a, "mm.dtype_out");
  if (out_dtype_allowed(a, out_dtype) && apart(out, {&a, &b}) &&
      native_gemm(a, b, nullptr, Shape::kMm, &out, out_dtype).defined()) {
    return out;
  }
  return into_out(::mm_dtype(a, b, out_dtype), out, "mm.dtype_out");
}

at::Tensor& bmm_dtype_out(const at::Tensor& a, const at::Tensor& b, at::ScalarType out_dtype,
                          at::Tensor& out) {
  check_out(out, out_dtype, a, "bmm.dtype_out");
  if (out_dtype_allowed(a, out_dtype) && apart(out, {&a, &b}) &&
      native_gemm(a, b, nullptr, Shape::kBmm, &out, out_dtype).defined()) {
    return out;
  }
  return into_out(::bmm_dtype(a, b, out_dtype), out, "bmm.dtype_out");
}

at::Tensor& addmm_dtype_out(const at::Tensor& self, const at::Tensor& mat1,
                            const at::Tensor& mat2, at::ScalarType out_dtype,
                            const c10::Scalar& beta, const c10::Scalar& alpha, at::Tensor& out) {
  check_out(out, out_dtype, mat1, "addmm.dtype_out");
  return into_out(::addmm_dtype(self, mat1, mat2, out_dtype, beta, alpha), out,
                  "addmm.dtype_out");
}

at::Tensor& baddbmm_dtype_out(const at::Tensor& self, const at::Tensor& b1, const at::Tensor& b2,
                              at::ScalarType out_dtype, const c10::Scalar& beta,
                              const c10::Scalar& alpha, at::Tensor& out) {
  check_out(out, out_dtype, b1, "baddbmm.dtype_out");
  return into_out(::baddbmm_dtype(self, b1, b2, out_dtype, beta, alpha), out,
                  "baddbmm.dtype_out");
}

at::Tensor& bmm_out(const at::Tensor& a, const at::Tensor& b, at::Tensor& out) {
  check_out(out, a.scalar_type(), a, "bmm.out");
  if (apart(out, {&a, &b}) && native_gemm(a, b, nullptr, Shape::kBmm, &out).defined()) return out;
  return into_out(::bmm(a, b), out, "bmm.out");
}

at::Tensor& addmm_out(const at::Tensor& self, const at::Tensor& mat1, const at::Tensor& mat2,
                      const c10::Scalar& beta, const c10::Scalar& alpha, at::Tensor& out) {
  check_out(out, mat1.scalar_type(), mat1, "addmm.out");
  if (is_one(beta) && is_one(alpha) && self.dim() == 1 && mat2.dim() == 2 &&
      self.size(0) == mat2.size(1) && apart(out, {&self, &mat1, &mat2}) &&
      native_gemm(mat1, mat2, &self, Shape::kMm, &out).defined()) {
    return out;
  }
  return into_out(::addmm(self, mat1, mat2, beta, alpha), out, "addmm.out");
}

at::Tensor& baddbmm_out(const at::Tensor& self, const at::Tensor& b1, const at::Tensor& b2,
                        const c10::Scalar& beta, const c10::Scalar& alpha, at::Tensor& out) {
  check_out(out, b1.scalar_type(), b1, "baddbmm.out");
  return into_out(::baddbmm(self, b1, b2, beta, alpha), out, "baddbmm.out");
}

at::Tensor& addmv_out(const at::Tensor& self, const at::Tensor& mat, const at::Tensor& vec,
                      const c10::Scalar& beta, const c10::Scalar& alpha, at::Tensor& out) {
  check_out(out, mat.scalar_type(), mat, "addmv.out");
  return into_out(::addmv(self, mat, vec, beta, alpha), out, "addmv.out");
}

at::Tensor& addbmm_out(const at::Tensor& self, const at::Tensor& b1, const at::Tensor& b2,
                       const c10::Scalar& beta, const c10::Scalar& alpha, at::Tensor& out) {
  check_out(out, b1.scalar_type(), b1, "addbmm.out");
  return into_out(::addbmm(self, b1, b2, beta, alpha), out, "addbmm.out");
}

at::Tensor& addmm_activation_out(const at::Tensor& self, const at::Tensor& mat1,
                                 const at::Tensor& mat2, const c10::Scalar& beta,
                                 const c10::Scalar& alpha, bool use_gelu, at::Tensor& out) {
  check_out(out, mat1.scalar_type(), mat1, "_addmm_activation.out");
  return into_out(::addmm_activation(self, mat1, mat2, beta, alpha, use_gelu), out,
                  "_addmm_activation.out");
}

at::Tensor& softmax_out(const at::Tensor& x, int64_t dim, bool half_to_float, at::Tensor& out) {
  const at::ScalarType to = half_to_float ? at::kFloat : x.scalar_type();
  check_out(out, to, x, "_softmax.out");
  if (apart(out, {&x}) && native_rows(0, x, dim, to, false, &out).defined()) return out;
  return into_out(::softmax(x, dim, half_to_float), out, "_softmax.out");
}

at::Tensor& log_softmax_out(const at::Tensor& x, int64_t dim, bool half_to_float,
                            at::Tensor& out) {
  const at::ScalarType to = half_to_float ? at::kFloat : x.scalar_type();
  check_out(out, to, x, "_log_softmax.out");
  if (apart(out, {&x}) && native_rows(1, x, dim, to, false, &out).defined()) return out;
  return into_out(::log_softmax(x, dim, half_to_float), out, "_log_softmax.out");
}

// `result` into `self` for an in-place overload: self keeps its sizes (torch never resizes it),
// so the result must have them, and its dtype.
at::Tensor& into_self(const at::Tensor& result, at::Tensor& self, const char* op) {
  TORCH_CHECK(self.sizes() == result.sizes(),
              std::string("aten::") + op + ": the result has shape " + sizes_str(result.sizes()) +
                  ", which does not match self's " + sizes_str(self.sizes()) +
                  " (an in-place op does not resize self)");
  return into_out(result, self, op);
}

// The in-place overloads (x.addmm_(a, b), ...): the functional result copied into self.
at::Tensor& addmm_inplace(at::Tensor& self, const at::Tensor& mat1, const at::Tensor& mat2,
                          const c10::Scalar& beta, const c10::Scalar& alpha) {
  return into_self(::addmm(self, mat1, mat2, beta, alpha), self, "addmm_");
}

at::Tensor& baddbmm_inplace(at::Tensor& self, const at::Tensor& b1, const at::Tensor& b2,
                            const c10::Scalar& beta, const c10::Scalar& alpha) {
  return into_self(::baddbmm(self, b1, b2, beta, alpha), self, "baddbmm_");
}

at::Tensor& addmv_inplace(at::Tensor& self, const at::Tensor& mat, const at::Tensor& vec,
                          const c10::Scalar& beta, const c10::Scalar& alpha) {
  return into_self(::addmv(self, mat, vec, beta, alpha), self, "addmv_");
}

at::Tensor& addbmm_inplace(at::Tensor& self, const at::Tensor& b1, const at::Tensor& b2,
                           const c10::Scalar& beta, const c10::Scalar& alpha) {
  return into_self(::addbmm(self, b1, b2, beta, alpha), self, "addbmm_");
}

// torch's mean.out computes in out's dtype when no dtype is given.
at::Tensor& mean_out(const at::Tensor& x, at::OptionalIntArrayRef dim, bool keepdim,
                     std::optional<at::ScalarType> dtype, at::Tensor& out) {
  const at::ScalarType to = dtype.value_or(out.scalar_type());
  check_out(out, to, x, "mean.out");
  if (dim.has_value() && dim->size() == 1 && apart(out, {&x}) &&
      native_rows(2, x, (*dim)[0], to, keepdim, &out).defined()) {
    return out;
  }
  return into_out(::mean(x, dim, keepdim, to), out, "mean.out");
}

void set_error(const std::string& message) {
  std::lock_guard<std::mutex> lock(g_mutex);
  g_error = message;
}

}  // namespace

extern "C" {

// The ABI this file speaks; gemm_aot/_dispatch.py checks it against the native module's.
uint32_t gemm_aot_dispatch_abi(void) { return kAbi; }

// Registers the kernels at dispatch key `key` ("CUDA"; "CPU" for tests, whose calls are only
// recorded), calling `api` (the native module's table). 0 on success, else 1 and
// gemm_aot_dispatch_error() says why. A second registration replaces the first with no window
// where torch's own kernels run: the new kernels are registered (the newest wins) before the
// old ones are removed.
int32_t gemm_aot_dispatch_register(const GemmAotApi* api, const char* key) {
  try {
    if (api == nullptr || api->abi != kAbi) {
      set_error("the native module's dispatch table is of another ABI than dispatch.cpp's (" +
                std::to_string(kAbi) + "): rebuild the package");
      return 1;
    }
    const std::string name = key == nullptr ? "CUDA" : key;
    if (name != "CUDA" && name != "CPU") {
      set_error("dispatch key " + name + " is neither CUDA nor CPU");
      return 1;
    }
    std::lock_guard<std::mutex> lock(g_mutex);
    const c10::DeviceType type = name == "CPU" ? c10::DeviceType::CPU : c10::DeviceType::CUDA;
    if (g_library != nullptr && type != g_device_type.load()) {
      g_library.reset();  // another key: nothing of ours serves it meanwhile
    }
    gemm_aot_torch_out::define_torch_out_ops();  // the fallbacks' route to torch's own out= kernels
    g_api.store(api);
    g_device_type.store(type);
    auto library = std::make_unique<torch::Library>(
        torch::Library::IMPL, "aten", c10::parseDispatchKey(name), __FILE__, __LINE__);
    library->impl("mm", TORCH_FN(mm));
    library->impl("bmm", TORCH_FN(bmm));
    library->impl("mv", TORCH_FN(mv));
    library->impl("addmm", TORCH_FN(addmm));
    library->impl("dot", TORCH_FN(dot));
    library->impl("vdot", TORCH_FN(vdot));
    library->impl("baddbmm", TORCH_FN(baddbmm));
    library->impl("addmv", TORCH_FN(addmv));
    library->impl("addbmm", TORCH_FN(addbmm));
    library->impl("_addmm_activation", TORCH_FN(addmm_activation));
    library->impl("_softmax", TORCH_FN(softmax));
    library->impl("_log_softmax", TORCH_FN(log_softmax));
    library->impl("mean.dim", TORCH_FN(mean));
    library->impl("mm.out", TORCH_FN(mm_out));
    library->impl("bmm.out", TORCH_FN(bmm_out));
    library->impl("addmm.out", TORCH_FN(addmm_out));
    library->impl("baddbmm.out", TORCH_FN(baddbmm_out));
    library->impl("addmv.out", TORCH_FN(addmv_out));
    library->impl("addbmm.out", TORCH_FN(addbmm_out));
    library->impl("_addmm_activation.out", TORCH_FN(addmm_activation_out));
    library->impl("_softmax.out", TORCH_FN(softmax_out));
    library->impl("_log_softmax.out", TORCH_FN(log_softmax_out));
    library->impl("mean.out", TORCH_FN(mean_out));
    library->impl("mv.out", TORCH_FN(mv_out));
    library->impl("addmm_", TORCH_FN(addmm_inplace));
    library->impl("baddbmm_", TORCH_FN(baddbmm_inplace));
    library->impl("addmv_", TORCH_FN(addmv_inplace));
    library->impl("addbmm_", TORCH_FN(addbmm_inplace));
    // The out_dtype overloads are newer than some torch this package takes.
    if (gemm_aot_torch_out::has_aten_op("mm", "dtype")) {
      library->impl("mm.dtype", TORCH_FN(mm_dtype));
      library->impl("bmm.dtype", TORCH_FN(bmm_dtype));
      library->impl("addmm.dtype", TORCH_FN(addmm_dtype));
      library->impl("baddbmm.dtype", TORCH_FN(baddbmm_dtype));
      library->impl("mm.dtype_out", TORCH_FN(mm_dtype_out));
      library->impl("bmm.dtype_out", TORCH_FN(bmm_dtype_out));
      library->impl("addmm.dtype_out", TORCH_FN(addmm_dtype_out));
      library->impl("baddbmm.dtype_out", TORCH_FN(baddbmm_dtype_out));
    }
    g_library = std::move(library);  // the old registration, if any, goes now
    return 0;
  } catch (const std::exception& e) {
    g_error = e.what();  // g_mutex is held
    return 1;
  }
}

// Removes the kernels (torch's own run again).
void gemm_aot_dispatch_unregister(void) {
  std::lock_guard<std::mutex> lock(g_mutex);
  g_library.reset();
}

// Calls served natively (out[0]) and handed to the Python overrides (out[1]).
void gemm_aot_dispatch_counts(uint64_t* out) {
  out[0] = g_served.load(std::memory_order_relaxed);
  out[1] = g_declined.load(std::memory_order_relaxed);
}

// Why the last registration failed (a copy, valid until this thread's next call).
const char* gemm_aot_dispatch_error(void) {
  thread_local std::string copy;
  std::lock_guard<std::mutex> lock(g_mutex);
  copy = g_error;
  return copy.c_str();
}

}  // extern "C"
