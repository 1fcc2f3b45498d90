// libFuzzer target: graphrt-serve's decoders of language-model requests with text: OpenAI's
// completions and chat bodies (POST /v1/completions, /v1/chat/completions; their sampling
// fields applied to defaults) and Triton's generate with text_input. The first byte picks the
// decoder. What is accepted holds a prompt or messages and 1..kMaxChoices choices, and its
// sampling fields make a valid GenerationConfig; anything else ends in one graphrt::Error.
#include <cstddef>
#include <cstdint>
#include <string>

#include "generation/text_generate_request.h"
#include "graphrt/error.h"
#include "graphrt/generation_config.h"
#include "openai/openai_request.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const std::string body(reinterpret_cast<const char*>(data) + 1, size - 1);
  try {
    if (data[0] % 3 == 2) {
      const graphrt_serve::TextGenerateRequest r = graphrt_serve::decode_text_generate_request(body);
      graphrt::validate_generation_config(graphrt::parse_generation_config(r.sampling_json), 1000);
      return 0;
    }
    const auto endpoint = data[0] % 3 == 0 ? graphrt_serve::OpenAIEndpoint::kCompletions : graphrt_serve::OpenAIEndpoint::kChat;
    const graphrt_serve::OpenAIRequest r = graphrt_serve::decode_openai_request(body, endpoint);
    if (r.n < 1 || r.n > graphrt_serve::kMaxChoices) __builtin_trap();
    if (endpoint == graphrt_serve::OpenAIEndpoint::kChat && r.messages.empty()) __builtin_trap();
    if (r.include_usage && !r.stream) __builtin_trap();
    graphrt_serve::openai_generation_config(r, {}, 1000);
  } catch (const graphrt::Error&) {
  }
  return 0;
}
