// Umbrella header of graphrt's C++ API.
#pragma once

#include "graphrt/export.h"

#include "graphrt/binary_loader.h"
#include "graphrt/device_api.h"
#include "graphrt/error.h"
#include "graphrt/library.h"
#include "graphrt/module.h"
#include "graphrt/ndarray.h"
#include "graphrt/packed_func.h"
#include "graphrt/registry.h"

#include <memory>
#include <string>
#include <vector>

#pragma GCC visibility push(default)  // exported: see graphrt/export.h
namespace graphrt {

// A runtime: the owner of the registries (global functions, blob record
// loaders, library loaders, device APIs). `Runtime()` is an empty one, with no
// registration at all. The process has one default, built by libgraphrt on
// the first call of runtime() from any thread: the core's registrations (the
// CPU device, its functions and record loaders), then those of the layers
// above it (graph executor, back ends), each handed the runtime to register
// into. The free functions (registry_set, register_binary_loader,
// register_library_loader, register_device_api, load_module, ...) act on the
// default.
class Runtime {
 public:
  Runtime();
  Runtime(const Runtime&) = delete;
  Runtime& operator=(const Runtime&) = delete;

  // Global functions (TVM's registry). `override` false: an existing name is an Error.
  void set_function(const std::string& name, PackedFunc f, bool override = true);
  PackedFunc function(const std::string& name) const;  // null when absent
  bool remove_function(const std::string& name);
  std::vector<std::string> function_names() const;

  // Loader of blob records of type `tkey` (TVM's runtime.module.loadbinary_<tkey>).
  void register_binary_loader(const std::string& tkey, BinaryLoader loader);
  // A v0.22+ module's loader from its own bytes (graphrt/binary_loader.h).
  void register_bytes_loader(const std::string& kind, BinaryLoader loader);
  // A named library loader; `probe` (optional) claims files by their first bytes.
  void register_library_loader(const std::string& name, LibraryLoader loader, LibraryProbe probe = nullptr);
  void register_device_api(int device_type, std::shared_ptr<DeviceAPI> api);
  DeviceAPI* device_api_or_null(int device_type) const;

 private:
  struct Tables;                 // the registries themselves (src/runtime_tables.h)
  friend struct RuntimeTables;   // the core's access to them
  // Shared: its deleter is bound where Tables is complete, so the implicit
  // destructor needs no exported symbol of its own.
  std::shared_ptr<Tables> tables_;
};

// The process's default runtime, created on the first call from any thread
// (the others wait); never destroyed, since generated code may hold handles
// until exit. A user's registration therefore always lands after the built-in
// ones and is never replaced by them.
Runtime& runtime();
// Creates the runtime now instead of at the first load (front-loads its cost).
void runtime_init();
// Threads of the pool that runs parallel kernels (n <= 0: TVM_NUM_THREADS, or the cores).
void set_num_threads(int n);
int num_threads();

// Loads a plugin .so that registers more handlers/functions through its
// `extern "C" int graphrt_plugin_init(void)`.
void load_plugin(const std::string& path);

GRAPHRT_HEADER_ONLY inline DLDevice cpu(int id = 0) { return DLDevice{kDLCPU, id}; }
inline DLDevice cuda(int id = 0) { return DLDevice{kDLCUDA, id}; }

}  // namespace graphrt
#pragma GCC visibility pop
