// The Runtime: created once, with the core's registrations and then those of
// the layers above it (register_layers_above_core), each given the runtime.
#include <dlfcn.h>
#include <unistd.h>

#include <ios>
#include <mutex>

#include "cpu_device_api.h"
#include "dlopen_path.h"
#include "graphrt/regular_file.h"
#include "graphrt/runtime.h"
#include "layer_api/layer_composition.h"
#include "runtime_tables.h"
#include "thread_pool.h"

namespace graphrt {

void register_const_loader(Runtime& runtime);
void register_time_evaluator(Runtime& runtime);

namespace {
void register_core_functions(Runtime& runtime) {
  runtime.set_function("__tvm_set_device", make_function([](const TVMArgs& args, RetValue*) {
    DLDevice dev{static_cast<DLDeviceType>(args.as_int(0)), static_cast<int32_t>(args.as_int(1))};
    if (dev.device_type != kDLCPU) device_api(dev)->set_device(dev);
  }, "__tvm_set_device"));
  runtime.set_function("runtime.SystemLib", make_function([](const TVMArgs& args, RetValue* ret) {
    ret->set_module(system_lib(args.size() > 0 ? args.as_string(0) : ""));
  }, "runtime.SystemLib"));
  runtime.set_function("runtime.module.loadfile_so", make_function([](const TVMArgs& args, RetValue* ret) {
    ret->set_module(load_module(args.as_string(0)));
  }, "runtime.module.loadfile_so"));
}
}  // namespace

Runtime::Runtime() : tables_(std::make_unique<Tables>()) {}

Runtime& runtime() {
  // Every registration below uses the runtime it is handed, never runtime():
  // a nested call here would wait on this very initialisation.
  static Runtime* const instance = [] {
    auto* created = new Runtime();  // never destroyed (see runtime.h)
    created->register_device_api(kDLCPU, std::make_shared<CpuDeviceAPI>());
    register_core_functions(*created);
    register_const_loader(*created);
    register_time_evaluator(*created);
    register_layers_above_core(*created);
    return created;
  }();
  return *instance;
}

void runtime_init() {
  runtime();
  // The table the first library load looks its context functions up in.
  runtime_symbol("");
  // The C++ streams and their locale: model libraries compiled from C++
  // (BYOC C sources, for one) set them up in their constructors, paging in
  // hundreds of KB of libstdc++ in the middle of the first load otherwise.
  static std::ios_base::Init streams;
}

void set_num_threads(int n) { thread_pool_set_max_concurrency(n); }
int num_threads() { return thread_pool_max_concurrency(); }

void load_plugin(const std::string& path) {
  runtime();
  // dlopen would block on a FIFO and read a device: only regular files go to it.
  require_regular_file(path, "plugin");
  void* handle = dlopen(dlopen_path(path).c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!handle) {
    const char* why = dlerror();
    const int missing = access(dlopen_path(path).c_str(), F_OK) == 0 ? 0 : errno;
    throw Error(Error::kind_of_errno(missing),
                std::string("cannot load plugin: ") + (why ? why : "dlopen failed")).with("file", path);
  }
  using InitFn = int (*)();
  auto init = reinterpret_cast<InitFn>(dlsym(handle, "graphrt_plugin_init"));
  if (!init) {
    dlclose(handle);
    throw Error(ErrorKind::kNotFound,
                "plugin has no graphrt_plugin_init function").with("file", path).with("symbol", "graphrt_plugin_init");
  }
  // Plugins stay loaded: their handlers and functions are now in the registries.
  if (init() != 0) throw Error(last_error_kind(), "graphrt_plugin_init failed: " + last_error()).with("file", path);
}

}  // namespace graphrt
