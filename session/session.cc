#include "graphrt/session.h"

#include "model_state.h"

namespace graphrt {

Runner::~Runner() = default;

std::optional<ModelKind> model_kind_of(const Module& root) {
  if (!root.get()) return std::nullopt;
  const std::string key = root->type_key();
  if (key == "GraphExecutorFactory" || key == "GraphRuntimeFactory") return ModelKind::kGraph;
  if (key == "relax.VMExecutable" || key == "relax.Executable") return ModelKind::kRelax;
  return std::nullopt;
}

Session::Session(Runtime& runtime, DLDevice device, SessionOptions options)
    : runtime_(runtime), device_(device), options_(std::move(options)) {}

std::shared_ptr<Model> Session::load(const ModelSource& source) const {
  LoadOptions load = options_.load;
  load.runtime = &runtime_;  // the session's loaders read the file
  return open(load_module(source.path, load), source);
}

std::shared_ptr<Model> Session::open(Module root, const ModelSource& source) const {
  if (!source.params_path.empty() && source.graph_json_path.empty())
    throw Error("a params file needs a graph JSON (three-file form)").with("file", source.params_path).with("option", "graph");
  auto state = std::make_shared<Model::State>();
  state->runtime = &runtime_;
  state->device = device_;
  state->options = options_;
  state->root = std::move(root);
  if (source.graph_json_path.empty() && model_kind_of(state->root) == ModelKind::kRelax) {
    state->kind = ModelKind::kRelax;
    load_relax_model(*state, source);
  } else {
    load_graph_model(*state, source);
  }
  return std::make_shared<Model>(state);
}

Model::Model(std::shared_ptr<State> state) : state_(std::move(state)) {}
ModelKind Model::kind() const { return state_->kind; }
const Module& Model::root() const { return state_->root; }
const std::vector<FunctionSpec>& Model::functions() const { return state_->functions; }
const std::vector<std::string>& Model::params() const { return state_->params; }

const FunctionSpec& Model::function(const std::string& name) const {
  std::string list;
  for (const FunctionSpec& f : state_->functions) {
    if (f.name == name || (name.empty() && (f.name == "main" || f.name == "default"))) return f;
    list += (list.empty() ? "" : ", ") + f.name;
  }
  if (name.empty() && state_->functions.size() == 1) return state_->functions.front();
  throw Error(ErrorKind::kNotFound, (name.empty() ? std::string("the model has no entry function 'main'")
                                                  : "the model has no function " + quote_untrusted(name)) +
                                        " (functions: " + list + ")")
      .with("function", name)
      .with("option", "function");
}

std::unique_ptr<Runner> Model::runner(const std::string& function_name) const {
  const FunctionSpec& f = function(function_name);
  if (state_->kind == ModelKind::kRelax) return make_relax_runner(state_, f);
  std::shared_ptr<GraphExecutor> executor;
  {
    std::lock_guard<std::mutex> lock(state_->first_mutex);
    executor = std::move(state_->first_executor);
    state_->first_executor.reset();
  }
  if (!executor) executor = new_graph_executor(*state_);
  return make_graph_runner(state_, std::move(executor));
}

}  // namespace graphrt
