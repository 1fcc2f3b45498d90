#include "model.h"
#include "relax_function.h"

#include <algorithm>

#include "args.h"
#include "graphrt/regular_file.h"
#include "graphrt/device_api.h"
#include "graphrt/user_mistakes.h"

namespace graphrt_apps {

using graphrt::Error;

std::string read_file(const std::string& path, const std::string& what) {
  return graphrt::read_regular_file(path, what);
}


graphrt::LoadOptions load_options_from_args(const Args& args) {
  graphrt::LoadOptions options;
  options.loader = args.get("--loader", "dlopen");
  check_loader_option(options.loader);
  options.trust_exports = args.has("--trust-exports");
  return options;
}

ModelFile load_model(const std::string& path, const graphrt::LoadOptions& options, const std::string& graph_path,
                 const std::string& params_path) {
  if (!params_path.empty() && graph_path.empty()) throw UsageError("--params needs --graph (three-file form)");
  ModelFile m;
  m.path = path;
  m.graph_path = graph_path;
  m.params_path = params_path;
  m.root = graphrt::load_module(path, options);  // a params file, a graph JSON ... is named as such
  const std::optional<graphrt::ModelKind> kind = graphrt::model_kind_of(m.root);
  m.is_factory = kind == graphrt::ModelKind::kGraph;
  if (!graph_path.empty()) {
    m.three_file = true;
    m.graph_json = read_file(graph_path, "graph JSON");
    size_t first = m.graph_json.find_first_not_of(" \t\r\n");
    if (first == std::string::npos || m.graph_json[first] != '{') {
      const std::string kind = graphrt::describe_misplaced_file(graph_path);
      throw Error("--graph expects a graph JSON (it starts with '{'), but this file looks like " +
                  (kind.empty() ? std::string("something else") : kind) +
                  (kind.compare(0, 8, "a params") == 0 ? "; pass it with --params and the graph JSON with --graph" : ""))
          .with("file", graph_path);
    }
    return m;
  }
  m.is_relax = kind == graphrt::ModelKind::kRelax;
  if (m.is_relax) return m;
  if (!m.is_factory)
    throw Error("model root is a " + graphrt::quote_untrusted(m.root->type_key()) +
                " module, not a GraphExecutorFactory: pass --graph G.json [--params P.params] (three-file form)")
        .with("file", path);
  // The names only: the weights are never re-serialised to learn them.
  graphrt::GraphFactoryInfo info = graphrt::graph_factory_info(m.root);
  m.graph_json = std::move(info.graph_json);
  m.param_names = std::move(info.param_names);
  return m;
}

// What parse_device takes, for its messages.
constexpr const char* kDeviceChoices = "cpu, cuda or cuda:N, vulkan or vulkan:N, opencl or opencl:N";

DLDevice parse_device(const std::string& text) {
  std::string name = text, id;
  size_t colon = text.find(':');
  if (colon != std::string::npos) {
    name = text.substr(0, colon);
    id = text.substr(colon + 1);
  }
  int dev_id = 0;
  if (!id.empty()) {
    size_t used = 0;
    try {
      dev_id = std::stoi(id, &used);
    } catch (...) {
      used = 0;
    }
    if (used != id.size() || dev_id < 0) throw UsageError("bad device '" + text + "' (use " + kDeviceChoices + ")");
  }
  if (name == "cpu") return DLDevice{kDLCPU, dev_id};
  if (name == "cuda" || name == "gpu") return DLDevice{kDLCUDA, dev_id};
  if (name == "vulkan") return DLDevice{kDLVulkan, dev_id};
  if (name == "opencl") return DLDevice{kDLOpenCL, dev_id};
  throw UsageError("unknown device '" + text + "' (use " + kDeviceChoices + ")");
}

void require_device(DLDevice dev) {
  graphrt::check_device_available(dev);
}

void check_memory_plan_option(const std::string& plan) {
  try {
    graphrt::memory_plan_from_name(plan);
  } catch (const graphrt::Error& e) {
    throw UsageError(e.what());
  }
}

void check_loader_option(const std::string& loader) {
  std::vector<std::string> names = graphrt::library_loader_names();
  if (std::find(names.begin(), names.end(), loader) != names.end()) return;
  std::string list;
  for (const std::string& n : names) list += (list.empty() ? "" : ", ") + n;
  throw UsageError("unknown loader '" + loader + "' (use one of: " + list + ")");
}

std::unique_ptr<graphrt::Runner> make_runner(ModelFile& model, DLDevice dev, const std::string& plan,
                                             bool device_graph) {
  if (!plan.empty()) check_memory_plan_option(plan);
  graphrt::SessionOptions options;
  options.memory_plan = plan;
  options.device_graph = device_graph;
  graphrt::Session session(graphrt::runtime(), dev, options);
  model.session_model = session.open(model.root, {model.path, model.graph_path, model.params_path, ""});
  model.param_names = model.session_model->params();
  return model.session_model->runner();
}

}  // namespace graphrt_apps
