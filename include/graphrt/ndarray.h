// graphrt::NDArray — a refcounted tensor on DLPack's DLTensor.
//
// The DLTensor is the first member of the node, so a `DLTensor*` handed out
// as a kTVMNDArrayHandle can be turned back into its owner (as TVM does).
// Storage is shared between an array and its views.
#pragma once

#include "graphrt/export.h"

#include <dlpack/dlpack.h>

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#pragma GCC visibility push(default)  // exported: see graphrt/export.h
namespace graphrt {

// Bytes of `numel` elements of `dtype` by TVM's rule: each element takes
// bits*lanes rounded up to whole bytes (bool and int4 one byte each).
// Throws graphrt::Error when the count is negative or the bytes overflow.
size_t dtype_bytes(DLDataType dtype, int64_t numel);
// Element count; throws graphrt::Error on a negative dimension or overflow.
int64_t shape_numel(const int64_t* shape, int ndim);
std::string dtype_to_string(DLDataType dtype);
// DLPack's kDLBool (DLPack 0.8+; the system dlpack.h may predate it): TVM v0.22+'s bool, 8 bits.
constexpr uint8_t kDLBoolCode = 6;
// Parses TVM dtype strings ("float32", "int8", "uint1", "bool", "float16x4").
// Throws graphrt::Error on anything it does not understand.
DLDataType dtype_from_string(const std::string& text);
std::string shape_to_string(const int64_t* shape, int ndim);
std::string shape_to_string(const std::vector<int64_t>& shape);
std::string device_to_string(DLDevice dev);
GRAPHRT_HEADER_ONLY inline bool operator==(DLDataType a, DLDataType b) {
  return a.code == b.code && a.bits == b.bits && a.lanes == b.lanes;
}
GRAPHRT_HEADER_ONLY inline bool operator!=(DLDataType a, DLDataType b) { return !(a == b); }
GRAPHRT_HEADER_ONLY inline bool operator==(DLDevice a, DLDevice b) {
  return a.device_type == b.device_type && a.device_id == b.device_id;
}

// Releases the memory behind an array; shared by an array and its views.
class Storage {
 public:
  Storage(void* data, std::function<void(void*)> release) : data_(data), release_(std::move(release)) {}
  ~Storage() {
    if (release_) release_(data_);
  }
  Storage(const Storage&) = delete;
  Storage& operator=(const Storage&) = delete;
  void* data() const { return data_; }

 private:
  void* data_;
  std::function<void(void*)> release_;
};

struct NDArrayNode {
  DLTensor dl{};  // must stay the first member: handles point here
  std::vector<int64_t> shape;
  std::vector<int64_t> strides;
  std::shared_ptr<Storage> storage;
  mutable std::atomic<int32_t> refs{0};

  void inc_ref() const { refs.fetch_add(1, std::memory_order_relaxed); }
  void dec_ref() const;
  static NDArrayNode* from_handle(DLTensor* handle) { return reinterpret_cast<NDArrayNode*>(handle); }
};

class NDArray {
 public:
  NDArray() = default;
  // Compact array on `dev`, 64-byte aligned, uninitialised.
  static NDArray empty(const std::vector<int64_t>& shape, DLDataType dtype, DLDevice dev);
  // A view sharing this array's storage with another shape/dtype; the view's
  // bytes must fit in this array's bytes from `byte_offset` on.
  NDArray view(const std::vector<int64_t>& shape, DLDataType dtype, uint64_t byte_offset = 0) const;
  // Wraps memory owned elsewhere; `storage` keeps it alive.
  static NDArray wrap(void* data, const std::vector<int64_t>& shape, DLDataType dtype, DLDevice dev,
                      std::shared_ptr<Storage> storage);
  // Takes over a DLPack tensor (its deleter runs when the last reference goes).
  static NDArray from_dlpack(DLManagedTensor* managed);
  // Hands out a DLPack tensor that keeps this array alive.
  DLManagedTensor* to_dlpack() const;
  // Adopts/borrows a handle produced by release()/handle().
  static NDArray adopt_handle(DLTensor* handle);
  static NDArray borrow_handle(DLTensor* handle);
  DLTensor* release();

  bool defined() const { return node_ != nullptr; }
  DLTensor* operator->() const { return &node_->dl; }
  DLTensor* handle() const { return node_ ? &node_->dl : nullptr; }
  const std::vector<int64_t>& shape() const { return node_->shape; }
  DLDataType dtype() const { return node_->dl.dtype; }
  DLDevice device() const { return node_->dl.device; }
  size_t nbytes() const;
  int32_t use_count() const { return node_ ? node_->refs.load() : 0; }

  void copy_from_bytes(const void* data, size_t nbytes);
  void copy_to_bytes(void* data, size_t nbytes) const;
  void copy_from(const DLTensor* other);
  void copy_to(DLTensor* other) const;
  NDArray copy_to_device(DLDevice dev) const;

  NDArray(const NDArray& other);
  NDArray(NDArray&& other) noexcept;
  NDArray& operator=(NDArray other) noexcept;
  ~NDArray();

 private:
  explicit NDArray(NDArrayNode* node);  // takes one reference
  NDArrayNode* node_ = nullptr;
};

// Copies tensor contents between any two tensors of the same byte size
// (same device type, or one side on the host). Contiguous tensors only.
void copy_tensor(const DLTensor* from, DLTensor* to, void* stream = nullptr);
bool tensor_is_contiguous(const DLTensor* t);
size_t tensor_nbytes(const DLTensor* t);

}  // namespace graphrt
#pragma GCC visibility pop

// The library's own (not exported).
namespace graphrt {
// Refuses, naming the dtype, what TVM refuses to hold in a tensor: bits not a
// power of two, or no lanes.
void check_tensor_dtype(DLDataType dtype);
}  // namespace graphrt
