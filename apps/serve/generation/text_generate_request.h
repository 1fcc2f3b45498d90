// A generate request with text (Triton's generate extension as TensorRT-LLM's models take it)
// decoded from its JSON body:
//   {"id": "...", "text_input": "The capital of France is", "stream": false,
//    "parameters": {"max_tokens": 16, "temperature": 0}}
// Sampling fields come in parameters or at the top level (as TensorRT-LLM clients send them,
// Triton mapping top-level fields to the model's inputs), in graphrt's spelling
// (generation_config_fields) or TensorRT-LLM's: stop_words, random_seed, end_id, pad_id,
// beam_width (1), bad_words (none), exclude_input_in_output, return_log_probs.
#pragma once

#include <cstddef>
#include <string>

#include "graphrt/generation_config.h"

namespace graphrt_serve {

struct TextGenerateRequest {
  bool has_id = false;
  std::string id;
  std::string text_input;
  bool has_stream = false;  // "stream" given (generate_stream streams whatever it says)
  bool stream = false;
  std::string sampling_json = "{}";  // parse_generation_config's fields
};

// A longer body is refused before it is read (16 MiB of text is past any model's context).
constexpr size_t kMaxTextGenerateBodyBytes = size_t(16) << 20;

// Throws graphrt::Error naming the field at fault; a member given twice in one object is
// refused, malformed JSON with its byte offset.
TextGenerateRequest decode_text_generate_request(const std::string& body);

}  // namespace graphrt_serve
