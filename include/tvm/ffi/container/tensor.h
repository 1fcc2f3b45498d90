// tvm::ffi::Tensor: TVM v0.22+'s refcounted tensor, over graphrt::NDArray.
//
// tensor->shape, ->ndim, ->data, ->dtype, ->device read the DLTensor; shape() is a
// ShapeView of it. tvm::runtime::Tensor (tvm/runtime/tensor.h) adds allocation and copies.
#ifndef TVM_FFI_CONTAINER_TENSOR_H_
#define TVM_FFI_CONTAINER_TENSOR_H_

#include <dlpack/dlpack.h>
#include <tvm/ffi/container/shape.h>
#include <tvm/ffi/dtype.h>
#include <tvm/ffi/error.h>

#include <cstddef>
#include <cstdint>
#include <utility>

#include "graphrt/ndarray.h"

namespace tvm {
namespace ffi {

// Bytes of a compact tensor's data.
inline size_t GetDataSize(const DLTensor& tensor) { return ::graphrt::tensor_nbytes(&tensor); }
inline bool IsContiguous(const DLTensor& tensor) { return ::graphrt::tensor_is_contiguous(&tensor); }

class Tensor {
 public:
  Tensor() = default;
  Tensor(std::nullptr_t) {}  // NOLINT: implicit, as TVM's null reference
  explicit Tensor(::graphrt::NDArray array) : array_(std::move(array)) {}

  // Takes over a DLPack tensor; its deleter runs when the last reference goes.
  static Tensor FromDLPack(DLManagedTensor* tensor, size_t require_alignment = 0, bool require_contiguous = false) {
    if (!tensor) TVM_FFI_THROW(ValueError) << "FromDLPack: null DLManagedTensor";
    const DLTensor& t = tensor->dl_tensor;
    const auto address = reinterpret_cast<uintptr_t>(t.data) + t.byte_offset;
    if (require_alignment != 0 && address % require_alignment != 0)
      TVM_FFI_THROW(RuntimeError) << "FromDLPack: data is not aligned to " << require_alignment << " bytes";
    if (require_contiguous && !ffi::IsContiguous(t)) TVM_FFI_THROW(RuntimeError) << "FromDLPack: tensor is not contiguous";
    return details::translate_errors([&] { return Tensor(::graphrt::NDArray::from_dlpack(tensor)); });
  }
  // A DLPack tensor that keeps this tensor alive until its deleter runs.
  DLManagedTensor* ToDLPack() const { return checked().to_dlpack(); }

  const DLTensor* operator->() const { return checked().handle(); }
  const DLTensor* get() const { return array_.handle(); }
  const DLTensor* GetDLTensorPtr() const { return checked().handle(); }
  void* data_ptr() const { return checked()->data; }
  DLDevice device() const { return checked()->device; }
  int32_t ndim() const { return checked()->ndim; }
  int32_t dim() const { return ndim(); }
  DLDataType dtype() const { return checked()->dtype; }
  ShapeView shape() const { return ShapeView(checked()->shape, static_cast<size_t>(checked()->ndim)); }
  ShapeView sizes() const { return shape(); }
  int64_t size(int64_t idx) const { return shape()[static_cast<size_t>(idx >= 0 ? idx : ndim() + idx)]; }
  int64_t numel() const { return shape().Product(); }
  uint64_t byte_offset() const { return checked()->byte_offset; }
  bool IsContiguous() const { return ffi::IsContiguous(*checked().handle()); }
  bool is_contiguous() const { return IsContiguous(); }

  bool defined() const { return array_.defined(); }
  int use_count() const { return array_.use_count(); }
  bool same_as(const Tensor& other) const { return array_.handle() == other.array_.handle(); }
  bool operator==(std::nullptr_t) const { return !defined(); }
  bool operator!=(std::nullptr_t) const { return defined(); }

  // The graphrt array behind this tensor (shared, not copied).
  const ::graphrt::NDArray& graphrt_array() const { return array_; }

 protected:
  // A second reference to the array (graphrt's copy calls are non-const).
  ::graphrt::NDArray checked() const {
    if (!array_.defined()) TVM_FFI_THROW(RuntimeError) << "use of a null Tensor";
    return array_;
  }

 private:
  ::graphrt::NDArray array_;
};

}  // namespace ffi
}  // namespace tvm

#endif  // TVM_FFI_CONTAINER_TENSOR_H_
