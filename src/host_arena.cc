#include "host_arena.h"

#include <sys/mman.h>
#include <unistd.h>

#include <cstdint>
#include <string>

#include "graphrt/error.h"

#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23  // Linux 5.14; older kernels refuse it and pages fault in on first write
#endif

namespace graphrt {

namespace {
constexpr size_t kHugePage = size_t{2} << 20;

size_t round_up(size_t n, size_t to) { return (n + to - 1) / to * to; }

[[noreturn]] void out_of_memory(size_t nbytes) {
  throw Error("out of host memory allocating " + std::to_string(nbytes) + " bytes for params");
}

// A private anonymous mapping of `len` bytes (a multiple of the page size)
// starting on a 2 MiB boundary when it holds a whole huge page.
char* map_arena(size_t len) {
  size_t reserve = len >= kHugePage ? len + kHugePage : len;
  void* raw = mmap(nullptr, reserve, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (raw == MAP_FAILED) out_of_memory(len);
  char* base = static_cast<char*>(raw);
  if (reserve == len) return base;
  // Over-reserved so that an aligned start exists; the ends go back at once.
  char* aligned = reinterpret_cast<char*>(round_up(reinterpret_cast<uintptr_t>(base), kHugePage));
  if (aligned > base) munmap(base, static_cast<size_t>(aligned - base));
  char* end = aligned + len;
  size_t after = static_cast<size_t>(base + reserve - end);
  if (after > 0) munmap(end, after);
  madvise(aligned, len / kHugePage * kHugePage, MADV_HUGEPAGE);  // advice: refused where THP is off
  return aligned;
}
}  // namespace

HostArena::HostArena(size_t nbytes) : size_(nbytes) {
  static const size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
  size_t len = round_up(nbytes, page);
  char* base = map_arena(len);
  try {
    storage_ = std::make_shared<Storage>(base, [len](void* q) { munmap(q, len); });
  } catch (...) {
    munmap(base, len);
    throw;
  }
  madvise(base, len, MADV_POPULATE_WRITE);
}

void* HostArena::take(size_t nbytes) {
  size_t slot = slot_bytes(nbytes);
  if (slot > size_ - used_) throw Error("internal: host arena of " + std::to_string(size_) + " bytes is full");
  void* p = static_cast<char*>(storage_->data()) + used_;
  used_ += slot;
  return p;
}

}  // namespace graphrt
