// tvm::runtime::Tensor: TVM v0.22+'s runtime tensor (the v0.18 NDArray's successor), a
// tvm::ffi::Tensor that allocates and copies.
//
//   auto x = tvm::runtime::Tensor::Empty({1, 784}, DLDataType{kDLFloat, 32, 1}, DLDevice{kDLCPU, 0});
//   x.CopyFromBytes(data, 784 * sizeof(float));
#ifndef TVM_RUNTIME_TENSOR_H_
#define TVM_RUNTIME_TENSOR_H_

#include <dlpack/dlpack.h>
#include <tvm/ffi/any.h>
#include <tvm/ffi/container/shape.h>
#include <tvm/ffi/container/tensor.h>
#include <tvm/ffi/error.h>
#include <tvm/ffi/optional.h>
#include <tvm/ffi/string.h>
#include <tvm/runtime/data_type.h>

#include <cstddef>
#include <cstdint>
#include <optional>
#include <utility>
#include <vector>

#include "graphrt/ndarray.h"

namespace tvm {
namespace runtime {

class Tensor : public ffi::Tensor {
 public:
  Tensor() = default;
  Tensor(std::nullptr_t) {}  // NOLINT: implicit, as TVM's null reference
  Tensor(ffi::Tensor other) : ffi::Tensor(std::move(other)) {}  // NOLINT: implicit, as TVM's
  explicit Tensor(::graphrt::NDArray array) : ffi::Tensor(std::move(array)) {}

  // A compact, uninitialised tensor (64-byte aligned). Only the "global" memory scope exists.
  static Tensor Empty(ffi::Shape shape, DLDataType dtype, DLDevice dev,
                      ffi::Optional<ffi::String> mem_scope = std::nullopt) {
    if (mem_scope.has_value() && !mem_scope->empty() && *mem_scope != "global")
      TVM_FFI_THROW(NotImplementedError) << "memory scope '" << *mem_scope
                                         << "' is not supported (graphrt allocates \"global\" only)";
    return ffi::details::translate_errors(
        [&] { return Tensor(::graphrt::NDArray::empty(shape.dims(), dtype, dev)); });
  }
  static Tensor FromDLPack(DLManagedTensor* tensor, size_t require_alignment = 0, bool require_contiguous = false) {
    return Tensor(ffi::Tensor::FromDLPack(tensor, require_alignment, require_contiguous));
  }

  void CopyFrom(const DLTensor* other) { translated([&](::graphrt::NDArray a) { a.copy_from(other); }); }
  void CopyFrom(const Tensor& other) { CopyFrom(other.GetDLTensorPtr()); }
  void CopyFromBytes(const void* data, size_t nbytes) {
    translated([&](::graphrt::NDArray a) { a.copy_from_bytes(data, nbytes); });
  }
  void CopyTo(DLTensor* other) const { translated([&](::graphrt::NDArray a) { a.copy_to(other); }); }
  void CopyTo(const Tensor& other) const { CopyTo(const_cast<DLTensor*>(other.GetDLTensorPtr())); }
  void CopyToBytes(void* data, size_t nbytes) const {
    translated([&](::graphrt::NDArray a) { a.copy_to_bytes(data, nbytes); });
  }
  Tensor CopyTo(const DLDevice& dev, ffi::Optional<ffi::String> mem_scope = std::nullopt) const {
    (void)mem_scope;
    return ffi::details::translate_errors([&] { return Tensor(checked().copy_to_device(dev)); });
  }
  static void CopyFromTo(const DLTensor* from, DLTensor* to, void* stream = nullptr) {
    ffi::details::translate_errors([&] { ::graphrt::copy_tensor(from, to, stream); });
  }
  // A view with another shape/dtype sharing this tensor's memory.
  Tensor CreateView(ffi::Shape shape, DLDataType dtype, uint64_t relative_byte_offset = 0) const {
    return ffi::details::translate_errors(
        [&] { return Tensor(checked().view(shape.dims(), dtype, relative_byte_offset)); });
  }
  ffi::Shape Shape() const { return ffi::Shape(shape()); }
  runtime::DataType DataType() const { return runtime::DataType(dtype()); }

 private:
  template <typename Body>
  void translated(Body&& body) const {
    ffi::details::translate_errors([&] { body(checked()); });
  }
};

}  // namespace runtime

namespace ffi {
template <>
struct TypeTraits<runtime::Tensor> {
  static void Into(const runtime::Tensor& v, details::PackedValue* out) { TypeTraits<Tensor>::Into(v, out); }
  static std::optional<runtime::Tensor> TryFrom(const details::PackedValue& v) {
    std::optional<Tensor> t = TypeTraits<Tensor>::TryFrom(v);
    if (!t) return std::nullopt;
    return runtime::Tensor(*std::move(t));
  }
  static std::string TypeName() { return "ffi.Tensor"; }
};
}  // namespace ffi
}  // namespace tvm

#endif  // TVM_RUNTIME_TENSOR_H_
