// Registrations of the graph layer: the factory blob handler and TVM's
// `tvm.graph_executor.create` entry point.
#include "graph_executor_factory.h"
#include "graphrt/registry.h"
#include "graphrt/runtime.h"

namespace graphrt {

namespace {
// tvm.graph_executor.create(graph_json, lib, [lookup_linked_param], dev_type0, dev_id0, ...)
void create_from_registry(const TVMArgs& args, RetValue* ret) {
  if (args.size() < 4) throw Error("tvm.graph_executor.create needs graph_json, lib and at least one device");
  int first = args.code(2) == kTVMPackedFuncHandle ? 3 : 2;
  if ((args.size() - first) % 2 != 0) throw Error("tvm.graph_executor.create: devices must be (type, id) pairs");
  std::vector<DLDevice> devices;
  for (int i = first; i < args.size(); i += 2)
    devices.push_back(DLDevice{static_cast<DLDeviceType>(args.as_int(i)), static_cast<int32_t>(args.as_int(i + 1))});
  ret->set_module(make_graph_executor_module(GraphExecutor::create(args.as_string(0), args.as_module(1), devices)));
}

// graphrt.graph_executor.create_with_options(graph_json, lib, plan, device_graph, dev0, dev1, ...)
// with DLDevice args; plan is "tvm", "liveness" or "" (environment default).
void create_with_options(const TVMArgs& args, RetValue* ret) {
  GraphExecutorOptions options;
  std::string plan = args.as_string(2);
  if (!plan.empty()) {
    if (plan != "tvm" && plan != "liveness") throw Error("unknown memory plan '" + plan + "'");
    options.memory_plan = plan == "liveness" ? MemoryPlan::kLiveness : MemoryPlan::kTvm;
    options.memory_plan_from_env = false;
  }
  options.device_graph = args.as_int(3) != 0;
  std::vector<DLDevice> devices;
  for (int i = 4; i < args.size(); ++i) devices.push_back(args.as_device(i));
  if (devices.empty()) devices.push_back(DLDevice{kDLCPU, 0});
  ret->set_module(make_graph_executor_module(GraphExecutor::create(args.as_string(0), args.as_module(1), devices, options)));
}
}  // namespace

void register_graph_executor() {
  register_graph_executor_factory();
  registry_set("tvm.graph_executor.create", make_function(create_from_registry, "tvm.graph_executor.create"));
  // graphrt's executor module carries the debug functions itself.
  registry_set("tvm.graph_executor_debug.create", make_function(create_from_registry, "tvm.graph_executor_debug.create"));
  registry_set("graphrt.graph_executor.create_with_options",
               make_function(create_with_options, "graphrt.graph_executor.create_with_options"));
}

}  // namespace graphrt
