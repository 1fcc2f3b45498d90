// Per-thread pool of CPU workspace blocks (TVMBackendAllocWorkspace).
//
// Generated kernels allocate and free scratch memory on every call, in stack
// order; the pool keeps freed blocks so the hot path does no malloc.
#pragma once

#include <cstddef>
#include <vector>

namespace graphrt {

class WorkspacePool {
 public:
  WorkspacePool() = default;
  WorkspacePool(const WorkspacePool&) = delete;
  WorkspacePool& operator=(const WorkspacePool&) = delete;
  ~WorkspacePool();

  void* alloc(size_t nbytes);  // 64-byte aligned, rounded up to 4 KiB pages
  void free(void* ptr);  // throws for a pointer this pool did not hand out
  size_t cached_blocks() const { return free_.size(); }

 private:
  struct Block {
    void* ptr;
    size_t size;
  };
  std::vector<Block> free_;
  std::vector<Block> in_use_;
};

WorkspacePool& cpu_workspace_pool();  // the calling thread's pool

}  // namespace graphrt
