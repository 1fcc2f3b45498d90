#include "served_model.h"

#include <dirent.h>
#include <sys/stat.h>

#include <algorithm>
#include <exception>
#include <set>

#include "batch_exports.h"
#include "batcher.h"
#include "private_copy.h"
#include "common/args.h"
#include "common/model.h"
#include "common/relax_model.h"
#include "generation/generator.h"
#include "generation/kv_cache_model.h"
#include "graphrt/error.h"
#include "graphrt/graph_executor.h"
#include "graphrt/regular_file.h"
#include "graphrt/run_deadline.h"
#include "graphrt/runtime.h"
#include "version_folder.h"

namespace graphrt_serve {

using graphrt::Error;
using graphrt::ErrorKind;
using Clock = std::chrono::steady_clock;

namespace {

OutputTensor output_from(const graphrt::NDArray& array, const std::string& name) {
  OutputTensor out;
  out.name = name;
  if (!datatype_from_dl(array.dtype(), &out.datatype))
    throw Error(ErrorKind::kUnsupported, "output type " + dl_type_name(array.dtype()) + " has no protocol datatype")
        .with("tensor", name);
  out.shape = array.shape();
  out.data.resize(array.nbytes());
  array.copy_to_bytes(&out.data[0], out.data.size());
  return out;
}

// A graph executor over the model's (shared) params.
class GraphInstance : public Instance {
 public:
  GraphInstance(std::shared_ptr<graphrt::GraphExecutor> executor, std::vector<int> input_indices,
                std::vector<std::string> output_names)
      : executor_(std::move(executor)), input_indices_(std::move(input_indices)), output_names_(std::move(output_names)) {}

  void run(const std::vector<const InputTensor*>& inputs, std::vector<OutputTensor>* outputs,
           InferTimings* timings) override {
    auto t0 = Clock::now();
    for (size_t i = 0; i < inputs.size(); ++i) {
      const InputTensor& in = *inputs[i];
      std::vector<int64_t> shape = in.shape;
      DLTensor t{};
      t.data = const_cast<char*>(in.data());  // set_input only reads it
      t.device = DLDevice{kDLCPU, 0};
      t.ndim = static_cast<int>(shape.size());
      datatype_to_dl(in.datatype, &t.dtype);
      t.shape = shape.data();
      executor_->set_input(input_indices_[i], &t);
    }
    timings->input_ns = ns_since(t0);
    t0 = Clock::now();
    executor_->run();
    timings->infer_ns = ns_since(t0);
    t0 = Clock::now();
    outputs->clear();
    for (size_t i = 0; i < output_names_.size(); ++i)
      outputs->push_back(output_from(executor_->get_output(static_cast<int>(i)), output_names_[i]));
    timings->output_ns = ns_since(t0);
  }

 private:
  std::shared_ptr<graphrt::GraphExecutor> executor_;
  std::vector<int> input_indices_;
  std::vector<std::string> output_names_;
};

// A Relax VM over the executable (its constants shared by every VM of it).
class RelaxInstance : public Instance {
 public:
  RelaxInstance(graphrt_apps::RelaxFunction fn, DLDevice device)
      : fn_(std::move(fn)), entry_(fn_.vm->require_function(fn_.name)), device_(device) {}

  void run(const std::vector<const InputTensor*>& inputs, std::vector<OutputTensor>* outputs,
           InferTimings* timings) override {
    auto t0 = Clock::now();
    // Copies, not views: kernels may rely on the allocator's alignment, which request
    // bytes do not have.
    std::vector<graphrt::NDArray> arrays;
    graphrt::ArgList args;
    for (const InputTensor* in : inputs) {
      DLDataType dl;
      datatype_to_dl(in->datatype, &dl);
      graphrt::NDArray a = graphrt::NDArray::empty(in->shape, dl, DLDevice{kDLCPU, 0});
      a.copy_from_bytes(in->data(), in->size());
      arrays.push_back(device_.device_type == kDLCPU ? a : a.copy_to_device(device_));
    }
    for (const auto& a : arrays) args.add_ndarray(a);
    timings->input_ns = ns_since(t0);
    t0 = Clock::now();
    graphrt::RetValue result = graphrt::call_function(entry_, args);
    timings->infer_ns = ns_since(t0);
    t0 = Clock::now();
    std::string structure;
    const std::vector<graphrt::NDArray> flat = graphrt_apps::flatten_relax_result(result, &structure);
    outputs->clear();
    for (size_t i = 0; i < flat.size(); ++i) outputs->push_back(output_from(flat[i], "output_" + std::to_string(i)));
    timings->output_ns = ns_since(t0);
  }

 private:
  graphrt_apps::RelaxFunction fn_;
  graphrt::PackedFunc entry_;
  DLDevice device_;  // where the VM runs: its inputs are copied there, its outputs read back
};

struct ModelFiles {
  std::string model;                  // the one model file, or the kernels of the three-file form
  std::string graph_json, params;     // three-file form
};

bool has_suffix(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

ModelFiles find_model_files(const std::string& dir) {
  const std::vector<std::string> files = version_folder_files(dir);
  ModelFiles f;
  if (files.size() == 1) {
    f.model = dir + "/" + files[0];
    return f;
  }
  std::vector<std::string> so, js, params;
  for (const auto& n : files) {
    if (has_suffix(n, ".so")) so.push_back(n);
    else if (has_suffix(n, ".json")) js.push_back(n);
    else if (has_suffix(n, ".params")) params.push_back(n);
  }
  if (files.size() == 3 && so.size() == 1 && js.size() == 1 && params.size() == 1) {
    f.model = dir + "/" + so[0];
    f.graph_json = dir + "/" + js[0];
    f.params = dir + "/" + params[0];
    return f;
  }
  std::string list;
  for (const auto& n : files) list += (list.empty() ? "" : ", ") + n;
  throw Error(ErrorKind::kNotFound, "a version folder holds one model file, or kernels .so + graph .json + "
                                    ".params; found " + (files.empty() ? std::string("nothing") : list))
      .with("dir", dir);
}

// Applies config entry `i` (name, datatype, shape) to metadata entry `m`; config datatype and
// shape must agree with what the model records.
void apply_config(const TensorConfig& c, TensorMetadata* m, const char* what) {
  if (!c.name.empty()) m->name = c.name;
  if (!c.datatype.empty()) {
    Datatype d;
    datatype_from_name(c.datatype, &d);
    if (m->known_type && d != m->datatype)
      throw Error(std::string("config.json gives ") + what + " '" + m->name + "' datatype " + c.datatype +
                  ", the model has " + datatype_name(m->datatype))
          .with("field", "datatype");
    m->datatype = d;
    m->known_type = true;
  }
  if (c.has_shape) {
    // The config may fix a dimension the model leaves variable (-1), not contradict one it fixes.
    bool fits = c.shape.size() == m->shape.size();
    for (size_t d = 0; fits && d < c.shape.size(); ++d) fits = m->shape[d] < 0 || c.shape[d] == m->shape[d];
    if (m->known_shape && !fits)
      throw Error(std::string("config.json gives ") + what + " '" + m->name + "' shape " + shape_text(c.shape) +
                  ", the model has " + shape_text(m->shape))
          .with("field", "shape");
    m->shape = c.shape;
    m->known_shape = true;
  }
}

// config.json's "device": the CPU, or a CUDA device that this host has (else one error saying
// why, with graphrt's reason: no driver, no such device).
DLDevice model_device(const ModelConfig& config) {
  DLDevice dev{kDLCPU, 0};
  try {
    dev = graphrt_apps::parse_device(config.device);
  } catch (const std::exception&) {
    throw Error("device '" + config.device + "' is not one of cpu, cpu:0, cuda, cuda:N").with("field", "device");
  }
  if (dev.device_type == kDLCPU) return dev;
  try {
    graphrt_apps::require_device(dev);
  } catch (const std::exception& e) {
    throw Error(ErrorKind::kUnsupported, "config.json asks for device '" + config.device +
                                             "', which this host cannot use: " + graphrt_apps::one_line(e.what()))
        .with("field", "device");
  }
  return dev;
}

std::string join_names(const std::vector<TensorMetadata>& v) {
  std::string s;
  for (const auto& t : v) s += (s.empty() ? "" : ", ") + t.name;
  return s;
}

}  // namespace

void InstancePool::add(std::unique_ptr<Instance> instance) {
  std::lock_guard<std::mutex> lock(mutex_);
  free_.push_back(instance.get());
  all_.push_back(std::move(instance));
}

InstancePool::Lease InstancePool::acquire(int64_t max_waiting, Clock::time_point deadline, ModelMetrics* metrics) {
  std::unique_lock<std::mutex> lock(mutex_);
  if (free_.empty()) {
    if (waiting_ >= max_waiting)
      throw Error(ErrorKind::kResourceExhausted,
                  "the model's queue is full (" + std::to_string(max_waiting) + " requests waiting); retry later")
          .with("field", "max_queue_size");
    ++waiting_;
    metrics->pending.fetch_add(1, std::memory_order_relaxed);
    const bool got = available_.wait_until(lock, deadline, [&] { return !free_.empty(); });
    --waiting_;
    metrics->pending.fetch_sub(1, std::memory_order_relaxed);
    if (!got)
      throw Error(ErrorKind::kInterrupted, "timed out waiting for a model instance").with("field", "timeout");
  }
  Instance* instance = free_.back();
  free_.pop_back();
  return Lease(this, instance);
}

bool InstancePool::idle() {
  std::lock_guard<std::mutex> lock(mutex_);
  return !free_.empty() && waiting_ == 0;
}

void InstancePool::release(Instance* instance) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    free_.push_back(instance);
  }
  available_.notify_one();
}

ServedModel::ServedModel() = default;
ServedModel::~ServedModel() = default;

std::shared_ptr<ServedModel> ServedModel::load(const std::string& name, const std::string& version,
                                               const std::string& version_dir, const ModelConfig& config,
                                               std::shared_ptr<ModelMetrics> metrics,
                                               const std::string& params_cache) {
  auto m = std::make_shared<ServedModel>();
  m->name_ = name;
  m->version_ = version;
  m->config_ = config;
  m->metrics_ = std::move(metrics);
  const DLDevice device = model_device(config);  // refused here when unusable
  const auto cpu_only = [&](const char* what) {
    if (device.device_type != kDLCPU)
      throw Error(ErrorKind::kUnsupported, std::string("device '") + config.device + "': " + what +
                                               " are served on the CPU only (a single graph export or a Relax "
                                               "executable may name a CUDA device)")
          .with("field", "device");
  };
  const std::vector<BatchExport> batch_exports = find_batch_exports(version_dir);
  if (!batch_exports.empty()) {
    cpu_only("batch exports");
    m->serve_batch_exports(batch_exports);
    return m;
  }
  const ModelFiles files = find_model_files(version_dir);
  // Three-file form with a params cache: the params file is read only when the cache is written.
  const bool cached_params_file = !params_cache.empty() && !files.params.empty();
  // Loaded from a private copy (private_copy.h): a later write to the repository's file cannot
  // reach the loaded code, and a reload of a replaced file loads the new one.
  const graphrt_apps::Model model = [&] {
    const PrivateCopy copy(files.model);
    try {
      return graphrt_apps::load_model(copy.path(), graphrt::LoadOptions{}, files.graph_json,
                                      cached_params_file ? "" : files.params);
    } catch (const Error& e) {
      throw copy.original(e);
    }
  }();
  if (model.is_relax) {
    m->platform_ = "tvm_relax";
    if (!params_cache.empty()) {
      // Before any VM is made: the executable's tensor constants become the cache's mapping.
      try {
        graphrt::call_function(model.root->require_function("use_params_cache"),
                               graphrt::ArgList().add_string(params_cache).add_string(files.model));
      } catch (Error& e) {
        throw e.with("params cache", params_cache);
      }
    }
    // A language model: named by config.json's "generation", or recognised by MLC's function names.
    GenerationConfig generation = config.generation;
    if (!generation.given && config.function.empty() && exports_kv_cache_functions(model.root, generation))
      generation.given = true;
    if (generation.given) {
      m->serve_generation(model.root, generation);
      if (!params_cache.empty()) m->watch_cache(params_cache);
      return m;
    }
    for (int i = 0; i < config.instance_count; ++i) {
      graphrt_apps::RelaxFunction fn = graphrt_apps::open_relax_function(model.root, config.function, device);
      if (i == 0)
        for (size_t k = 0; k < fn.param_names.size(); ++k) {
          // What the function's code checks of the parameter (its dtype and rank, symbolic
          // dimensions as -1); a parameter it does not check stays unknown.
          TensorMetadata t{fn.param_names[k], false, {}, false, {}};
          if (k < fn.params.size() && fn.params[k].known) {
            t.known_type = datatype_from_dl(fn.params[k].dtype, &t.datatype);
            t.known_shape = true;
            t.shape = fn.params[k].dims;
          }
          m->inputs_.push_back(t);
        }
      m->pool_.add(std::make_unique<RelaxInstance>(std::move(fn), device));
    }
    if (!config.inputs.empty() && config.inputs.size() != m->inputs_.size())
      throw Error("config.json lists " + std::to_string(config.inputs.size()) + " inputs, the function takes " +
                  std::to_string(m->inputs_.size()) + " (" + join_names(m->inputs_) + ")")
          .with("field", "input");
    for (size_t i = 0; i < config.inputs.size(); ++i) {
      if (!config.inputs[i].name.empty() && config.inputs[i].name != m->inputs_[i].name)
        throw Error("config.json input " + std::to_string(i) + " is '" + config.inputs[i].name +
                    "', the function's parameter is '" + m->inputs_[i].name + "'")
            .with("field", "input");
      apply_config(config.inputs[i], &m->inputs_[i], "input");
    }
    for (size_t i = 0; i < config.outputs.size(); ++i) {
      TensorMetadata t{"output_" + std::to_string(i), false, {}, false, {}};
      apply_config(config.outputs[i], &t, "output");
      m->outputs_.push_back(t);
    }
    if (config.max_batch_size > 0) {
      // Batching concatenates requests along the first dimension: every input must declare
      // it variable (-1) and every other dimension fixed, so that any requests fit together.
      for (const TensorMetadata& t : m->inputs_) {
        bool ok = t.known_shape && !t.shape.empty() && t.shape[0] == -1;
        for (size_t d = 1; ok && d < t.shape.size(); ++d) ok = t.shape[d] >= 0;
        if (!ok)
          throw Error("max_batch_size needs every input declared in config.json with shape [-1, fixed dims...]; '" +
                      t.name + "' is " + (t.known_shape ? shape_text(t.shape) : std::string("undeclared")))
              .with("field", "max_batch_size");
      }
      m->batcher_ = std::make_unique<Batcher>(config.max_batch_size,
                                              std::chrono::microseconds(config.max_queue_delay_us),
                                              config.max_queue_size, &m->pool_, m->metrics_.get());
    }
    if (!params_cache.empty()) m->watch_cache(params_cache);
    return m;
  }
  m->platform_ = "tvm_graph";
  if (config.generation.given)
    throw Error(ErrorKind::kUnsupported, "generation needs a Relax executable with a KV cache (a language model "
                                         "built on TVM's paged KV cache); this is a graph export")
        .with("field", "generation");
  if (config.max_batch_size > 0)
    throw Error(ErrorKind::kUnsupported, "dynamic batching needs a model with a variable first dimension: a Relax "
                                         "executable with a symbolic batch, or graph exports at several batch sizes "
                                         "(version folder of batch_<N>.so files); this graph export has fixed shapes")
        .with("field", "max_batch_size");
  graphrt::ParamList cached;  // the three-file form's params, mapped from the cache
  if (!params_cache.empty()) {
    try {
      if (model.is_factory) {
        graphrt::call_function(model.root->require_function("use_params_cache"),
                               graphrt::ArgList().add_string(params_cache).add_string(files.model));
      } else if (cached_params_file) {
        cached = graphrt::map_params_cache(params_cache, files.params, [&] {
          return graphrt::load_param_dict(graphrt::read_regular_file(files.params, "params file"), files.params);
        });
      }
    } catch (Error& e) {
      throw e.with("params cache", params_cache);
    }
  }
  std::vector<int> input_indices;
  std::vector<std::string> output_names;
  if (device.device_type != kDLCPU && config.max_batch_size > 0) cpu_only("batched models");
  for (int i = 0; i < config.instance_count; ++i) {
    std::shared_ptr<graphrt::GraphExecutor> executor;
    try {
      executor = cached_params_file
                     ? graphrt::GraphExecutor::create_with_params(model.graph_json, model.root, {device},
                                                                  graphrt::GraphExecutorOptions(), cached)
                     : graphrt_apps::make_executor(model, device, "", false);
    } catch (const Error& e) {
      // The library's advice is for its API; a server's operator sets the device in config.json.
      const std::string wants = e.context_value("option");
      if (wants.compare(0, 7, "device=") != 0 || wants == "device=" + config.device) throw;
      throw Error(e.kind(), "the graph places its tensors on " + wants.substr(7) + ", the model's device is '" +
                                config.device + "': set \"device\": \"" + wants.substr(7) +
                                "\" in the model's config.json")
          .with("field", "device");
    }
    if (i == 0) {
      // input_info() lists the inputs a client sets: the graph's arguments less its params.
      for (const graphrt::TensorInfo& info : executor->input_info()) {
        TensorMetadata t{info.name, true, {}, true, info.shape};
        if (!datatype_from_dl(info.dtype, &t.datatype))
          throw Error(ErrorKind::kUnsupported, "input type " + dl_type_name(info.dtype) + " has no protocol datatype")
              .with("tensor", info.name);
        m->inputs_.push_back(t);
        input_indices.push_back(executor->input_index(info.name));
      }
      int o = 0;
      for (const graphrt::TensorInfo& info : executor->output_info()) {
        // Graph outputs are node entries, not names a client could know: output_<i>.
        TensorMetadata t{"output_" + std::to_string(o++), true, {}, true, info.shape};
        if (!datatype_from_dl(info.dtype, &t.datatype))
          throw Error(ErrorKind::kUnsupported, "output type " + dl_type_name(info.dtype) + " has no protocol datatype")
              .with("tensor", t.name);
        m->outputs_.push_back(t);
      }
      if (config.inputs.size() > m->inputs_.size() || config.outputs.size() > m->outputs_.size())
        throw Error("config.json lists more inputs or outputs than the graph has (inputs: " + join_names(m->inputs_) +
                    "; outputs: " + std::to_string(m->outputs_.size()) + ")");
      for (size_t k = 0; k < config.inputs.size(); ++k) apply_config(config.inputs[k], &m->inputs_[k], "input");
      for (size_t k = 0; k < config.outputs.size(); ++k) apply_config(config.outputs[k], &m->outputs_[k], "output");
      for (const auto& t : m->outputs_) output_names.push_back(t.name);
    }
    m->pool_.add(std::make_unique<GraphInstance>(executor, input_indices, output_names));
  }
  if (!params_cache.empty()) m->watch_cache(params_cache);
  return m;
}

void ServedModel::watch_cache(const std::string& path) {
  auto guard = std::make_unique<CacheGuard>(path);
  if (guard->watching()) cache_guard_ = std::move(guard);
}

std::string ServedModel::broken() const {
  std::lock_guard<std::mutex> lock(broken_mutex_);
  return broken_;
}

void ServedModel::check_cache() {
  if (!cache_guard_) return;
  const std::string why = cache_guard_->changed();
  if (why.empty()) return;
  const std::string line = "its params cache changed under the server: " + why + "; load the model again";
  {
    std::lock_guard<std::mutex> lock(broken_mutex_);
    if (broken_.empty()) broken_ = line;
  }
  throw Error(ErrorKind::kFailedPrecondition, "model '" + name_ + "' is not ready: " + line)
      .with("params cache", cache_guard_->path());
}

void ServedModel::serve_batch_exports(const std::vector<BatchExport>& exports) {
  platform_ = "tvm_graph";
  LoadedBatchExports set = load_batch_exports(exports, config_.instance_count);
  if (config_.max_batch_size > set.largest_batch)
    throw Error("max_batch_size " + std::to_string(config_.max_batch_size) + " is more than the largest export takes (" +
                exports.back().file + ")")
        .with("field", "max_batch_size");
  if (config_.max_batch_size == 0) config_.max_batch_size = set.largest_batch;
  inputs_ = std::move(set.inputs);
  outputs_ = std::move(set.outputs);
  if (config_.inputs.size() > inputs_.size() || config_.outputs.size() > outputs_.size())
    throw Error("config.json lists more inputs or outputs than the graph has (inputs: " + join_names(inputs_) +
                "; outputs: " + std::to_string(outputs_.size()) + ")");
  for (size_t k = 0; k < config_.inputs.size(); ++k) apply_config(config_.inputs[k], &inputs_[k], "input");
  for (size_t k = 0; k < config_.outputs.size(); ++k) apply_config(config_.outputs[k], &outputs_[k], "output");
  for (auto& instance : set.instances) pool_.add(std::move(instance));
  batcher_ = std::make_unique<Batcher>(config_.max_batch_size, std::chrono::microseconds(config_.max_queue_delay_us),
                                       config_.max_queue_size, &pool_, metrics_.get());
}

void ServedModel::serve_generation(const graphrt::Module& root, const GenerationConfig& generation) {
  const auto refuse = [](const char* key) {
    throw Error(ErrorKind::kUnsupported, std::string("does not apply to a language model served by generate"))
        .with("field", key);
  };
  if (config_.max_batch_size > 0) refuse("max_batch_size");
  if (!config_.function.empty()) refuse("function");
  if (!config_.inputs.empty()) refuse("input");
  if (!config_.outputs.empty()) refuse("output");
  generator_ = std::make_unique<Generator>(root, generation, config_.instance_count, config_.max_queue_size, metrics_);
  inputs_.push_back(TensorMetadata{"input_ids", true, Datatype::kInt32, true, {-1}});
  outputs_.push_back(TensorMetadata{"output_ids", true, Datatype::kInt32, true, {-1}});
}

std::vector<OutputTensor> ServedModel::infer(const InferRequest& request, InferTimings* timings) {
  if (generator_)
    throw Error(ErrorKind::kUnsupported, "this model is a language model on a KV cache: it answers POST "
                                         "/v2/models/" + name_ + "/generate and /generate_stream, not infer")
        .with("field", "inputs");
  check_cache();  // a model whose cache changed answers nothing
  // Inputs in the model's order, each checked against the metadata before any instance is taken.
  std::vector<const InputTensor*> ordered(inputs_.size(), nullptr);
  for (const InputTensor& in : request.inputs) {
    size_t i = 0;
    while (i < inputs_.size() && inputs_[i].name != in.name) ++i;
    if (i == inputs_.size())
      throw Error("unknown input '" + in.name + "' (the model takes " + join_names(inputs_) + ")")
          .with("tensor", in.name).with("field", "name");
    const TensorMetadata& want = inputs_[i];
    if (in.datatype == Datatype::kBytes || (want.known_type && in.datatype != want.datatype))
      throw Error(std::string("datatype ") + datatype_name(in.datatype) + ", the model takes " +
                  (want.known_type ? datatype_name(want.datatype) : "numeric tensors"))
          .with("tensor", in.name).with("field", "datatype");
    if (want.known_shape) {
      bool ok = want.shape.size() == in.shape.size();
      for (size_t d = 0; ok && d < in.shape.size(); ++d) ok = want.shape[d] < 0 || want.shape[d] == in.shape[d];
      if (!ok)
        throw Error("shape " + shape_text(in.shape) + ", the model takes " + shape_text(want.shape))
            .with("tensor", in.name).with("field", "shape");
    }
    ordered[i] = &in;
  }
  for (size_t i = 0; i < ordered.size(); ++i)
    if (!ordered[i])
      throw Error("input '" + inputs_[i].name + "' missing").with("tensor", inputs_[i].name).with("field", "inputs");
  // Requested outputs are checked before the run when the model's outputs are known.
  if (!outputs_.empty())
    for (const RequestedOutput& r : request.outputs) {
      bool found = false;
      for (const auto& t : outputs_) found = found || t.name == r.name;
      if (!found)
        throw Error("unknown output '" + r.name + "' (the model has " + join_names(outputs_) + ")")
            .with("tensor", r.name).with("field", "outputs");
    }

  const int64_t timeout_us = request.timeout_us > 0 ? request.timeout_us : config_.timeout_us;
  const Clock::time_point start = Clock::now();
  const Clock::time_point deadline =
      timeout_us > 0 ? start + std::chrono::microseconds(timeout_us) : Clock::time_point::max();
  std::vector<OutputTensor> all;
  if (batcher_) {
    const int64_t rows = ordered.empty() || ordered[0]->shape.empty() ? 0 : ordered[0]->shape[0];
    for (const InputTensor* in : ordered)
      if (in->shape.empty() || in->shape[0] != rows)
        throw Error("the first dimension is the batch: every input needs the same one (" + std::to_string(rows) + ")")
            .with("tensor", in->name).with("field", "shape");
    if (rows < 1 || rows > config_.max_batch_size)
      throw Error("batch of " + std::to_string(rows) + " rows; the model takes 1 to " +
                  std::to_string(config_.max_batch_size))
          .with("tensor", ordered[0]->name).with("field", "shape");
    all = batcher_->run(ordered, rows, deadline, timings);
  } else {
    InstancePool::Lease instance = pool_.acquire(config_.max_queue_size, deadline, metrics_.get());
    timings->queue_ns = ns_since(start);
    // The same deadline stops the run: a graph between nodes, a Relax VM before its next call.
    graphrt::RunDeadlineScope run_deadline(deadline);
    try {
      instance->run(ordered, &all, timings);
    } catch (Error& e) {
      if (e.kind() == ErrorKind::kInterrupted) throw e.with("field", "timeout");
      throw;
    }
  }
  check_cache();  // the run read the cache: its answer stands only if the file did not change
  if (!config_.outputs.empty())
    for (size_t i = 0; i < all.size() && i < outputs_.size(); ++i) all[i].name = outputs_[i].name;
  if (request.outputs.empty()) return all;
  std::vector<OutputTensor> picked;
  for (const RequestedOutput& r : request.outputs) {
    auto it = std::find_if(all.begin(), all.end(), [&](const OutputTensor& t) { return t.name == r.name; });
    if (it == all.end())
      throw Error("unknown output '" + r.name + "' (the model returned " + std::to_string(all.size()) + " outputs)")
          .with("tensor", r.name).with("field", "outputs");
    picked.push_back(std::move(*it));
  }
  return picked;
}

bool ServedModel::runs_at_once(std::chrono::nanoseconds limit) {
  if (batcher_) return false;
  const uint64_t runs = metrics_->exec_count.load(std::memory_order_relaxed);
  if (runs == 0) return false;
  const uint64_t run_ns = metrics_->compute_input_ns.load(std::memory_order_relaxed) +
                          metrics_->compute_infer_ns.load(std::memory_order_relaxed) +
                          metrics_->compute_output_ns.load(std::memory_order_relaxed);
  return run_ns / runs < static_cast<uint64_t>(limit.count()) && pool_.idle();
}

}  // namespace graphrt_serve
