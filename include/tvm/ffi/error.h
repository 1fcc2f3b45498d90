// tvm::ffi::Error: what TVM v0.22+ C++ code catches, over graphrt::Error.
//
// A tvm::ffi::Error is a graphrt::Error (catching either catches it); kind() gives TVM's
// kind name ("ValueError", "TypeError", ...), the graphrt kind stays reachable through the
// base class. Failures inside graphrt reach tvm::ffi callers as tvm::ffi::Error.
#ifndef TVM_FFI_ERROR_H_
#define TVM_FFI_ERROR_H_

#include <sstream>
#include <string>
#include <utility>

#include "graphrt/error.h"

namespace tvm {
namespace ffi {

namespace details {
// TVM's kind names for graphrt's kinds, and back (an unknown name is a runtime failure).
struct ErrorKindNames {
  ::graphrt::ErrorKind kind;
  const char* name;
};
inline const ErrorKindNames* error_kind_names() {
  using K = ::graphrt::ErrorKind;
  static const ErrorKindNames names[] = {
      {K::kInvalidArgument, "ValueError"},   {K::kNotFound, "KeyError"},
      {K::kOutOfRange, "IndexError"},        {K::kUnsupported, "NotImplementedError"},
      {K::kResourceExhausted, "MemoryError"}, {K::kDevice, "RuntimeError"},
      {K::kInterrupted, "RuntimeError"},     {K::kTypeMismatch, "TypeError"},
      {K::kFailedPrecondition, "RuntimeError"}, {K::kInternal, "InternalError"},
      {K::kInternal, nullptr}};
  return names;
}
inline const char* tvm_kind_name(::graphrt::ErrorKind kind) {
  for (const ErrorKindNames* n = error_kind_names(); n->name; ++n)
    if (n->kind == kind) return n->name;
  return "RuntimeError";
}
inline ::graphrt::ErrorKind graphrt_kind_of(const std::string& name) {
  for (const ErrorKindNames* n = error_kind_names(); n->name; ++n)
    if (name == n->name) return n->kind;
  if (name == "AttributeError") return ::graphrt::ErrorKind::kNotFound;
  return name == "RuntimeError" ? ::graphrt::ErrorKind::kFailedPrecondition : ::graphrt::ErrorKind::kInternal;
}
}  // namespace details

class Error : public ::graphrt::Error {
 public:
  // TVM's constructor: a kind name, the message and a backtrace (graphrt keeps none).
  Error(std::string kind, std::string message, std::string backtrace = "")
      : ::graphrt::Error(details::graphrt_kind_of(kind), std::move(message)), kind_(std::move(kind)) {
    (void)backtrace;
  }
  // A graphrt failure as TVM code sees it: the kind mapped, the context kept in the message.
  explicit Error(const ::graphrt::Error& e)
      : ::graphrt::Error(e.kind(), e.what()), kind_(details::tvm_kind_name(e.kind())) {}

  std::string kind() const { return kind_; }
  std::string message() const { return ::graphrt::Error::message(); }
  std::string backtrace() const { return ""; }
  std::string TracebackMostRecentCallLast() const { return ""; }

 private:
  std::string kind_;
};

namespace details {
// Collects TVM_FFI_THROW's message; throws from its destructor at the end of the statement.
class ErrorBuilder {
 public:
  explicit ErrorBuilder(const char* kind) : kind_(kind) {}
  ErrorBuilder(const ErrorBuilder&) = delete;
  ErrorBuilder& operator=(const ErrorBuilder&) = delete;
  ~ErrorBuilder() noexcept(false) { throw Error(kind_, stream_.str()); }
  std::ostream& stream() { return stream_; }

 private:
  const char* kind_;
  std::ostringstream stream_;
};

// Runs `body`, turning a graphrt failure into a tvm::ffi::Error (one already is stays as it is).
template <typename Body>
auto translate_errors(Body&& body) -> decltype(body()) {
  try {
    return body();
  } catch (const Error&) {
    throw;
  } catch (const ::graphrt::Error& e) {
    throw Error(e);
  }
}
}  // namespace details

}  // namespace ffi
}  // namespace tvm

// TVM_FFI_THROW(ValueError) << "message";
#define TVM_FFI_THROW(ErrorKind) ::tvm::ffi::details::ErrorBuilder(#ErrorKind).stream()
#define TVM_FFI_ICHECK(condition) \
  if (!(condition)) TVM_FFI_THROW(InternalError) << __FILE__ << ":" << __LINE__ << ": Check failed: " #condition " "
#define TVM_FFI_CHECK(condition, ErrorKind) \
  if (!(condition)) TVM_FFI_THROW(ErrorKind) << "Check failed: " #condition " "

#endif  // TVM_FFI_ERROR_H_
