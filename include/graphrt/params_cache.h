// graphrt::map_params_cache — a model's decoded params (a graph export's
// params, a Relax executable's tensor constants) from one read-only cache file
// that every process serving the model maps, instead of a decoded copy each.
// The file format's one reader and writer are the core's (src/params_cache.cc):
// the graph executor's factory and the Relax back end both use it.
#pragma once

#include "graphrt/export.h"

#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "graphrt/ndarray.h"

#pragma GCC visibility push(default)  // exported: see graphrt/export.h
namespace graphrt {

// Named arrays in order: a graph's params, or the tensor constants of a Relax executable.
using ParamList = std::vector<std::pair<std::string, NDArray>>;

// How map_params_cache came by its params.
enum class ParamsCacheUse {
  kMapped,   // the cache file was valid: mapped as it was
  kWritten,  // there was none: written from decode(), then mapped
  kRebuilt,  // it was stale (another source file) or damaged: rewritten, then mapped; a warning
             // (graphrt/log.h) says why
};
GRAPHRT_HEADER_ONLY inline const char* params_cache_use_name(ParamsCacheUse use) {
  return use == ParamsCacheUse::kMapped ? "mapped" : use == ParamsCacheUse::kWritten ? "written" : "rebuilt";
}

// Params that view a read-only shared mapping of the cache file `cache_path`, so that the
// processes serving one model hold one copy of its params (the page cache's) instead of one
// decoded copy each. `source_path` is the file the params come from (a model or params file):
// the cache is valid only for its size, modification time and bytes (hashed at every call).
// When the cache is missing, stale or damaged (every length and offset is checked, and a hash
// of its bytes), `decode()` gives the params and the cache is written anew: to a temporary
// file in the same folder, synced, then renamed over `cache_path`, under a lock on the folder
// so that processes starting together write it once and all map the same file. The folder
// must exist. The arrays keep the mapping alive and are read-only: GraphExecutor binds them
// as its params (create_with_params) and copies one before any write to it. A factory module
// offers the same for its own params, and a Relax executable for its tensor constants:
// module["use_params_cache"](cache_path, model_path).
ParamList map_params_cache(const std::string& cache_path, const std::string& source_path,
                           const std::function<ParamList()>& decode, ParamsCacheUse* use = nullptr);

}  // namespace graphrt
#pragma GCC visibility pop
