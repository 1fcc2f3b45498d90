#include "backends/vm/host/tensor.h"

#include <string>

#include "graphrt/error.h"
#include "backends/vm/host/limits.h"

namespace graphrt {
namespace vm {

int64_t dtype_bytes(DLDataType dtype) {
  return (static_cast<int64_t>(dtype.bits) * dtype.lanes + 7) / 8;
}

int64_t Tensor::element_count() {
  const DLTensor* t = dl();
  int64_t n = 1;
  for (int i = 0; i < t->ndim; ++i) n *= t->shape[i];
  return n;
}

void* Tensor::element(int64_t index) {
  DLTensor* t = dl();
  GRAPHRT_CHECK_KIND(t->device.device_type == kDLCPU, ErrorKind::kUnsupported, "tensor element access needs a host (CPU) tensor");
  if (index < 0 || index >= element_count()) {
    throw Error(ErrorKind::kOutOfRange, "tensor element index " + std::to_string(index) + " out of range");
  }
  // Element access assumes a compact row-major layout; strided tensors are
  // rejected rather than read wrongly.
  GRAPHRT_CHECK_KIND(t->strides == nullptr, ErrorKind::kUnsupported, "tensor element access on a strided tensor");
  return static_cast<uint8_t*>(t->data) + t->byte_offset + index * dtype_bytes(t->dtype);
}

OwnedTensor::OwnedTensor(std::vector<int64_t> shape, DLDataType dtype) : shape_(std::move(shape)) {
  GRAPHRT_CHECK(dtype.bits > 0 && dtype.lanes > 0, "tensor dtype must have bits and lanes > 0");
  int64_t bytes = dtype_bytes(dtype);
  for (int64_t d : shape_) {
    if (d < 0 || (d > 0 && bytes > limits().max_tensor_bytes / d)) {
      throw Error("tensor shape dimension " + std::to_string(d) + " invalid or too large");
    }
    bytes *= d;
  }
  charge_.charge(bytes, "tensor");
  storage_.assign(static_cast<size_t>(bytes), 0);
  tensor_.data = storage_.data();
  tensor_.device = DLDevice{kDLCPU, 0};
  tensor_.ndim = static_cast<int32_t>(shape_.size());
  tensor_.dtype = dtype;
  tensor_.shape = shape_.data();
}

}  // namespace vm
}  // namespace graphrt
