#include "backends/vm/host/memory_charge.h"

#include <atomic>
#include <string>

#include "graphrt/error.h"
#include "backends/vm/host/limits.h"

namespace graphrt {
namespace vm {

void MemoryCharge::charge(int64_t bytes, const char* what) {
  if (bytes <= 0) return;
  if (!account_) account_ = current_limits();
  std::atomic<int64_t>& live_bytes = account_->live_bytes;
  const int64_t limit = account_->max_total_bytes;
  int64_t now = live_bytes.load(std::memory_order_relaxed);
  do {
    if (bytes > limit || now > limit - bytes)
      throw Error(ErrorKind::kResourceExhausted,
                  std::string(what) + " of " + std::to_string(bytes) + " bytes would take the VM's memory past its " +
                      std::to_string(limit) + "-byte limit (" + std::to_string(now) +
                      " bytes held; raise it with GRAPHRT_VM_MEMORY_LIMIT or graphrt.vm.set_memory_limit)")
          .with("limit", std::to_string(limit));
  } while (!live_bytes.compare_exchange_weak(now, now + bytes, std::memory_order_relaxed));
  bytes_ += bytes;
}

MemoryCharge::~MemoryCharge() {
  if (bytes_) account_->live_bytes.fetch_sub(bytes_, std::memory_order_relaxed);
}

int64_t vm_live_bytes() { return limits().live_bytes.load(std::memory_order_relaxed); }

}  // namespace vm
}  // namespace graphrt
