// The params cache file: a model's decoded params laid out so that every
// process serving the model maps them read-only (one copy in the page cache)
// instead of decoding its own. Its one reader and one writer are the core's
// (src/params_cache.cc), below every layer that has params to cache (the graph
// executor's factory, the Relax back end's constants); the public entry point
// is graphrt::map_params_cache (graphrt/params_cache.h).
//
// Layout (little-endian):
//   0   "GRTPCACH"
//   8   u32 format version (kParamsCacheVersion), u32 zero
//   16  the key: u64 source size, i64 source mtime (ns), u64 source hash
//   40  u64 param count, u64 index bytes, u64 file bytes (trailer included)
//   64  the index, per param: u64 name length, name, u8 code, u8 bits,
//       u16 lanes, u32 ndim, i64 dims[ndim], u64 data offset, u64 data bytes
//   ... each param's bytes at a 64-byte aligned offset after the index
//   end-8: u64 hash of every byte before it
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include "graphrt/error.h"
#include "graphrt/params_cache.h"

namespace graphrt {

constexpr uint32_t kParamsCacheVersion = 1;

// What a cache was made from: the source file's size, modification time and
// a hash of all its bytes. A cache whose key differs is stale.
struct ParamsCacheKey {
  uint64_t source_bytes = 0;
  int64_t source_mtime_ns = 0;
  uint64_t source_hash = 0;
  bool operator==(const ParamsCacheKey& o) const {
    return source_bytes == o.source_bytes && source_mtime_ns == o.source_mtime_ns && source_hash == o.source_hash;
  }
};

// The key of the file at `source_path` (read once, through a mapping).
ParamsCacheKey params_cache_key(const std::string& source_path);

// A 64-bit hash of `n` bytes (not cryptographic: it tells a changed file or
// a damaged cache from the one it was made for).
uint64_t params_cache_hash(const void* data, size_t n);

// The one writer: the cache bytes of `params` made for `key`, handed to
// `sink` in order (the file or, for tests, a string). Params must be CPU
// arrays, contiguous.
void write_params_cache(const ParamsCacheKey& key, const ParamList& params,
                        const std::function<void(const void* data, size_t n)>& sink);

// The one reader: the params in the cache bytes [data, data + size), each
// array viewing its bytes in place and holding `keep` (what keeps the bytes
// alive). Every length, offset and shape is checked against `size`, the
// trailing hash against the bytes. Throws Error naming `origin` and what is
// wrong; a key other than `*expected` (when given) is a failed-precondition
// error ("stale").
ParamList read_params_cache(const uint8_t* data, size_t size, const ParamsCacheKey* expected,
                            const std::string& origin, const std::shared_ptr<Storage>& keep);

// map_params_cache, with `must_equal` (when given): the params the cache
// must hold byte for byte, else it is rebuilt (a factory's own decoded
// params, so that its cache can never hand out other values).
ParamList open_params_cache(const std::string& cache_path, const std::string& source_path,
                            const std::function<ParamList()>& decode, const ParamList* must_equal,
                            ParamsCacheUse* use);

}  // namespace graphrt
