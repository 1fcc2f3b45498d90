// An MLC-LLM model folder (session/mlc_folder.h): MLC's file names and the engine's checks
// (MLC cpp/serve/function_table.cc, config.cc), the weights through the tensor cache's one
// reader.
#include "mlc_folder.h"

#include <dirent.h>
#include <sys/stat.h>

#include <algorithm>
#include <memory>
#include <vector>

#include "graphrt/relax_vm.h"

namespace graphrt {
namespace mlc_folder {

namespace {

bool is_file(const std::string& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode);
}

std::string base_name(std::string path) {
  while (path.size() > 1 && path.back() == '/') path.pop_back();
  const size_t slash = path.rfind('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

bool ends_with(const std::string& s, const std::string& tail) {
  return s.size() >= tail.size() && s.compare(s.size() - tail.size(), tail.size(), tail) == 0;
}

// The files of `folder` whose names end in `tail`, sorted.
std::vector<std::string> files_ending(const std::string& folder, const std::string& tail) {
  std::vector<std::string> out;
  std::unique_ptr<DIR, int (*)(DIR*)> dir(::opendir(folder.c_str()), ::closedir);
  if (!dir) return out;
  while (const dirent* e = ::readdir(dir.get())) {
    const std::string name = e->d_name;
    if (ends_with(name, tail) && is_file(folder + "/" + name)) out.push_back(name);
  }
  std::sort(out.begin(), out.end());
  return out;
}

Error disagreement(const std::string& config_file, const char* field, int64_t in_config, int64_t in_library) {
  return Error(ErrorKind::kInvalidArgument, config_file + " has " + field + " " + std::to_string(in_config) +
                                                "; the model library was compiled with " + std::to_string(in_library))
      .with("file", config_file)
      .with("field", field);
}

// `value` capped by the library's compile-time `compiled` (0 or -1 there: no cap).
int64_t capped(int64_t value, int64_t compiled) { return compiled > 0 && (value <= 0 || value > compiled) ? compiled : value; }

}  // namespace

std::string device_suffix(DLDevice device) {
  switch (device.device_type) {
    case kDLCPU: return "cpu";
    case kDLCUDA: return "cuda";
    case kDLOpenCL: return "opencl";
    case kDLVulkan: return "vulkan";
    case kDLMetal: return "metal";
    case kDLROCM: return "rocm";
    default: return "device" + std::to_string(static_cast<int>(device.device_type));
  }
}

std::string find_model_library(const std::string& folder, DLDevice device) {
  const std::string tail = "-" + device_suffix(device) + ".so";
  const std::string named = folder + "/" + base_name(folder) + tail;
  if (is_file(named)) return named;
  const std::vector<std::string> found = files_ending(folder, tail);
  if (found.size() == 1) return folder + "/" + found[0];
  std::string why = found.empty() ? "no file ending in '" + tail + "' there"
                                  : std::to_string(found.size()) + " libraries end in '" + tail + "' there";
  throw Error(ErrorKind::kNotFound, "no model library for " + device_suffix(device) + ": " + named + " is missing (" +
                                        why + "; name one as the model library)")
      .with("file", named);
}

void check_agreement(const MlcChatConfig& config, const MlcModelMetadata& metadata, const std::string& config_file) {
  if (config.tensor_parallel_shards != metadata.tensor_parallel_shards)
    throw disagreement(config_file, "tensor_parallel_shards", config.tensor_parallel_shards,
                       metadata.tensor_parallel_shards);
  if (config.pipeline_parallel_stages != metadata.pipeline_parallel_stages)
    throw disagreement(config_file, "pipeline_parallel_stages", config.pipeline_parallel_stages,
                       metadata.pipeline_parallel_stages);
  if (config.tensor_parallel_shards != 1 || config.pipeline_parallel_stages != 1)
    throw Error(ErrorKind::kUnsupported, config_file + ": a model split over several devices (tensor_parallel_shards " +
                                             std::to_string(config.tensor_parallel_shards) + ", pipeline_parallel_stages " +
                                             std::to_string(config.pipeline_parallel_stages) + ") is not supported")
        .with("file", config_file)
        .with("field", config.tensor_parallel_shards != 1 ? "tensor_parallel_shards" : "pipeline_parallel_stages");
  if (metadata.kv_state_kind != "kv_cache")
    throw Error(ErrorKind::kUnsupported, "the model library's KV state is '" + metadata.kv_state_kind.substr(0, 40) +
                                             "'; only a paged KV cache ('kv_cache') is supported")
        .with("function", "_metadata")
        .with("field", "kv_state_kind");
  if (config.sliding_window_size != -1)
    throw Error(ErrorKind::kUnsupported, config_file + " has sliding_window_size " +
                                             std::to_string(config.sliding_window_size) +
                                             "; graphrt's paged KV cache has no sliding window")
        .with("file", config_file)
        .with("field", "sliding_window_size");
}

LanguageModelOptions cache_sizes(const MlcChatConfig& config, const MlcModelMetadata& metadata,
                                 const MlcFolderOptions& options) {
  LanguageModelOptions o;
  o.max_batch_size = options.max_num_sequence > 0 ? options.max_num_sequence
                                                  : std::max<int64_t>(metadata.max_batch_size, 1);
  const int64_t window = capped(config.context_window_size, metadata.context_window_size);
  o.max_total_seq_len = options.max_total_seq_len > 0 ? options.max_total_seq_len : window > 0 ? window : 8192;
  o.prefill_chunk_size = options.prefill_chunk_size > 0 ? options.prefill_chunk_size
                                                        : capped(config.prefill_chunk_size, metadata.prefill_chunk_size);
  o.page_size = options.page_size;
  return o;
}

int64_t sequence_limit(const MlcChatConfig& config, const MlcModelMetadata& metadata, int64_t max_total_seq_len) {
  const int64_t window = capped(config.context_window_size, metadata.context_window_size);
  return window > 0 ? std::min(window, max_total_seq_len) : max_total_seq_len;
}

RetValue load_weights(const Runtime& runtime, const std::string& folder, DLDevice device,
                      const MlcModelMetadata& metadata) {
  const char* const kLoad = "graphrt.tensor_cache.load_params";
  PackedFunc load = runtime.function(kLoad);
  if (!load)
    throw Error(ErrorKind::kNotFound, std::string("the session's runtime has no global function '") + kLoad +
                                          "' (a build, or a runtime, without the Relax back end)")
        .with("function", kLoad);
  std::vector<RetValue> args(3);
  args[0].set_string(folder);
  args[1].set_int(device.device_type);
  args[2].set_int(device.device_id);
  for (const MlcParam& p : metadata.params) {
    args.emplace_back();
    args.back().set_string(p.name);
  }
  RetValue weights = call_with_values(load, args);
  const Value items = Value::from(weights);
  const std::string manifest = folder + "/tensor-cache.json";
  for (size_t i = 0; i < metadata.params.size() && i < items.items.size(); ++i) {
    const MlcParam& want = metadata.params[i];
    const NDArray& got = items.items[i].tensor;
    bool same = got.defined() && got.shape().size() == want.shape.size() &&
                (want.dtype.empty() || dtype_to_string(got.dtype()) == want.dtype);
    for (size_t d = 0; same && d < want.shape.size(); ++d) same = want.shape[d] < 0 || want.shape[d] == got.shape()[d];
    if (!same)
      throw Error(ErrorKind::kTypeMismatch, manifest + ": tensor '" + want.name + "' is " +
                                                (got.defined() ? dtype_to_string(got.dtype()) + shape_to_string(got.shape())
                                                               : std::string("not a tensor")) +
                                                "; the model library takes " + want.dtype + shape_to_string(want.shape))
          .with("file", manifest)
          .with("tensor", want.name);
  }
  return weights;
}

}  // namespace mlc_folder
}  // namespace graphrt
