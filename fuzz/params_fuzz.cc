// libFuzzer target: TVM params files (save_param_dict) alone.
#include <cstddef>
#include <cstdint>
#include <string>

#include "graphrt/graph_executor.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  try {
    graphrt::ParamList params = graphrt::load_param_dict(std::string(reinterpret_cast<const char*>(data), size), "fuzz");
    // What was read writes back to bytes that read back to the same params.
    std::string saved = graphrt::save_param_dict(params);
    if (graphrt::save_param_dict(graphrt::load_param_dict(saved, "fuzz-resaved")) != saved) __builtin_trap();
  } catch (const graphrt::Error&) {
  }
  return 0;
}
