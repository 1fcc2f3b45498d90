// Resource limits of the VM. Programs are untrusted input (the fuzzer feeds
// arbitrary bytes), so every allocation a program can request is capped;
// hosts may lower the caps (the fuzz target does).
//
// Whose limits: each graphrt Runtime's VM back end owns one set, held by its
// Instance (register.cc: a runtime's graphrt.vm.set_* functions change that
// runtime's set only). The VM's code reads the set in force on its thread,
// limits(): a Context makes its instance's set current while it runs code
// (invocations, `__init`, `__deinit`), and the back end's functions and
// record loader make their runtime's set current while they run. Code that
// runs the VM with no runtime at all (the standalone library, white-box tests,
// fuzzers) gets default_limits().
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>

namespace graphrt {
namespace vm {

// Every field is atomic: hosts may change a limit while other threads run
// programs (a program reads each limit when it needs it, never a torn value).
struct Limits {
  std::atomic<int64_t> max_buffer_bytes{int64_t{1} << 30};
  std::atomic<int64_t> max_list_size{int64_t{1} << 24};
  std::atomic<int64_t> max_tensor_bytes{int64_t{1} << 30};
  std::atomic<int> max_stack_depth{1024};
  std::atomic<uint16_t> max_registers_per_bank{4096};
  // Branches and calls one invocation may execute (every loop iteration and
  // every call counts one) before it stops with "VM instruction budget
  // exhausted". Applies to every entry point: host calls, graph-node calls,
  // `__init`/`__deinit`. The environment variable GRAPHRT_VM_BUDGET overrides
  // the default (from_environment); hosts may set it here or per
  // context/program.
  std::atomic<uint64_t> instruction_budget{kDefaultInstructionBudget};
  // Bytes all live VM buffers and tensors charged to this set may hold
  // together (memory_charge.h). GRAPHRT_VM_MEMORY_LIMIT overrides the default.
  std::atomic<int64_t> max_total_bytes{kDefaultMaxTotalBytes};
  // The account max_total_bytes caps: bytes held now by objects charged here.
  std::atomic<int64_t> live_bytes{0};

  static constexpr uint64_t kDefaultInstructionBudget = 100000000;  // ~0.5 s of a tight loop
  static constexpr int64_t kDefaultMaxTotalBytes = int64_t{512} << 20;
  // Bulk work (fills, copies, allocations) costs one budget unit per this
  // many bytes, about the time of one branch: a loop of large fills ends as
  // soon as a loop of branches would.
  static constexpr int64_t kBytesPerBudgetUnit = 64;

  // A fresh set: the defaults, with GRAPHRT_VM_BUDGET and
  // GRAPHRT_VM_MEMORY_LIMIT applied when they are valid (a malformed value
  // is ignored here, with no way to report it; the apps validate the
  // variables themselves before relying on them).
  static std::shared_ptr<Limits> from_environment();
};

// The set in force on this thread (see above). Mutable for hosts and tests;
// read by allocation sites and new stacks.
Limits& limits();
const std::shared_ptr<Limits>& current_limits();

// The set for code that runs the VM without a runtime, made from the
// environment on first use. Process-wide, as the standalone VM library has no
// other owner to give it; nothing reached through a graphrt Runtime uses it.
const std::shared_ptr<Limits>& default_limits();

// Makes `limits` the set in force on this thread until destroyed (scopes
// nest; the previous set comes back). `limits` must outlive the scope.
class LimitsScope {
 public:
  explicit LimitsScope(const std::shared_ptr<Limits>& limits);
  ~LimitsScope();
  LimitsScope(const LimitsScope&) = delete;
  LimitsScope& operator=(const LimitsScope&) = delete;

 private:
  const std::shared_ptr<Limits>* previous_;
};

// Parses a budget ("1000000", "1e6" is refused); throws graphrt::Error naming
// `what` when `text` is not a positive decimal integer.
uint64_t parse_budget(const std::string& text, const std::string& what);
// Parses a memory limit in bytes (or any positive limit that fits in an
// int64), as parse_budget parses a budget.
int64_t parse_memory_limit(const std::string& text, const std::string& what);

}  // namespace vm
}  // namespace graphrt
