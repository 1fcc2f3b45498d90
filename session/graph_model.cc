// A graph executor model in the session layer: loaded as one file (a
// GraphExecutorFactory root) or three (kernels, graph JSON, params); its
// metadata read from the executor made at load, never from re-serialised params.
#include <algorithm>

#include "graphrt/params_cache.h"
#include "graphrt/regular_file.h"
#include "input_tensor.h"
#include "model_state.h"

namespace graphrt {

namespace {

GraphExecutorOptions executor_options(const Model::State& state) {
  const SessionOptions& o = state.options;
  GraphExecutorOptions options;
  options.runtime = state.runtime;
  if (!o.memory_plan.empty()) {
    options.memory_plan = memory_plan_from_name(o.memory_plan);
    options.memory_plan_from_env = false;
  }
  options.device_graph = o.device_graph;
  return options;
}

TensorSpec spec_of(const TensorInfo& info) { return TensorSpec{info.name, info.dtype, info.shape, true, {}}; }

void describe(Model::State& state, const GraphExecutor& executor) {
  FunctionSpec f;
  f.name = "default";
  for (const TensorInfo& info : executor.input_info()) f.inputs.push_back(spec_of(info));
  for (const TensorInfo& info : executor.output_info()) f.outputs.push_back(spec_of(info));
  state.functions = {f};
  state.params = executor.param_names();
}

// The three-file form's params: decoded from the params file, or mapped from the params
// cache (the params file read only when the cache is written).
ParamList three_file_params(const Model::State& state, const ModelSource& source) {
  const auto decode = [&] {
    return load_param_dict(*state.runtime, read_regular_file(source.params_path, "params file"), source.params_path);
  };
  if (source.params_cache.empty()) return decode();
  try {
    return map_params_cache(source.params_cache, source.params_path, decode);
  } catch (Error& e) {
    throw e.with("params cache", source.params_cache);
  }
}

}  // namespace

std::shared_ptr<GraphExecutor> new_graph_executor(const Model::State& state) {
  if (state.shared_params) {
    GraphExecutorOptions options = executor_options(state);
    options.owner = state.root;  // the factory (without params): its library tree stays loaded
    return GraphExecutor::create_with_params(state.graph_json, state.root->imports().at(0), {state.device}, options,
                                             *state.shared_params);
  }
  if (state.three_file)
    return GraphExecutor::create_with_params(state.graph_json, state.root, {state.device}, executor_options(state),
                                             state.three_file_params);
  // The factory's TVM face: it binds its own params (shared by every executor it makes).
  ArgList args;
  args.add_string(state.options.memory_plan).add_int(state.options.device_graph ? 1 : 0).add_device(state.device);
  std::shared_ptr<GraphExecutor> executor =
      graph_executor_of(call_function(state.root->require_function("create_with_options"), args).as_module());
  if (!executor) throw Error(ErrorKind::kInternal, "the graph executor factory returned no graph executor");
  return executor;
}

void load_graph_model(Model::State& state, const ModelSource& source) {
  state.kind = ModelKind::kGraph;
  if (!source.graph_json_path.empty()) {
    state.three_file = true;
    state.graph_json = read_regular_file(source.graph_json_path, "graph JSON");
    if (!source.params_path.empty()) state.three_file_params = three_file_params(state, source);
  } else if (model_kind_of(state.root) != ModelKind::kGraph) {
    throw Error("the model's root is a " + quote_untrusted(state.root->type_key()) +
                " module, not a graph executor factory or a Relax executable: give a graph JSON (and its params) "
                "for a kernels library")
        .with("file", source.path)
        .with("option", "graph");
  } else {
    use_root_params_cache(state.root, source);
  }
  state.first_executor = new_graph_executor(state);
  describe(state, *state.first_executor);
}

namespace {

class GraphRunner final : public Runner {
 public:
  GraphRunner(std::shared_ptr<Model::State> state, std::shared_ptr<GraphExecutor> executor)
      : state_(std::move(state)), executor_(std::move(executor)) {
    // The executor numbers every arg node, params included; the function's inputs are the data ones.
    for (const TensorSpec& t : function().inputs) executor_indices_.push_back(index_of(t.name));
  }
  const FunctionSpec& function() const override { return state_->functions.front(); }
  void set_input(const std::string& name, const DLTensor* value) override {
    check(name, value, InputUse::kCopied);
    executor_->set_input(name, value);
  }
  void set_checked_input(int index, const DLTensor* value) override {
    executor_->set_checked_input(executor_indices_.at(static_cast<size_t>(index)), value);
  }
  void set_input_zero_copy(const std::string& name, const DLTensor* value) override {
    const int index = index_of(name);
    check(name, value, InputUse::kZeroCopy);
    executor_->set_input_zero_copy(index, value);
  }
  void run() override { executor_->run(); }
  int num_outputs() const override { return executor_->num_outputs(); }
  NDArray output(int index) const override { return executor_->get_output(index); }
  Value result() const override {
    Value tuple;
    tuple.kind = Value::Kind::kTuple;
    tuple.items.resize(static_cast<size_t>(executor_->num_outputs()));
    for (size_t i = 0; i < tuple.items.size(); ++i) {
      tuple.items[i].kind = Value::Kind::kTensor;
      tuple.items[i].tensor = executor_->get_output(static_cast<int>(i));
    }
    return tuple;
  }
  RunProfile profile(int repeat, int warmup) override {
    const ProfileReport report = executor_->profile(repeat, warmup);
    return RunProfile{report.table(), report.chrome_trace()};
  }
  std::optional<MemoryReport> memory_report() const override { return executor_->memory_report(); }
  RunnerSharing sharing_with(const Runner& other) const override {
    RunnerSharing shared;
    const auto* graph_runner = dynamic_cast<const GraphRunner*>(&other);
    if (!graph_runner) return shared;
    shared.graph = &executor_->graph() == &graph_runner->executor_->graph();
    shared.executor = executor_ == graph_runner->executor_;
    return shared;
  }

 private:
  // An unknown name is left to the executor's error (it lists the inputs); a known one's
  // tensor is checked at the rank the graph gives it.
  void check(const std::string& name, const DLTensor* value, InputUse use) const {
    for (const TensorSpec& t : function().inputs)
      if (t.name == name) return check_input_tensor(value, name, use, static_cast<int>(t.shape.size()));
  }
  int index_of(const std::string& name) const {
    const int index = executor_->input_index(name);
    if (index < 0) throw Error(ErrorKind::kNotFound, "unknown input " + quote_untrusted(name)).with("tensor", name);
    return index;
  }
  std::shared_ptr<Model::State> state_;
  std::shared_ptr<GraphExecutor> executor_;
  std::vector<int> executor_indices_;  // of function().inputs
};

}  // namespace

std::unique_ptr<Runner> make_graph_runner(std::shared_ptr<Model::State> state, std::shared_ptr<GraphExecutor> executor) {
  return std::make_unique<GraphRunner>(std::move(state), std::move(executor));
}

}  // namespace graphrt
