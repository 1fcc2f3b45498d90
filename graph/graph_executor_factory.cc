#include "graph_executor_factory.h"

#include <mutex>

#include "graphrt/binary_loader.h"
#include "graphrt/graph_json.h"
#include "src/layer_api/params_cache.h"
#include "graphrt/registry.h"

namespace graphrt {

namespace {

std::vector<DLDevice> devices_from_args(const TVMArgs& args, int first) {
  std::vector<DLDevice> devices;
  for (int i = first; i < args.size(); ++i) devices.push_back(args.as_device(i));
  if (devices.empty()) devices.push_back(DLDevice{kDLCPU, 0});
  return devices;
}


// `runtime`: the one whose record loader read the factory (the runtime the
// library was loaded through), which outlives it; its executors allocate and
// copy through that runtime's devices.
class GraphExecutorFactoryNode : public ModuleNode {
 public:
  GraphExecutorFactoryNode(FactoryContents contents, Runtime& runtime)
      : contents_(std::move(contents)), runtime_(&runtime) {}
  std::string type_key() const override { return "GraphExecutorFactory"; }
  const FactoryContents& contents() const { return contents_; }
  GraphFactoryInfo info() const {
    GraphFactoryInfo out{contents_.graph_json, {}, params()};
    for (const auto& p : out.params) out.param_names.push_back(p.first);
    return out;
  }

  PackedFunc find_function(const std::string& name, const Module& self) override {
    Module keep = self;
    if (name == contents_.module_name) {
      return make_function([this, keep](const TVMArgs& args, RetValue* ret) {
        GraphExecutorOptions options;
        ret->set_module(make_graph_executor_module(create(keep, devices_from_args(args, 0), options)));
      }, name);
    }
    if (name == "create_with_options") {  // graphrt: (plan, device_graph, dev0, dev1, ...)
      return make_function([this, keep](const TVMArgs& args, RetValue* ret) {
        GraphExecutorOptions options = executor_options_from_args(args, 0);
        ret->set_module(make_graph_executor_module(create(keep, devices_from_args(args, 2), options)));
      }, name);
    }
    if (name == "debug_create") {  // TVM: (module_name, dev0, ...); the executor module has the debug functions
      return make_function([this, keep](const TVMArgs& args, RetValue* ret) {
        std::string wanted = args.as_string(0);
        if (wanted != contents_.module_name)
          throw Error(ErrorKind::kNotFound, "debug_create: this factory holds module " + quote_untrusted(contents_.module_name) + ", not " + quote_untrusted(wanted));
        ret->set_module(make_graph_executor_module(create(keep, devices_from_args(args, 1), GraphExecutorOptions())));
      }, name);
    }
    if (name == "get_graph_json") {
      return make_function([this, keep](const TVMArgs&, RetValue* ret) { ret->set_string(contents_.graph_json); }, name);
    }
    if (name == "get_params_bytes") {  // graphrt: params in save_param_dict format
      return make_function([this, keep](const TVMArgs&, RetValue* ret) {
        ret->set_bytes(save_param_dict(params()));
      }, name);
    }
    if (name == "get_param_names") {  // graphrt: the bound params' names, one a line (no weight is copied)
      return make_function([this, keep](const TVMArgs&, RetValue* ret) {
        std::string names;
        for (const auto& p : params()) names += p.first + "\n";
        ret->set_string(names);
      }, name);
    }
    if (name == "use_params_cache") {  // graphrt: (cache_path, model_path) -> "mapped" | "written" | "rebuilt"
      return make_function([this, keep](const TVMArgs& args, RetValue* ret) {
        ret->set_string(params_cache_use_name(use_params_cache(args.as_string(0), args.as_string(1))));
      }, name);
    }
    if (name == "remove_params") {
      return make_function([this, keep](const TVMArgs&, RetValue* ret) {
        FactoryContents stripped{contents_.graph_json, {}, contents_.module_name, contents_.origin};
        auto node = make_ref<GraphExecutorFactoryNode>(std::move(stripped), *runtime_);
        node->parsed_ = parsed_graph_if_any();
        for (const Module& m : imports()) node->add_import(m);
        ret->set_module(Module(node));
      }, name);
    }
    return PackedFunc();
  }

  std::vector<std::string> function_names() const override {
    return {contents_.module_name, "create_with_options", "debug_create", "get_graph_json", "get_params_bytes", "get_param_names",
            "remove_params", "use_params_cache"};
  }

 private:
  // `self` (this factory, the root of its module tree) lives as long as the
  // executor: the tree is what later loads of the same image share, so its
  // library's context and its BYOC constants stay the ones in use.
  std::shared_ptr<GraphExecutor> create(const Module& self, const std::vector<DLDevice>& devices,
                                        GraphExecutorOptions options) {
    if (imports().empty()) {
      Error e("GraphExecutorFactory has no library module to run: the blob's _import_tree gives it no imports");
      e.with("record", "GraphExecutorFactory").with("field", "_import_tree");
      if (!contents_.origin.empty()) e.with("file", contents_.origin);
      throw e;
    }
    options.owner = self;
    options.runtime = runtime_;
    options.parsed_graph = parsed_graph();
    // The factory's arrays become the executor's param storage: one copy of
    // the params however many executors are made.
    return GraphExecutor::create_with_params(contents_.graph_json, imports()[0], devices, options, params());
  }

  // The graph JSON parsed on the first executor's creation (where a malformed one is reported,
  // as before), then shared by every executor made: one parse and one copy of the graph's
  // structure for a server's instances.
  std::shared_ptr<const GraphDef> parsed_graph() {
    std::lock_guard<std::mutex> lock(parsed_mutex_);
    if (!parsed_) parsed_ = std::make_shared<const GraphDef>(parse_graph_json(contents_.graph_json));
    return parsed_;
  }
  std::shared_ptr<const GraphDef> parsed_graph_if_any() {
    std::lock_guard<std::mutex> lock(parsed_mutex_);
    return parsed_;
  }

  ParamList params() const {
    std::lock_guard<std::mutex> lock(params_mutex_);
    return contents_.params;
  }

  // From now on the factory's params are the cache's mapping, and its decoded
  // arrays go once no executor made before holds them: processes serving the
  // model share the mapping's pages instead of a decoded copy each.
  ParamsCacheUse use_params_cache(const std::string& cache_path, const std::string& model_path) {
    const ParamList own = params();
    ParamsCacheUse use;
    ParamList mapped = open_params_cache(cache_path, model_path, [&] { return own; }, &own, &use);
    std::lock_guard<std::mutex> lock(params_mutex_);
    contents_.params = std::move(mapped);
    return use;
  }

  FactoryContents contents_;
  Runtime* runtime_;
  mutable std::mutex params_mutex_;  // use_params_cache replaces contents_.params
  std::mutex parsed_mutex_;
  std::shared_ptr<const GraphDef> parsed_;
};

Module load_factory(BlobReader& reader, Runtime& runtime) {
  FactoryContents c;
  c.graph_json = reader.read_string("factory graph JSON");
  uint64_t count = reader.read_u64("factory param count");
  std::vector<std::string> names = reader.read_string_vector("factory param names");
  if (names.size() != count)
    throw reader.error("GraphExecutorFactory says " + std::to_string(count) + " params but lists " +
                       std::to_string(names.size()) + " names");
  std::vector<NDArray> arrays = read_ndarray_records(runtime, reader, names, "param");
  c.params.reserve(names.size());
  for (size_t i = 0; i < names.size(); ++i) c.params.emplace_back(names[i], std::move(arrays[i]));
  c.module_name = reader.read_string("factory module name");
  c.origin = reader.origin();
  return Module(make_ref<GraphExecutorFactoryNode>(std::move(c), runtime));
}

}  // namespace

void write_graph_executor_factory(BlobWriter& writer, const std::string& graph_json, const ParamList& params,
                                  const std::string& module_name) {
  writer.write_string(graph_json);
  writer.write_u64(params.size());
  writer.write_u64(params.size());
  for (const auto& p : params) writer.write_string(p.first);
  for (const auto& p : params) write_ndarray_record(writer, p.second.handle());
  writer.write_string(module_name);
}

GraphExecutorOptions executor_options_from_args(const TVMArgs& args, int first) {
  GraphExecutorOptions options;
  std::string plan = args.as_string(first);
  if (!plan.empty()) {
    options.memory_plan = memory_plan_from_name(plan);
    options.memory_plan_from_env = false;
  }
  options.device_graph = args.as_int(first + 1) != 0;
  return options;
}

const FactoryContents* factory_contents(const Module& module) {
  auto* node = dynamic_cast<GraphExecutorFactoryNode*>(module.get());
  return node ? &node->contents() : nullptr;
}

GraphFactoryInfo graph_factory_info(const Module& factory) {
  const auto* node = dynamic_cast<const GraphExecutorFactoryNode*>(factory.get());
  if (!node) {
    const std::string key = factory.get() ? factory->type_key() : std::string("(none)");
    throw Error(ErrorKind::kTypeMismatch, "module " + quote_untrusted(key) + " is not a graph executor factory").with("tkey", key);
  }
  return node->info();
}

void register_graph_executor_factory(Runtime& runtime) {
  // The factories a runtime's loader reads belong to that runtime.
  const auto load = [&runtime](BlobReader& reader) { return load_factory(reader, runtime); };
  runtime.register_binary_loader("GraphExecutorFactory", load);
  runtime.register_binary_loader("GraphRuntimeFactory", load);
}

}  // namespace graphrt
