#include "elf_image.h"

#include <elf.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "elf_cxx_imports.h"
#include "elf_dynamic.h"
#include "elf_imports.h"
#include "elf_memory.h"
#include "elf_parse.h"
#include "elf_reloc.h"
#include "graphrt/error.h"
#include "graphrt/regular_file.h"

namespace graphrt {
namespace elf {

struct ElfImage::State {
  MappedImage image;
  ParsedElf parsed;
  DynamicInfo dynamic;
  std::unique_ptr<SymbolTable> symbols;
  // Resolved at load time so that the destructor never reads image data that
  // could have changed since.
  std::vector<void (*)()> finalizers;  // in call order
  bool initialized = false;
};

namespace {

// Read-only private mapping of a whole regular file, plus its descriptor
// (kept open so that segments can be mapped from it); both released on scope exit.
class FileMapping {
 public:
  explicit FileMapping(const std::string& path) : file_(path, "ELF file") {
    if (file_.size() > 0) data_ = mmap(nullptr, file_.size(), PROT_READ, MAP_PRIVATE, file_.fd(), 0);
    if (file_.size() == 0 || data_ == MAP_FAILED)
      throw Error("cannot read ELF file (empty or unmappable)").with("file", path);
  }
  ~FileMapping() { munmap(data_, file_.size()); }
  FileMapping(const FileMapping&) = delete;
  FileMapping& operator=(const FileMapping&) = delete;
  const uint8_t* data() const { return static_cast<const uint8_t*>(data_); }
  size_t size() const { return file_.size(); }
  int fd() const { return file_.fd(); }

 private:
  RegularFile file_;
  void* data_ = MAP_FAILED;
};

using VoidFn = void (*)();

VoidFn to_function(const MappedImage& image, uint64_t host_address, const char* what) {
  // Only code inside this image's executable pages may be called: a corrupt
  // table must not make the loader jump into arbitrary memory.
  if (!image.is_executable(host_address))
    throw Error(std::string(what) + " does not point into the image's code").with("address", hex(host_address));
  return reinterpret_cast<VoidFn>(host_address);
}

// Entries of DT_INIT_ARRAY/DT_FINI_ARRAY after relocation (already absolute);
// 0 and -1 are placeholders that are skipped, as the ELF spec allows.
std::vector<VoidFn> function_array(const MappedImage& image, const TableRef& table, const char* what) {
  std::vector<VoidFn> out;
  if (!table.present) return out;
  image.at(table.vaddr, table.size, what);
  for (uint64_t i = 0; i < table.size / sizeof(uint64_t); ++i) {
    const uint64_t entry = image.read<uint64_t>(table.vaddr + i * 8, what);
    if (entry != 0 && entry != ~uint64_t(0)) out.push_back(to_function(image, entry, what));
  }
  return out;
}

}  // namespace

std::unique_ptr<ElfImage> ElfImage::load_file(const std::string& path, const LoadOptions& options) {
  FileMapping file(path);
  return std::make_unique<ElfImage>(Key{}, file.data(), file.size(), options, path, file.fd());
}

std::unique_ptr<ElfImage> ElfImage::load_memory(const uint8_t* data, size_t size, const LoadOptions& options,
                                                const std::string& origin) {
  return std::make_unique<ElfImage>(Key{}, data, size, options, origin);
}

ElfImage::ElfImage(Key, const uint8_t* data, size_t size, const LoadOptions& options, std::string origin, int fd)
    : origin_(std::move(origin)), state_(std::make_unique<State>()) {
  try {
    load(data, size, options, fd);
  } catch (Error& e) {
    throw e.with("file", origin_);  // state_ (and the mapping) are released by unique_ptr
  }
}

void ElfImage::load(const uint8_t* data, size_t size, const LoadOptions& options, int fd) {
  State& s = *state_;
  s.parsed = parse_elf(data, size, options);
  machine_ = s.parsed.machine;
  s.image = MappedImage(s.parsed.vaddr_min, s.parsed.vaddr_max);
  if (fd >= 0)
    s.image.map_segments(fd, data, s.parsed);
  else
    s.image.copy_segments(data, s.parsed);
  s.image.plan_protection(s.parsed, options.execute);
  s.dynamic = parse_dynamic(s.image, s.parsed.dynamic);
  s.symbols = std::make_unique<SymbolTable>(s.image, s.dynamic);
  imports_ = imported_names(*s.symbols);
  const std::vector<uint64_t> values = resolve_symbols(*s.symbols, s.image.bias(), options.imports);
  apply_relocations(s.image, s.dynamic, machine_, values);
  s.image.apply_protection(s.parsed);
  executable_ = options.execute;
  if (executable_) run_initializers();
}

void ElfImage::run_initializers() {
  State& s = *state_;
  // Validate every entry point before running any, so that a bad table fails
  // cleanly instead of after half the constructors ran.
  std::vector<VoidFn> init;
  if (s.dynamic.init && *s.dynamic.init != 0)
    init.push_back(to_function(s.image, s.image.bias() + *s.dynamic.init, "DT_INIT"));
  for (VoidFn fn : function_array(s.image, s.dynamic.init_array, "DT_INIT_ARRAY")) init.push_back(fn);
  std::vector<VoidFn> fini = function_array(s.image, s.dynamic.fini_array, "DT_FINI_ARRAY");
  s.finalizers.assign(fini.rbegin(), fini.rend());  // FINI_ARRAY runs in reverse
  if (s.dynamic.fini && *s.dynamic.fini != 0)
    s.finalizers.push_back(to_function(s.image, s.image.bias() + *s.dynamic.fini, "DT_FINI"));
  for (VoidFn fn : init) fn();
  s.initialized = true;
}

void ElfImage::run_finalizers() noexcept {
  if (!state_ || !state_->initialized) return;
  // Static objects' destructors registered through __cxa_atexit go first, as
  // __cxa_finalize runs them from the image's own fini code under ld.so.
  run_image_atexit(state_->image.base(), state_->image.size());
  for (VoidFn fn : state_->finalizers) fn();
  state_->initialized = false;
}

ElfImage::~ElfImage() { run_finalizers(); }

std::optional<SymbolInfo> ElfImage::find_symbol(const std::string& name) const {
  const std::optional<size_t> index = state_->symbols->find_defined(name);
  if (!index) return std::nullopt;
  const Elf64_Sym sym = state_->symbols->symbol(*index);
  SymbolInfo info;
  const uint64_t value = sym.st_shndx == SHN_ABS ? sym.st_value : state_->image.bias() + sym.st_value;
  info.address = reinterpret_cast<void*>(value);
  info.size = sym.st_size;
  info.type = ELF64_ST_TYPE(sym.st_info);
  return info;
}

void* ElfImage::symbol(const std::string& name) const {
  try {
    const std::optional<SymbolInfo> info = find_symbol(name);
    return info ? info->address : nullptr;
  } catch (Error& e) {
    throw e.with("symbol", name).with("file", origin_);
  }
}

std::vector<std::string> ElfImage::symbol_names() const {
  std::vector<std::string> names;
  const SymbolTable& table = *state_->symbols;
  for (size_t i = 1; i < table.count(); ++i) {
    const Elf64_Sym sym = table.symbol(i);
    if (SymbolTable::is_exported(sym)) names.push_back(table.name(sym));
  }
  return names;
}

const uint8_t* ElfImage::base() const { return state_->image.base(); }
size_t ElfImage::size() const { return state_->image.size(); }
bool ElfImage::contains(const void* p, size_t n) const { return state_->image.contains_host(p, n); }
bool ElfImage::is_readable(const void* p, size_t n) const { return state_->image.is_readable(p, n); }
size_t ElfImage::readable_bytes_from(const void* p, bool writable) const {
  return state_->image.readable_bytes_from(p, writable);
}
bool ElfImage::is_code(const void* p) const { return state_->image.is_executable(reinterpret_cast<uint64_t>(p)); }
std::vector<PageRun> ElfImage::page_runs() const { return state_->image.page_runs(); }

std::vector<std::pair<std::string, SymbolInfo>> ElfImage::data_symbols() const {
  std::vector<std::pair<std::string, SymbolInfo>> out;
  const SymbolTable& table = *state_->symbols;
  for (size_t i = 1; i < table.count(); ++i) {
    const Elf64_Sym sym = table.symbol(i);
    const unsigned type = ELF64_ST_TYPE(sym.st_info);
    if (!SymbolTable::is_exported(sym) || type == STT_FUNC || type == STT_GNU_IFUNC) continue;
    SymbolInfo info;
    const uint64_t value = sym.st_shndx == SHN_ABS ? sym.st_value : state_->image.bias() + sym.st_value;
    info.address = reinterpret_cast<void*>(value);
    info.size = sym.st_size;
    info.type = type;
    out.emplace_back(table.name(sym), info);
  }
  return out;
}

std::vector<LibraryRange> library_ranges(const std::vector<PageRun>& runs) {
  std::vector<LibraryRange> ranges;
  for (const PageRun& run : runs) {
    if ((run.prot & PROT_READ) == 0) continue;
    LibraryRange r;
    r.start = reinterpret_cast<uintptr_t>(run.start);
    r.bytes = run.bytes;
    r.writable = (run.prot & PROT_WRITE) != 0;
    r.code = (run.prot & PROT_EXEC) != 0;
    ranges.push_back(r);
  }
  return ranges;
}

}  // namespace elf
}  // namespace graphrt
