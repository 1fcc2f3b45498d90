// tvm::ffi::Array<T>: what a Relax function's tuple result reads as, and what a list
// argument is built from. A value here (copied on copy, as TVM's copy-on-write array
// appears to its users); crossing a call it is graphrt's TVM Array object.
#ifndef TVM_FFI_CONTAINER_ARRAY_H_
#define TVM_FFI_CONTAINER_ARRAY_H_

#include <tvm/ffi/any.h>
#include <tvm/ffi/error.h>

#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <optional>
#include <utility>
#include <vector>

namespace tvm {
namespace ffi {

template <typename T>
class Array {
 public:
  using value_type = T;
  using const_iterator = typename std::vector<T>::const_iterator;

  Array() = default;
  Array(std::initializer_list<T> items) : items_(items) {}
  Array(std::vector<T> items) : items_(std::move(items)) {}  // NOLINT: implicit, as TVM's
  template <typename Iterator>
  Array(Iterator begin, Iterator end) : items_(begin, end) {}
  Array(size_t n, const T& value) : items_(n, value) {}

  size_t size() const { return items_.size(); }
  bool empty() const { return items_.empty(); }
  const T& operator[](int64_t i) const { return at(i); }
  const T& at(int64_t i) const {
    if (i < 0 || static_cast<size_t>(i) >= items_.size())
      TVM_FFI_THROW(IndexError) << "Array index " << i << " out of range (size " << items_.size() << ")";
    return items_[static_cast<size_t>(i)];
  }
  const T& front() const { return at(0); }
  const T& back() const { return at(static_cast<int64_t>(items_.size()) - 1); }
  const_iterator begin() const { return items_.begin(); }
  const_iterator end() const { return items_.end(); }
  void push_back(T item) { items_.push_back(std::move(item)); }
  template <typename... Args>
  void emplace_back(Args&&... args) {
    items_.emplace_back(std::forward<Args>(args)...);
  }
  void pop_back() { items_.pop_back(); }
  void Set(int64_t i, T item) {
    at(i);
    items_[static_cast<size_t>(i)] = std::move(item);
  }
  void clear() { items_.clear(); }
  void insert(const_iterator position, T item) { items_.insert(position, std::move(item)); }
  void erase(const_iterator position) { items_.erase(position); }
  void resize(size_t n) { items_.resize(n); }
  void reserve(size_t n) { items_.reserve(n); }
  const std::vector<T>& items() const { return items_; }

 private:
  std::vector<T> items_;
};

template <typename T>
struct TypeTraits<Array<T>> {
  static void Into(const Array<T>& v, details::PackedValue* out) {
    std::vector<details::PackedValue> items;
    for (const T& item : v) {
      details::PackedValue p;
      TypeTraits<T>::Into(item, &p);
      items.push_back(std::move(p));
    }
    out->owned() = details::call_runtime_global("runtime.Array", items);
  }
  // nullopt unless the value is an array whose every item converts to T.
  static std::optional<Array<T>> TryFrom(const details::PackedValue& v) {
    if (v.object_type_key() != "Array") return std::nullopt;
    const int64_t n = details::call_runtime_global("runtime.ArraySize", {v}).as_int();
    std::vector<T> items;
    for (int64_t i = 0; i < n; ++i) {
      details::PackedValue item;
      item.owned() = details::call_runtime_global("runtime.ArrayGetItem", {v, details::int_value(i)});
      std::optional<T> converted = TypeTraits<T>::TryFrom(item);
      if (!converted) return std::nullopt;
      items.push_back(*std::move(converted));
    }
    return Array<T>(std::move(items));
  }
  static std::string TypeName() { return "Array<" + TypeTraits<T>::TypeName() + ">"; }
};

}  // namespace ffi
}  // namespace tvm

#endif  // TVM_FFI_CONTAINER_ARRAY_H_
