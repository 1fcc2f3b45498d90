// Reading a tensor cache folder (tensor-cache.json and its shards, see
// manifest.h) into arrays on a device.
//
// On the CPU a "raw" tensor whose bytes start 64-byte aligned in its shard is
// a read-only view of the shard's shared mapping (shard_file.h): no copy, and
// one copy of the weights for every VM and process that loads the folder.
// Others (bytes off the alignment generated kernels assume, "f32-to-bf16"
// tensors, which widen to float32, and every tensor on another device) are
// new arrays filled from the mapping.
#pragma once

#include <dlpack/dlpack.h>

#include <string>
#include <utility>
#include <vector>

#include "graphrt/device_api.h"
#include "graphrt/ndarray.h"

namespace graphrt {
namespace relax {
namespace tensor_cache {

using NamedArrays = std::vector<std::pair<std::string, NDArray>>;

constexpr const char* kManifestName = "tensor-cache.json";
constexpr const char* kOldManifestName = "ndarray-cache.json";  // its name until TVM v0.22; read when the new one is absent
constexpr size_t kViewAlignment = 64;

// Every tensor of the cache in `folder`, in the manifest's order, the arrays
// it fills allocated and filled through `apis` (the tensor cache's runtime's).
// Throws one Error naming the file (manifest or shard), the shard and tensor
// record and the field at fault; nothing is kept from a failed load.
NamedArrays load_folder(const std::string& folder, const DeviceApis& apis, DLDevice device);

}  // namespace tensor_cache
}  // namespace relax
}  // namespace graphrt
