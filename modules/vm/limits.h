// Process-wide resource limits of the VM. Programs are untrusted input (the
// fuzzer feeds arbitrary bytes), so every allocation a program can request is
// capped; hosts may lower the caps (the fuzz target does).
#pragma once

#include <cstdint>

namespace graphrt {
namespace vm {

struct Limits {
  int64_t max_buffer_bytes = int64_t{1} << 30;
  int64_t max_list_size = int64_t{1} << 24;
  int64_t max_tensor_bytes = int64_t{1} << 30;
  int max_stack_depth = 1024;
  uint16_t max_registers_per_bank = 4096;
};

// Mutable for hosts and tests; read by allocation sites.
Limits& limits();

}  // namespace vm
}  // namespace graphrt
