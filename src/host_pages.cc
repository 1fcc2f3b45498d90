#include "host_pages.h"

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

}  // namespace

size_t host_page_size() {
  static const size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
  return page;
}

void* map_host_pages(size_t nbytes, bool populate) {
  size_t len = round_up(nbytes == 0 ? 1 : nbytes, host_page_size());
  // Over-reserved so that a 2 MiB-aligned start exists; the ends go back at once.
  size_t reserve = len >= kHugePage ? len + kHugePage : len;
  void* raw = mmap(nullptr, reserve, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (raw == MAP_FAILED) throw Error(ErrorKind::kResourceExhausted,
                                     "out of host memory allocating " + std::to_string(nbytes) + " bytes");
  char* base = static_cast<char*>(raw);
  char* start = base;
  if (reserve > len) {
    start = reinterpret_cast<char*>(round_up(reinterpret_cast<uintptr_t>(base), kHugePage));
    if (start > base) munmap(base, static_cast<size_t>(start - base));
    char* end = start + len;
    if (base + reserve > end) munmap(end, static_cast<size_t>(base + reserve - end));
    madvise(start, len / kHugePage * kHugePage, MADV_HUGEPAGE);  // advice: refused where THP is off
  }
  if (populate) madvise(start, len, MADV_POPULATE_WRITE);
  return start;
}

void unmap_host_pages(void* data, size_t nbytes) {
  munmap(data, round_up(nbytes == 0 ? 1 : nbytes, host_page_size()));
}

}  // namespace graphrt
