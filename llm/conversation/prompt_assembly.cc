// A chat's prompt text by `mlc_llm serve`'s rules (its Python builder).
#include "graphrt/conversation.h"

#include "graphrt/error.h"

namespace graphrt {
namespace {

std::string replace_all(std::string text, const std::string& from, const std::string& to) {
  if (from.empty()) return text;
  for (size_t at = text.find(from); at != std::string::npos; at = text.find(from, at + to.size())) {
    text.replace(at, from.size(), to);
  }
  return text;
}

Error message_error(size_t index, const std::string& message, const std::string& field) {
  return Error(ErrorKind::kInvalidArgument, "messages[" + std::to_string(index) + "] " + message)
      .with("field", "messages[" + std::to_string(index) + "]." + field);
}

// The template's turns, the request's (its system message taken out) and the assistant's.
std::vector<ChatMessage> turns_of(const ConvTemplate& conv, const std::vector<ChatMessage>& messages,
                                  std::string& system_message) {
  std::vector<ChatMessage> turns = conv.messages;
  for (size_t i = 0; i < messages.size(); ++i) {
    if (messages[i].role == "system") {
      if (i != 0) throw message_error(i, "is a system message after the first", "role");
      system_message = messages[i].content.value_or("");
      continue;
    }
    turns.push_back(messages[i]);
  }
  turns.push_back({"assistant", std::nullopt});
  return turns;
}

// Assistant turns before the last user turn lose their reasoning (text up to the last </think>).
void strip_reasoning(std::vector<ChatMessage>& turns) {
  size_t last_user = turns.size();
  for (size_t i = 0; i < turns.size(); ++i) {
    if (turns[i].role == "user") last_user = i;
  }
  const std::string end_of_thought = "</think>";
  for (size_t i = 0; i < last_user && last_user < turns.size(); ++i) {
    if (turns[i].role != "assistant" || !turns[i].content) continue;
    const size_t at = turns[i].content->rfind(end_of_thought);
    if (at != std::string::npos) turns[i].content = turns[i].content->substr(at + end_of_thought.size());
  }
}

// The last {function_string} becomes the function string, the others go.
std::string place_function_string(const std::string& text, const std::string& function_string) {
  const std::string placeholder = "{function_string}";
  const size_t last = text.rfind(placeholder);
  if (last == std::string::npos) return text;
  const std::string before = replace_all(text.substr(0, last), placeholder, "");
  const std::string after = replace_all(text.substr(last + placeholder.size()), placeholder, "");
  return before + function_string + after;
}

}  // namespace

ChatPrompt assemble_chat_prompt(const ConvTemplate& conv, const std::vector<ChatMessage>& messages) {
  std::string system_message = conv.system_message;
  std::vector<ChatMessage> turns = turns_of(conv, messages, system_message);
  if (conv.strip_reasoning_in_history) strip_reasoning(turns);
  GRAPHRT_CHECK(!conv.seps.empty(), "conv_template.seps is empty");

  const std::string system_text = replace_all(conv.system_template, "{system_message}", system_message);
  std::string text = system_text;
  for (size_t i = 0; i < turns.size(); ++i) {
    const ChatMessage& turn = turns[i];
    auto role = conv.roles.find(turn.role);
    if (role == conv.roles.end()) {
      throw Error(ErrorKind::kInvalidArgument, "the conv_template has no role '" + turn.role.substr(0, 40) + "'")
          .with("role", turn.role.substr(0, 40));
    }
    if (!turn.content) {
      text += role->second + conv.role_empty_sep;
      continue;
    }
    const bool no_role = !conv.add_role_after_system_message && !system_text.empty() && i == 0;
    const std::string prefix = no_role ? "" : role->second + conv.role_content_sep;
    auto role_template = conv.role_templates.find(turn.role);
    const std::string body = role_template == conv.role_templates.end()
                                 ? *turn.content
                                 : replace_all(role_template->second, "{" + turn.role + "_message}", *turn.content);
    const std::string& sep = turn.role == "assistant" && conv.seps.size() > 1 ? conv.seps[1] : conv.seps[0];
    text += prefix + body + sep;
  }
  return {conv.system_prefix_token_ids, place_function_string(text, conv.function_string), conv.stop_str,
          conv.stop_token_ids};
}

}  // namespace graphrt
