// The Runtime, and the process's default one: built on first use by the
// factory the composition unit installed (src/layer_api/layer_composition.h),
// or, where no composition is linked in, with the core's registrations only.
#include <dlfcn.h>
#include <unistd.h>

#include <atomic>
#include <ios>
#include <mutex>

#include "memory/cpu_device_api.h"
#include "module/dlopen_path.h"
#include "graphrt/regular_file.h"
#include "graphrt/runtime.h"
#include "layer_api/layer_composition.h"
#include "runtime_tables.h"
#include "threading/thread_pool.h"

namespace graphrt {

void register_const_loader(Runtime& runtime);
void register_time_evaluator(Runtime& runtime);
void register_core_mistakes(Runtime& runtime);  // user_mistakes.cc: .npy and .npz
void register_value_functions(Runtime& runtime);  // value/value_functions.cc: TVM's Array and ShapeTuple

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

Runtime::Runtime() : tables_(std::make_shared<Tables>()) {}

void register_core(Runtime& runtime) {
  runtime.register_device_api(kDLCPU, std::make_shared<CpuDeviceAPI>());
  register_core_functions(runtime);
  register_value_functions(runtime);
  register_const_loader(runtime);
  register_time_evaluator(runtime);
  register_core_mistakes(runtime);
}

namespace {
std::unique_ptr<Runtime> core_only_runtime() {
  auto created = std::make_unique<Runtime>();
  register_core(*created);
  return created;
}

// Constant-initialised, so it holds its value before any initialiser runs.
std::atomic<DefaultRuntimeFactory> g_default_runtime_factory{nullptr};
}  // namespace

void install_default_runtime_factory(DefaultRuntimeFactory factory) {
  g_default_runtime_factory.store(factory, std::memory_order_release);
}

Runtime& runtime() {
  // The factory registers into the runtime it creates, never through
  // runtime(): a nested call here would wait on this very initialisation.
  static Runtime* const instance = [] {
    DefaultRuntimeFactory factory = g_default_runtime_factory.load(std::memory_order_acquire);
    // Released, never destroyed (see runtime.h).
    return (factory ? factory() : core_only_runtime()).release();
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
