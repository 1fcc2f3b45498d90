// graphrt::Library — a loaded image of native code that answers symbol lookups.
//
// The module system builds TVM's module tree on top of a Library: it fills the
// image's context-function pointers, reads `__tvm_dev_mblob` and wraps exported
// functions as packed functions. Two implementations exist: the dlopen one in
// the core (src/module/dso_library.cc) and the embedded ELF loader (backends/elf_so), which
// registers itself under the loader name "elf".
#pragma once

#include "graphrt/export.h"

#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#pragma GCC visibility push(default)  // exported: see graphrt/export.h
namespace graphrt {

class Runtime;

// One run of a loaded image's readable memory, as its loader left it.
struct LibraryRange {
  uintptr_t start = 0;
  size_t bytes = 0;
  bool writable = false;
  bool code = false;  // executable: the image's own code
};

// What a loader knows of one defined symbol.
struct LibrarySymbol {
  size_t size = 0;       // st_size; 0 when unknown
  bool function = true;  // false when the symbol is known not to be code (a data object)
};

// What a loader knows of an image, filled once when it loads it; the core
// reads it (symbol sizes for bounds, imports and code ranges for trust and
// the thread pool, the mapping for the blob's pages) and never asks again.
struct LibraryFacts {
  enum class Mapping {
    // Mapped by the loader itself: `ranges` and `symbols` are all there is.
    kLoader,
    // Mapped by the dynamic linker: `ranges` holds the image's own segments;
    // the core asks the dynamic linker about symbols and addresses they do
    // not cover (sizes and kinds through dladdr, segments of the objects a
    // symbol may resolve to).
    kDynamicLinker,
  };
  Mapping mapping = Mapping::kLoader;
  // True when the image's data is a read-only mapping of its file, so pages
  // of `__tvm_dev_mblob` may be dropped once decoded (they read back from the
  // file if touched again). False for images copied into anonymous memory.
  bool blob_pages_releasable = false;
  // True when every symbol of the image was registered as TVM-generated code
  // (the system-lib table), so it needs no TVM marker to be trusted.
  bool registered_tvm_code = false;
  // The image's readable memory in runs; a run that is `code` holds its own
  // code. The thread pool gives more tasks than threads only to parallel
  // kernels inside such runs (see the core's parallel_split.h).
  std::vector<LibraryRange> ranges;
  // Defined symbols whose size or kind the loader knows (data symbols at
  // least); a name not listed is code of unknown size.
  std::map<std::string, LibrarySymbol> symbols;
  // Undefined symbols the image imports. Code TVM generates imports TVM's C
  // ABI (TVMAPISetLastError, ...) by name.
  std::vector<std::string> imports;
};

class Library {
 public:
  virtual ~Library() = default;
  // Address of an exported symbol, or nullptr when the image has none.
  virtual void* symbol(const std::string& name) const = 0;
  // Where the image came from (a path, or "<memory>"), for error messages.
  virtual std::string origin() const = 0;
  // Exported function names, for "did you mean" hints and listings (best
  // effort, may be empty; a listing may read the file, so nothing at load
  // asks for it).
  virtual std::vector<std::string> symbol_names() const { return {}; }
  // What the loader found at load.
  const LibraryFacts& facts() const { return facts_; }

 protected:
  LibraryFacts facts_;  // filled by the loader once, before the library is handed out
};


// A loader makes a Library from a file path or an in-memory image.
struct LibrarySource {
  std::string path;                 // set when loading from a file
  const uint8_t* data = nullptr;    // set when loading from memory
  size_t size = 0;
};
using LibraryLoader = std::function<std::shared_ptr<Library>(const LibrarySource&)>;
// Says from the first bytes of a file (up to kLibraryProbeBytes) whether a
// loader handles this content whatever loader was asked for, because the
// shared-library loaders cannot (a TVM .tar export, a relocatable object).
using LibraryProbe = std::function<bool(const uint8_t* head, size_t size)>;
constexpr size_t kLibraryProbeBytes = 512;

// Loader registry: "dlopen" is built in; back ends add more ("elf"). A loader
// registered with a probe takes over every file the probe claims.
void register_library_loader(const std::string& name, LibraryLoader loader, LibraryProbe probe = nullptr);
std::shared_ptr<Library> load_library(const std::string& loader, const LibrarySource& source);
// The same through `runtime`'s loaders and probes (the one above uses the default runtime's).
std::shared_ptr<Library> load_library(Runtime& runtime, const std::string& loader, const LibrarySource& source);
std::vector<std::string> library_loader_names();

// The runtime's implementation of a TVM C-ABI entry point by its name
// ("TVMBackendAllocWorkspace", "TVMFuncCall", ...), or nullptr. An in-memory
// loader resolves the image's imports against these.
void* runtime_symbol(const std::string& name);

}  // namespace graphrt
#pragma GCC visibility pop
