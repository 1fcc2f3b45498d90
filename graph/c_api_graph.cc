// C API for params files (the executor itself is driven through its module's
// packed functions, as in TVM).
#include <cstdlib>

#include "src/layer_api/c_api_guard.h"
#include "graphrt/c_api.h"
#include "graphrt/graph_executor.h"

using namespace graphrt;

extern "C" GRAPHRT_API int graphrt_params_load(const void* data, size_t size, int* count, const char** names,
                                         TVMArrayHandle** arrays) {
  return graphrt_api_guard([&] {
    ParamList params = load_param_dict(std::string(static_cast<const char*>(data), size), "params");
    std::string joined;
    auto* handles = static_cast<TVMArrayHandle*>(std::calloc(params.size() + 1, sizeof(TVMArrayHandle)));
    if (!handles) throw Error(ErrorKind::kResourceExhausted, "out of memory");
    for (size_t i = 0; i < params.size(); ++i) {
      joined += params[i].first + "\n";
      handles[i] = params[i].second.release();
    }
    *count = static_cast<int>(params.size());
    *names = thread_local_string(joined);
    *arrays = handles;
  });
}

extern "C" GRAPHRT_API void graphrt_free_handle_array(TVMArrayHandle* arrays) { std::free(arrays); }

extern "C" GRAPHRT_API int graphrt_params_save(int count, const char** names, TVMArrayHandle* arrays, const char** out,
                                         size_t* out_size) {
  return graphrt_api_guard([&] {
    ParamList params;
    for (int i = 0; i < count; ++i) {
      if (!names[i] || !arrays[i]) throw Error("graphrt_params_save: null name or array at " + std::to_string(i));
      params.emplace_back(names[i], NDArray::borrow_handle(arrays[i]));
    }
    thread_local std::string bytes;
    bytes = save_param_dict(params);
    *out = bytes.data();
    *out_size = bytes.size();
  });
}
