// The core's readings of a library's facts, and what it asks the dynamic
// linker for images it mapped.
#include <dlfcn.h>
#include <link.h>

#include <algorithm>

#include "graphrt/error.h"
#include "module/library_support.h"

namespace graphrt {

namespace {

// Bytes from `at` to the end of the run of `ranges` holding it, continued
// through runs that follow without a gap (0: none holds it, or it is
// read-only and `writable` was asked).
size_t bytes_in_ranges(const std::vector<LibraryRange>& ranges, uintptr_t at, bool writable) {
  auto usable = [writable](const LibraryRange& r) { return r.writable || !writable; };
  auto holding = std::find_if(ranges.begin(), ranges.end(),
                              [at](const LibraryRange& r) { return at >= r.start && at - r.start < r.bytes; });
  if (holding == ranges.end() || !usable(*holding)) return 0;
  uintptr_t end = holding->start + holding->bytes;
  for (bool grown = true; grown;) {
    grown = false;
    for (const LibraryRange& r : ranges) {
      if (r.start == end && r.bytes != 0 && usable(r)) {
        end += r.bytes;
        grown = true;
      }
    }
  }
  return end - at;
}

LibraryRange load_segment(const dl_phdr_info* info, int i) {
  const ElfW(Phdr)& ph = info->dlpi_phdr[i];
  LibraryRange r;
  r.start = info->dlpi_addr + ph.p_vaddr;
  r.bytes = ph.p_memsz;
  r.writable = (ph.p_flags & PF_W) != 0;
  r.code = (ph.p_flags & PF_X) != 0;
  return r;
}

// The object's PT_LOAD segments into *out; 1, which ends dl_iterate_phdr's walk
// (the object sought is found).
int take_load_segments(dl_phdr_info* info, std::vector<LibraryRange>* out) {
  for (int i = 0; i < info->dlpi_phnum; ++i)
    if (info->dlpi_phdr[i].p_type == PT_LOAD) out->push_back(load_segment(info, i));
  return 1;
}

// Collects every PT_LOAD segment of the loaded object one of whose segments
// holds `address`. Objects are recognised by their program headers alone: the
// dynamic linker's own records (link_map, dlpi_name) may be being written by a
// dlopen on another thread, under a lock the callback cannot see.
struct SegmentQuery {
  uintptr_t address;
  std::vector<LibraryRange>* out;
};

// Called for every loaded object (dozens in a Python process): objects that
// do not hold the address cost no allocation.
int collect_segments(dl_phdr_info* info, size_t, void* data) {
  auto* query = static_cast<SegmentQuery*>(data);
  bool holds_address = false;
  for (int i = 0; i < info->dlpi_phnum && !holds_address; ++i) {
    const LibraryRange s = load_segment(info, i);
    holds_address = info->dlpi_phdr[i].p_type == PT_LOAD && query->address >= s.start &&
                    query->address - s.start < s.bytes;
  }
  return holds_address ? take_load_segments(info, query->out) : 0;
}

// Finds the object whose dynamic section lies at `dynamic` (the link map's
// l_ld, read before the walk) and collects its PT_LOAD segments.
struct ImageQuery {
  uintptr_t dynamic;
  std::vector<LibraryRange>* out;
};

int collect_image_segments(dl_phdr_info* info, size_t, void* data) {
  auto* query = static_cast<ImageQuery*>(data);
  bool is_image = false;
  for (int i = 0; i < info->dlpi_phnum && !is_image; ++i)
    is_image = info->dlpi_phdr[i].p_type == PT_DYNAMIC &&
               info->dlpi_addr + info->dlpi_phdr[i].p_vaddr == query->dynamic;
  return is_image ? take_load_segments(info, query->out) : 0;
}

// The dynamic symbol entry of `name` in an image the dynamic linker mapped,
// or null when dladdr finds none.
const ElfW(Sym)* dynamic_symbol_entry(const Library& library, const std::string& name) {
  void* address = library.symbol(name);
  if (!address) return nullptr;
  Dl_info info;
  void* entry = nullptr;
  if (!dladdr1(address, &info, &entry, RTLD_DL_SYMENT) || !entry) return nullptr;
  return static_cast<const ElfW(Sym)*>(entry);
}

bool dynamic_linker_mapped(const Library& library) {
  return library.facts().mapping == LibraryFacts::Mapping::kDynamicLinker;
}

}  // namespace

std::vector<LibraryRange> dynamic_linker_ranges(const void* link_map) {
  std::vector<LibraryRange> ranges;
  if (!link_map) return ranges;
  ImageQuery query{reinterpret_cast<uintptr_t>(static_cast<const struct link_map*>(link_map)->l_ld), &ranges};
  dl_iterate_phdr(&collect_image_segments, &query);
  return ranges;
}

size_t library_mapped_bytes(const Library& library, const void* address, bool writable) {
  const uintptr_t at = reinterpret_cast<uintptr_t>(address);
  const std::vector<LibraryRange>& own = library.facts().ranges;
  const bool in_own = std::any_of(own.begin(), own.end(),
                                  [at](const LibraryRange& r) { return at >= r.start && at - r.start < r.bytes; });
  if (in_own || !dynamic_linker_mapped(library)) return bytes_in_ranges(own, at, writable);
  // A symbol of an image the dynamic linker mapped may resolve to one of the
  // objects it depends on (or the program).
  std::vector<LibraryRange> segments;
  SegmentQuery query{at, &segments};
  dl_iterate_phdr(&collect_segments, &query);
  return bytes_in_ranges(segments, at, writable);
}

size_t library_symbol_size(const Library& library, const std::string& name) {
  const auto& symbols = library.facts().symbols;
  auto it = symbols.find(name);
  if (it != symbols.end()) return it->second.size;
  if (!dynamic_linker_mapped(library)) return 0;
  const ElfW(Sym)* entry = dynamic_symbol_entry(library, name);
  return entry ? static_cast<size_t>(entry->st_size) : 0;
}

bool library_symbol_is_function(const Library& library, const std::string& name) {
  const auto& symbols = library.facts().symbols;
  auto it = symbols.find(name);
  if (it != symbols.end()) return it->second.function;
  if (!dynamic_linker_mapped(library)) return true;
  const ElfW(Sym)* entry = dynamic_symbol_entry(library, name);
  if (!entry) return true;  // cannot tell
  const unsigned type = ELF64_ST_TYPE(entry->st_info);
  return type != STT_OBJECT && type != STT_TLS && type != STT_COMMON;
}

bool library_holds_code(const LibraryFacts& facts, const void* address) {
  const uintptr_t at = reinterpret_cast<uintptr_t>(address);
  return std::any_of(facts.ranges.begin(), facts.ranges.end(), [at](const LibraryRange& r) {
    return r.code && at >= r.start && at - r.start < r.bytes;
  });
}

size_t readable_symbol_bytes(const Library& library, const std::string& name, const void* address) {
  size_t bytes = library_mapped_bytes(library, address);
  if (bytes == 0)
    throw Error("symbol lies outside every loaded segment").with("symbol", name).with("file", library.origin());
  size_t declared = library_symbol_size(library, name);
  return declared != 0 && declared < bytes ? declared : bytes;
}

}  // namespace graphrt
