// The "GraphExecutor" module: TVM's packed-function interface
// over GraphExecutor, so TVM-style callers (Python, C) drive it by name.
#include <fstream>
#include <functional>
#include <map>

#include "src/layer_api/time_evaluator_support.h"
#include "graphrt/graph_executor.h"
#include "graphrt/json_writer.h"

namespace graphrt {

namespace {

using Method = std::function<void(GraphExecutor&, const TVMArgs&, RetValue*)>;

// {"dtype": {name: "float32"}, "shape": {name: [dims]}}: TVM's (shape_dict, dtype_dict). Names in
// bytewise order, the last of a repeated name, as graphrt gave them before it wrote them with JsonWriter.
std::string tensor_info_json(const std::vector<TensorInfo>& infos) {
  std::map<std::string, const TensorInfo*> by_name;
  for (const TensorInfo& t : infos) by_name[t.name] = &t;
  JsonWriter w;
  w.begin_object().key("dtype").begin_object();
  for (const auto& [name, t] : by_name) w.key(name).string(dtype_to_string(t->dtype));
  w.end_object().key("shape").begin_object();
  for (const auto& [name, t] : by_name) {
    w.key(name).begin_array();
    for (int64_t d : t->shape) w.integer(d);
    w.end_array();
  }
  w.end_object().end_object();
  return w.take();
}

int input_index_arg(GraphExecutor& ex, const TVMArgs& args, int i, bool* unknown) {
  if (args.code(i) == kTVMStr) {
    int index = ex.input_index(args.as_string(i));
    *unknown = index < 0;
    return index;
  }
  *unknown = false;
  return static_cast<int>(args.as_int(i));
}

int output_index_arg(GraphExecutor& ex, const TVMArgs& args, int i) {
  if (args.code(i) != kTVMStr) return static_cast<int>(args.as_int(i));
  std::string name = args.as_string(i);
  int index = ex.output_index(name);
  if (index < 0) throw Error(ErrorKind::kNotFound, "no graph output named " + quote_untrusted(name)).with("tensor", name);
  return index;
}

// (number, repeat, min_repeat_ms, limit_zero_time_iterations,
// cooldown_interval_ms, repeats_to_cooldown) from args[first...], as TVM's
// run_individual passes them; missing trailing ones keep TVM's defaults.
TimingOptions timing_args(const TVMArgs& a, int first) {
  TimingOptions o;
  int* fields[] = {&o.number, &o.repeat, &o.min_repeat_ms, &o.limit_zero_time_iterations, &o.cooldown_interval_ms,
                   &o.repeats_to_cooldown};
  for (int i = 0; i < 6 && first + i < a.size(); ++i) *fields[i] = static_cast<int>(a.as_int(first + i));
  return o;
}

int node_arg(GraphExecutor& ex, const TVMArgs& a, int i) {
  if (a.code(i) != kTVMStr) return static_cast<int>(a.as_int(i));
  std::string name = a.as_string(i);
  int index = ex.node_index(name);
  if (index < 0) throw Error(ErrorKind::kNotFound, "no graph node named " + quote_untrusted(name)).with("node", name);
  return index;
}

// run_from_inputs(device_type, device_id, name0, value0, ...): sets the inputs,
// runs, and copies every output to the device (TVM's end-to-end benchmark body).
void run_from_inputs(GraphExecutor& ex, const TVMArgs& a) {
  if (a.size() < 2 || a.size() % 2 != 0)
    throw Error("run_from_inputs takes device_type, device_id, then (name, array) pairs");
  DLDevice device{static_cast<DLDeviceType>(a.as_int(0)), static_cast<int32_t>(a.as_int(1))};
  for (int i = 2; i < a.size(); i += 2) ex.set_input(a.as_string(i), a.as_tensor(i + 1));
  ex.run();
  for (int i = 0; i < ex.num_outputs(); ++i) ex.get_output(i).copy_to_device(device);
}

const std::map<std::string, Method>& methods() {
  static const std::map<std::string, Method> table = {
      {"set_input", [](GraphExecutor& ex, const TVMArgs& a, RetValue*) {
         if (a.code(0) == kTVMStr) {
           ex.set_input(a.as_string(0), a.as_tensor(1));  // graphrt reports unknown names (TVM ignores them)
         } else {
           ex.set_input(static_cast<int>(a.as_int(0)), a.as_tensor(1));
         }
       }},
      {"set_input_zero_copy", [](GraphExecutor& ex, const TVMArgs& a, RetValue*) {
         bool unknown;
         int index = input_index_arg(ex, a, 0, &unknown);
         if (unknown) throw Error(ErrorKind::kNotFound,
                                  "unknown input " + quote_untrusted(a.as_string(0))).with("tensor", a.as_string(0));
         ex.set_input_zero_copy(index, a.as_tensor(1));
       }},
      {"set_output_zero_copy", [](GraphExecutor& ex, const TVMArgs& a, RetValue*) {
         ex.set_output_zero_copy(output_index_arg(ex, a, 0), a.as_tensor(1));
       }},
      {"get_output", [](GraphExecutor& ex, const TVMArgs& a, RetValue* r) {
         int index = output_index_arg(ex, a, 0);
         if (a.size() > 1) {
           ex.copy_output_to(index, a.as_tensor(1));
         } else {
           r->set_ndarray(ex.get_output(index));
         }
       }},
      {"get_input", [](GraphExecutor& ex, const TVMArgs& a, RetValue* r) {
         bool unknown;
         int index = input_index_arg(ex, a, 0, &unknown);
         if (!unknown) r->set_ndarray(ex.get_input(index));
       }},
      {"get_num_outputs", [](GraphExecutor& ex, const TVMArgs&, RetValue* r) { r->set_int(ex.num_outputs()); }},
      {"get_num_inputs", [](GraphExecutor& ex, const TVMArgs&, RetValue* r) { r->set_int(ex.num_inputs()); }},
      {"get_input_index", [](GraphExecutor& ex, const TVMArgs& a, RetValue* r) {
         r->set_int(ex.input_index(a.as_string(0)));
       }},
      {"get_output_index", [](GraphExecutor& ex, const TVMArgs& a, RetValue* r) {
         r->set_int(ex.output_index(a.as_string(0)));
       }},
      {"get_input_name", [](GraphExecutor& ex, const TVMArgs& a, RetValue* r) {
         r->set_string(ex.input_name(static_cast<int>(a.as_int(0))));
       }},
      // graphrt: get_input_info / get_output_info as JSON text ({"shape": {...}, "dtype": {...}}),
      // since graphrt exposes no Map objects.
      {"get_input_info_json", [](GraphExecutor& ex, const TVMArgs&, RetValue* r) {
         r->set_string(tensor_info_json(ex.input_info()));
       }},
      {"get_output_info_json", [](GraphExecutor& ex, const TVMArgs&, RetValue* r) {
         r->set_string(tensor_info_json(ex.output_info()));
       }},
      {"run", [](GraphExecutor& ex, const TVMArgs&, RetValue*) { ex.run(); }},
      {"load_params", [](GraphExecutor& ex, const TVMArgs& a, RetValue*) { ex.load_params(a.as_string(0)); }},
      {"share_params", [](GraphExecutor& ex, const TVMArgs& a, RetValue*) {
         auto other = graph_executor_of(a.as_module(0));
         if (!other) throw Error(ErrorKind::kTypeMismatch, "share_params: argument 0 is not a graph executor module");
         ex.share_params(*other, a.as_string(1));
       }},
      // graphrt: profile(runs) -> text table; profile_trace(runs, path) writes Chrome-trace JSON.
      {"profile", [](GraphExecutor& ex, const TVMArgs& a, RetValue* r) {
         int runs = a.size() > 0 ? static_cast<int>(a.as_int(0)) : 1;
         r->set_string(ex.profile(runs).table());
       }},
      {"profile_trace", [](GraphExecutor& ex, const TVMArgs& a, RetValue* r) {
         ProfileReport report = ex.profile(static_cast<int>(a.as_int(0)));
         std::string path = a.as_string(1);
         std::ofstream out(path);
         if (!out) throw Error("cannot write trace file").with("file", path);
         out << report.chrome_trace();
         r->set_string(report.table());
       }},
      // TVM's debug executor interface (tvm.graph_executor_debug.create gives this module too).
      {"execute_node", [](GraphExecutor& ex, const TVMArgs& a, RetValue*) { ex.execute_node(node_arg(ex, a, 0)); }},
      {"get_node_output", [](GraphExecutor& ex, const TVMArgs& a, RetValue* r) {
         r->set_ndarray(ex.node_output(node_arg(ex, a, 0), static_cast<int>(a.as_int(1))).copy_to_device({kDLCPU, 0}));
       }},
      // debug_get_output(node[, out]): runs the graph up to `node` and gives its first output.
      {"debug_get_output", [](GraphExecutor& ex, const TVMArgs& a, RetValue* r) {
         int node = node_arg(ex, a, 0);
         ex.execute_node(node, true);
         NDArray value = ex.node_output(node, 0);
         if (a.size() > 1) {
           copy_tensor(value.handle(), a.as_tensor(1));
         } else {
           r->set_ndarray(value.copy_to_device({kDLCPU, 0}));
         }
       }},
      // run_individual(number, repeat, ...) -> int64 node count, then `repeat`
      // doubles (seconds per call) per node.
      {"run_individual", [](GraphExecutor& ex, const TVMArgs& a, RetValue* r) {
         std::vector<std::vector<double>> per_node = ex.time_nodes(timing_args(a, 0));
         int64_t count = static_cast<int64_t>(per_node.size());
         std::string blob(reinterpret_cast<const char*>(&count), sizeof(count));
         for (const auto& seconds : per_node) blob += pack_doubles(seconds);
         r->set_bytes(blob);
       }},
      {"run_individual_node", [](GraphExecutor& ex, const TVMArgs& a, RetValue* r) {
         r->set_bytes(pack_doubles(ex.time_node(node_arg(ex, a, 0), timing_args(a, 1))));
       }},
      {"run_from_inputs", [](GraphExecutor& ex, const TVMArgs& a, RetValue*) { run_from_inputs(ex, a); }},
      {"memory_report", [](GraphExecutor& ex, const TVMArgs&, RetValue* r) {
         MemoryReport m = ex.memory_report();
         r->set_string("{\"tvm_plan_bytes\":" + std::to_string(m.tvm_plan_bytes) + ",\"liveness_plan_bytes\":" +
                       std::to_string(m.liveness_plan_bytes) + ",\"allocated_bytes\":" +
                       std::to_string(m.allocated_bytes) + ",\"liveness_concatenations_in_place\":" +
                       std::to_string(m.liveness_concatenations_in_place) + ",\"active\":\"" +
                       memory_plan_name(m.active) + "\"}");
       }},
  };
  return table;
}

class GraphExecutorModuleNode : public ModuleNode {
 public:
  explicit GraphExecutorModuleNode(std::shared_ptr<GraphExecutor> executor) : executor_(std::move(executor)) {}
  std::string type_key() const override { return "GraphExecutor"; }
  PackedFunc find_function(const std::string& name, const Module& self) override {
    auto it = methods().find(name);
    if (it == methods().end()) return PackedFunc();
    const Method& method = it->second;
    Module keep = self;
    GraphExecutor* ex = executor_.get();
    return make_function([keep, ex, &method](const TVMArgs& args, RetValue* ret) { method(*ex, args, ret); }, name);
  }
  std::vector<std::string> function_names() const override {
    std::vector<std::string> names;
    for (const auto& kv : methods()) names.push_back(kv.first);
    return names;
  }
  const std::shared_ptr<GraphExecutor>& executor() const { return executor_; }

 private:
  std::shared_ptr<GraphExecutor> executor_;
};

}  // namespace

Module make_graph_executor_module(std::shared_ptr<GraphExecutor> executor) {
  return Module(make_ref<GraphExecutorModuleNode>(std::move(executor)));
}

std::shared_ptr<GraphExecutor> graph_executor_of(const Module& module) {
  auto* node = dynamic_cast<GraphExecutorModuleNode*>(module.get());
  return node ? node->executor() : nullptr;
}

}  // namespace graphrt
