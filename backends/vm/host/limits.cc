#include "backends/vm/host/limits.h"

#include <cstdlib>

#include "graphrt/error.h"

namespace graphrt {
namespace vm {

namespace {
// The set a LimitsScope made current on this thread; null outside any scope.
thread_local const std::shared_ptr<Limits>* t_current = nullptr;
}  // namespace

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

std::shared_ptr<Limits> Limits::from_environment() {
  auto created = std::make_shared<Limits>();
  if (const char* env = std::getenv("GRAPHRT_VM_BUDGET")) {
    try {
      created->instruction_budget = parse_budget(env, "GRAPHRT_VM_BUDGET");
    } catch (const Error&) {
    }
  }
  if (const char* env = std::getenv("GRAPHRT_VM_MEMORY_LIMIT")) {
    try {
      created->max_total_bytes = parse_memory_limit(env, "GRAPHRT_VM_MEMORY_LIMIT");
    } catch (const Error&) {
    }
  }
  return created;
}

const std::shared_ptr<Limits>& default_limits() {
  // Never destroyed: objects charged to it may die in static destructors.
  static const auto* instance = new std::shared_ptr<Limits>(Limits::from_environment());
  return *instance;
}

const std::shared_ptr<Limits>& current_limits() { return t_current ? *t_current : default_limits(); }

Limits& limits() { return *current_limits(); }

LimitsScope::LimitsScope(const std::shared_ptr<Limits>& limits) : previous_(t_current) { t_current = &limits; }

LimitsScope::~LimitsScope() { t_current = previous_; }

}  // namespace vm
}  // namespace graphrt
