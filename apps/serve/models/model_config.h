// A model's optional config.json in the repository (DIR/<model>/config.json):
// what graphrt cannot read from the model file itself, and how to serve it.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "generation/generation_config.h"

namespace graphrt_serve {

struct TensorConfig {
  std::string name;
  std::string datatype;        // protocol name ("FP32"); "" when not given
  std::vector<int64_t> shape;  // -1 for a variable dimension; empty when not given
  bool has_shape = false;
};

struct ModelConfig {
  int64_t max_batch_size = 0;      // 0: the model takes no batch dimension of its own
  int64_t max_queue_delay_us = 0;
  int instance_count = 1;          // executors per version, sharing the model's params
  int64_t max_queue_size = 64;     // requests waiting for an instance; beyond it: 429
  int64_t timeout_us = 0;          // default per-request timeout; 0: none
  std::string function;            // Relax executables: the function to serve ("" picks main)
  std::string device = "cpu";      // graph models: where the instances run, "cpu" or "cuda[:N]"
  // Graph models: renames the graph's inputs (by position among the data inputs) or its
  // outputs (by position); Relax executables: declares datatype and shape, which the
  // executable does not record.
  std::vector<TensorConfig> inputs, outputs;
  // Language models on TVM's paged KV cache: served on /generate (generation/).
  GenerationConfig generation;
};

// Parses config.json text; throws graphrt::Error naming the field (unknown keys included, so
// that a misspelt option is not silently ignored).
ModelConfig parse_model_config(const std::string& text);

}  // namespace graphrt_serve
