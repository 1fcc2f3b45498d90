// graphrt::Library — a loaded image of native code that answers symbol lookups.
//
// The module system builds TVM's module tree on top of a Library: it fills the
// image's context-function pointers, reads `__tvm_dev_mblob` and wraps exported
// functions as packed functions. Two implementations exist: the dlopen one in
// the core (src/dso_library.cc) and the embedded ELF loader (modules/elf_so), which
// registers itself under the loader name "elf".
#pragma once

#include "graphrt/export.h"

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#pragma GCC visibility push(default)  // exported: see graphrt/export.h
namespace graphrt {

class Library {
 public:
  virtual ~Library() = default;
  // Address of an exported symbol, or nullptr when the image has none.
  virtual void* symbol(const std::string& name) const = 0;
  // Where the image came from (a path, or "<memory>"), for error messages.
  virtual std::string origin() const = 0;
  // Exported symbol names (best effort; used for "did you mean" hints and
  // listings). May be empty.
  virtual std::vector<std::string> symbol_names() const { return {}; }
  // Undefined symbols the image imports (best effort; may be empty). Code TVM
  // generates imports TVM's C ABI (TVMAPISetLastError, ...) by name.
  virtual std::vector<std::string> imported_symbol_names() const { return {}; }
  // False when the loader knows `name` is not code (a data object): such a
  // symbol is never called. True when it is code or the loader cannot tell.
  virtual bool is_function(const std::string& name) const { (void)name; return true; }
  // True when every symbol of the image was registered as TVM-generated code
  // (the system-lib table), so it needs no TVM marker to be trusted.
  virtual bool registered_tvm_code() const { return false; }
  // Size in bytes of a data symbol (from its ELF symbol entry), or 0 when
  // unknown. Used to bound-check `__tvm_dev_mblob` against its size prefix.
  virtual size_t symbol_size(const std::string& name) const { (void)name; return 0; }
  // True when the image's data is a read-only mapping of its file, so pages
  // of `__tvm_dev_mblob` may be dropped once decoded (they read back from the
  // file if touched again). False for images copied into anonymous memory.
  virtual bool blob_pages_releasable() const { return false; }
  // Bytes readable from `address` to the end of the loaded segment holding it,
  // or 0 when no segment of this library holds it. The default asks the
  // dynamic linker (images it loaded, the executable); loaders that map
  // images themselves answer from their own mapping.
  // With `writable`, only writable segments count.
  virtual size_t mapped_bytes_from(const void* address, bool writable = false) const;
  // True when `address` lies in this image's own code; false when it does not
  // or the loader cannot tell. The thread pool gives more tasks than threads
  // only to parallel kernels of images that answer true (see the core's
  // parallel_split.h).
  virtual bool holds_code(const void* address) const { (void)address; return false; }
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
std::vector<std::string> library_loader_names();

// The runtime's implementation of a TVM C-ABI entry point by its name
// ("TVMBackendAllocWorkspace", "TVMFuncCall", ...), or nullptr. An in-memory
// loader resolves the image's imports against these.
void* runtime_symbol(const std::string& name);

}  // namespace graphrt
#pragma GCC visibility pop
