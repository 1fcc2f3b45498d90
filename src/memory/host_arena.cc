#include "memory/host_arena.h"

#include <string>

#include "graphrt/error.h"
#include "host_pages.h"

namespace graphrt {

HostArena::HostArena(size_t nbytes) : size_(nbytes) {
  void* base = map_host_pages(nbytes, /*populate=*/true);
  try {
    storage_ = std::make_shared<Storage>(base, [nbytes](void* q) { unmap_host_pages(q, nbytes); });
  } catch (...) {
    unmap_host_pages(base, nbytes);
    throw;
  }
}

void* HostArena::take(size_t nbytes) {
  size_t slot = slot_bytes(nbytes);
  if (slot > size_ - used_) throw Error(ErrorKind::kInternal,
                                        "internal: host arena of " + std::to_string(size_) + " bytes is full");
  void* p = static_cast<char*>(storage_->data()) + used_;
  used_ += slot;
  return p;
}

}  // namespace graphrt
