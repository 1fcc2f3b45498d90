// Reading conv_template as mlc-chat-config.json writes it.
#include "graphrt/conversation.h"

#include <nlohmann/json.hpp>

#include "graphrt/error.h"

namespace graphrt {
namespace {

using json = nlohmann::json;

Error template_error(const std::string& key, const std::string& message) {
  return Error(ErrorKind::kInvalidArgument, "conv_template." + key + " " + message)
      .with("field", "conv_template." + key);
}

std::string string_of(const json& object, const std::string& key, const std::string& fallback) {
  auto it = object.find(key);
  if (it == object.end() || it->is_null()) return fallback;
  if (!it->is_string()) throw template_error(key, "must be a string");
  return it->get<std::string>();
}

std::vector<std::string> strings_of(const json& object, const std::string& key) {
  auto it = object.find(key);
  if (it == object.end() || it->is_null()) return {};
  if (it->is_string()) return {it->get<std::string>()};
  if (!it->is_array()) throw template_error(key, "must be a list of strings");
  std::vector<std::string> list;
  for (const json& item : *it) {
    if (!item.is_string()) throw template_error(key, "must be a list of strings");
    list.push_back(item.get<std::string>());
  }
  return list;
}

std::vector<int32_t> token_ids_of(const json& object, const std::string& key) {
  auto it = object.find(key);
  if (it == object.end() || it->is_null()) return {};
  if (!it->is_array()) throw template_error(key, "must be a list of token ids");
  std::vector<int32_t> ids;
  for (const json& item : *it) {
    if (!item.is_number_integer() || item.get<int64_t>() < 0 || item.get<int64_t>() > INT32_MAX) {
      throw template_error(key, "must be a list of token ids");
    }
    ids.push_back(static_cast<int32_t>(item.get<int64_t>()));
  }
  return ids;
}

std::map<std::string, std::string> string_map_of(const json& object, const std::string& key) {
  auto it = object.find(key);
  if (it == object.end() || it->is_null()) return {};
  if (!it->is_object()) throw template_error(key, "must be an object of role to string");
  std::map<std::string, std::string> map;
  for (auto entry = it->begin(); entry != it->end(); ++entry) {
    if (!entry.value().is_string()) throw template_error(key + "." + entry.key().substr(0, 40), "must be a string");
    map[entry.key()] = entry.value().get<std::string>();
  }
  return map;
}

std::vector<ChatMessage> prefilled_messages(const json& object) {
  auto it = object.find("messages");
  if (it == object.end() || it->is_null()) return {};
  if (!it->is_array()) throw template_error("messages", "must be a list of [role, content] pairs");
  std::vector<ChatMessage> messages;
  for (const json& pair : *it) {
    if (!pair.is_array() || pair.size() != 2 || !pair[0].is_string() ||
        !(pair[1].is_string() || pair[1].is_null())) {
      throw template_error("messages", "must be a list of [role, content] pairs");
    }
    ChatMessage message{pair[0].get<std::string>(), std::nullopt};
    if (pair[1].is_string()) message.content = pair[1].get<std::string>();
    messages.push_back(std::move(message));
  }
  return messages;
}

bool bool_of(const json& object, const std::string& key, bool fallback) {
  auto it = object.find(key);
  if (it == object.end() || it->is_null()) return fallback;
  if (!it->is_boolean()) throw template_error(key, "must be true or false");
  return it->get<bool>();
}

ConvTemplate conv_template_of(const json& object) {
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

json parse_json(std::string_view text, const char* what) {
  json value = json::parse(text.begin(), text.end(), nullptr, false);
  if (value.is_discarded()) throw Error(ErrorKind::kInvalidArgument, std::string(what) + " is not valid JSON");
  return value;
}

}  // namespace

ConvTemplate parse_conv_template(std::string_view text) { return conv_template_of(parse_json(text, "conv_template")); }

ConvTemplate conv_template_from_chat_config(std::string_view text) {
  const json config = parse_json(text, "mlc-chat-config.json");
  if (!config.is_object() || !config.contains("conv_template") || config["conv_template"].is_null()) {
    throw Error(ErrorKind::kNotFound, "mlc-chat-config.json has no conv_template").with("field", "conv_template");
  }
  return conv_template_of(config["conv_template"]);
}

std::vector<ChatMessage> parse_chat_messages(std::string_view text) {
  const json list = parse_json(text, "the chat messages");
  if (!list.is_array()) throw Error(ErrorKind::kInvalidArgument, "the chat messages must be a list").with("field", "messages");
  std::vector<ChatMessage> messages;
  for (size_t i = 0; i < list.size(); ++i) {
    const json& item = list[i];
    const std::string where = "messages[" + std::to_string(i) + "]";
    if (!item.is_object()) throw Error(ErrorKind::kInvalidArgument, where + " must be an object").with("field", where);
    ChatMessage message;
    for (auto it = item.begin(); it != item.end(); ++it) {
      const std::string field = where + "." + it.key().substr(0, 40);
      if (it.key() == "role" && it.value().is_string()) {
        message.role = it.value().get<std::string>();
      } else if (it.key() == "content" && (it.value().is_string() || it.value().is_null())) {
        if (it.value().is_string()) message.content = it.value().get<std::string>();
      } else if (it.key() == "name" && it.value().is_string()) {
        // A participant's name: MLC ignores it, and so does the prompt.
      } else if (it.key() == "role" || it.key() == "content" || it.key() == "name") {
        throw Error(ErrorKind::kInvalidArgument, field + " must be a string").with("field", field);
      } else {
        throw Error(ErrorKind::kInvalidArgument, "unknown message field '" + it.key().substr(0, 40) + "' in " + where)
            .with("field", field);
      }
    }
    if (message.role.empty()) throw Error(ErrorKind::kInvalidArgument, where + " has no role").with("field", where + ".role");
    messages.push_back(std::move(message));
  }
  return messages;
}

}  // namespace graphrt
