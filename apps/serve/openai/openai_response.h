// The answers of OpenAI's API as JSON text: completion and chat completion objects, their
// streamed chunks (server-sent events "data: {...}", the stream ending "data: [DONE]"), usage,
// the model list, and OpenAI's error object {"error": {message, type, param, code}}.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "graphrt/text_generation.h"
#include "openai/openai_request.h"

namespace graphrt_serve {

// What every object of one response shares: its id ("cmpl-..." / "chatcmpl-..."), the time it
// was made, the model's name.
struct OpenAIResponseHead {
  std::string id;
  int64_t created = 0;
  std::string model;
  OpenAIEndpoint endpoint = OpenAIEndpoint::kCompletions;
};

// A new response head with a fresh random id.
OpenAIResponseHead openai_response_head(OpenAIEndpoint endpoint, const std::string& model);

struct OpenAIChoice {
  graphrt::GenerationResult result;
  std::map<int32_t, std::string> token_text;  // the text of each token its logprobs name
};

// The whole answer (not streamed): every choice, usage.
std::string openai_response_json(const OpenAIResponseHead& head, const std::vector<OpenAIChoice>& choices,
                                 bool logprobs);
// A streamed chunk of choice `index`: new text (chat: the first chunk carries the role), or the
// finish reason ("" for none).
std::string openai_chunk_event(const OpenAIResponseHead& head, int64_t index, const std::string& text,
                               const std::string& finish_reason, bool first);
// The last chunk when stream_options.include_usage: no choices, the usage of all of them.
std::string openai_usage_event(const OpenAIResponseHead& head, int64_t prompt_tokens, int64_t completion_tokens);
// "data: [DONE]\n\n"
const std::string& openai_done_event();

// GET /v1/models: {"object": "list", "data": [{"id", "object": "model", "created", "owned_by"}]}.
std::string openai_models_json(const std::vector<std::string>& names);

// {"error": {"message", "type", "param", "code"}}: `param` "" is null, `code` "" is null.
std::string openai_error_json(const std::string& message, const std::string& type, const std::string& param,
                              const std::string& code);
// OpenAI's error type for an HTTP status: invalid_request_error (4xx), server_error (5xx), ...
const char* openai_error_type(int status);

}  // namespace graphrt_serve
