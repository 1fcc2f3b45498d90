// The session layer's C API (graphrt/c_api.h, "models"): graphrt_model_* and
// graphrt_runner_* over Session, Model and Runner, behind the one C guard.
#include <atomic>
#include <memory>
#include <string>

#include "graphrt/c_api.h"
#include "graphrt/session.h"
#include "src/layer_api/c_api_guard.h"

// The handles: what C holds is one of these, made here and freed by its _free.
struct graphrt_model {
  std::shared_ptr<graphrt::Model> model;
  std::string param_names;  // one a line, made at load
};
struct graphrt_runner {
  std::shared_ptr<graphrt::Model> model;  // the runner's model lives as long as it
  std::unique_ptr<graphrt::Runner> runner;
  // Set for the length of each call: a runner is for one thread at a time, and a call that
  // finds it set is another thread's, refused instead of racing (one atomic exchange a call).
  std::atomic<bool> in_use{false};
};

namespace graphrt {
namespace {

std::string text(const char* s) { return s ? std::string(s) : std::string(); }

template <typename T>
T* require_handle(T* handle, const char* what) {
  if (!handle) throw Error(std::string("null ") + what + " handle");
  return handle;
}

// The runner for the length of one call, or an Error (failed precondition) when another
// thread's call holds it.
class RunnerUse {
 public:
  RunnerUse(graphrt_runner* runner, const char* function) : runner_(require_handle(runner, "runner")) {
    if (runner_->in_use.exchange(true, std::memory_order_acquire))
      throw Error(ErrorKind::kFailedPrecondition,
                  std::string(function) +
                      ": the runner is in use by another thread's call (a runner is for one thread at a time: "
                      "make one per thread)");
  }
  ~RunnerUse() { runner_->in_use.store(false, std::memory_order_release); }
  RunnerUse(const RunnerUse&) = delete;
  RunnerUse& operator=(const RunnerUse&) = delete;
  Runner& operator*() const { return *runner_->runner; }
  Runner* operator->() const { return runner_->runner.get(); }

 private:
  graphrt_runner* runner_;
};

Session session_of(const graphrt_model_options* o) {
  SessionOptions options;
  DLDevice device = cpu();
  if (o) {
    if (o->loader && *o->loader) options.load.loader = o->loader;
    options.load.trust_exports = o->trust_exports != 0;
    options.memory_plan = text(o->memory_plan);
    if (o->device_type != 0) device = DLDevice{static_cast<DLDeviceType>(o->device_type), o->device_id};
  }
  // TVM's C ABI names no runtime: C models load through the process's default.
  return Session(runtime(), device, options);
}

ModelSource source_of(const char* path, const graphrt_model_options* o) {
  if (!path) throw Error("graphrt_model_load: null path");
  return ModelSource{path, o ? text(o->graph_json_path) : "", o ? text(o->params_path) : "", ""};
}

void fill_info(const TensorSpec& t, graphrt_tensor_info* out) {
  if (!out) throw Error("null graphrt_tensor_info");
  out->name = t.name.c_str();
  out->known = t.known ? 1 : 0;
  out->dtype = t.dtype;
  out->ndim = static_cast<int>(t.shape.size());
  out->shape = t.shape.data();
  out->symbols = t.symbols.empty() ? nullptr : t.symbols.data();
}

const TensorSpec& tensor_at(const std::vector<TensorSpec>& list, int index, const char* what, const FunctionSpec& f) {
  if (index < 0 || static_cast<size_t>(index) >= list.size())
    throw Error(ErrorKind::kOutOfRange, std::string(what) + " " + std::to_string(index) + " out of range ('" + f.name +
                                            "' has " + std::to_string(list.size()) + ")")
        .with("function", f.name);
  return list[static_cast<size_t>(index)];
}

const FunctionSpec& function_of(graphrt_model_t model, const char* function) {
  return require_handle(model, "model")->model->function(text(function));
}

template <typename T>
void require_out(T* out) {
  if (!out) throw Error("null output pointer");
}

}  // namespace
}  // namespace graphrt

using namespace graphrt;

extern "C" GRAPHRT_API int graphrt_model_load(const char* path, const graphrt_model_options* options,
                                              graphrt_model_t* out) {
  return graphrt_api_guard([&] {
    require_out(out);
    auto handle = std::make_unique<graphrt_model>();
    handle->model = session_of(options).load(source_of(path, options));
    for (const std::string& name : handle->model->params()) handle->param_names += name + "\n";
    *out = handle.release();
  });
}

extern "C" GRAPHRT_API void graphrt_model_free(graphrt_model_t model) { std::unique_ptr<graphrt_model> owned(model); }

extern "C" GRAPHRT_API int graphrt_model_kind(graphrt_model_t model, int* out) {
  return graphrt_api_guard([&] {
    require_out(out);
    *out = require_handle(model, "model")->model->kind() == ModelKind::kRelax ? 1 : 0;
  });
}

extern "C" GRAPHRT_API int graphrt_model_num_functions(graphrt_model_t model, int* out) {
  return graphrt_api_guard([&] {
    require_out(out);
    *out = static_cast<int>(require_handle(model, "model")->model->functions().size());
  });
}

extern "C" GRAPHRT_API int graphrt_model_function_name(graphrt_model_t model, int index, const char** out) {
  return graphrt_api_guard([&] {
    require_out(out);
    const std::vector<FunctionSpec>& functions = require_handle(model, "model")->model->functions();
    if (index < 0 || static_cast<size_t>(index) >= functions.size())
      throw Error(ErrorKind::kOutOfRange, "function " + std::to_string(index) + " out of range (the model has " +
                                              std::to_string(functions.size()) + ")");
    *out = functions[static_cast<size_t>(index)].name.c_str();
  });
}

extern "C" GRAPHRT_API int graphrt_model_num_inputs(graphrt_model_t model, const char* function, int* out) {
  return graphrt_api_guard([&] {
    require_out(out);
    *out = static_cast<int>(function_of(model, function).inputs.size());
  });
}

extern "C" GRAPHRT_API int graphrt_model_input_info(graphrt_model_t model, const char* function, int index,
                                                    graphrt_tensor_info* out) {
  return graphrt_api_guard([&] {
    const FunctionSpec& f = function_of(model, function);
    fill_info(tensor_at(f.inputs, index, "input", f), out);
  });
}

extern "C" GRAPHRT_API int graphrt_model_num_outputs(graphrt_model_t model, const char* function, int* out) {
  return graphrt_api_guard([&] {
    require_out(out);
    *out = static_cast<int>(function_of(model, function).outputs.size());
  });
}

extern "C" GRAPHRT_API int graphrt_model_output_info(graphrt_model_t model, const char* function, int index,
                                                     graphrt_tensor_info* out) {
  return graphrt_api_guard([&] {
    const FunctionSpec& f = function_of(model, function);
    fill_info(tensor_at(f.outputs, index, "output", f), out);
  });
}

extern "C" GRAPHRT_API int graphrt_model_param_names(graphrt_model_t model, const char** out) {
  return graphrt_api_guard([&] {
    require_out(out);
    *out = require_handle(model, "model")->param_names.c_str();
  });
}

extern "C" GRAPHRT_API int graphrt_runner_create(graphrt_model_t model, const char* function, graphrt_runner_t* out) {
  return graphrt_api_guard([&] {
    require_out(out);
    auto handle = std::make_unique<graphrt_runner>();
    handle->model = require_handle(model, "model")->model;
    handle->runner = handle->model->runner(text(function));
    *out = handle.release();
  });
}

extern "C" GRAPHRT_API void graphrt_runner_free(graphrt_runner_t runner) { std::unique_ptr<graphrt_runner> owned(runner); }

extern "C" GRAPHRT_API int graphrt_runner_set_input(graphrt_runner_t runner, const char* name, const DLTensor* value) {
  return graphrt_api_guard([&] {
    if (!value) throw Error("graphrt_runner_set_input: null tensor").with("tensor", text(name));
    RunnerUse(runner, "graphrt_runner_set_input")->set_input(text(name), value);
  });
}

extern "C" GRAPHRT_API int graphrt_runner_set_input_zero_copy(graphrt_runner_t runner, const char* name,
                                                              const DLTensor* value) {
  return graphrt_api_guard([&] {
    if (!value) throw Error("graphrt_runner_set_input_zero_copy: null tensor").with("tensor", text(name));
    RunnerUse(runner, "graphrt_runner_set_input_zero_copy")->set_input_zero_copy(text(name), value);
  });
}

extern "C" GRAPHRT_API int graphrt_runner_run(graphrt_runner_t runner) {
  return graphrt_api_guard([&] { RunnerUse(runner, "graphrt_runner_run")->run(); });
}

extern "C" GRAPHRT_API int graphrt_runner_num_outputs(graphrt_runner_t runner, int* out) {
  return graphrt_api_guard([&] {
    require_out(out);
    *out = RunnerUse(runner, "graphrt_runner_num_outputs")->num_outputs();
  });
}

extern "C" GRAPHRT_API int graphrt_runner_get_output(graphrt_runner_t runner, int index, TVMArrayHandle* out) {
  return graphrt_api_guard([&] {
    require_out(out);
    *out = RunnerUse(runner, "graphrt_runner_get_output")->output(index).release();
  });
}

extern "C" GRAPHRT_API int graphrt_runner_get_result(graphrt_runner_t runner, TVMValue* out, int* out_type_code) {
  return graphrt_api_guard([&] {
    require_out(out);
    require_out(out_type_code);
    RunnerUse(runner, "graphrt_runner_get_result")->result().to_packed().release_to_c(out, out_type_code);
  });
}
