// gemm_aot's native dispatch for torch: the batch-invariant mode's kernels for aten::mm,
// addmm, bmm, mv, dot, vdot, _softmax, _log_softmax and mean.dim (and baddbmm, addmv,
// _addmm_activation and addbmm, handed to their Python overrides), registered at a dispatch key (CUDA) as
// C++ kernels. torch's dispatcher calls them with no Python frame, no boxing and no GIL: a call
// reads its tensors, allocates its output with torch's allocator and hands both to the
// package's native module through a table of C functions (python/src/dispatch_abi.rs), which
// plans and launches exactly what the Python overrides would (the same fast path, the same
// bits).
//
// A call the native module declines (anything uncommon, any error) goes, unchanged, to the
// Python override through the op gemm_aot::<op>_fallback, which gemm_aot/_dispatch.py defines
// with the Python override as its kernel: the Python path words every refusal, and its
// exceptions reach the caller through torch as they are. So this file needs torch's C++
// headers and no Python headers.
//
// Built on first use by gemm_aot/_dispatch.py against the torch installed (c++ -shared), cached.

#include <ATen/core/Tensor.h>
#include <ATen/core/dispatch/Dispatcher.h>
#include <ATen/ops/empty.h>
#include <c10/core/impl/DeviceGuardImplInterface.h>
#include <torch/library.h>

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

extern "C" {
// The layout of python/src/dispatch_abi.rs (ABI 1).
struct GemmAotView {
  uint64_t ptr;
  int32_t nd;
  int32_t dtype;  // 0 f32, 1 bf16, 2 f16
  int64_t device;
  int64_t shape[4];
  int64_t stride[4];
};

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

// out = a @ b (+ bias), natively; an undefined tensor when declined.
at::Tensor native_gemm(const at::Tensor& a, const at::Tensor& b, const at::Tensor* bias,
                       Shape shape) {
  if (!eligible(a) || !eligible(b) || (bias != nullptr && !eligible(*bias)) ||
      a.scalar_type() != b.scalar_type()) {
    g_declined.fetch_add(1, std::memory_order_relaxed);
    return at::Tensor();
  }
  const int64_t dims_a = shape == Shape::kBmm ? 3 : shape == Shape::kDot ? 1 : 2;
  const int64_t dims_b = shape == Shape::kBmm ? 3 : shape == Shape::kMm ? 2 : 1;
  if (a.dim() != dims_a || b.dim() != dims_b) {
    g_declined.fetch_add(1, std::memory_order_relaxed);
    return at::Tensor();
  }
  GemmAotView va = view_of(a), vb = view_of(b);
  at::Tensor out;
  GemmAotView vo;
  const bool batched = shape == Shape::kBmm;
  if (shape == Shape::kDot) {
    // A 1 x 1 product into a 0-dimensional output, viewed as [1, 1].
    va = as_row(va);
    vb = as_column(vb);
    out = at::empty({}, a.options());
    vo = view_of(out);
    vo.nd = 2;
    vo.shape[0] = vo.shape[1] = 1;
    vo.stride[0] = vo.stride[1] = 1;
    const int32_t status =
        g_api.load()->gemm(&va, &vb, &vo, nullptr, 0, stream_of(a), flags());
    return served(status) ? out : at::Tensor();
  }
  const int64_t m = a.size(-2);
  if (shape == Shape::kMv) {
    // mv: b as a one-column matrix, the output as a [m, 1] view of an m-vector.
    vb = as_column(vb);
    out = at::empty({m}, a.options());
    vo = view_of(out);
    vo.nd = 2;
    vo.shape[1] = 1;
    vo.stride[0] = 1;
    vo.stride[1] = 1;
  } else if (batched) {
    out = at::empty({a.size(0), m, b.size(2)}, a.options());
    vo = view_of(out);
  } else {
    out = at::empty({m, b.size(1)}, a.options());
    vo = view_of(out);
  }
  GemmAotView vbias{};
  if (bias != nullptr) vbias = view_of(*bias);
  const int32_t status = g_api.load()->gemm(&va, &vb, &vo, bias != nullptr ? &vbias : nullptr,
                                            batched ? 1 : 0, stream_of(a), flags());
  return served(status) ? out : at::Tensor();
}

// op (0 softmax, 1 log_softmax, 2 mean) of x along its last dimension into `to`, natively;
// an undefined tensor when declined.
at::Tensor native_rows(int32_t op, const at::Tensor& x, int64_t dim, at::ScalarType to,
                       bool keepdim) {
  const int64_t nd = x.dim();
  if (!eligible(x) || nd == 0 || (dim != -1 && dim != nd - 1) || dtype_code(to) < 0) {
    g_declined.fetch_add(1, std::memory_order_relaxed);
    return at::Tensor();
  }
  std::vector<int64_t> shape(x.sizes().begin(), x.sizes().end());
  if (op == 2) {
    if (keepdim) {
      shape.back() = 1;
    } else {
      shape.pop_back();
    }
  }
  at::Tensor out = at::empty(shape, x.options().dtype(to));
  const GemmAotView vx = view_of(x);
  const int32_t status = g_api.load()->rows(op, &vx, dtype_code(to),
                                            reinterpret_cast<uint64_t>(out.data_ptr()),
                                            stream_of(x), flags());
  return served(status) ? out : at::Tensor();
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
      fallback("mean")
          .typed<at::Tensor(const at::Tensor&, at::OptionalIntArrayRef, bool,
                            std::optional<at::ScalarType>)>();
  return op.call(x, dim, keepdim, dtype);
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
