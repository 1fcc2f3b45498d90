// A tensor cache's shard file, mapped read-only and shared: every load of the
// same file (same device, inode, size and modification time) in the process,
// from any VM or runtime, gets the one mapping while anything holds it, and
// processes share its pages through the page cache. Arrays viewing it keep it
// alive (its Storage).
//
// Like every file mapping, it assumes the file is not truncated while mapped
// (reading past a new end would fault): a changed file (size or time) is
// mapped anew by the next load.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include "graphrt/ndarray.h"

namespace graphrt {
namespace relax {
namespace tensor_cache {

struct ShardFile {
  std::shared_ptr<Storage> storage;  // unmaps; null for an empty file
  const uint8_t* data = nullptr;
  size_t size = 0;
};

// The file at `path`, mapped (or the mapping another load holds). Throws an
// Error naming the file when it cannot be opened or mapped.
std::shared_ptr<const ShardFile> map_shard_file(const std::string& path);

}  // namespace tensor_cache
}  // namespace relax
}  // namespace graphrt
