// tvm::ffi::String: TVM's immutable string, as a value over std::string.
#ifndef TVM_FFI_STRING_H_
#define TVM_FFI_STRING_H_

#include <cstddef>
#include <ostream>
#include <string>
#include <string_view>
#include <utility>

namespace tvm {
namespace ffi {

class String {
 public:
  String() = default;
  String(std::string s) : s_(std::move(s)) {}  // NOLINT: implicit, as TVM's
  String(const char* s) : s_(s ? s : "") {}    // NOLINT: implicit, as TVM's
  String(const char* s, size_t n) : s_(s, n) {}
  String(std::string_view s) : s_(s) {}        // NOLINT: implicit, as TVM's

  const char* c_str() const { return s_.c_str(); }
  const char* data() const { return s_.data(); }
  size_t size() const { return s_.size(); }
  size_t length() const { return s_.size(); }
  bool empty() const { return s_.empty(); }
  char at(size_t i) const { return s_.at(i); }
  int compare(const String& other) const { return s_.compare(other.s_); }
  operator std::string() const { return s_; }  // NOLINT: implicit, as TVM's
  operator std::string_view() const { return s_; }  // NOLINT: implicit, as TVM's
  const std::string& str() const { return s_; }

  friend bool operator==(const String& a, const String& b) { return a.s_ == b.s_; }
  friend bool operator!=(const String& a, const String& b) { return a.s_ != b.s_; }
  friend bool operator<(const String& a, const String& b) { return a.s_ < b.s_; }
  friend bool operator==(const String& a, const char* b) { return a.s_ == b; }
  friend bool operator==(const String& a, const std::string& b) { return a.s_ == b; }
  friend String operator+(const String& a, const String& b) { return String(a.s_ + b.s_); }
  friend std::ostream& operator<<(std::ostream& os, const String& s) { return os << s.s_; }

 private:
  std::string s_;
};

}  // namespace ffi
}  // namespace tvm

#endif  // TVM_FFI_STRING_H_
