#include "elf_memory.h"

#include <elf.h>
#include <sys/mman.h>

#include <algorithm>
#include <cerrno>
#include <utility>

#include "graphrt/error.h"

namespace graphrt {
namespace elf {

MappedImage::MappedImage(uint64_t vaddr_min, uint64_t vaddr_max)
    : size_(static_cast<size_t>(vaddr_max - vaddr_min)), vaddr_min_(vaddr_min) {
  // One mapping for the whole range: committing per segment could wipe a page
  // two segments share (the IREE loader's known hazard).
  void* p = mmap(nullptr, size_, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (p == MAP_FAILED) {
    throw Error(ErrorKind::kResourceExhausted,
                "cannot reserve address range for ELF image: " + std::string(std::strerror(errno)))
        .with("size", std::to_string(size_));
  }
  base_ = static_cast<uint8_t*>(p);
}

MappedImage::~MappedImage() { release(); }

MappedImage::MappedImage(MappedImage&& other) noexcept { *this = std::move(other); }

MappedImage& MappedImage::operator=(MappedImage&& other) noexcept {
  if (this != &other) {
    release();
    base_ = std::exchange(other.base_, nullptr);
    size_ = std::exchange(other.size_, 0);
    vaddr_min_ = other.vaddr_min_;
    page_prot_ = std::move(other.page_prot_);
  }
  return *this;
}

void MappedImage::release() {
  if (base_ != nullptr) munmap(base_, size_);
  base_ = nullptr;
  size_ = 0;
}

bool MappedImage::contains(uint64_t vaddr, uint64_t length) const {
  if (vaddr < vaddr_min_) return false;
  const uint64_t off = vaddr - vaddr_min_;
  return off <= size_ && length <= size_ - off;
}

bool MappedImage::contains_host(const void* p, size_t length) const {
  const uint64_t addr = reinterpret_cast<uint64_t>(p);
  const uint64_t start = reinterpret_cast<uint64_t>(base_);
  return addr >= start && addr - start <= size_ && length <= size_ - (addr - start);
}

bool MappedImage::pages_readable(uint64_t offset, uint64_t length) const {
  if (page_prot_.empty() || length == 0) return true;  // before the plan: only copy_segments runs
  const uint64_t page = host_page_size();
  for (uint64_t i = offset / page; i <= (offset + length - 1) / page; ++i) {
    if (i >= page_prot_.size() || (page_prot_[i] & PROT_READ) == 0) return false;
  }
  return true;
}

uint8_t* MappedImage::at(uint64_t vaddr, uint64_t length, const char* what) const {
  // In range is not enough: gaps between segments end up PROT_NONE, so a
  // table placed there would fault on a later lookup.
  if (!contains(vaddr, length) || !pages_readable(vaddr - vaddr_min_, length)) {
    throw Error(std::string("ELF ") + what + " lies outside the loaded segments")
        .with("vaddr", hex(vaddr))
        .with("size", std::to_string(length));
  }
  return base_ + (vaddr - vaddr_min_);
}

void MappedImage::copy_segments(const uint8_t* file, const ParsedElf& parsed) {
  for (const Segment& s : parsed.loads) {
    if (s.filesz != 0) std::memcpy(at(s.vaddr, s.filesz, "PT_LOAD segment"), file + s.offset, s.filesz);
  }
}

bool MappedImage::can_map(const ParsedElf& parsed, size_t index) const {
  const uint64_t page = host_page_size();
  const Segment& s = parsed.loads[index];
  if (s.filesz == 0 || (s.offset & (page - 1)) != (s.vaddr & (page - 1))) return false;
  // Loads are sorted and disjoint; only the neighbours can share a page.
  const uint64_t first_page = s.vaddr & ~(page - 1);
  const uint64_t end_page = (s.vaddr + s.memsz + page - 1) & ~(page - 1);
  if (index > 0) {
    const Segment& prev = parsed.loads[index - 1];
    if (prev.vaddr + prev.memsz > first_page) return false;
  }
  if (index + 1 < parsed.loads.size() && (parsed.loads[index + 1].vaddr & ~(page - 1)) < end_page) return false;
  return true;
}

void MappedImage::map_segment(int fd, const Segment& s) {
  const uint64_t page = host_page_size();
  const uint64_t start = s.vaddr & ~(page - 1);
  const uint64_t file_end = (s.vaddr + s.filesz + page - 1) & ~(page - 1);
  uint8_t* host = at(start, file_end - start, "PT_LOAD segment");
  void* p = mmap(host, file_end - start, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_FIXED, fd,
                 static_cast<off_t>(s.offset & ~(page - 1)));
  if (p == MAP_FAILED)
    throw Error(ErrorKind::kResourceExhausted,
                "cannot map PT_LOAD segment: " + std::string(std::strerror(errno))).with("vaddr", hex(s.vaddr));
  // Bytes of the first and last page outside [vaddr, vaddr+filesz) come from
  // unrelated parts of the file; zero them so the result equals a copy.
  std::memset(host, 0, s.vaddr - start);
  std::memset(host + (s.vaddr - start) + s.filesz, 0, file_end - (s.vaddr + s.filesz));
}

void MappedImage::map_segments(int fd, const uint8_t* file, const ParsedElf& parsed) {
  for (size_t i = 0; i < parsed.loads.size(); ++i) {
    const Segment& s = parsed.loads[i];
    if (can_map(parsed, i)) {
      map_segment(fd, s);
    } else if (s.filesz != 0) {
      std::memcpy(at(s.vaddr, s.filesz, "PT_LOAD segment"), file + s.offset, s.filesz);
    }
  }
}

namespace {
int segment_prot(uint32_t flags, bool allow_exec) {
  int prot = 0;
  if (flags & PF_R) prot |= PROT_READ;
  if (flags & PF_W) prot |= PROT_READ | PROT_WRITE;  // W implies R, as on every MMU we target
  if ((flags & PF_X) && allow_exec) prot |= PROT_READ | PROT_EXEC;
  if ((flags & PF_X) && !allow_exec) prot |= PROT_READ;  // relocate-only: code stays inspectable
  return prot;
}
}  // namespace

void MappedImage::plan_protection(const ParsedElf& parsed, bool allow_exec) {
  const uint64_t page = host_page_size();
  page_prot_.assign(size_ / page, PROT_NONE);
  for (const Segment& s : parsed.loads) {
    const uint64_t first = ((s.vaddr & ~(page - 1)) - vaddr_min_) / page;
    const uint64_t last = ((s.vaddr + s.memsz + page - 1) & ~(page - 1)) - vaddr_min_;
    for (uint64_t p = first; p < last / page; ++p) page_prot_[p] |= segment_prot(s.flags, allow_exec);
  }
  // Two segments sharing a host page can still produce a W+X page.
  for (size_t p = 0; p < page_prot_.size(); ++p) {
    if ((page_prot_[p] & PROT_WRITE) && (page_prot_[p] & PROT_EXEC))
      throw Error("writable and executable page (W^X) from segments sharing a page").with("vaddr", hex(vaddr_min_ + p * page));
  }
}

void MappedImage::apply_protection(const ParsedElf& parsed) {
  const uint64_t page = host_page_size();
  for (const Segment& r : parsed.relro) {
    // Like glibc: start rounded down, end rounded down, so a partial last
    // page that also holds .data stays writable. RELRO only takes write
    // access away; it never changes what is executable.
    uint64_t end = 0;
    if (__builtin_add_overflow(r.vaddr, r.memsz, &end)) throw Error("PT_GNU_RELRO overflows").with("vaddr", hex(r.vaddr));
    const uint64_t start = r.vaddr & ~(page - 1);
    end &= ~(page - 1);
    if (end <= start) continue;
    at(start, end - start, "PT_GNU_RELRO range");  // bounds check only
    for (uint64_t a = start; a < end; a += page) page_prot_[(a - vaddr_min_) / page] &= ~PROT_WRITE;
  }
  size_t p = 0;
  while (p < page_prot_.size()) {  // one mprotect per run of equal pages
    size_t q = p + 1;
    while (q < page_prot_.size() && page_prot_[q] == page_prot_[p]) ++q;
    if (mprotect(base_ + p * page, (q - p) * page, page_prot_[p]) != 0)
      throw Error(ErrorKind::kInternal,
                  "mprotect failed: " + std::string(std::strerror(errno))).with("vaddr", hex(vaddr_min_ + p * page));
    p = q;
  }
  if (std::any_of(page_prot_.begin(), page_prot_.end(), [](int prot) { return (prot & PROT_EXEC) != 0; }))
    __builtin___clear_cache(reinterpret_cast<char*>(base_), reinterpret_cast<char*>(base_ + size_));
}

bool MappedImage::is_readable(const void* p, size_t length) const {
  if (!contains_host(p, length) || length == 0 || page_prot_.empty()) return false;
  return pages_readable(static_cast<uint64_t>(static_cast<const uint8_t*>(p) - base_), length);
}

size_t MappedImage::readable_bytes_from(const void* p, bool writable) const {
  if (!contains_host(p, 1) || page_prot_.empty()) return 0;
  const uint64_t offset = static_cast<uint64_t>(static_cast<const uint8_t*>(p) - base_);
  const uint64_t page = host_page_size();
  const int need = writable ? PROT_READ | PROT_WRITE : PROT_READ;
  uint64_t end_page = offset / page;
  while (end_page < page_prot_.size() && (page_prot_[end_page] & need) == need) ++end_page;
  const uint64_t end = std::min<uint64_t>(end_page * page, size_);
  return end > offset ? static_cast<size_t>(end - offset) : 0;
}

std::vector<PageRun> MappedImage::page_runs() const {
  const uint64_t page = host_page_size();
  std::vector<PageRun> runs;
  for (size_t p = 0; p < page_prot_.size();) {
    size_t q = p + 1;
    while (q < page_prot_.size() && page_prot_[q] == page_prot_[p]) ++q;
    const uint64_t end = std::min<uint64_t>(q * page, size_);
    if (end > p * page) runs.push_back(PageRun{base_ + p * page, static_cast<size_t>(end - p * page), page_prot_[p]});
    p = q;
  }
  return runs;
}

bool MappedImage::is_executable(uint64_t host_address) const {
  const uint64_t start = reinterpret_cast<uint64_t>(base_);
  if (host_address < start || host_address - start >= size_) return false;
  const size_t page = (host_address - start) / host_page_size();
  return page < page_prot_.size() && (page_prot_[page] & PROT_EXEC) != 0;
}

}  // namespace elf
}  // namespace graphrt
