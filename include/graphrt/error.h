// graphrt::Error — the one error type of the runtime.
//
// Every fallible operation in graphrt throws (inside C++) or returns (at the C
// ABI) this error. It carries a message plus ordered context pairs such as
// file, tkey, symbol, node or offset, so that a user reading one line knows
// which input is at fault.
#pragma once

#include "graphrt/export.h"

#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace graphrt GRAPHRT_API {

class Error : public std::runtime_error {
 public:
  explicit Error(std::string message);

  // Adds a context pair ("file", "/x/deploy.so"); returns *this so that a
  // caller can rethrow with more context: `catch (Error& e) { throw e.with(...); }`.
  Error& with(const std::string& key, const std::string& value);

  const std::string& message() const { return message_; }
  const std::vector<std::pair<std::string, std::string>>& context() const { return context_; }
  // The value for a context key, or "" when absent.
  std::string context_value(const std::string& key) const;

  const char* what() const noexcept override { return formatted_.c_str(); }

 private:
  void reformat();

  std::string message_;
  std::vector<std::pair<std::string, std::string>> context_;
  std::string formatted_;
};

// Throws graphrt::Error when `condition` is false. The message is built only
// on failure.
#define GRAPHRT_CHECK(condition, message_expr)            \
  do {                                                    \
    if (!(condition)) throw ::graphrt::Error(message_expr); \
  } while (0)

}  // namespace graphrt
