#include "models/served_model.h"

#include <dirent.h>
#include <sys/stat.h>

#include <algorithm>
#include <exception>
#include <set>

#include "batching/batcher.h"
#include "common/args.h"
#include "common/model.h"  // parse_device, require_device
#include "generation/generator.h"
#include "generation/kv_cache_model.h"
#include "generation/text_engine.h"
#include "graphrt/error.h"
#include "graphrt/run_deadline.h"
#include "graphrt/runtime.h"
#include "graphrt/session.h"
#include "models/batch_exports.h"
#include "models/private_copy.h"
#include "models/runner_instance.h"
#include "models/version_folder.h"

namespace graphrt_serve {

using graphrt::Error;
using graphrt::ErrorKind;
using Clock = std::chrono::steady_clock;

namespace {

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

// An MLC-LLM model folder is served as it is: its mlc-chat-config.json marks it.
bool is_mlc_folder(const std::string& dir) {
  struct stat st{};
  return ::stat((dir + "/mlc-chat-config.json").c_str(), &st) == 0 && S_ISREG(st.st_mode);
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
    throw Error("device '" + config.device + "' is not one of cpu, cpu:0, cuda, cuda:N, vulkan, vulkan:N, opencl, opencl:N")
        .with("field", "device");
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

// A tensor of the model's metadata as the protocol names it. A Relax parameter its code does
// not check has neither type nor shape.
TensorMetadata metadata_of(const graphrt::TensorSpec& spec, const std::string& name, const char* what) {
  TensorMetadata t{name, false, {}, false, {}};
  if (!spec.known) return t;
  if (!datatype_from_dl(spec.dtype, &t.datatype))
    throw Error(ErrorKind::kUnsupported, std::string(what) + " type " + dl_type_name(spec.dtype) +
                                             " has no protocol datatype")
        .with("tensor", name);
  t.known_type = true;
  t.known_shape = true;
  t.shape = spec.shape;
  return t;
}

// A Relax function's parameters are named by its code: config.json lists all or none, by the same names.
void check_config_inputs(const ModelConfig& config, const std::vector<TensorMetadata>& inputs) {
  if (!config.inputs.empty() && config.inputs.size() != inputs.size())
    throw Error("config.json lists " + std::to_string(config.inputs.size()) + " inputs, the function takes " +
                std::to_string(inputs.size()) + " (" + join_names(inputs) + ")")
        .with("field", "input");
  for (size_t i = 0; i < config.inputs.size(); ++i)
    if (!config.inputs[i].name.empty() && config.inputs[i].name != inputs[i].name)
      throw Error("config.json input " + std::to_string(i) + " is '" + config.inputs[i].name +
                  "', the function's parameter is '" + inputs[i].name + "'")
          .with("field", "input");
}

// config.json's outputs: applied to the outputs the model records, or (a Relax function's,
// known only after a run) the outputs' metadata.
void apply_output_config(const ModelConfig& config, std::vector<TensorMetadata>* outputs) {
  const bool known = !outputs->empty();
  for (size_t i = 0; i < config.outputs.size(); ++i) {
    if (!known) outputs->push_back(TensorMetadata{"output_" + std::to_string(i), false, {}, false, {}});
    apply_config(config.outputs[i], &(*outputs)[i], "output");
  }
}

// Batching concatenates requests along the first dimension: every input must declare it
// variable (-1) and every other dimension fixed, so that any requests fit together.
void check_batchable(const std::vector<TensorMetadata>& inputs) {
  for (const TensorMetadata& t : inputs) {
    bool ok = t.known_shape && !t.shape.empty() && t.shape[0] == -1;
    for (size_t d = 1; ok && d < t.shape.size(); ++d) ok = t.shape[d] >= 0;
    if (!ok)
      throw Error("max_batch_size needs every input declared in config.json with shape [-1, fixed dims...]; '" +
                  t.name + "' is " + (t.known_shape ? shape_text(t.shape) : std::string("undeclared")))
          .with("field", "max_batch_size");
  }
}

// What a single graph export cannot do: generate, or batch (its shapes are fixed).
void refuse_for_graph(const ModelConfig& config) {
  if (config.generation.given)
    throw Error(ErrorKind::kUnsupported, "generation needs a Relax executable with a KV cache (a language model "
                                         "built on TVM's paged KV cache); this is a graph export")
        .with("field", "generation");
  if (config.max_batch_size > 0)
    throw Error(ErrorKind::kUnsupported, "dynamic batching needs a model with a variable first dimension: a Relax "
                                         "executable with a symbolic batch, or graph exports at several batch sizes "
                                         "(version folder of batch_<N>.so files); this graph export has fixed shapes")
        .with("field", "max_batch_size");
}

// `make()`, with the library's device advice (for its API) put as a server's operator acts on
// it: the device is config.json's.
template <typename Make>
auto device_hint(const ModelConfig& config, Make make) -> decltype(make()) {
  try {
    return make();
  } catch (const Error& e) {
    const std::string wants = e.context_value("option");
    if (wants.compare(0, 7, "device=") != 0 || wants == "device=" + config.device) throw;
    throw Error(e.kind(), "the graph places its tensors on " + wants.substr(7) + ", the model's device is '" +
                              config.device + "': set \"device\": \"" + wants.substr(7) + "\" in the model's config.json")
        .with("field", "device");
  }
}

// The version's model through the session layer, on `device`, its params from `params_cache`
// ("" for none). Loaded from a private copy (private_copy.h): a later write to the repository's
// file cannot reach the loaded code, and a reload of a replaced file loads the new one.
std::shared_ptr<graphrt::Model> open_model(const ModelFiles& files, DLDevice device, const ModelConfig& config,
                                           const std::string& params_cache) {
  graphrt::Module root;
  {
    const PrivateCopy copy(files.model);
    try {
      root = graphrt::load_module(copy.path(), graphrt::LoadOptions{});
    } catch (const Error& e) {
      throw copy.original(e);
    }
  }
  const graphrt::Session session(graphrt::runtime(), device);
  // The model's own file names the cache's source, not the private copy.
  return device_hint(config, [&] {
    return session.open(root, graphrt::ModelSource{files.model, files.graph_json, files.params, params_cache});
  });
}

}  // namespace

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
  if (is_mlc_folder(version_dir)) {
    m->serve_text(version_dir, device);
    return m;
  }
  const std::vector<BatchExport> batch_exports = find_batch_exports(version_dir);
  if (!batch_exports.empty()) {
    if (device.device_type != kDLCPU)
      throw Error(ErrorKind::kUnsupported, "device '" + config.device + "': batch exports are served on the CPU only "
                                           "(a single graph export or a Relax executable may name a CUDA device)")
          .with("field", "device");
    m->serve_batch_exports(batch_exports);
    return m;
  }
  const ModelFiles files = find_model_files(version_dir);
  const std::shared_ptr<graphrt::Model> model = open_model(files, device, config, params_cache);
  const bool relax = model->kind() == graphrt::ModelKind::kRelax;
  m->platform_ = relax ? "tvm_relax" : "tvm_graph";
  if (relax) {
    // A language model: named by config.json's "generation", or recognised by MLC's function names.
    GenerationConfig generation = config.generation;
    if (!generation.given && config.function.empty() && exports_kv_cache_functions(*model, generation))
      generation.given = true;
    if (generation.given) m->serve_generation(*model, generation);
    else m->serve_function(*model);
  } else {
    refuse_for_graph(config);
    m->serve_function(*model);
  }
  if (!params_cache.empty()) m->watch_cache(params_cache);
  return m;
}

void ServedModel::serve_function(const graphrt::Model& model) {
  const bool relax = model.kind() == graphrt::ModelKind::kRelax;
  const graphrt::FunctionSpec& fn = model.function(relax ? config_.function : "");
  for (const graphrt::TensorSpec& t : fn.inputs) inputs_.push_back(metadata_of(t, t.name, "input"));
  for (size_t i = 0; i < fn.outputs.size(); ++i)
    // Graph outputs are node entries, not names a client could know: output_<i>.
    outputs_.push_back(metadata_of(fn.outputs[i], "output_" + std::to_string(i), "output"));
  if (relax) check_config_inputs(config_, inputs_);
  if (config_.inputs.size() > inputs_.size() || (!outputs_.empty() && config_.outputs.size() > outputs_.size()))
    throw Error("config.json lists more inputs or outputs than the graph has (inputs: " + join_names(inputs_) +
                "; outputs: " + std::to_string(outputs_.size()) + ")");
  for (size_t k = 0; k < config_.inputs.size(); ++k) apply_config(config_.inputs[k], &inputs_[k], "input");
  apply_output_config(config_, &outputs_);
  std::vector<std::string> output_names;
  for (const TensorMetadata& t : outputs_) output_names.push_back(t.name);
  for (int i = 0; i < config_.instance_count; ++i)
    pool_.add(std::make_unique<RunnerInstance>(device_hint(config_, [&] { return model.runner(fn.name); }),
                                               output_names));
  if (config_.max_batch_size > 0) {
    check_batchable(inputs_);
    batcher_ = std::make_unique<Batcher>(config_.max_batch_size, std::chrono::microseconds(config_.max_queue_delay_us),
                                         config_.max_queue_size, &pool_, metrics_.get());
  }
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

void ServedModel::serve_generation(const graphrt::Model& model, const GenerationConfig& generation) {
  const auto refuse = [](const char* key) {
    throw Error(ErrorKind::kUnsupported, std::string("does not apply to a language model served by generate"))
        .with("field", key);
  };
  if (config_.max_batch_size > 0) refuse("max_batch_size");
  if (!config_.function.empty()) refuse("function");
  if (!config_.inputs.empty()) refuse("input");
  if (!config_.outputs.empty()) refuse("output");
  generator_ = std::make_unique<Generator>(model, generation, config_.instance_count, config_.max_queue_size, metrics_);
  inputs_.push_back(TensorMetadata{"input_ids", true, Datatype::kInt32, true, {-1}});
  outputs_.push_back(TensorMetadata{"output_ids", true, Datatype::kInt32, true, {-1}});
}

void ServedModel::serve_text(const std::string& folder, DLDevice device) {
  const auto refuse = [](const char* key) {
    throw Error(ErrorKind::kUnsupported, "does not apply to an MLC-LLM model folder (served by /v1 and generate)")
        .with("field", key);
  };
  if (config_.max_batch_size > 0) refuse("max_batch_size");
  if (!config_.function.empty()) refuse("function");
  if (!config_.inputs.empty()) refuse("input");
  if (!config_.outputs.empty()) refuse("output");
  TextEngineOptions options;
  options.max_queue_size = config_.max_queue_size;
  for (const std::string& key : config_.generation.keys) {
    const graphrt::LanguageModelOptions& sizes = config_.generation.model;
    if (key == "max_batch_size") options.max_num_sequence = sizes.max_batch_size;
    else if (key == "max_total_seq_len") options.max_total_seq_len = sizes.max_total_seq_len;
    else if (key == "prefill_chunk_size") options.prefill_chunk_size = sizes.prefill_chunk_size;
    else refuse(("generation." + key).c_str());
  }
  platform_ = "mlc_llm";
  text_engine_ = std::make_unique<TextEngine>(folder, device, options, metrics_);
  inputs_.push_back(TensorMetadata{"text_input", true, Datatype::kBytes, true, {1}});
  outputs_.push_back(TensorMetadata{"text_output", true, Datatype::kBytes, true, {1}});
}

InferResult ServedModel::infer(const InferRequest& request, InferTimings* timings) {
  if (text_engine_)
    throw Error(ErrorKind::kUnsupported, "this model is an MLC-LLM model folder: it answers POST /v1/completions, "
                                         "/v1/chat/completions and /v2/models/" + name_ + "/generate, not infer")
        .with("field", "inputs");
  if (generator_)
    throw Error(ErrorKind::kUnsupported, "this model is a language model on a KV cache: it answers POST "
                                         "/v2/models/" + name_ + "/generate and /generate_stream, not infer")
        .with("field", "inputs");
  check_cache();  // a model whose cache changed answers nothing
  // Inputs in the model's order, each checked against the metadata before any instance is taken:
  // the one check (instances bind them without another, graphrt::Runner::set_checked_input).
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
  InferResult result;
  std::vector<OutputTensor>& all = result.outputs;
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
    // The outputs are views of the instance's memory: the result holds it until it goes.
    auto instance = std::make_shared<InstancePool::Lease>(
        pool_.acquire(config_.max_queue_size, deadline, metrics_.get()));
    timings->queue_ns = ns_since(start);
    // The same deadline stops the run: a graph between nodes, a Relax VM before its next call.
    graphrt::RunDeadlineScope run_deadline(deadline);
    try {
      (*instance)->run(ordered, &all, timings);
    } catch (Error& e) {
      if (e.kind() == ErrorKind::kInterrupted) throw e.with("field", "timeout");
      throw;
    }
    result.hold = std::move(instance);
  }
  check_cache();  // the run read the cache: its answer stands only if the file did not change
  if (!config_.outputs.empty())
    for (size_t i = 0; i < all.size() && i < outputs_.size(); ++i) all[i].name = outputs_[i].name;
  if (request.outputs.empty()) return result;
  std::vector<OutputTensor> picked;
  for (const RequestedOutput& r : request.outputs) {
    auto it = std::find_if(all.begin(), all.end(), [&](const OutputTensor& t) { return t.name == r.name; });
    if (it == all.end())
      throw Error("unknown output '" + r.name + "' (the model returned " + std::to_string(all.size()) + " outputs)")
          .with("tensor", r.name).with("field", "outputs");
    picked.push_back(std::move(*it));
  }
  all = std::move(picked);
  return result;
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
