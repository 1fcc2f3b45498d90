// tvm::runtime::NDArray: TVM's refcounted tensor, over graphrt::NDArray.
#ifndef TVM_RUNTIME_NDARRAY_H_
#define TVM_RUNTIME_NDARRAY_H_

#include <tvm/runtime/c_runtime_api.h>
#include <tvm/runtime/container/shape_tuple.h>
#include <tvm/runtime/data_type.h>
#include <tvm/runtime/device_api.h>
#include <tvm/runtime/logging.h>

#include <cstddef>
#include <string>
#include <utility>

#include "graphrt/ndarray.h"
#include "graphrt/runtime.h"

namespace tvm {
namespace runtime {

// Bytes of a compact tensor's data.
inline size_t GetDataSize(const DLTensor& tensor) { return ::graphrt::tensor_nbytes(&tensor); }

class NDArray {
 public:
  NDArray() = default;
  NDArray(std::nullptr_t) {}  // NOLINT: implicit, as TVM's null reference
  explicit NDArray(::graphrt::NDArray array) : array_(std::move(array)) {}

  // A compact, uninitialised array (64-byte aligned). Only the "global"
  // memory scope exists.
  static NDArray Empty(ShapeTuple shape, DLDataType dtype, Device dev, const std::string& mem_scope = "") {
    if (!mem_scope.empty() && mem_scope != "global")
      throw Error(::graphrt::ErrorKind::kUnsupported,
                  "memory scope '" + mem_scope + "' is not supported (graphrt allocates \"global\" only)");
    return NDArray(::graphrt::NDArray::empty(std::vector<int64_t>(shape.begin(), shape.end()), dtype, dev));
  }
  // Takes over a DLPack tensor; its deleter runs when the last reference goes.
  static NDArray FromDLPack(DLManagedTensor* tensor) { return NDArray(::graphrt::NDArray::from_dlpack(tensor)); }
  // A new array on `dev` holding a copy of `tensor`.
  static NDArray NewFromDLTensor(DLTensor* tensor, const Device& dev) {
    NDArray copy = Empty(ShapeTuple(tensor->shape, tensor->shape + tensor->ndim), tensor->dtype, dev);
    copy.CopyFrom(tensor);
    return copy;
  }

  void CopyFrom(const DLTensor* other) { checked().copy_from(other); }
  void CopyFrom(const NDArray& other) { checked().copy_from(other.checked().handle()); }
  void CopyFromBytes(const void* data, size_t nbytes) { checked().copy_from_bytes(data, nbytes); }
  void CopyTo(DLTensor* other) const { checked().copy_to(other); }
  void CopyTo(const NDArray& other) const { checked().copy_to(other.checked().handle()); }
  void CopyToBytes(void* data, size_t nbytes) const { checked().copy_to_bytes(data, nbytes); }
  NDArray CopyTo(const Device& dev) const { return NDArray(checked().copy_to_device(dev)); }

  ShapeTuple Shape() const { return ShapeTuple(checked().shape()); }
  runtime::DataType DataType() const { return runtime::DataType(checked().dtype()); }
  bool IsContiguous() const { return ::graphrt::tensor_is_contiguous(checked().handle()); }
  // A view with another shape/dtype sharing this array's memory.
  NDArray CreateView(ShapeTuple shape, DLDataType dtype, uint64_t relative_byte_offset = 0) const {
    return NDArray(checked().view(std::vector<int64_t>(shape.begin(), shape.end()), dtype, relative_byte_offset));
  }
  // A DLPack tensor that keeps this array alive until its deleter runs.
  DLManagedTensor* ToDLPack() const { return checked().to_dlpack(); }

  bool defined() const { return array_.defined(); }
  int use_count() const { return array_.use_count(); }
  bool same_as(const NDArray& other) const { return array_.handle() == other.array_.handle(); }
  bool operator==(std::nullptr_t) const { return !defined(); }
  bool operator!=(std::nullptr_t) const { return defined(); }
  const DLTensor* operator->() const { return array_.handle(); }
  const DLTensor* get() const { return array_.handle(); }

  // The graphrt array behind this one (shared, not copied).
  const ::graphrt::NDArray& graphrt_array() const { return array_; }

 private:
  // A second reference to the array (graphrt's copy calls are non-const).
  ::graphrt::NDArray checked() const {
    if (!array_.defined()) throw Error(::graphrt::ErrorKind::kFailedPrecondition, "use of a null NDArray");
    return array_;
  }
  ::graphrt::NDArray array_;
};

}  // namespace runtime
}  // namespace tvm

#endif  // TVM_RUNTIME_NDARRAY_H_
