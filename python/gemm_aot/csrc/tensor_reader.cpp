// gemm_aot's tensor reader: a plain torch tensor's address, sizes, strides, dtype and device
// read off its at::Tensor in C++, where the native fast path (python/src/torch_fast.rs) would
// otherwise export it through DLPack (0.22 us a tensor from Python, three a call), and torch's
// current stream read in C++ rather than through a Python call. gemm_aot/_dispatch.py builds it
// into the native dispatch's library on first use against the torch installed (with torch's and
// Python's headers); gemm_aot/_fastpath.py checks what it reads against the attribute reads and
// only then hands its functions to the native module (python/src/tensor_reader.rs).
//
// The object is a Python tensor whose type is exactly torch.Tensor or torch.nn.Parameter (the
// caller checks that, and holds the GIL): its at::Tensor is torch's own THPVariable_Unpack,
// from torch's header, so the layout is whatever this torch's is.

#include <torch/csrc/autograd/python_variable.h>

#include <c10/core/impl/DeviceGuardImplInterface.h>

#include "view_abi.h"

#include <cstdint>

namespace {

int32_t dtype_code(at::ScalarType t) {
  switch (t) {
    case at::kFloat: return 0;
    case at::kBFloat16: return 1;
    case at::kHalf: return 2;
    default: return -1;
  }
}

}  // namespace

extern "C" {

// The version of these functions' contract; gemm_aot/_dispatch.py checks it.
uint32_t gemm_aot_reader_abi(void) { return 1; }

// Reads `obj` (see above) into `out`: 0 when it is a strided CUDA tensor (with `host`, a CPU
// tensor too, read as on device 0) of f32, bf16 or f16 with at most 4 dimensions, not a
// negated or conjugated view; 1 otherwise, `out` then unspecified. Never throws.
int32_t gemm_aot_read_tensor(PyObject* obj, int32_t host, GemmAotView* out) {
  try {
    const at::Tensor& t = THPVariable_Unpack(obj);
    if (!t.defined() || t.layout() != c10::kStrided || !t.has_storage() || t.dim() > 4) {
      return 1;
    }
    const int32_t dtype = dtype_code(t.scalar_type());
    if (dtype < 0 || t.is_neg() || t.is_conj()) {
      return 1;
    }
    const c10::Device device = t.device();
    if (device.is_cuda()) {
      out->device = device.index();
    } else if (host != 0 && device.is_cpu()) {
      out->device = 0;
    } else {
      return 1;
    }
    out->ptr = reinterpret_cast<uint64_t>(t.data_ptr());
    out->nd = static_cast<int32_t>(t.dim());
    out->dtype = dtype;
    const auto sizes = t.sizes();
    const auto strides = t.strides();
    for (int64_t i = 0; i < t.dim(); ++i) {
      out->shape[i] = sizes[i];
      out->stride[i] = strides[i];
    }
    return 0;
  } catch (...) {
    return 1;
  }
}

// torch's current CUDA stream on `device`, as a raw CUstream, into `out`: 0, or 1 when torch
// has no CUDA (then `out` is unspecified). Never throws.
int32_t gemm_aot_current_stream(int64_t device, uint64_t* out) {
  try {
    if (!c10::impl::hasDeviceGuardImpl(c10::DeviceType::CUDA)) {
      return 1;
    }
    const auto* impl = c10::impl::getDeviceGuardImpl(c10::DeviceType::CUDA);
    const c10::Device d(c10::DeviceType::CUDA, static_cast<c10::DeviceIndex>(device));
    *out = reinterpret_cast<uint64_t>(impl->getStream(d).native_handle());
    return 0;
  } catch (...) {
    return 1;
  }
}

}  // extern "C"
