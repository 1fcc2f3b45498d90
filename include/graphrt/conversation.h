// A chat's prompt as MLC-LLM assembles it from the model's conv_template (mlc-chat-config.json):
// the system text, each message under its role's prefix and template, the separators, then
// the assistant's empty turn; the template's stop strings and stop token ids with it. The rules
// are `mlc_llm serve`'s (its Python builder).
//
//   graphrt::ConvTemplate conv = graphrt::conv_template_from_chat_config(config_text);
//   graphrt::ChatPrompt prompt = graphrt::assemble_chat_prompt(conv, {{"user", "Hi"}});
//   // ids: prompt.prefix_token_ids, then the tokenizer's encode(prompt.text)
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "graphrt/export.h"

#pragma GCC visibility push(default)  // exported: see graphrt/export.h

namespace graphrt {

struct ChatMessage {
  std::string role;                    // "system" (first only), "user", "assistant", "tool", ...
  std::optional<std::string> content;  // none: the role's empty turn
};

struct ConvTemplate {
  std::string name;
  std::string system_template = "{system_message}";
  std::string system_message;
  std::vector<int32_t> system_prefix_token_ids;  // before the whole prompt (normally BOS)
  bool add_role_after_system_message = true;
  std::map<std::string, std::string> roles;           // role -> its prefix
  std::map<std::string, std::string> role_templates;  // role -> "...{<role>_message}..."
  std::vector<ChatMessage> messages;                  // pre-filled turns
  std::vector<std::string> seps;                      // 1 or 2: [1] after assistant turns
  std::string role_content_sep;
  std::string role_empty_sep;
  std::vector<std::string> stop_str;
  std::vector<int32_t> stop_token_ids;
  std::string function_string;
  bool strip_reasoning_in_history = false;
};

struct ChatPrompt {
  std::vector<int32_t> prefix_token_ids;  // the template's system_prefix_token_ids
  std::string text;                       // to encode without special tokens
  std::vector<std::string> stop_strings;  // the template's stop_str
  std::vector<int32_t> stop_token_ids;    // the template's stop_token_ids
};

// The conv_template object (JSON text). Missing keys keep ConvTemplate's defaults, unknown
// ones are ignored (as MLC reads its own files); a wrong type is an error naming the key
// ("field": conv_template.<key>).
ConvTemplate parse_conv_template(std::string_view json);
// The conv_template of a whole mlc-chat-config.json; an error naming it when absent.
ConvTemplate conv_template_from_chat_config(std::string_view chat_config_json);

// Messages as JSON: [{"role": ..., "content": str | null, "name": ...}, ...]. Other keys, and
// content of another type, are errors naming them.
std::vector<ChatMessage> parse_chat_messages(std::string_view json);

// The prompt for `messages` (a "system" message only first: it replaces system_message) followed
// by the assistant's turn. A role the template lacks is an error naming it ("role").
ChatPrompt assemble_chat_prompt(const ConvTemplate& conv, const std::vector<ChatMessage>& messages);

}  // namespace graphrt

#pragma GCC visibility pop
