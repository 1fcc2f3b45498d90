#include "memory/workspace_pool.h"

#include <cstdlib>

#include "graphrt/error.h"

namespace graphrt {

namespace {
constexpr size_t kPageSize = 4096;
constexpr size_t kAlignment = 64;
}  // namespace

WorkspacePool::~WorkspacePool() {
  for (Block& b : free_) std::free(b.ptr);
  for (Block& b : in_use_) std::free(b.ptr);
}

void* WorkspacePool::alloc(size_t nbytes) {
  size_t size = (nbytes + kPageSize - 1) / kPageSize * kPageSize;
  if (size == 0) size = kPageSize;
  // Best fit among cached blocks; the list is short (nesting depth of kernels).
  size_t best = free_.size();
  for (size_t i = 0; i < free_.size(); ++i) {
    if (free_[i].size >= size && (best == free_.size() || free_[i].size < free_[best].size)) best = i;
  }
  Block block{nullptr, size};
  if (best != free_.size()) {
    block = free_[best];
    free_.erase(free_.begin() + static_cast<std::ptrdiff_t>(best));
  } else if (posix_memalign(&block.ptr, kAlignment, size) != 0) {
    return nullptr;
  }
  in_use_.push_back(block);
  return block.ptr;
}

void WorkspacePool::free(void* ptr) {
  // Frees come in roughly reverse order, so search from the back.
  for (size_t i = in_use_.size(); i-- > 0;) {
    if (in_use_[i].ptr == ptr) {
      free_.push_back(in_use_[i]);
      in_use_.erase(in_use_.begin() + static_cast<std::ptrdiff_t>(i));
      return;
    }
  }
  throw Error("TVMBackendFreeWorkspace: pointer was not allocated by this thread's workspace pool");
}

WorkspacePool& cpu_workspace_pool() {
  thread_local WorkspacePool pool;
  return pool;
}

}  // namespace graphrt
