// graphrt::vm::Interrupt — cancels running invocations from another thread.
//
// An invocation's Stack remembers the epoch it started in; request() moves
// the epoch on, so every invocation watching this Interrupt stops at its next
// branch or call with "VM invocation interrupted", while invocations started
// afterwards run normally. request() is lock-free and async-signal-safe (a
// SIGINT handler may call it).
#pragma once

#include <atomic>
#include <cstdint>

namespace graphrt {
namespace vm {

class Interrupt {
 public:
  void request() { epoch_.fetch_add(1, std::memory_order_relaxed); }
  const std::atomic<uint64_t>& epoch() const { return epoch_; }

 private:
  std::atomic<uint64_t> epoch_{0};
};

}  // namespace vm
}  // namespace graphrt
