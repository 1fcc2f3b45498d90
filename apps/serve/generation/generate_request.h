// A generate request (Triton's generate extension, with token ids: graphrt has
// no tokenizer) decoded from its JSON body:
//   {"id": "...", "input_ids": [1, 2, 3], "parameters": {"max_tokens": 8, "stop_token_ids": [2]}}
// max_tokens and stop_token_ids may also be top-level fields (Triton maps
// top-level fields to model inputs, as TensorRT-LLM's ensemble takes them).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace graphrt_serve {

struct GenerateRequest {
  bool has_id = false;
  std::string id;
  std::vector<int32_t> input_ids;
  int64_t max_tokens = 0;  // 0: not given (the model's default_max_tokens)
  std::vector<int32_t> stop_token_ids;
};

// Throws graphrt::Error naming the field at fault (wrong types, a missing or empty
// input_ids, a max_tokens below 1, unknown fields). Ranges that depend on the model
// (vocabulary, cache size) are the generator's to check.
GenerateRequest decode_generate_request(const std::string& body);

}  // namespace graphrt_serve
