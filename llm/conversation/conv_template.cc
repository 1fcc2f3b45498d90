// Reading conv_template as mlc-chat-config.json writes it.
#include "graphrt/conversation.h"

#include "graphrt/error.h"
#include "llm/tokenizer/json_fields.h"

namespace graphrt {
namespace {

using llm::JsonAt;
using llm::JsonDoc;

// A config is kilobytes (Llama-3's, template included, ~5 KB), as mlc-chat-config.json's reader
// allows; a chat history handed to the C API may be long, not this long. Templates and
// messages nest three levels.
constexpr JsonLimits kConfigLimits{size_t(16) << 20, 64};
constexpr JsonLimits kMessagesLimits{size_t(64) << 20, 64};

Error template_error(const std::string& key, const std::string& message) {
  return Error(ErrorKind::kInvalidArgument, "conv_template." + key + " " + message)
      .with("field", "conv_template." + key);
}

// The member `key`, when it is there and not null. (A name given twice: the last counts.)
bool present(const JsonAt& object, const char* key) { return object.has_non_null(key); }

std::string string_of(const JsonAt& object, const char* key, const std::string& fallback) {
  if (!present(object, key)) return fallback;
  const JsonAt v = object.member(key);
  if (!v.is_string()) throw template_error(key, "must be a string");
  return v.string();
}

std::vector<std::string> strings_of(const JsonAt& object, const char* key) {
  if (!present(object, key)) return {};
  const JsonAt v = object.member(key);
  if (v.is_string()) return {v.string()};
  if (!v.is_array()) throw template_error(key, "must be a list of strings");
  std::vector<std::string> list;
  for (size_t i = 0; i < v.size(); ++i) {
    const JsonAt item = v.element(i);
    if (!item.is_string()) throw template_error(key, "must be a list of strings");
    list.push_back(item.string());
  }
  return list;
}

std::vector<int32_t> token_ids_of(const JsonAt& object, const char* key) {
  if (!present(object, key)) return {};
  const JsonAt v = object.member(key);
  if (!v.is_array()) throw template_error(key, "must be a list of token ids");
  std::vector<int32_t> ids;
  for (size_t i = 0; i < v.size(); ++i) {
    const JsonAt item = v.element(i);
    if (!item.is_integer()) throw template_error(key, "must be a list of token ids");
    const int64_t id = item.integer(INT64_MIN, INT64_MAX);
    if (id < 0 || id > INT32_MAX) throw template_error(key, "must be a list of token ids");
    ids.push_back(static_cast<int32_t>(id));
  }
  return ids;
}

std::map<std::string, std::string> string_map_of(const JsonAt& object, const char* key) {
  if (!present(object, key)) return {};
  const JsonAt v = object.member(key);
  if (!v.is_object()) throw template_error(key, "must be an object of role to string");
  std::map<std::string, std::string> map;
  v.each_member([&](const std::string& name, const JsonAt& entry) {
    if (!entry.is_string()) throw template_error(std::string(key) + "." + shown_name(name, 40), "must be a string");
    map[name] = entry.string();
  });
  return map;
}

std::vector<ChatMessage> prefilled_messages(const JsonAt& object) {
  if (!present(object, "messages")) return {};
  const JsonAt v = object.member("messages");
  if (!v.is_array()) throw template_error("messages", "must be a list of [role, content] pairs");
  std::vector<ChatMessage> messages;
  for (size_t i = 0; i < v.size(); ++i) {
    const JsonAt pair = v.element(i);
    if (!pair.is_array() || pair.size() != 2 || !pair.element(0).is_string() ||
        !(pair.element(1).is_string() || pair.element(1).is_null())) {
      throw template_error("messages", "must be a list of [role, content] pairs");
    }
    ChatMessage message{pair.element(0).string(), std::nullopt};
    if (pair.element(1).is_string()) message.content = pair.element(1).string();
    messages.push_back(std::move(message));
  }
  return messages;
}

bool bool_of(const JsonAt& object, const char* key, bool fallback) {
  if (!present(object, key)) return fallback;
  const JsonAt v = object.member(key);
  if (v.type() != JsonType::kBool) throw template_error(key, "must be true or false");
  return v.boolean();
}

ConvTemplate conv_template_of(const JsonAt& object) {
  if (!object.is_object()) throw Error(ErrorKind::kInvalidArgument, "conv_template is not a JSON object").with("field", "conv_template");
  ConvTemplate conv;
  conv.name = string_of(object, "name", "");
  conv.system_template = string_of(object, "system_template", conv.system_template);
  conv.system_message = string_of(object, "system_message", "");
  conv.system_prefix_token_ids = token_ids_of(object, "system_prefix_token_ids");
  conv.add_role_after_system_message = bool_of(object, "add_role_after_system_message", true);
  conv.roles = string_map_of(object, "roles");
  // Templates given are merged over the bare placeholder of each role.
  conv.role_templates = {{"user", "{user_message}"}, {"assistant", "{assistant_message}"}, {"tool", "{tool_message}"}};
  for (auto& [role, text] : string_map_of(object, "role_templates")) conv.role_templates[role] = text;
  conv.messages = prefilled_messages(object);
  conv.seps = strings_of(object, "seps");
  if (conv.seps.empty() || conv.seps.size() > 2) throw template_error("seps", "must hold 1 or 2 strings");
  conv.role_content_sep = string_of(object, "role_content_sep", "");
  conv.role_empty_sep = string_of(object, "role_empty_sep", "");
  conv.stop_str = strings_of(object, "stop_str");
  conv.stop_token_ids = token_ids_of(object, "stop_token_ids");
  conv.function_string = string_of(object, "function_string", "");
  conv.strip_reasoning_in_history = bool_of(object, "strip_reasoning_in_history", false);
  return conv;
}

}  // namespace

ConvTemplate parse_conv_template(std::string_view text) {
  const JsonDoc doc(text, "conv_template", kConfigLimits, nullptr);
  return conv_template_of(doc.root());
}

ConvTemplate conv_template_from_chat_config(std::string_view text) {
  const JsonDoc doc(text, "mlc-chat-config.json", kConfigLimits, nullptr);
  const JsonAt config = doc.root();
  if (!config.is_object() || !config.has_non_null("conv_template")) {
    throw Error(ErrorKind::kNotFound, "mlc-chat-config.json has no conv_template").with("field", "conv_template");
  }
  return conv_template_of(config.member("conv_template"));
}

std::vector<ChatMessage> parse_chat_messages(std::string_view text) {
  const JsonDoc doc(text, "the chat messages", kMessagesLimits, nullptr);
  const JsonAt list = doc.root();
  if (!list.is_array()) throw Error(ErrorKind::kInvalidArgument, "the chat messages must be a list").with("field", "messages");
  std::vector<ChatMessage> messages;
  for (size_t i = 0; i < list.size(); ++i) {
    const JsonAt item = list.element(i);
    const std::string where = "messages[" + std::to_string(i) + "]";
    if (!item.is_object()) throw Error(ErrorKind::kInvalidArgument, where + " must be an object").with("field", where);
    ChatMessage message;
    // In the order of the names (as before the move to the base reader): which refusal comes
    // first does not depend on how the caller ordered them.
    item.each_member([&](const std::string& key, const JsonAt& value) {
      const std::string field = where + "." + shown_name(key, 40);
      if (key == "role" && value.is_string()) {
        message.role = value.string();
      } else if (key == "content" && (value.is_string() || value.is_null())) {
        if (value.is_string()) message.content = value.string();
      } else if (key == "name" && value.is_string()) {
        // A participant's name: MLC ignores it, and so does the prompt.
      } else if (key == "role" || key == "content" || key == "name") {
        throw Error(ErrorKind::kInvalidArgument, field + " must be a string").with("field", field);
      } else {
        throw Error(ErrorKind::kInvalidArgument, "unknown message field " + quote_untrusted(key, 40) + " in " + where)
            .with("field", field);
      }
    });
    if (message.role.empty()) throw Error(ErrorKind::kInvalidArgument, where + " has no role").with("field", where + ".role");
    messages.push_back(std::move(message));
  }
  return messages;
}

}  // namespace graphrt
