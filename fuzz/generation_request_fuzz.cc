// libFuzzer target: the language-model layer's readers of untrusted JSON (llm/): a request's
// generation fields (parse_generation_config), mlc-chat-config.json's defaults, conv_template
// (alone and in its config) and tokenizer_info, and chat messages. The first byte picks the
// reader. Any input parses into
// values that pass validation (then a sampler and a prompt are made from them), or ends in one
// graphrt::Error; anything else is a finding.
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "graphrt/conversation.h"
#include "graphrt/error.h"
#include "graphrt/generation_config.h"
#include "graphrt/sampler.h"
#include "graphrt/tokenizer.h"

namespace {

void sample_with(const graphrt::GenerationConfig& config) {
  const std::vector<float> logits = {0.5f, -1.0f, 2.0f, 2.0f, 0.0f, -30.0f, 7.5f, 1.0f};
  graphrt::Sampler sampler(config, static_cast<int64_t>(logits.size()));
  for (int i = 0; i < 4; ++i) {
    if (sampler.sample(logits.data(), logits.size()).token >= static_cast<int32_t>(logits.size())) __builtin_trap();
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const std::string text(reinterpret_cast<const char*>(data) + 1, size - 1);
  try {
    switch (data[0] % 6) {
      case 0: {
        const graphrt::GenerationConfig config = graphrt::parse_generation_config(text);
        graphrt::validate_generation_config(config);
        sample_with(config);
        break;
      }
      case 1:
        graphrt::validate_generation_config(graphrt::generation_defaults_from_chat_config(text));
        break;
      case 2: {
        const graphrt::ConvTemplate conv = graphrt::parse_conv_template(text);
        graphrt::assemble_chat_prompt(conv, {{"system", "s"}, {"user", "u"}, {"assistant", "a"}, {"user", "v"}});
        break;
      }
      case 3: {
        const auto messages = graphrt::parse_chat_messages(text);
        graphrt::ConvTemplate conv;
        conv.roles = {{"user", "U"}, {"assistant", "A"}, {"tool", "T"}};
        conv.role_templates = {{"user", "{user_message}"}, {"assistant", "{assistant_message}"}};
        conv.seps = {"\n"};
        graphrt::assemble_chat_prompt(conv, messages);
        break;
      }
      case 4: {
        const graphrt::ConvTemplate conv = graphrt::conv_template_from_chat_config(text);
        graphrt::assemble_chat_prompt(conv, {{"user", "u"}});
        break;
      }
      default:
        (void)graphrt::TokenizerInfo::from_json_text(text, "fuzz/mlc-chat-config.json");
        break;
    }
  } catch (const graphrt::Error&) {
  }
  return 0;
}
