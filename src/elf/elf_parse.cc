#include "elf_parse.h"

#include <elf.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>

#include "elf_file.h"
#include "graphrt/error.h"

namespace graphrt {
namespace elf {

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

void check_machine(const Elf64_Ehdr& eh, const LoadOptions& options) {
  if (eh.e_type != ET_DYN) throw elf_error("not a shared object (e_type != ET_DYN)", offsetof(Elf64_Ehdr, e_type));
  const bool known = eh.e_machine == EM_X86_64 || eh.e_machine == EM_AARCH64;
  if (!known) throw elf_error("unsupported machine " + std::to_string(eh.e_machine), offsetof(Elf64_Ehdr, e_machine)).with_kind(ErrorKind::kUnsupported);
  // Executing code built for another architecture is impossible; relocating it is not.
  if (options.execute && eh.e_machine != host_machine())
    throw elf_error("machine " + std::to_string(eh.e_machine) + " cannot execute on this host (use execute=false)",
                       offsetof(Elf64_Ehdr, e_machine)).with_kind(ErrorKind::kUnsupported);
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
  if (!range_in(ph.p_offset, ph.p_filesz, size)) throw elf_error("PT_LOAD file range outside the file", phdr_offset);
  if (ph.p_filesz > ph.p_memsz) throw elf_error("PT_LOAD p_filesz > p_memsz", phdr_offset);
  uint64_t end;
  if (__builtin_add_overflow(ph.p_vaddr, ph.p_memsz, &end) || __builtin_add_overflow(end, host_page_size(), &end))
    throw elf_error("PT_LOAD address range overflows", phdr_offset);
  if (ph.p_align > 1 && (ph.p_align & (ph.p_align - 1)) != 0)
    throw elf_error("PT_LOAD p_align is not a power of two", phdr_offset);
  // W^X is decided up front so that a refused image never gets relocated.
  if ((ph.p_flags & PF_W) && (ph.p_flags & PF_X)) throw elf_error("writable and executable segment (W^X)", phdr_offset);
}

// Sorts the loads and rejects overlaps; sharing a page is fine, sharing bytes is not.
void check_layout(ParsedElf* out, const LoadOptions& options) {
  if (out->loads.empty()) throw elf_error("no PT_LOAD segment", 0);
  std::sort(out->loads.begin(), out->loads.end(),
            [](const Segment& a, const Segment& b) { return a.vaddr < b.vaddr; });
  for (size_t i = 1; i < out->loads.size(); ++i) {
    const Segment& prev = out->loads[i - 1];
    if (prev.vaddr + prev.memsz > out->loads[i].vaddr)
      throw elf_error("overlapping PT_LOAD segments at vaddr " + hex(out->loads[i].vaddr), 0);
  }
  const uint64_t page = host_page_size();
  out->vaddr_min = out->loads.front().vaddr & ~(page - 1);
  uint64_t last_end = 0;
  for (const Segment& s : out->loads) last_end = std::max(last_end, s.vaddr + s.memsz);
  out->vaddr_max = (last_end + page - 1) & ~(page - 1);
  if (out->vaddr_max - out->vaddr_min > options.max_image_size)
    throw elf_error("image address range " + hex(out->vaddr_max - out->vaddr_min) + " exceeds the limit", 0).with_kind(ErrorKind::kResourceExhausted);
}

}  // namespace

ParsedElf parse_elf(const uint8_t* data, size_t size, const LoadOptions& options) {
  const ElfFile file(data, size);
  const Elf64_Ehdr& eh = file.header();
  check_machine(eh, options);
  const std::vector<Elf64_Phdr> headers = file.program_headers();

  ParsedElf out;
  out.machine = eh.e_machine;
  bool have_dynamic = false;
  for (size_t i = 0; i < headers.size(); ++i) {
    const uint64_t at = file.program_header_offset(i);
    const Elf64_Phdr& ph = headers[i];
    if (ph.p_type == PT_LOAD) {
      check_load(ph, size, at);
      if (ph.p_memsz != 0) out.loads.push_back(to_segment(ph));
    } else if (ph.p_type == PT_DYNAMIC && !have_dynamic) {
      out.dynamic = to_segment(ph);
      have_dynamic = true;
    } else if (ph.p_type == PT_GNU_RELRO) {
      out.relro.push_back(to_segment(ph));
    } else if (ph.p_type == PT_TLS) {
      throw elf_error("thread-local storage (PT_TLS) is not supported", at).with_kind(ErrorKind::kUnsupported);
    }
  }
  if (!have_dynamic || out.dynamic.memsz < sizeof(Elf64_Dyn)) throw elf_error("no PT_DYNAMIC segment", 0);
  check_layout(&out, options);
  return out;
}

}  // namespace elf
}  // namespace graphrt
