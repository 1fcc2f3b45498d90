// libFuzzer target: the tensor cache's manifest reader (tensor-cache.json,
// backends/relax/tensor_cache/manifest.cc). Any input either parses into
// records whose byte ranges lie inside their shards, or ends in one
// graphrt::Error; anything else (another exception, a crash) is a finding.
#include <cstddef>
#include <cstdint>
#include <string>

#include "graphrt/error.h"
#include "backends/relax/tensor_cache/manifest.h"

using graphrt::relax::tensor_cache::Manifest;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  try {
    const Manifest m = graphrt::relax::tensor_cache::parse_manifest(
        std::string(reinterpret_cast<const char*>(data), size), "fuzz/tensor-cache.json");
    for (const auto& shard : m.shards) {
      if (shard.data_path.empty() || shard.data_path[0] == '/') __builtin_trap();
      for (const auto& t : shard.tensors)
        if (t.byte_offset > shard.nbytes || t.nbytes > shard.nbytes - t.byte_offset) __builtin_trap();
    }
  } catch (const graphrt::Error&) {
  }
  return 0;
}
