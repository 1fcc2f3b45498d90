#include "elf_parse.h"

#include <elf.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstring>

#include "graphrt/error.h"

namespace graphrt {
namespace elf {

std::string hex(uint64_t value) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "0x%llx", static_cast<unsigned long long>(value));
  return buf;
}

size_t host_page_size() {
  static const size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
  return page;
}

uint16_t host_machine() {
#if defined(__x86_64__)
  return EM_X86_64;
#elif defined(__aarch64__)
  return EM_AARCH64;
#else
  return EM_NONE;
#endif
}

namespace {

// a + b without wrapping; false on overflow.
bool add_overflows(uint64_t a, uint64_t b, uint64_t* out) { return __builtin_add_overflow(a, b, out); }

bool range_in(uint64_t offset, uint64_t length, uint64_t total) {
  uint64_t end;
  return !add_overflows(offset, length, &end) && end <= total;
}

Error header_error(const std::string& what, uint64_t offset) {
  Error e("invalid ELF: " + what);
  e.with("offset", hex(offset));
  return e;
}

void check_ident(const Elf64_Ehdr& eh) {
  if (std::memcmp(eh.e_ident, ELFMAG, SELFMAG) != 0) throw header_error("bad magic", 0);
  if (eh.e_ident[EI_CLASS] != ELFCLASS64) throw header_error("not ELF64", EI_CLASS);
  if (eh.e_ident[EI_DATA] != ELFDATA2LSB) throw header_error("not little-endian", EI_DATA);
  if (eh.e_ident[EI_VERSION] != EV_CURRENT || eh.e_version != EV_CURRENT)
    throw header_error("unknown ELF version", EI_VERSION);
}

void check_machine(const Elf64_Ehdr& eh, const LoadOptions& options) {
  if (eh.e_type != ET_DYN) throw header_error("not a shared object (e_type != ET_DYN)", offsetof(Elf64_Ehdr, e_type));
  const bool known = eh.e_machine == EM_X86_64 || eh.e_machine == EM_AARCH64;
  if (!known) throw header_error("unsupported machine " + std::to_string(eh.e_machine), offsetof(Elf64_Ehdr, e_machine)).with_kind(ErrorKind::kUnsupported);
  // Executing code built for another architecture is impossible; relocating it is not.
  if (options.execute && eh.e_machine != host_machine())
    throw header_error("machine " + std::to_string(eh.e_machine) + " cannot execute on this host (use execute=false)",
                       offsetof(Elf64_Ehdr, e_machine)).with_kind(ErrorKind::kUnsupported);
}

void check_phdr_table(const Elf64_Ehdr& eh, size_t size) {
  if (eh.e_ehsize != sizeof(Elf64_Ehdr)) throw header_error("bad e_ehsize", offsetof(Elf64_Ehdr, e_ehsize));
  if (eh.e_phentsize != sizeof(Elf64_Phdr)) throw header_error("bad e_phentsize", offsetof(Elf64_Ehdr, e_phentsize));
  if (eh.e_phnum == 0 || eh.e_phnum == PN_XNUM) throw header_error("bad e_phnum", offsetof(Elf64_Ehdr, e_phnum));
  if (eh.e_phoff == 0 || !range_in(eh.e_phoff, uint64_t(eh.e_phnum) * sizeof(Elf64_Phdr), size))
    throw header_error("program header table outside the file", offsetof(Elf64_Ehdr, e_phoff));
}

Segment to_segment(const Elf64_Phdr& ph) {
  Segment s;
  s.type = ph.p_type;
  s.flags = ph.p_flags;
  s.offset = ph.p_offset;
  s.vaddr = ph.p_vaddr;
  s.filesz = ph.p_filesz;
  s.memsz = ph.p_memsz;
  return s;
}

void check_load(const Elf64_Phdr& ph, size_t size, uint64_t phdr_offset) {
  if (!range_in(ph.p_offset, ph.p_filesz, size)) throw header_error("PT_LOAD file range outside the file", phdr_offset);
  if (ph.p_filesz > ph.p_memsz) throw header_error("PT_LOAD p_filesz > p_memsz", phdr_offset);
  uint64_t end;
  if (add_overflows(ph.p_vaddr, ph.p_memsz, &end) || add_overflows(end, host_page_size(), &end))
    throw header_error("PT_LOAD address range overflows", phdr_offset);
  if (ph.p_align > 1 && (ph.p_align & (ph.p_align - 1)) != 0)
    throw header_error("PT_LOAD p_align is not a power of two", phdr_offset);
  // W^X is decided up front so that a refused image never gets relocated.
  if ((ph.p_flags & PF_W) && (ph.p_flags & PF_X)) throw header_error("writable and executable segment (W^X)", phdr_offset);
}

// Sorts the loads and rejects overlaps; sharing a page is fine, sharing bytes is not.
void check_layout(ParsedElf* out, const LoadOptions& options) {
  if (out->loads.empty()) throw header_error("no PT_LOAD segment", 0);
  std::sort(out->loads.begin(), out->loads.end(),
            [](const Segment& a, const Segment& b) { return a.vaddr < b.vaddr; });
  for (size_t i = 1; i < out->loads.size(); ++i) {
    const Segment& prev = out->loads[i - 1];
    if (prev.vaddr + prev.memsz > out->loads[i].vaddr)
      throw header_error("overlapping PT_LOAD segments at vaddr " + hex(out->loads[i].vaddr), 0);
  }
  const uint64_t page = host_page_size();
  out->vaddr_min = out->loads.front().vaddr & ~(page - 1);
  uint64_t last_end = 0;
  for (const Segment& s : out->loads) last_end = std::max(last_end, s.vaddr + s.memsz);
  out->vaddr_max = (last_end + page - 1) & ~(page - 1);
  if (out->vaddr_max - out->vaddr_min > options.max_image_size)
    throw header_error("image address range " + hex(out->vaddr_max - out->vaddr_min) + " exceeds the limit", 0).with_kind(ErrorKind::kResourceExhausted);
}

}  // namespace

ParsedElf parse_elf(const uint8_t* data, size_t size, const LoadOptions& options) {
  if (data == nullptr || size < sizeof(Elf64_Ehdr)) throw header_error("file too small for an ELF header", 0);
  Elf64_Ehdr eh;
  std::memcpy(&eh, data, sizeof(eh));  // memcpy: the buffer may be unaligned
  check_ident(eh);
  check_machine(eh, options);
  check_phdr_table(eh, size);

  ParsedElf out;
  out.machine = eh.e_machine;
  bool have_dynamic = false;
  for (uint64_t i = 0; i < eh.e_phnum; ++i) {
    const uint64_t at = eh.e_phoff + i * sizeof(Elf64_Phdr);
    Elf64_Phdr ph;
    std::memcpy(&ph, data + at, sizeof(ph));
    if (ph.p_type == PT_LOAD) {
      check_load(ph, size, at);
      if (ph.p_memsz != 0) out.loads.push_back(to_segment(ph));
    } else if (ph.p_type == PT_DYNAMIC && !have_dynamic) {
      out.dynamic = to_segment(ph);
      have_dynamic = true;
    } else if (ph.p_type == PT_GNU_RELRO) {
      out.relro.push_back(to_segment(ph));
    } else if (ph.p_type == PT_TLS) {
      throw header_error("thread-local storage (PT_TLS) is not supported", at).with_kind(ErrorKind::kUnsupported);
    }
  }
  if (!have_dynamic || out.dynamic.memsz < sizeof(Elf64_Dyn)) throw header_error("no PT_DYNAMIC segment", 0);
  check_layout(&out, options);
  return out;
}

}  // namespace elf
}  // namespace graphrt
