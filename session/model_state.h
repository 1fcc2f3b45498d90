// What a loaded Model holds, shared by its runners (session layer, internal).
#pragma once

#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "graphrt/relax_vm.h"
#include "graphrt/session.h"

namespace graphrt {

// Internal: defined here, not in the public header. It declares no member
// function (one would inherit the exported visibility of its declaration in
// session.h); what works on it is the free functions below.
struct Model::State {
  ModelKind kind = ModelKind::kGraph;
  // The session's runtime (it outlives the session's models): the devices and functions of
  // what the model makes outside its root's own (three-file executors, input copies, results).
  Runtime* runtime = nullptr;
  Module root;
  DLDevice device{kDLCPU, 0};
  SessionOptions options;
  std::vector<FunctionSpec> functions;
  std::vector<std::string> params;

  // Graph: the executor made at load (metadata is read from it; the first
  // runner takes it); the three-file form's graph and decoded params, which
  // later executors bind (the same arrays, no copy).
  std::mutex first_mutex;
  std::shared_ptr<GraphExecutor> first_executor;
  bool three_file = false;
  std::string graph_json;
  ParamList three_file_params;
  // Graph factories of one model at several batch sizes (Model::share_params): the params
  // they bind in common; `root` is then the factory without its own params.
  std::shared_ptr<const ParamList> shared_params;
};

// A new executor of a graph model: over the three-file form's graph and params,
// or from the factory (which binds its own params, shared by every executor).
std::shared_ptr<GraphExecutor> new_graph_executor(const Model::State& state);

// session/graph_model.cc and relax_model.cc: filling a State, making runners.
void load_graph_model(Model::State& state, const ModelSource& source);
void load_relax_model(Model::State& state, const ModelSource& source);
// source.params_cache: the root's own params (a factory's, a Relax executable's constants)
// mapped from the cache, before any executor or VM is made. Errors name the cache.
void use_root_params_cache(const Module& root, const ModelSource& source);
std::unique_ptr<Runner> make_graph_runner(std::shared_ptr<Model::State> state, std::shared_ptr<GraphExecutor> executor);
std::unique_ptr<Runner> make_relax_runner(std::shared_ptr<Model::State> state, const FunctionSpec& function);

}  // namespace graphrt
