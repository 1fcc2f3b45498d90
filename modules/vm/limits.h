// Process-wide resource limits of the VM. Programs are untrusted input (the
// fuzzer feeds arbitrary bytes), so every allocation a program can request is
// capped; hosts may lower the caps (the fuzz target does).
#pragma once

#include <atomic>
#include <cstdint>
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
  // the default at start-up; hosts may set it here or per context/program.
  std::atomic<uint64_t> instruction_budget{kDefaultInstructionBudget};
  // Bytes all live VM buffers and tensors may hold together (memory_charge.h).
  // GRAPHRT_VM_MEMORY_LIMIT overrides the default at start-up.
  std::atomic<int64_t> max_total_bytes{kDefaultMaxTotalBytes};

  static constexpr uint64_t kDefaultInstructionBudget = 100000000;  // ~0.5 s of a tight loop
  static constexpr int64_t kDefaultMaxTotalBytes = int64_t{512} << 20;
  // Bulk work (fills, copies, allocations) costs one budget unit per this
  // many bytes, about the time of one branch: a loop of large fills ends as
  // soon as a loop of branches would.
  static constexpr int64_t kBytesPerBudgetUnit = 64;
};

// Mutable for hosts and tests; read by allocation sites and new stacks.
Limits& limits();

// Parses a budget ("1000000", "1e6" is refused); throws graphrt::Error naming
// `what` when `text` is not a positive decimal integer.
uint64_t parse_budget(const std::string& text, const std::string& what);
// Parses a memory limit in bytes (or any positive limit that fits in an
// int64), as parse_budget parses a budget.
int64_t parse_memory_limit(const std::string& text, const std::string& what);

}  // namespace vm
}  // namespace graphrt
