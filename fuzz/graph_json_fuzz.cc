// libFuzzer target: graph JSON alone, parsed then planned and allocated by
// executor creation (every func_name resolves to a stub; nothing runs).
#include <cstddef>
#include <cstdint>
#include <string>

#include "fuzz_support.h"
#include "graphrt/graph_executor.h"
#include "graphrt/runtime.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static graphrt::Module lib = graphrt::load_module_from_library(graphrt_fuzz::inert_library(nullptr), graphrt_fuzz::stub_load_options());
  std::string json(reinterpret_cast<const char*>(data), size);
  if (!graphrt_fuzz::graph_fits(json, graphrt_fuzz::kMaxGraphBytes)) return 0;
  for (graphrt::MemoryPlan plan : {graphrt::MemoryPlan::kTvm, graphrt::MemoryPlan::kLiveness}) {
    graphrt::GraphExecutorOptions options;
    options.memory_plan = plan;
    options.memory_plan_from_env = false;
    try {
      graphrt::GraphExecutor::create(json, lib, {graphrt::cpu()}, options);
    } catch (const graphrt::Error&) {
    }
  }
  return 0;
}
