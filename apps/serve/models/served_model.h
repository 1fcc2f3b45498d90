// One loaded version of a model: its metadata (inputs and outputs as the
// protocol names them), its executor instances, and inference on them. Front
// ends hold a shared_ptr while a request runs, so an unload or a reload never
// pulls a model out from under a request in flight.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "graphrt/module.h"
#include "graphrt/session.h"
#include "metrics/metrics.h"
#include "models/cache_guard.h"
#include "models/instance_pool.h"
#include "models/model_config.h"
#include "protocol/datatype.h"
#include "protocol/infer_request.h"

namespace graphrt_serve {

struct BatchExport;
class Batcher;
class Generator;
class TextEngine;

struct TensorMetadata {
  std::string name;
  bool known_type = false;  // a Relax executable records neither type nor shape of its parameters
  Datatype datatype = Datatype::kFp32;
  bool known_shape = false;
  std::vector<int64_t> shape;  // -1: any size
};

// What an inference returns: the outputs, and what their views point into (the instance that
// ran, held until the result goes, so that a front end encodes the outputs straight from the
// run's memory; models/instance_pool.h).
struct InferResult {
  std::vector<OutputTensor> outputs;
  std::shared_ptr<void> hold;
};

class ServedModel {
 public:
  // Loads DIR/<name>/<version>/ (one model file, or kernels .so + graph .json + .params).
  // With `params_cache` (a file path; "" for none) a graph model's params are mapped from that
  // cache file (graphrt::map_params_cache), written first when missing or stale, so that
  // processes serving the same model share one copy.
  static std::shared_ptr<ServedModel> load(const std::string& name, const std::string& version,
                                           const std::string& version_dir, const ModelConfig& config,
                                           std::shared_ptr<ModelMetrics> metrics,
                                           const std::string& params_cache = "");
  ServedModel();  // empty; load() makes a usable one
  ~ServedModel();

  const std::string& name() const { return name_; }
  const std::string& version() const { return version_; }
  const char* platform() const { return platform_; }
  const std::vector<TensorMetadata>& inputs() const { return inputs_; }
  const std::vector<TensorMetadata>& outputs() const { return outputs_; }  // empty when not known before a run
  ModelMetrics& metrics() const { return *metrics_; }

  // Runs `request`; returns the requested outputs in the order requested (all, in the
  // model's order, when none are named), which hold the instance that ran until the result
  // goes: encode them, then let it go. Throws graphrt::Error naming tensor and field.
  InferResult infer(const InferRequest& request, InferTimings* timings);

  // The generate side of a language model (config.json's "generation", or an executable that
  // exports MLC's create_tir_paged_kv_cache / prefill / decode); null for other models.
  Generator* generator() const { return generator_.get(); }
  // The text side of an MLC-LLM model folder (a version folder holding mlc-chat-config.json,
  // served as it is): OpenAI's completions and chat, Triton's generate with text; null for others.
  TextEngine* text_engine() const { return text_engine_.get(); }

  // Whether infer() would most likely return within `limit` without waiting: the model does
  // not batch, an instance is free, and its runs so far took less than `limit` on average
  // (false before the first run). Lets a front end run short inferences on its I/O thread.
  bool runs_at_once(std::chrono::nanoseconds limit);

  // Why the model may no longer answer ("" while it may): its params cache changed under the
  // server (cache_guard.h). It stays so until loaded again.
  std::string broken() const;

 private:
  std::string name_, version_;
  const char* platform_ = "";

  // Watches the params cache the model mapped (cache_guard.h); check_cache() throws (and
  // marks the model broken) when it changed.
  void watch_cache(const std::string& path);
  void check_cache();
  // A version folder of batch_<N> graph exports (batch_exports.h): always batched.
  void serve_batch_exports(const std::vector<BatchExport>& exports);
  // One function of a graph or Relax model (config.json's "function"; a graph's only one): its
  // metadata as config.json completes it, an instance (a graphrt::Runner) per instance_count.
  void serve_function(const graphrt::Model& model);
  // A language model on the paged KV cache: instances are generators, not VMs of one function.
  void serve_generation(const graphrt::Model& model, const GenerationConfig& generation);
  // An MLC-LLM model folder: its library's TextGenerator on one engine thread.
  void serve_text(const std::string& folder, DLDevice device);

  ModelConfig config_;
  std::vector<TensorMetadata> inputs_, outputs_;
  std::shared_ptr<ModelMetrics> metrics_;
  InstancePool pool_;
  std::unique_ptr<Batcher> batcher_;  // set when config.json asks for dynamic batching
  std::unique_ptr<Generator> generator_;  // set for language models (generate only)
  std::unique_ptr<TextEngine> text_engine_;  // set for MLC-LLM model folders
  // Last: goes first, so the SIGBUS registry forgets the mapping before the executors unmap it.
  std::unique_ptr<CacheGuard> cache_guard_;  // set when the model maps a params cache
  mutable std::mutex broken_mutex_;
  std::string broken_;
};

}  // namespace graphrt_serve
