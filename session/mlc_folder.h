// An MLC-LLM model folder as LanguageModel opens it (session layer, internal): where its
// library is, the KV cache's sizes from its config and its library's _metadata, its weights
// packed in _metadata's order.
#pragma once

#include <dlpack/dlpack.h>

#include <string>

#include "graphrt/language_model.h"
#include "graphrt/mlc_chat_config.h"
#include "graphrt/packed_func.h"
#include "graphrt/runtime.h"

namespace graphrt {
namespace mlc_folder {

// MLC's name of a device in library file names: cpu, cuda, opencl, vulkan, metal, rocm.
std::string device_suffix(DLDevice device);

// LanguageModel::find_model_library.
std::string find_model_library(const std::string& folder, DLDevice device);

// Config and library must agree where MLC's engine checks them (parallelism), and the
// KV-state kind and window must be what the cache made here serves. `config_file` names the
// config in errors.
void check_agreement(const MlcChatConfig& config, const MlcModelMetadata& metadata, const std::string& config_file);

// The create function's sizes: the options', else from the config capped by the library.
LanguageModelOptions cache_sizes(const MlcChatConfig& config, const MlcModelMetadata& metadata,
                                 const MlcFolderOptions& options);
// The tokens one sequence may hold: max_total_seq_len, capped by the context window.
int64_t sequence_limit(const MlcChatConfig& config, const MlcModelMetadata& metadata, int64_t max_total_seq_len);

// The folder's weights on `device` as one array (TVM's Array of tensors), in `metadata`'s
// params order, each checked against its listed shape and dtype; read by the tensor cache's
// reader of `runtime` (graphrt.tensor_cache.load_params). Errors name the file and the tensor.
RetValue load_weights(const Runtime& runtime, const std::string& folder, DLDevice device,
                      const MlcModelMetadata& metadata);

}  // namespace mlc_folder
}  // namespace graphrt
