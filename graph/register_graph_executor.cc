// Registrations of the graph layer: the factory blob handler and TVM's
// `tvm.graph_executor.create` entry point.
#include <cctype>
#include <cstring>

#include "graph_executor_factory.h"
#include "graphrt/registry.h"
#include "graphrt/runtime.h"
#include "src/layer_api/user_mistakes.h"
#include "register_graph_executor.h"

namespace graphrt {

namespace {
// tvm.graph_executor.create(graph_json, lib, [lookup_linked_param], dev_type0, dev_id0, ...), as
// registered in `runtime`, whose devices the executor uses.
void create_from_registry(Runtime& runtime, const TVMArgs& args, RetValue* ret) {
  if (args.size() < 4) throw Error("tvm.graph_executor.create needs graph_json, lib and at least one device");
  int first = args.code(2) == kTVMPackedFuncHandle ? 3 : 2;
  if ((args.size() - first) % 2 != 0) throw Error("tvm.graph_executor.create: devices must be (type, id) pairs");
  std::vector<DLDevice> devices;
  for (int i = first; i < args.size(); i += 2)
    devices.push_back(DLDevice{static_cast<DLDeviceType>(args.as_int(i)), static_cast<int32_t>(args.as_int(i + 1))});
  GraphExecutorOptions options;
  options.runtime = &runtime;
  ret->set_module(make_graph_executor_module(GraphExecutor::create(args.as_string(0), args.as_module(1), devices, options)));
}

// graphrt.graph_executor.create_with_options(graph_json, lib, plan, device_graph, dev0, dev1, ...)
// with DLDevice args; plan is a memory-plan name or "" (environment default).
void create_with_options(Runtime& runtime, const TVMArgs& args, RetValue* ret) {
  GraphExecutorOptions options = executor_options_from_args(args, 2);
  options.runtime = &runtime;
  std::vector<DLDevice> devices;
  for (int i = 4; i < args.size(); ++i) devices.push_back(args.as_device(i));
  if (devices.empty()) devices.push_back(DLDevice{kDLCPU, 0});
  ret->set_module(make_graph_executor_module(GraphExecutor::create(args.as_string(0), args.as_module(1), devices, options)));
}
bool is_params_file(const uint8_t* head, size_t size) {
  static const uint8_t kParamsMagic[8] = {0xB7, 0x9C, 0x04, 0x05, 0x4F, 0x8D, 0xE5, 0xF7};  // params.cc's
  return size >= 8 && std::memcmp(head, kParamsMagic, 8) == 0;
}

bool is_graph_json(const uint8_t* head, size_t size) {
  size_t first = 0;
  while (first < size && std::isspace(head[first])) ++first;
  return first < size && head[first] == '{';
}

// The graph layer's two files, as a model library: said as such (user_mistakes.h).
void register_graph_file_mistakes(Runtime& runtime) {
  register_misplaced_file_kind(runtime, {"a params file (TVM's save_param_dict format)",
                                         "load the model's kernels library (deploy_lib.so) and give this file as its "
                                         "graph executor's params",
                                         "params", &is_params_file});
  register_misplaced_file_kind(runtime, {"a graph JSON (TVM's graph executor format)",
                                         "load the model's kernels library (deploy_lib.so) and create a graph "
                                         "executor of this graph over it",
                                         "graph", &is_graph_json});
}
}  // namespace

void register_graph_executor(Runtime& runtime) {
  register_graph_file_mistakes(runtime);
  // The reverse of the Relax executable's hint: a graph export handed to a Relax VM.
  register_module_usage_hint(runtime, "GraphExecutorFactory",
                             "a graph executor factory (a graph export), not a Relax executable: run it with a graph "
                             "executor (C++ graphrt::GraphExecutor, Python "
                             "graph_executor.GraphModule(lib[\"default\"](dev))), not relax.VirtualMachine");
  register_graph_executor_factory(runtime);
  // Each creates its executor on the devices of the runtime it is registered in.
  const auto create = [&runtime](const TVMArgs& args, RetValue* ret) { create_from_registry(runtime, args, ret); };
  runtime.set_function("tvm.graph_executor.create", make_function(create, "tvm.graph_executor.create"));
  // graphrt's executor module carries the debug functions itself.
  runtime.set_function("tvm.graph_executor_debug.create", make_function(create, "tvm.graph_executor_debug.create"));
  runtime.set_function("graphrt.graph_executor.create_with_options",
                       make_function([&runtime](const TVMArgs& args, RetValue* ret) { create_with_options(runtime, args, ret); },
                                     "graphrt.graph_executor.create_with_options"));
}

}  // namespace graphrt
