// The VM's total memory limit. Each buffer and tensor a program makes is
// under a per-object cap, but a short program can make many of them: every
// object therefore charges its bytes to the account of the limits in force
// when it is made (limits.h: its runtime's, or the VM's defaults), refused
// past that set's max_total_bytes, and hands them back when it dies.
#pragma once

#include <cstdint>
#include <memory>

#include "backends/vm/host/limits.h"

namespace graphrt {
namespace vm {

class MemoryCharge {
 public:
  MemoryCharge() = default;
  // Charges `bytes`, or throws a resource-exhausted Error naming `what` and
  // the limit when the account would pass it (nothing is charged then).
  MemoryCharge(int64_t bytes, const char* what) { charge(bytes, what); }
  ~MemoryCharge();
  MemoryCharge(const MemoryCharge&) = delete;
  MemoryCharge& operator=(const MemoryCharge&) = delete;

  // Adds `bytes` to this charge (same refusal as the constructor).
  void charge(int64_t bytes, const char* what);

 private:
  int64_t bytes_ = 0;
  std::shared_ptr<Limits> account_;  // set at the first charge; kept alive for the refund
};

// Bytes the VM's objects charged to the limits in force hold now.
int64_t vm_live_bytes();

}  // namespace vm
}  // namespace graphrt
