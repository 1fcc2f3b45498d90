// graphrt::Error — the one error type of the runtime.
//
// Every fallible operation in graphrt throws (inside C++) or returns (at the C
// ABI) this error. It carries a message plus ordered context pairs such as
// file, tkey, symbol, node or offset, so that a user reading one line knows
// which input is at fault.
#pragma once

#include "graphrt/export.h"

#include <cerrno>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#pragma GCC visibility push(default)  // exported: see graphrt/export.h
namespace graphrt {

// What kind of failure an Error is: kept across layers so that the C API can
// return it as a code, Python can raise the matching built-in exception and a
// server can answer with the matching status. The values are part of the C
// ABI (graphrt_* functions return the negated value); -1 stays TVM's generic
// failure, so the kinds start at 2.
enum class ErrorKind : int {
  kInvalidArgument = 2,     // malformed input: a corrupt file, a bad value, a wrong shape
  kNotFound = 3,            // a file, symbol, function, input or output that does not exist
  kOutOfRange = 4,          // an index past the end of what it indexes
  kUnsupported = 5,         // valid input that graphrt does not implement
  kResourceExhausted = 6,   // memory, budgets and limits
  kDevice = 7,              // a device or driver failure
  kInterrupted = 8,         // a run stopped on request
  kTypeMismatch = 9,        // a value of the wrong type (an argument, a handle)
  kFailedPrecondition = 10, // a call made in the wrong state
  kInternal = 11,           // a broken invariant of graphrt itself
};
// The kind's stable lower-case name ("not found"); "internal" for unknown values.
const char* error_kind_name(ErrorKind kind);

class Error : public std::runtime_error {
 public:
  // A plain message is an invalid-argument error: most of what the runtime
  // refuses is input it was handed.
  explicit Error(std::string message) : Error(ErrorKind::kInvalidArgument, std::move(message)) {}
  Error(ErrorKind kind, std::string message);

  ErrorKind kind() const { return kind_; }
  // The kind of a failed system call's errno: a missing path is "not found",
  // exhausted memory or descriptors "resource exhausted", the rest (0
  // included) the input's fault.
  static ErrorKind kind_of_errno(int err) {
    switch (err) {
      case ENOENT: case ENOTDIR: return ErrorKind::kNotFound;
      case ENOMEM: case EMFILE: case ENFILE: case ENOSPC: return ErrorKind::kResourceExhausted;
      default: return ErrorKind::kInvalidArgument;
    }
  }
  // Gives the error another kind: for helpers that build one context (a
  // reader's file and offset) for failures of several kinds.
  Error& with_kind(ErrorKind kind) {
    kind_ = kind;
    return *this;
  }

  // Adds a context pair ("file", "/x/deploy.so"); returns *this so that a
  // caller can rethrow with more context: `catch (Error& e) { throw e.with(...); }`.
  // The kind is kept. A key already present keeps its (inner) value and gains
  // the outer one after it: "file: lib.o (in model.tar)". The same value twice
  // is kept once.
  Error& with(const std::string& key, const std::string& value);

  const std::string& message() const { return message_; }
  // Every pair in the order added (innermost first); a repeated key appears
  // once per distinct value.
  const std::vector<std::pair<std::string, std::string>>& context() const { return context_; }
  // The innermost value for a context key, or "" when absent.
  std::string context_value(const std::string& key) const {
    for (const auto& pair : context_) {
      if (pair.first == key) return pair.second;
    }
    return "";
  }

  const char* what() const noexcept override { return formatted_.c_str(); }

 private:
  ErrorKind kind_ = ErrorKind::kInvalidArgument;
  std::string message_;
  std::vector<std::pair<std::string, std::string>> context_;
  std::string formatted_;
};

// Text that came from outside (a file, a request, a caller) as an error message may show it:
// single-quoted, each byte that is not printable ASCII (control bytes, DEL, bytes of 0x80 and
// above) and each backslash and quote as \xNN, and at most `max_bytes` of it, the rest counted
// ("'abc'... (800000 bytes)"). A hostile file can then neither drive the reader's terminal nor
// blow a one-line error up to megabytes. The one helper for this: every message embedding bytes
// it did not make quotes them through here.
GRAPHRT_HEADER_ONLY inline std::string quote_untrusted(const std::string& untrusted, size_t max_bytes = 160) {
  static const char kHex[] = "0123456789abcdef";
  const size_t shown = untrusted.size() < max_bytes ? untrusted.size() : max_bytes;
  std::string out = "'";
  for (size_t i = 0; i < shown; ++i) {
    const unsigned char c = static_cast<unsigned char>(untrusted[i]);
    if (c < 0x20 || c >= 0x7f || c == '\\' || c == '\'') {
      out += "\\x";
      out += kHex[c >> 4];
      out += kHex[c & 15];
    } else {
      out += static_cast<char>(c);
    }
  }
  out += "'";
  if (shown < untrusted.size()) out += "... (" + std::to_string(untrusted.size()) + " bytes)";
  return out;
}

// A name as a list or a context value shows it: as it is where it is printable ASCII of at most
// `max_bytes`, else quote_untrusted() (so the usual name reads as before, a hostile one cannot do harm).
GRAPHRT_HEADER_ONLY inline std::string shown_name(const std::string& name, size_t max_bytes = 160) {
  bool plain = name.size() <= max_bytes;
  for (size_t i = 0; i < name.size() && plain; ++i) {
    const unsigned char c = static_cast<unsigned char>(name[i]);
    plain = c >= 0x20 && c < 0x7f;
  }
  return plain ? name : quote_untrusted(name, max_bytes);
}

// Throws graphrt::Error when `condition` is false. The message is built only
// on failure.
#define GRAPHRT_CHECK(condition, message_expr)            \
  do {                                                    \
    if (!(condition)) throw ::graphrt::Error(message_expr); \
  } while (0)

// As GRAPHRT_CHECK, with a kind.
#define GRAPHRT_CHECK_KIND(condition, kind, message_expr)              \
  do {                                                                 \
    if (!(condition)) throw ::graphrt::Error((kind), (message_expr)); \
  } while (0)

}  // namespace graphrt
#pragma GCC visibility pop
