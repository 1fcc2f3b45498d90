#include "backends/relax/tensor_cache/loader.h"

#include <sys/stat.h>

#include <cstring>

#include "graphrt/error.h"
#include "graphrt/regular_file.h"
#include "backends/relax/tensor_cache/manifest.h"
#include "backends/relax/tensor_cache/shard_file.h"

namespace graphrt {
namespace relax {
namespace tensor_cache {

namespace {

std::string join(const std::string& folder, const std::string& name) {
  return folder.empty() || folder.back() == '/' ? folder + name : folder + "/" + name;
}

// Each bfloat16 of `src` widened to the float32 whose upper half it is.
void widen_bf16(const uint8_t* src, size_t count, uint32_t* dst) {
  for (size_t i = 0; i < count; ++i) {
    uint16_t half;
    std::memcpy(&half, src + 2 * i, sizeof half);
    dst[i] = static_cast<uint32_t>(half) << 16;
  }
}

NDArray filled_copy(const TensorRecord& t, const uint8_t* src, const DeviceApis& apis, DLDevice device) {
  NDArray out = apis.empty(t.shape, t.dtype, device);
  if (!t.decodes_bf16()) {
    apis.copy_from_bytes(out, src, static_cast<size_t>(t.nbytes));
    return out;
  }
  const size_t count = static_cast<size_t>(t.nbytes / 2);
  if (device.device_type == kDLCPU) {
    widen_bf16(src, count, static_cast<uint32_t*>(out->data));
  } else {
    std::vector<uint32_t> host(count);
    widen_bf16(src, count, host.data());
    apis.copy_from_bytes(out, host.data(), count * sizeof(uint32_t));
  }
  return out;
}

NDArray make_tensor(const TensorRecord& t, const std::shared_ptr<const ShardFile>& shard, const DeviceApis& apis,
                    DLDevice device) {
  const uint8_t* src = shard->data ? shard->data + t.byte_offset : nullptr;
  const bool view = device.device_type == kDLCPU && !t.decodes_bf16() && t.nbytes > 0 &&
                    reinterpret_cast<uintptr_t>(src) % kViewAlignment == 0;
  // The view holds the ShardFile itself (aliasing its Storage), so that later loads find the mapping.
  if (view)
    return NDArray::wrap(const_cast<uint8_t*>(src), t.shape, t.dtype, device,
                         std::shared_ptr<Storage>(shard, shard->storage.get()));
  return filled_copy(t, src, apis, device);
}

std::shared_ptr<const ShardFile> open_shard(const std::string& path, const ShardRecord& s) {
  std::shared_ptr<const ShardFile> shard = map_shard_file(path);
  if (shard->size != s.nbytes)
    throw Error(ErrorKind::kInvalidArgument, "the shard file is " + std::to_string(shard->size) +
                                                 " bytes; the manifest says " + std::to_string(s.nbytes) +
                                                 " (a copy or download cut short?)")
        .with("field", "nbytes");
  return shard;
}

void load_shard(const std::string& folder, size_t index, const ShardRecord& s, const DeviceApis& apis, DLDevice device,
                NamedArrays* out) {
  const std::string path = join(folder, s.data_path);
  try {
    std::shared_ptr<const ShardFile> shard = open_shard(path, s);
    for (const TensorRecord& t : s.tensors) {
      try {
        out->emplace_back(t.name, make_tensor(t, shard, apis, device));
      } catch (Error& e) {
        e.with("record", "tensor '" + t.name + "'");
        throw;
      }
    }
  } catch (Error& e) {
    e.with("shard", "shard " + std::to_string(index) + " '" + s.data_path + "'").with("file", path);
    throw;
  }
}

}  // namespace

NamedArrays load_folder(const std::string& folder, const DeviceApis& apis, DLDevice device) {
  // The manifest's name before TVM v0.22 / MLC-LLM's PR #3326, read where the new one is absent.
  std::string manifest_path = join(folder, kManifestName);
  struct stat st {};
  if (::stat(manifest_path.c_str(), &st) != 0 && ::stat(join(folder, kOldManifestName).c_str(), &st) == 0)
    manifest_path = join(folder, kOldManifestName);
  const Manifest m = parse_manifest(read_regular_file(manifest_path, "tensor cache manifest", kMaxManifestBytes),
                                    manifest_path);
  NamedArrays out;
  for (size_t i = 0; i < m.shards.size(); ++i) load_shard(folder, i, m.shards[i], apis, device, &out);
  return out;
}

}  // namespace tensor_cache
}  // namespace relax
}  // namespace graphrt
