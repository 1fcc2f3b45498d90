// MappedImage: the host address range that holds a loaded image, addressed by
// the image's own virtual addresses. Every access from the loader goes through
// the bounds-checked helpers here, so a corrupt file can at worst produce an
// Error, never a stray write.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <vector>

#include "elf_parse.h"

namespace graphrt {
namespace elf {

class MappedImage {
 public:
  MappedImage() = default;
  // Maps [vaddr_min, vaddr_max) as fresh zeroed read-write pages.
  MappedImage(uint64_t vaddr_min, uint64_t vaddr_max);
  ~MappedImage();
  MappedImage(MappedImage&& other) noexcept;
  MappedImage& operator=(MappedImage&& other) noexcept;
  MappedImage(const MappedImage&) = delete;
  MappedImage& operator=(const MappedImage&) = delete;

  uint8_t* base() const { return base_; }
  size_t size() const { return size_; }
  // Host address = bias + image vaddr (mod 2^64, like the ELF spec's B).
  uint64_t bias() const { return reinterpret_cast<uint64_t>(base_) - vaddr_min_; }

  bool contains(uint64_t vaddr, uint64_t length) const;
  bool contains_host(const void* p, size_t length) const;
  // Host pointer for [vaddr, vaddr+length); throws naming `what` when outside.
  uint8_t* at(uint64_t vaddr, uint64_t length, const char* what) const;

  // Unaligned-safe typed access (relocation targets need not be aligned).
  template <typename T>
  T read(uint64_t vaddr, const char* what) const {
    T value;
    std::memcpy(&value, at(vaddr, sizeof(T), what), sizeof(T));
    return value;
  }
  template <typename T>
  void write(uint64_t vaddr, T value, const char* what) {
    std::memcpy(at(vaddr, sizeof(T), what), &value, sizeof(T));
  }

  // Copies every PT_LOAD's file bytes; the rest of memsz stays zero (.bss).
  void copy_segments(const uint8_t* file, const ParsedElf& parsed);
  // Same result, but a segment that has its pages to itself and a file offset
  // congruent to its vaddr is mapped copy-on-write from `fd` instead of
  // copied (what ld.so does; it makes loading a large image cheap).
  void map_segments(int fd, const uint8_t* file, const ParsedElf& parsed);

  // Per-page protection for the finished image, computed before relocating so
  // that a W^X conflict is refused early. Pages no segment covers get none.
  void plan_protection(const ParsedElf& parsed, bool allow_exec);
  // Applies the plan, then makes PT_GNU_RELRO read-only.
  void apply_protection(const ParsedElf& parsed);
  // True when every byte of [p, p+n) is mapped readable by the plan.
  bool is_readable(const void* p, size_t length) const;
  // Bytes from p to the end of the run of readable pages holding it (0 when
  // p is outside or unreadable).
  size_t readable_bytes_from(const void* p, bool writable = false) const;
  // True when [p, p+1) lies in a page the plan makes executable.
  bool is_executable(uint64_t host_address) const;
  // The planned protections as runs of equal pages, in address order.
  std::vector<PageRun> page_runs() const;

 private:
  void release();
  bool can_map(const ParsedElf& parsed, size_t index) const;
  void map_segment(int fd, const Segment& s);
  bool pages_readable(uint64_t offset, uint64_t length) const;

  uint8_t* base_ = nullptr;
  size_t size_ = 0;
  uint64_t vaddr_min_ = 0;
  std::vector<int> page_prot_;  // PROT_* per host page
};

}  // namespace elf
}  // namespace graphrt
