// The VM's storages kept from call to call, in front of its pool: an
// alloc_storage is given an idle storage of the same size that this cache
// made before (one nobody outside the VM can reach, see StorageObj::idle),
// with the views alloc_tensor made of it, before the pool is asked. A warm
// call of a static model then makes no storage, view or block at all, where
// the pool alone would make the storage and view objects again each call.
#pragma once

#include <cstdint>
#include <memory>
#include <unordered_map>
#include <vector>

#include "backends/relax/storage_pool.h"
#include "backends/relax/value.h"

namespace graphrt {
namespace relax {

class StorageCache {
 public:
  explicit StorageCache(std::shared_ptr<StoragePool> pool) : pool_(std::move(pool)) {}
  // A storage of `nbytes` (kept and idle, else new from the pool; the naive
  // allocator keeps nothing, so its blocks are freed as soon as unused).
  Ref<StorageObj> storage(int64_t nbytes);
  StoragePool& pool() { return *pool_; }

  // Storages kept per size; beyond it the oldest busy one is let go (it goes
  // back to the pool when its last holder drops it).
  static constexpr size_t kMaxKeptPerSize = 8;

 private:
  // From the pool; at its limit, after letting the idle kept storages go.
  NDArray allocate(int64_t nbytes);

  std::shared_ptr<StoragePool> pool_;
  std::unordered_map<int64_t, std::vector<Ref<StorageObj>>> kept_;
};

}  // namespace relax
}  // namespace graphrt
