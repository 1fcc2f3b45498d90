#include "modules/vm/limits.h"

#include <cstdlib>

#include "graphrt/error.h"

namespace graphrt {
namespace vm {

uint64_t parse_budget(const std::string& text, const std::string& what) {
  uint64_t value = 0;
  bool ok = !text.empty() && text.size() <= 19;
  for (char c : text) {
    ok = ok && c >= '0' && c <= '9';
    if (ok) value = value * 10 + static_cast<uint64_t>(c - '0');
  }
  if (!ok || value == 0) {
    throw Error(what + " must be a positive integer").with(what, text);
  }
  return value;
}

int64_t parse_memory_limit(const std::string& text, const std::string& what) {
  const uint64_t value = parse_budget(text, what);
  if (value > static_cast<uint64_t>(INT64_MAX)) throw Error(what + " is too large").with(what, text);
  return static_cast<int64_t>(value);
}

Limits& limits() {
  static Limits instance;
  // A malformed value is ignored here (no way to report it at start-up);
  // the apps validate the variable themselves before relying on it.
  static const bool from_environment = [] {
    if (const char* env = std::getenv("GRAPHRT_VM_BUDGET")) {
      try {
        instance.instruction_budget = parse_budget(env, "GRAPHRT_VM_BUDGET");
      } catch (const Error&) {
      }
    }
    if (const char* env = std::getenv("GRAPHRT_VM_MEMORY_LIMIT")) {
      try {
        instance.max_total_bytes = parse_memory_limit(env, "GRAPHRT_VM_MEMORY_LIMIT");
      } catch (const Error&) {
      }
    }
    return true;
  }();
  (void)from_environment;
  return instance;
}

}  // namespace vm
}  // namespace graphrt
