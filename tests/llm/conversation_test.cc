// Chat prompts by the conv_template rules of `mlc_llm serve`: the fixture's conversation (its
// prompt text from case.json) and the rules each on a template of its own.
#include <gtest/gtest.h>

#include <string>

#include <nlohmann/json.hpp>

#include "graphrt/conversation.h"
#include "graphrt/error.h"
#include "test_support.h"

namespace {

using graphrt::ChatMessage;
using graphrt::assemble_chat_prompt;
using graphrt::parse_conv_template;

std::string fixture_text(const std::string& relative) {
  const auto bytes = graphrt_test::read_file(graphrt_test::fixture_path(relative));
  return std::string(bytes.begin(), bytes.end());
}

TEST(Conversation, TheFixturesChatPromptIsCaseJsons) {
  GRAPHRT_REQUIRE_FIXTURES();
  const auto conv = graphrt::conv_template_from_chat_config(fixture_text("mlc/tiny_gpt2_chat/mlc-chat-config.json"));
  const auto chat = nlohmann::json::parse(fixture_text("mlc/tiny_gpt2_chat/case.json"))["chat"];
  const auto messages = graphrt::parse_chat_messages(chat["messages"].dump());
  const auto prompt = assemble_chat_prompt(conv, messages);
  EXPECT_EQ(prompt.text, chat["prompt_text"].get<std::string>());
  EXPECT_TRUE(prompt.prefix_token_ids.empty());
  EXPECT_EQ(prompt.stop_strings, (std::vector<std::string>{"\nUser:"}));
  EXPECT_EQ(prompt.stop_token_ids, (std::vector<int32_t>{50256}));
}

// MLC's llama-3 template (python/mlc_llm/conversation_template/llama.py), as its config holds it.
const char* kLlama3 = R"({
  "name": "llama-3",
  "system_template": "<|start_header_id|>system<|end_header_id|>\n\n{system_message}<|eot_id|>",
  "system_message": "You are a helpful, respectful and honest assistant.",
  "roles": {"user": "<|start_header_id|>user", "assistant": "<|start_header_id|>assistant"},
  "seps": ["<|eot_id|>"],
  "role_content_sep": "<|end_header_id|>\n\n",
  "role_empty_sep": "<|end_header_id|>\n\n",
  "stop_str": ["<|end_of_text|>", "<|eot_id|>"],
  "stop_token_ids": [128001, 128009],
  "system_prefix_token_ids": [128000]
})";

TEST(Conversation, Llama3AsTheSpecSpellsIt) {
  const auto prompt = assemble_chat_prompt(parse_conv_template(kLlama3), {{"system", "S"}, {"user", "Hi"}});
  EXPECT_EQ(prompt.text,
            "<|start_header_id|>system<|end_header_id|>\n\nS<|eot_id|><|start_header_id|>user<|end_header_id|>\n\n"
            "Hi<|eot_id|><|start_header_id|>assistant<|end_header_id|>\n\n");
  EXPECT_EQ(prompt.prefix_token_ids, (std::vector<int32_t>{128000}));
  EXPECT_EQ(prompt.stop_token_ids, (std::vector<int32_t>{128001, 128009}));
  EXPECT_EQ(prompt.stop_strings.size(), 2u);
}

TEST(Conversation, TwoSepsRoleTemplatesAndAHistory) {
  const auto conv = parse_conv_template(R"({
    "system_template": "[{system_message}]", "system_message": "sys",
    "roles": {"user": "U", "assistant": "A"},
    "role_templates": {"user": "<q>{user_message}</q>"},
    "seps": [" | ", " || "], "role_content_sep": "=", "role_empty_sep": "~"})");
  const auto prompt = assemble_chat_prompt(conv, {{"user", "one"}, {"assistant", "two"}, {"user", "three"}});
  EXPECT_EQ(prompt.text, "[sys]U=<q>one</q> | A=two || U=<q>three</q> | A~");
}

TEST(Conversation, NoRoleAfterTheSystemMessageAndPrefilledTurns) {
  const auto conv = parse_conv_template(R"({
    "system_template": "{system_message}\n", "system_message": "S",
    "add_role_after_system_message": false,
    "roles": {"user": "U", "assistant": "A"}, "seps": ["\n"], "role_content_sep": ": ",
    "messages": [["user", "before"], ["assistant", "reply"]]})");
  EXPECT_EQ(assemble_chat_prompt(conv, {{"user", "now"}}).text, "S\nbefore\nA: reply\nU: now\nA");
  // An empty system text puts the role back on the first turn.
  auto quiet = conv;
  quiet.system_template = "";
  EXPECT_EQ(assemble_chat_prompt(quiet, {{"user", "x"}}).text, "U: before\nA: reply\nU: x\nA");
}

TEST(Conversation, FunctionStringAndReasoningInHistory) {
  const auto conv = parse_conv_template(R"j({
    "system_template": "{function_string}tools: {function_string}{system_message}",
    "system_message": ".", "function_string": "f()", "strip_reasoning_in_history": true,
    "roles": {"user": "U", "assistant": "A"}, "seps": ["\n"], "role_content_sep": ":"})j");
  const auto prompt = assemble_chat_prompt(conv, {{"user", "q"}, {"assistant", "<think>hmm</think>ok"}, {"user", "r"}});
  EXPECT_EQ(prompt.text, "tools: f().U:q\nA:ok\nU:r\nA");
}

TEST(Conversation, RefusesMisplacedSystemUnknownRoleAndBadTemplates) {
  const auto conv = parse_conv_template(kLlama3);
  try {
    assemble_chat_prompt(conv, {{"user", "a"}, {"system", "b"}});
    FAIL();
  } catch (const graphrt::Error& e) {
    EXPECT_EQ(e.context_value("field"), "messages[1].role");
  }
  try {
    assemble_chat_prompt(conv, {{"narrator", "a"}});
    FAIL();
  } catch (const graphrt::Error& e) {
    EXPECT_EQ(e.context_value("role"), "narrator");
  }
  try {
    parse_conv_template(R"({"roles": {"user": "U"}, "seps": []})");
    FAIL();
  } catch (const graphrt::Error& e) {
    EXPECT_EQ(e.context_value("field"), "conv_template.seps");
  }
  try {
    parse_conv_template(R"({"roles": {"user": 3}, "seps": ["x"]})");
    FAIL();
  } catch (const graphrt::Error& e) {
    EXPECT_EQ(e.context_value("field"), "conv_template.roles.user");
  }
  EXPECT_THROW(graphrt::conv_template_from_chat_config(R"({"vocab_size": 3})"), graphrt::Error);
  try {
    graphrt::parse_chat_messages(R"([{"role": "user", "content": "a\q"}])");
    FAIL() << "an unknown escape was accepted";
  } catch (const graphrt::Error& e) {
    EXPECT_EQ(e.context_value("offset"), "32") << e.what();
    EXPECT_NE(std::string(e.what()).find("the chat messages is not valid JSON"), std::string::npos) << e.what();
  }
}

TEST(Conversation, MessagesFromJson) {
  const auto messages = graphrt::parse_chat_messages(
      R"([{"role": "system", "content": "s"}, {"role": "user", "content": "u", "name": "me"},
          {"role": "assistant", "content": null}])");
  ASSERT_EQ(messages.size(), 3u);
  EXPECT_EQ(*messages[1].content, "u");
  EXPECT_FALSE(messages[2].content.has_value());
  try {
    graphrt::parse_chat_messages(R"([{"role": "user", "content": "u", "tool_calls": []}])");
    FAIL();
  } catch (const graphrt::Error& e) {
    EXPECT_EQ(e.context_value("field"), "messages[0].tool_calls");
  }
  try {
    graphrt::parse_chat_messages(R"([{"role": "user", "content": 5}])");
    FAIL();
  } catch (const graphrt::Error& e) {
    EXPECT_EQ(e.context_value("field"), "messages[0].content");
  }
  EXPECT_THROW(graphrt::parse_chat_messages(R"([{"content": "no role"}])"), graphrt::Error);
}

}  // namespace
