// config.json's "generation" section: how to drive a language model compiled
// by TVM on its paged KV cache (the VM functions MLC's engine calls, and the
// sizes the cache is created with). Defaults are relax_tiny_llm_gqa's
// case.json create step (MLC's names).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "graphrt/language_model.h"

namespace graphrt {
class JsonReader;
}

namespace graphrt_serve {

struct GenerationConfig {
  bool given = false;  // config.json has a "generation" section
  std::vector<std::string> keys;  // the keys it sets, in its order
  // The functions and the cache's sizes, as the library takes them. max_batch_size also bounds
  // the sequences the server keeps in the cache at once (requests beyond it wait in the queue).
  graphrt::LanguageModelOptions model;
  int64_t default_max_tokens = 16;  // a request's max_tokens when it names none
};

// Reads the "generation" object, the value `reader` is at; throws graphrt::Error naming the
// field ("generation.page_size"), unknown and repeated keys included.
GenerationConfig parse_generation_config(graphrt::JsonReader& reader);

}  // namespace graphrt_serve

namespace graphrt_serve {

// The cache pages `tokens` tokens of one sequence take.
inline int64_t pages_for(const GenerationConfig& c, int64_t tokens) { return (tokens + c.model.page_size - 1) / c.model.page_size; }

}  // namespace graphrt_serve
