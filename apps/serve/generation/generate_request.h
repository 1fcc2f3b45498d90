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

// What a request may hold, checked before (the body's size) and while (each array's length) its
// JSON is read, so that a request's memory is bounded by the limits it is checked against: no
// model takes a prompt of 2^20 tokens, and 2^20 ids of 10 digits with separators are 12 MiB.
constexpr size_t kMaxGenerateBodyBytes = size_t(16) << 20;
constexpr size_t kMaxGenerateTokenIds = size_t(1) << 20;

// Throws graphrt::Error naming the field at fault (wrong types, a missing or empty
// input_ids, a max_tokens below 1, unknown fields, a key given twice in one object, a body
// or a token list over the limits above). Ranges that depend on the model
// (vocabulary, cache size) are the generator's to check.
GenerateRequest decode_generate_request(const std::string& body);

}  // namespace graphrt_serve
