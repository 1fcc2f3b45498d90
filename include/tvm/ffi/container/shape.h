// tvm::ffi::Shape (an owned int64 tuple) and tvm::ffi::ShapeView (a borrowed one).
#ifndef TVM_FFI_CONTAINER_SHAPE_H_
#define TVM_FFI_CONTAINER_SHAPE_H_

#include <tvm/ffi/error.h>

#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <ostream>
#include <string>
#include <vector>

namespace tvm {
namespace ffi {

namespace details {
inline void check_shape_index(size_t i, size_t size) {
  if (i >= size) TVM_FFI_THROW(IndexError) << "shape index " << i << " out of range (size " << size << ")";
}
inline int64_t shape_product(const int64_t* dims, size_t n) {
  int64_t p = 1;
  for (size_t i = 0; i < n; ++i) p *= dims[i];
  return p;
}
}  // namespace details

// A view of dimensions owned elsewhere (a tensor's shape): valid while its owner lives.
class ShapeView {
 public:
  ShapeView() = default;
  ShapeView(const int64_t* data, size_t size) : data_(data), size_(size) {}
  const int64_t* data() const { return data_; }
  size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  int64_t operator[](size_t i) const { return data_[i]; }
  int64_t at(size_t i) const {
    details::check_shape_index(i, size_);
    return data_[i];
  }
  const int64_t* begin() const { return data_; }
  const int64_t* end() const { return data_ + size_; }
  int64_t Product() const { return details::shape_product(data_, size_); }

 private:
  const int64_t* data_ = nullptr;
  size_t size_ = 0;
};

class Shape {
 public:
  using index_type = int64_t;

  Shape() = default;
  Shape(std::initializer_list<int64_t> dims) : dims_(dims) {}  // NOLINT: implicit, as TVM's
  Shape(std::vector<int64_t> dims) : dims_(std::move(dims)) {}  // NOLINT: implicit, as TVM's
  Shape(ShapeView view) : dims_(view.begin(), view.end()) {}  // NOLINT: implicit, as TVM's
  template <typename Iterator>
  Shape(Iterator begin, Iterator end) : dims_(begin, end) {}

  const int64_t* data() const { return dims_.data(); }
  size_t size() const { return dims_.size(); }
  size_t ndim() const { return dims_.size(); }
  bool empty() const { return dims_.empty(); }
  int64_t operator[](size_t i) const { return dims_[i]; }
  int64_t at(size_t i) const {
    details::check_shape_index(i, dims_.size());
    return dims_[i];
  }
  int64_t front() const { return at(0); }
  int64_t back() const { return at(dims_.size() - 1); }
  std::vector<int64_t>::const_iterator begin() const { return dims_.begin(); }
  std::vector<int64_t>::const_iterator end() const { return dims_.end(); }
  int64_t Product() const { return details::shape_product(dims_.data(), dims_.size()); }
  operator ShapeView() const { return ShapeView(dims_.data(), dims_.size()); }  // NOLINT: implicit
  const std::vector<int64_t>& dims() const { return dims_; }

  bool operator==(const Shape& other) const { return dims_ == other.dims_; }
  bool operator!=(const Shape& other) const { return dims_ != other.dims_; }

 private:
  std::vector<int64_t> dims_;
};

inline std::ostream& operator<<(std::ostream& os, ShapeView shape) {
  os << '[';
  for (size_t i = 0; i < shape.size(); ++i) os << (i ? ", " : "") << shape[i];
  return os << ']';
}
inline std::ostream& operator<<(std::ostream& os, const Shape& shape) { return os << ShapeView(shape); }

}  // namespace ffi
}  // namespace tvm

#endif  // TVM_FFI_CONTAINER_SHAPE_H_
