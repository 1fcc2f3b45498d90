// The "dlopen" loader: TVM's own way of loading a model library.
#include <dlfcn.h>
#include <fcntl.h>
#include <link.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <map>
#include <mutex>

#include "module/library_support.h"
#include "module/dlopen_path.h"
#include "elf/elf_file_symbols.h"
#include "graphrt/regular_file.h"
#include "graphrt/runtime.h"
#include "runtime_tables.h"
#include "graphrt/error.h"
#include "graphrt/library.h"
#include "layer_api/user_mistakes.h"

namespace graphrt {

namespace {

// What one open of a library path tells: whether the file is there and is a
// regular file, and its first bytes (up to kLibraryProbeBytes).
struct FileHead {
  bool exists = false;
  bool regular = false;
  std::vector<uint8_t> bytes;
};

bool has_elf_magic(const std::vector<uint8_t>& head) {
  return head.size() >= 4 && head[0] == 0x7f && head[1] == 'E' && head[2] == 'L' && head[3] == 'F';
}

// Calls `read` with a temporary read-only mapping of the file (nothing when
// it cannot be mapped): at load the loader reads only the file's imports
// (file_imports); listings and load-failure explanations map it, on request.
template <typename Read>
void with_file_mapping(const std::string& path, Read read) {
  int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) return;
  struct stat st;
  if (fstat(fd, &st) == 0 && st.st_size > 0) {
    void* map = mmap(nullptr, static_cast<size_t>(st.st_size), PROT_READ, MAP_PRIVATE, fd, 0);
    if (map != MAP_FAILED) {
      read(static_cast<const uint8_t*>(map), static_cast<size_t>(st.st_size));
      munmap(map, static_cast<size_t>(st.st_size));
    }
  }
  close(fd);
}

// The imports of the library file at `path` (empty when it will not open).
elf::ElfImports file_imports(const std::string& path) {
  int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) return {};
  elf::ElfImports imports = elf::read_elf_imports_from_fd(fd);
  close(fd);
  return imports;
}

// The strong imports of a file dlopen accepted, best effort: empty when the
// reader refuses its section headers (the dynamic linker reads none).
std::vector<std::string> imports_of_loaded_file(const std::string& path) {
  try {
    return file_imports(path).symbols;
  } catch (const Error&) {
    return {};
  }
}

std::string join(const std::vector<std::string>& names) {
  std::string s;
  for (const std::string& n : names) s += (s.empty() ? "" : ", ") + n;
  return s;
}

// The strong imports of a library that failed to load which the dynamic
// linker cannot find: in the global scope (graphrt, the program) or in the
// libraries it names as needed. dlerror names only the first; this names all.
// Empty when the answer is uncertain (a needed library that will not open
// here, e.g. found through the library's own RUNPATH).
std::vector<std::string> unresolved_imports(const std::string& path) {
  const elf::ElfImports imports = file_imports(path);
  std::vector<void*> needed;
  bool complete = true;
  for (const std::string& name : imports.needed) {
    void* handle = dlopen(name.c_str(), RTLD_LAZY | RTLD_LOCAL);
    if (handle)
      needed.push_back(handle);
    else
      complete = false;
  }
  std::vector<std::string> missing;
  for (const std::string& name : complete ? imports.symbols : std::vector<std::string>()) {
    bool found = dlsym(RTLD_DEFAULT, name.c_str()) != nullptr;
    for (size_t i = 0; i < needed.size() && !found; ++i) found = dlsym(needed[i], name.c_str()) != nullptr;
    if (!found) missing.push_back(name);
  }
  for (void* handle : needed) dlclose(handle);
  dlerror();  // the probes' failures are not the caller's error
  return missing;
}

class DsoLibrary : public Library {
 public:
  // `file`: what load_library read of the path (one open, one stat, the
  // first bytes); refusing a non-ELF file here gives a clear message where
  // dlopen would give a vague one.
  DsoLibrary(const std::string& path, const FileHead& file) : path_(path) {
    if (!file.exists || !file.regular) require_regular_file(path, "model library");
    if (!has_elf_magic(file.bytes)) throw Error("not an ELF shared library (bad magic)").with("file", path);
    // RTLD_LOCAL: the exported context variables of two models must not interpose.
    // RTLD_NOW: an import nobody defines fails here, not as exit 127 in the
    // middle of a run when the lazy binder meets it.
    handle_ = dlopen(dlopen_path(path).c_str(), RTLD_NOW | RTLD_LOCAL);
    if (!handle_) {
      const char* error = dlerror();
      const std::string why = error ? error : "unknown error";
      const std::vector<std::string> missing = unresolved_imports(path);
      if (!missing.empty())
        throw Error(ErrorKind::kNotFound,
                    "the library imports " + std::string(missing.size() == 1 ? "a symbol" : "symbols") +
                    " that neither graphrt nor the libraries it links define: " + join(missing))
            .with("file", path);
      throw Error("dlopen failed: " + why).with("file", path);
    }
    void* link_map = nullptr;
    if (dlinfo(handle_, RTLD_DI_LINKMAP, &link_map) != 0) link_map = nullptr;  // then no range is known
    link_map_ = link_map;
    facts_.mapping = LibraryFacts::Mapping::kDynamicLinker;
    facts_.blob_pages_releasable = true;
    facts_.ranges = dynamic_linker_ranges(link_map);
    facts_.imports = imports_of_loaded_file(path);
  }
  ~DsoLibrary() override {
    if (handle_) dlclose(handle_);
  }
  // Only what the library's own image defines. dlsym on a dlopen handle also searches the
  // libraries it depends on (libc, libm, ...), so a name read from data (a graph JSON's kernel,
  // a Relax executable's function) would otherwise reach `exit` or `system`: an address whose
  // object is not this library's is no symbol of it (the caller's "not found" names the node
  // or instruction and the symbol).
  void* symbol(const std::string& name) const override {
    void* address = dlsym(handle_, name.c_str());
    if (!address || !link_map_) return nullptr;
    Dl_info info;
    void* owner = nullptr;
    if (!dladdr1(address, &info, &owner, RTLD_DL_LINKMAP) || owner != link_map_) return nullptr;
    return address;
  }
  std::string origin() const override { return path_; }
  std::vector<std::string> symbol_names() const override {
    std::call_once(symbols_once_, [this] {
      with_file_mapping(path_, [this](const uint8_t* data, size_t size) { symbols_ = elf::read_elf_symbol_table(data, size); });
    });
    return symbols_.functions;
  }

 private:
  std::string path_;
  void* handle_ = nullptr;
  void* link_map_ = nullptr;  // the image's own entry in the dynamic linker's list

  mutable std::once_flag symbols_once_;
  mutable elf::ElfSymbolTable symbols_;
};

auto& loader_table(Runtime& runtime) { return RuntimeTables::of(runtime); }

std::shared_ptr<Library> dlopen_loader(const LibrarySource& source, const FileHead& file) {
  if (source.path.empty())
    throw Error(ErrorKind::kUnsupported, "the dlopen loader cannot load from memory; use the \"elf\" loader");
  return std::make_shared<DsoLibrary>(source.path, file);
}

}  // namespace

void Runtime::register_library_loader(const std::string& name, LibraryLoader loader, LibraryProbe probe) {
  std::lock_guard<std::mutex> lock(tables_->library_loaders_mutex);
  tables_->library_loaders[name] = std::move(loader);
  if (probe)
    tables_->library_probes[name] = std::move(probe);
  else
    tables_->library_probes.erase(name);
}

void register_library_loader(const std::string& name, LibraryLoader loader, LibraryProbe probe) {
  runtime().register_library_loader(name, std::move(loader), std::move(probe));
}

namespace {

std::vector<std::string> loader_names(Runtime& runtime) {
  std::lock_guard<std::mutex> lock(loader_table(runtime).library_loaders_mutex);
  std::vector<std::string> names{"dlopen"};
  for (const auto& kv : loader_table(runtime).library_loaders) names.push_back(kv.first);
  return names;
}

}  // namespace

std::vector<std::string> library_loader_names() { return loader_names(runtime()); }

namespace {

// The first bytes of the source. A file is opened once, with no stream
// (iostreams would initialise the C++ locale, hundreds of KB of library code
// paged in on the first load); bytes stay empty when it cannot be read (the
// chosen loader then reports that with its own words).
FileHead source_head(const LibrarySource& source) {
  FileHead file;
  if (source.path.empty()) {
    const size_t n = source.data ? std::min(source.size, kLibraryProbeBytes) : 0;
    file.bytes.assign(source.data, source.data + n);
    return file;
  }
  // O_NONBLOCK: a FIFO would wait for a writer; it is refused as not regular instead.
  int fd = open(source.path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  struct stat st;
  if (fd < 0) {
    // An unreadable file that exists (permissions) is still reported by dlopen.
    file.exists = stat(source.path.c_str(), &st) == 0;
    file.regular = file.exists && S_ISREG(st.st_mode);
    return file;
  }
  file.exists = fstat(fd, &st) == 0;
  file.regular = file.exists && S_ISREG(st.st_mode);
  if (file.regular) {
    file.bytes.resize(kLibraryProbeBytes);
    ssize_t got = pread(fd, file.bytes.data(), file.bytes.size(), 0);
    file.bytes.resize(got > 0 ? static_cast<size_t>(got) : 0);
  }
  close(fd);
  return file;
}

// The loader whose probe claims this content, or "" when none does.
std::string claiming_loader(Runtime& runtime, const FileHead& file) {
  if (file.bytes.empty()) return "";
  std::lock_guard<std::mutex> lock(loader_table(runtime).library_loaders_mutex);
  for (const auto& kv : loader_table(runtime).library_probes) {
    if (kv.second(file.bytes.data(), file.bytes.size())) return kv.first;
  }
  return "";
}

bool has_probe(Runtime& runtime, const std::string& loader) {
  std::lock_guard<std::mutex> lock(loader_table(runtime).library_loaders_mutex);
  return loader_table(runtime).library_probes.count(loader) != 0;
}

}  // namespace

std::shared_ptr<Library> load_library(const std::string& requested, const LibrarySource& source) {
  return load_library(runtime(), requested, source);
}

std::shared_ptr<Library> load_library(Runtime& runtime, const std::string& requested, const LibrarySource& source) {
  std::string loader = requested;
  FileHead file;
  bool head_read = false;
  if (!has_probe(runtime, requested)) {
    file = source_head(source);
    head_read = true;
    const std::string claimed = claiming_loader(runtime, file);
    if (!claimed.empty()) loader = claimed;
    // A params file, a graph JSON, an input array handed over as the model: said as such.
    if (claimed.empty())
      check_model_library_head(runtime, file.bytes.data(), file.bytes.size(),
                               source.path.empty() ? "the model bytes" : source.path);
  }
  if (loader.empty() || loader == "dlopen") return dlopen_loader(source, head_read ? file : source_head(source));
  LibraryLoader fn;
  {
    std::lock_guard<std::mutex> lock(loader_table(runtime).library_loaders_mutex);
    auto it = loader_table(runtime).library_loaders.find(loader);
    if (it != loader_table(runtime).library_loaders.end()) fn = it->second;
  }
  if (!fn) {
    std::string names;
    for (const std::string& n : loader_names(runtime)) names += (names.empty() ? "" : ", ") + n;
    throw Error(ErrorKind::kNotFound, "unknown library loader " + quote_untrusted(loader) + " (available: " + names + ")");
  }
  return fn(source);
}

}  // namespace graphrt
