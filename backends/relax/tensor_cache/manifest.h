// The manifest of a tensor cache as MLC-LLM ships weights (TVM's
// tvm.contrib.tvmjs.dump_tensor_cache writes it; TVM v0.26 reads it in
// src/runtime/vm/tensor_cache_support.cc): a folder with tensor-cache.json and
// the shard files it names.
//
//   {"metadata": {...},                       ignored
//    "records": [                             one per shard file
//      {"dataPath": "params_shard_0.bin",     relative to the folder
//       "format": "raw-shard",                the only shard format
//       "nbytes": 4096,                       the shard file's size
//       "md5sum": "...",                      optional, not checked
//       "records": [                          the tensors in the shard
//         {"name": "w", "shape": [4, 8], "dtype": "float32",
//          "format": "f32-to-bf16",           or "raw"
//          "nbytes": 64,                      bytes in the shard
//          "byteOffset": 0}]}]}
//
// "f32-to-bf16" on a float32 tensor stores each element's upper 16 bits (a
// bfloat16; the tensor is float32 again when loaded); on any other dtype the
// bytes are raw, as dump_tensor_cache writes them. Every rule of the format is
// checked here, before a shard is opened: a bad manifest is one Error naming
// the file, the record and the field.
#pragma once

#include <dlpack/dlpack.h>

#include <cstdint>
#include <string>
#include <vector>

namespace graphrt {
namespace relax {
namespace tensor_cache {

enum class Encoding { kRaw, kF32ToBF16 };

struct TensorRecord {
  std::string name;
  std::vector<int64_t> shape;
  DLDataType dtype{};
  Encoding encoding = Encoding::kRaw;
  uint64_t nbytes = 0;       // bytes in the shard
  uint64_t byte_offset = 0;  // where they start in the shard
  // True when the shard holds bfloat16 halves of float32 elements.
  bool decodes_bf16() const { return encoding == Encoding::kF32ToBF16 && dtype.code == kDLFloat && dtype.bits == 32; }
};

struct ShardRecord {
  std::string data_path;  // relative, inside the folder
  uint64_t nbytes = 0;
  std::vector<TensorRecord> tensors;
};

struct Manifest {
  std::vector<ShardRecord> shards;
};

// The manifest's bounds: far above any model's (a 70B model has ~800 tensors
// in ~100 shards), low enough that a hostile file cannot make the reader hold
// much.
constexpr size_t kMaxManifestBytes = size_t(64) << 20;
constexpr size_t kMaxTensors = size_t(1) << 20;
constexpr size_t kMaxDims = 32;

// Parses and checks the manifest text. `file` names it in errors.
Manifest parse_manifest(const std::string& text, const std::string& file);

}  // namespace tensor_cache
}  // namespace relax
}  // namespace graphrt
