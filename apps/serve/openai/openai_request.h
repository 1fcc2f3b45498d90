// A request of OpenAI's API (POST /v1/completions, /v1/chat/completions) decoded from its JSON
// body: the model, the prompt or messages, streaming, n, and the sampling fields, applied to a
// model's defaults as graphrt's GenerationConfig. Every field is checked: an unknown one, a
// wrong type or a value out of range is a graphrt::Error whose "field" context names it. A
// member given twice in one object is refused (which of the two counts would be a guess), named
// by its path ("messages[0].role"); malformed JSON is refused with its byte offset, and names
// the top-level field it was met in.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "graphrt/conversation.h"
#include "graphrt/generation_config.h"

namespace graphrt_serve {

enum class OpenAIEndpoint { kCompletions, kChat };

struct OpenAIRequest {
  OpenAIEndpoint endpoint = OpenAIEndpoint::kCompletions;
  std::string model;                           // "" when not given
  std::string prompt;                          // completions
  std::vector<graphrt::ChatMessage> messages;  // chat
  bool stream = false;
  bool include_usage = false;  // stream_options.include_usage
  int64_t n = 1;               // choices, 1..kMaxChoices
  // The sampling fields in graphrt's spelling (parse_generation_config's), from the request.
  std::string sampling_json = "{}";
};

constexpr int64_t kMaxChoices = 16;
// A longer body is refused before it is read: 16 MiB of text is millions of tokens, past any
// model's context.
constexpr size_t kMaxOpenAIBodyBytes = size_t(16) << 20;

// Throws graphrt::Error naming the field at fault.
OpenAIRequest decode_openai_request(const std::string& body, OpenAIEndpoint endpoint);

// The request's sampling fields applied to `defaults` (a model's), checked against the
// vocabulary; an Error naming the field (in OpenAI's spelling) at fault.
graphrt::GenerationConfig openai_generation_config(const OpenAIRequest& request, const graphrt::GenerationConfig& defaults,
                                                   int64_t vocab_size);

}  // namespace graphrt_serve
