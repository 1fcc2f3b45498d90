// graphrt::elf::ElfImage — an ELF64 shared object loaded into memory by
// graphrt itself instead of dlopen.
//
// Why: images loaded this way are private to their owner (several copies of
// one .so load side by side with independent globals), they can come from a
// memory buffer, and they can only call what the caller's import table
// allows. Supported: ET_DYN for x86_64 (execute) and aarch64 (relocate-only).
//
// Load pipeline: validate headers -> map the address range once (RW) -> copy
// PT_LOAD bytes, or from a file map them copy-on-write where a segment owns
// its pages, like ld.so (bss stays zero) -> parse PT_DYNAMIC -> resolve imports ->
// relocate -> final protections (W^X, RELRO read-only) -> DT_INIT, then
// DT_INIT_ARRAY. The destructor runs DT_FINI_ARRAY (reverse), DT_FINI, unmaps.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "elf_types.h"
#include "graphrt/library.h"

namespace graphrt {
namespace elf {

struct SymbolInfo {
  void* address = nullptr;
  uint64_t size = 0;  // st_size
  unsigned type = 0;  // STT_FUNC, STT_OBJECT, ...
};

class ElfImage {
 public:
  // Loads from a file. Segments are mapped MAP_PRIVATE from it where possible,
  // so (as with dlopen) truncating the file while it is loaded is not allowed.
  static std::unique_ptr<ElfImage> load_file(const std::string& path, const LoadOptions& options = {});
  // Loads from caller memory; the bytes are copied and need not outlive the call.
  static std::unique_ptr<ElfImage> load_memory(const uint8_t* data, size_t size, const LoadOptions& options = {},
                                               const std::string& origin = "<memory>");

  ~ElfImage();
  ElfImage(const ElfImage&) = delete;
  ElfImage& operator=(const ElfImage&) = delete;

  // Address of an exported (defined GLOBAL/WEAK) symbol, or nullptr.
  void* symbol(const std::string& name) const;
  std::optional<SymbolInfo> find_symbol(const std::string& name) const;
  std::vector<std::string> symbol_names() const;
  // Undefined symbols the image imported (resolved or weak-zero).
  const std::vector<std::string>& imports() const { return imports_; }

  const std::string& origin() const { return origin_; }
  uint16_t machine() const { return machine_; }
  bool executable() const { return executable_; }
  const uint8_t* base() const;
  size_t size() const;
  // True when [p, p+n) lies inside the mapped image.
  bool contains(const void* p, size_t n) const;
  // True when every byte of [p, p+n) is in a readable page of this image.
  bool is_readable(const void* p, size_t n) const;
  // Bytes from p to the end of the run of readable pages holding it; 0 when
  // p is outside the image or in an unreadable page.
  // With `writable`, the run of pages that are readable and writable.
  size_t readable_bytes_from(const void* p, bool writable = false) const;
  // True when p lies in an executable page of this image.
  bool is_code(const void* p) const;
  // The image's pages as runs of one protection, in address order.
  std::vector<PageRun> page_runs() const;
  // The exported symbols that are not functions (data, TLS, untyped), with
  // their size and type.
  std::vector<std::pair<std::string, SymbolInfo>> data_symbols() const;

  struct State;  // loader internals (elf_image.cc)

 private:
  // Passkey: only the load_* factories can construct, yet make_unique works.
  struct Key {
    explicit Key() = default;
  };

 public:
  // `fd` >= 0: the file `data` was read from, for mapping segments directly.
  ElfImage(Key, const uint8_t* data, size_t size, const LoadOptions& options, std::string origin, int fd = -1);

 private:
  void load(const uint8_t* data, size_t size, const LoadOptions& options, int fd);
  void run_initializers();
  void run_finalizers() noexcept;

  std::string origin_;
  uint16_t machine_ = 0;
  bool executable_ = false;
  std::vector<std::string> imports_;
  std::unique_ptr<State> state_;
};

// The readable runs of `runs` as a library's memory facts (graphrt/library.h),
// executable runs as its code.
std::vector<LibraryRange> library_ranges(const std::vector<PageRun>& runs);

}  // namespace elf
}  // namespace graphrt
