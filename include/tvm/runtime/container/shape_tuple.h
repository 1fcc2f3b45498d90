// tvm::runtime::ShapeTuple: an array shape (TVM's immutable int64 tuple).
#ifndef TVM_RUNTIME_CONTAINER_SHAPE_TUPLE_H_
#define TVM_RUNTIME_CONTAINER_SHAPE_TUPLE_H_

#include <cstdint>
#include <initializer_list>
#include <ostream>
#include <vector>

#include "graphrt/error.h"

namespace tvm {
namespace runtime {

class ShapeTuple {
 public:
  using index_type = int64_t;

  ShapeTuple() = default;
  ShapeTuple(std::vector<int64_t> shape) : dims_(std::move(shape)) {}  // NOLINT: implicit as in TVM
  ShapeTuple(std::initializer_list<int64_t> shape) : dims_(shape) {}
  template <typename Iterator>
  ShapeTuple(Iterator begin, Iterator end) : dims_(begin, end) {}

  const int64_t* data() const { return dims_.data(); }
  size_t size() const { return dims_.size(); }
  size_t ndim() const { return dims_.size(); }
  bool empty() const { return dims_.empty(); }
  int64_t operator[](size_t i) const { return dims_[i]; }
  int64_t at(size_t i) const {
    if (i >= dims_.size())
      throw ::graphrt::Error(::graphrt::ErrorKind::kOutOfRange,
                             "ShapeTuple index " + std::to_string(i) + " out of range (size " +
                             std::to_string(dims_.size()) + ")");
    return dims_[i];
  }
  int64_t front() const { return at(0); }
  int64_t back() const { return at(dims_.size() - 1); }
  std::vector<int64_t>::const_iterator begin() const { return dims_.begin(); }
  std::vector<int64_t>::const_iterator end() const { return dims_.end(); }
  bool operator==(const ShapeTuple& other) const { return dims_ == other.dims_; }
  bool operator!=(const ShapeTuple& other) const { return dims_ != other.dims_; }

 private:
  std::vector<int64_t> dims_;
};

inline std::ostream& operator<<(std::ostream& os, const ShapeTuple& shape) {
  os << '[';
  for (size_t i = 0; i < shape.size(); ++i) os << (i ? ", " : "") << shape[i];
  return os << ']';
}

}  // namespace runtime
}  // namespace tvm

#endif  // TVM_RUNTIME_CONTAINER_SHAPE_TUPLE_H_
