// libFuzzer target: graphrt-serve's reader of a model's config.json in the repository
// (apps/serve/models/model_config.cc, with the "generation" section's reader): any text reads or
// ends in one graphrt::Error, and what reads holds each setting within its range.
#include <cstddef>
#include <cstdint>
#include <string>

#include "graphrt/error.h"
#include "models/model_config.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  try {
    const graphrt_serve::ModelConfig c = graphrt_serve::parse_model_config(text);
    if (c.instance_count < 1 || c.instance_count > 256 || c.max_batch_size < 0 || c.max_queue_size < 0 ||
        c.timeout_us < 0 || c.max_queue_delay_us < 0)
      __builtin_trap();
    for (const auto* list : {&c.inputs, &c.outputs})
      for (const graphrt_serve::TensorConfig& t : *list)
        for (int64_t d : t.shape)
          if (d < -1) __builtin_trap();
    const graphrt_serve::GenerationConfig& g = c.generation;
    if (g.given && (g.model.page_size < 1 || g.model.max_batch_size < 1 || g.default_max_tokens < 1)) __builtin_trap();
  } catch (const graphrt::Error&) {
  }
  return 0;
}
