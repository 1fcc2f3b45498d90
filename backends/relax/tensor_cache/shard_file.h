// A tensor cache's shard file, read whole into memory of the process's own and
// shared: every load of the same file (same device, inode, size and
// modification time) in the process, from any VM or runtime, gets the one copy
// while anything holds it. Arrays viewing it keep it alive (its Storage).
//
// Read, not mapped: a mapped file truncated underneath kills the process
// (SIGBUS) at the next read of a weight, and one rewritten in place changes
// the loaded weights with no error. A copy is what the loaded model keeps,
// whatever happens to the file after (TVM copies shards at load too). A file
// that shrinks or changes while it is read is an error naming it; a changed
// file (size or time) is read anew by the next load.
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

// The file at `path`, read (or the copy another load holds). Throws an Error
// naming the file when it cannot be opened or read, or changes while read.
std::shared_ptr<const ShardFile> read_shard_file(const std::string& path);

}  // namespace tensor_cache
}  // namespace relax
}  // namespace graphrt
