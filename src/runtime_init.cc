// One-time registration of the built-in handlers, devices and back ends.
#include <dlfcn.h>

#include <mutex>

#include "cpu_device_api.h"
#include "dlopen_path.h"
#include "graphrt/runtime.h"
#include "thread_pool.h"

namespace graphrt {

void register_const_loader();
void register_time_evaluator();

namespace {
void register_core_functions() {
  registry_set("__tvm_set_device", make_function([](const TVMArgs& args, RetValue*) {
    DLDevice dev{static_cast<DLDeviceType>(args.as_int(0)), static_cast<int32_t>(args.as_int(1))};
    if (dev.device_type != kDLCPU) device_api(dev)->set_device(dev);
  }, "__tvm_set_device"));
  registry_set("runtime.SystemLib", make_function([](const TVMArgs& args, RetValue* ret) {
    ret->set_module(system_lib(args.size() > 0 ? args.as_string(0) : ""));
  }, "runtime.SystemLib"));
  registry_set("runtime.module.loadfile_so", make_function([](const TVMArgs& args, RetValue* ret) {
    ret->set_module(load_module(args.as_string(0)));
  }, "runtime.module.loadfile_so"));
}
}  // namespace

void runtime_init() {
  static std::once_flag once;
  std::call_once(once, [] {
    register_device_api(kDLCPU, std::make_shared<CpuDeviceAPI>());
    register_core_functions();
    register_const_loader();
    register_time_evaluator();
    register_graph_executor();
    register_builtin_modules();
  });
}

void load_plugin(const std::string& path) {
  runtime_init();
  void* handle = dlopen(dlopen_path(path).c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!handle) {
    const char* why = dlerror();
    throw Error(std::string("cannot load plugin: ") + (why ? why : "dlopen failed")).with("file", path);
  }
  using InitFn = int (*)();
  auto init = reinterpret_cast<InitFn>(dlsym(handle, "graphrt_plugin_init"));
  if (!init) {
    dlclose(handle);
    throw Error("plugin has no graphrt_plugin_init function").with("file", path).with("symbol", "graphrt_plugin_init");
  }
  // Plugins stay loaded: their handlers and functions are now in the registries.
  if (init() != 0) throw Error("graphrt_plugin_init failed: " + last_error()).with("file", path);
}

}  // namespace graphrt
