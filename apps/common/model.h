// Loading a model in either form (one-file factory .so, or kernels .so + graph JSON + params)
// for the command-line apps.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "args.h"
#include "graphrt/graph_executor.h"
#include "graphrt/runtime.h"
#include "graphrt/session.h"

namespace graphrt_apps {

// A model file as the command-line apps load it (graphrt::Model is the session layer's view of
// it, made by make_runner or by a Relax path's Session).
struct ModelFile {
  graphrt::Module root;
  bool is_factory = false;           // root is a GraphExecutorFactory
  bool is_relax = false;             // root is a Relax VM executable (relax.build export)
  bool three_file = false;           // --graph given: kernels + graph JSON + params
  std::string path;                  // MODEL
  std::string graph_path, params_path;   // --graph, --params (three-file form)
  std::string graph_json;            // the factory's, or the --graph file's
  std::vector<std::string> param_names;  // params bound: the factory's at load; a params file's by make_runner
  std::shared_ptr<graphrt::Model> session_model;  // the session layer's model, made by make_runner
};

std::string read_file(const std::string& path, const std::string& what);

// Loads `path` with `options` (loader "dlopen" | "elf", trust_exports). With `graph_path` the
// three-file form is used (root = kernels); otherwise the root must be a GraphExecutorFactory
// or a Relax VM executable.
ModelFile load_model(const std::string& path, const graphrt::LoadOptions& options, const std::string& graph_path,
                 const std::string& params_path);

// The load options of the --loader and --trust-exports flags; throws UsageError on an unknown loader.
graphrt::LoadOptions load_options_from_args(const Args& args);

// "cpu", "cpu:0", "cuda", "cuda:1", "opencl", "opencl:1"; throws UsageError otherwise.
DLDevice parse_device(const std::string& text);
// Throws graphrt::Error with graphrt's reason when the device is unusable.
void require_device(DLDevice dev);

// UsageError unless `plan` is a memory-plan name (graphrt::memory_plan_from_name).
void check_memory_plan_option(const std::string& plan);
// UsageError unless `loader` is a registered library loader.
void check_loader_option(const std::string& loader);
// A runner of `model`'s entry on `dev` through the session layer (graphrt/session.h), which
// also fills model.session_model and model.param_names; `plan` is "" (default) or a
// memory-plan name.
std::unique_ptr<graphrt::Runner> make_runner(ModelFile& model, DLDevice dev, const std::string& plan,
                                             bool device_graph);

}  // namespace graphrt_apps
