// tvm::ffi::Optional<T>: what Module::GetFunction returns (std::optional's interface).
#ifndef TVM_FFI_OPTIONAL_H_
#define TVM_FFI_OPTIONAL_H_

#include <tvm/ffi/error.h>

#include <cstddef>
#include <optional>
#include <utility>

namespace tvm {
namespace ffi {

template <typename T>
class Optional {
 public:
  Optional() = default;
  Optional(std::nullopt_t) {}  // NOLINT: implicit, as TVM's
  Optional(std::nullptr_t) {}  // NOLINT: implicit, as TVM's
  Optional(T value) : value_(std::move(value)) {}  // NOLINT: implicit, as TVM's
  Optional(std::optional<T> value) : value_(std::move(value)) {}  // NOLINT: implicit

  bool has_value() const { return value_.has_value(); }
  bool defined() const { return value_.has_value(); }
  explicit operator bool() const { return value_.has_value(); }
  // The value; an empty Optional is a RuntimeError (what an absent function looks like:
  // check has_value() first).
  const T& value() const& { return checked(); }
  T value() && { return std::move(const_cast<Optional*>(this)->checked_mutable()); }
  const T& operator*() const& { return checked(); }
  const T* operator->() const { return &checked(); }
  T value_or(T fallback) const { return value_ ? *value_ : std::move(fallback); }
  bool operator==(std::nullptr_t) const { return !value_; }
  bool operator!=(std::nullptr_t) const { return value_.has_value(); }
  bool operator==(std::nullopt_t) const { return !value_; }
  bool operator!=(std::nullopt_t) const { return value_.has_value(); }

 private:
  const T& checked() const {
    if (!value_) TVM_FFI_THROW(RuntimeError) << "value() of an empty Optional (nothing was found: check has_value() first)";
    return *value_;
  }
  T& checked_mutable() {
    checked();
    return *value_;
  }
  std::optional<T> value_;
};

}  // namespace ffi
}  // namespace tvm

#endif  // TVM_FFI_OPTIONAL_H_
