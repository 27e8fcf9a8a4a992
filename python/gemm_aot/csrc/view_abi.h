// One tensor as gemm_aot's native module reads it (python/src/dispatch_abi.rs's RawView): the
// native dispatch (dispatch.cpp) hands the dispatcher's tensors over in it, and the tensor
// reader (tensor_reader.cpp) fills it from a Python tensor object.
#pragma once
#include <cstdint>

extern "C" {
struct GemmAotView {
  uint64_t ptr;
  int32_t nd;
  int32_t dtype;  // 0 f32, 1 bf16, 2 f16
  int64_t device;
  int64_t shape[4];
  int64_t stride[4];
};
}
