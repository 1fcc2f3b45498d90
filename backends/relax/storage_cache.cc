#include "backends/relax/storage_cache.h"

#include <algorithm>
#include <atomic>

#if defined(__SANITIZE_THREAD__)
#define GRAPHRT_RELAX_TSAN 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define GRAPHRT_RELAX_TSAN 1
#endif
#endif

namespace graphrt {
namespace relax {

namespace {
// ThreadSanitizer does not model the fence idle() ends with (and refuses to
// compile it): there no storage is kept, and every one comes from the pool,
// whose lock orders one thread's last use of a block before another's next.
#ifdef GRAPHRT_RELAX_TSAN
constexpr bool kKeepStorages = false;
#else
constexpr bool kKeepStorages = true;
#endif
}  // namespace

bool StorageObj::idle() const {
  if (!kKeepStorages) return false;
  if (ref_count() != 1 || bytes.use_count() != 1) return false;
  for (const NDArray& v : views)
    if (v.use_count() != 1) return false;
  // Every array over the memory (the bytes, kept views, views made elsewhere
  // such as reshape's) holds the block's Storage.
  const auto holders = NDArrayNode::from_handle(bytes.handle())->storage.use_count();
  if (holders != static_cast<long>(1 + views.size())) return false;
  // What another thread did with the memory before dropping the last view
  // happens before what the caller does with it next.
#ifndef GRAPHRT_RELAX_TSAN
  std::atomic_thread_fence(std::memory_order_acquire);
#endif
  return true;
}

NDArray StorageObj::view(uint64_t offset, const std::vector<int64_t>& dims, DLDataType dtype) {
  const char* data = static_cast<const char*>(bytes->data) + bytes->byte_offset + offset;
  for (const NDArray& v : views) {
    if (v.use_count() == 1 && v->data == data && v.dtype() == dtype && v.shape() == dims) return v;
  }
  NDArray v = bytes.view(dims, dtype, offset);
  if (views.size() < kMaxKeptViews) views.push_back(v);
  return v;
}

Ref<StorageObj> StorageCache::storage(int64_t nbytes) {
  if (!pool_->pooled() || !kKeepStorages) return make_ref<StorageObj>(pool_->allocate(nbytes));
  std::vector<Ref<StorageObj>>& kept = kept_[nbytes];
  for (const Ref<StorageObj>& s : kept)
    if (s->idle()) return s;
  if (kept.size() >= kMaxKeptPerSize) kept.erase(kept.begin());
  kept.push_back(make_ref<StorageObj>(allocate(nbytes)));
  return kept.back();
}

NDArray StorageCache::allocate(int64_t nbytes) {
  try {
    return pool_->allocate(nbytes);
  } catch (const Error& e) {
    if (e.kind() != ErrorKind::kResourceExhausted) throw;
  }
  // At the pool's limit: the idle storages kept for other sizes give their memory back first.
  for (auto& kv : kept_) {
    auto& list = kv.second;
    list.erase(std::remove_if(list.begin(), list.end(), [](const Ref<StorageObj>& s) { return s->idle(); }), list.end());
  }
  return pool_->allocate(nbytes);
}

}  // namespace relax
}  // namespace graphrt
