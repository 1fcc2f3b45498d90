// Generation configs: every out-of-range value, wrong type and unknown key is an error naming
// the field; defaults come from mlc-chat-config.json.
#include <gtest/gtest.h>

#include <string>

#include "graphrt/error.h"
#include "graphrt/generation_config.h"
#include "test_support.h"

namespace {

using graphrt::GenerationConfig;
using graphrt::parse_generation_config;

std::string field_of_failure(const std::string& json) {
  try {
    parse_generation_config(json);
  } catch (const graphrt::Error& e) {
    EXPECT_EQ(e.kind(), graphrt::ErrorKind::kInvalidArgument) << e.what();
    return e.context_value("field");
  }
  return "(accepted)";
}

TEST(GenerationConfig, ParsesEveryField) {
  const GenerationConfig c = parse_generation_config(
      R"({"temperature": 0.5, "top_p": 0.9, "top_k": 40, "presence_penalty": 0.5,
          "frequency_penalty": -0.5, "repetition_penalty": 1.1, "logit_bias": {"12": -100, "7": 3.5},
          "seed": -42, "max_tokens": 30, "stop": ["a", "bc"], "stop_token_ids": [2, 3],
          "logprobs": true, "top_logprobs": 5})");
  EXPECT_EQ(c.temperature, 0.5);
  EXPECT_EQ(c.top_p, 0.9);
  EXPECT_EQ(c.top_k, 40);
  EXPECT_EQ(c.presence_penalty, 0.5);
  EXPECT_EQ(c.frequency_penalty, -0.5);
  EXPECT_EQ(c.repetition_penalty, 1.1);
  EXPECT_EQ(c.logit_bias.at(12), -100.0f);
  EXPECT_EQ(c.logit_bias.at(7), 3.5f);
  EXPECT_EQ(c.seed, -42);
  EXPECT_EQ(c.max_tokens, 30);
  EXPECT_EQ(c.stop, (std::vector<std::string>{"a", "bc"}));
  EXPECT_EQ(c.stop_token_ids, (std::vector<int32_t>{2, 3}));
  EXPECT_TRUE(c.logprobs);
  EXPECT_EQ(c.top_logprobs, 5);
  EXPECT_EQ(graphrt::generation_config_fields().size(), 13u);
}

TEST(GenerationConfig, NullKeepsTheBaseAndAStringIsOneStop) {
  GenerationConfig base;
  base.temperature = 0.3;
  const GenerationConfig c = parse_generation_config(R"({"temperature": null, "stop": "\n"})", base);
  EXPECT_EQ(c.temperature, 0.3);
  EXPECT_EQ(c.stop, (std::vector<std::string>{"\n"}));
}

TEST(GenerationConfig, OutOfRangeValuesNameTheirField) {
  EXPECT_EQ(field_of_failure(R"({"temperature": -0.1})"), "temperature");
  EXPECT_EQ(field_of_failure(R"({"top_p": 1.5})"), "top_p");
  EXPECT_EQ(field_of_failure(R"({"top_p": -0.01})"), "top_p");
  EXPECT_EQ(field_of_failure(R"({"top_k": -1})"), "top_k");
  EXPECT_EQ(field_of_failure(R"({"presence_penalty": 2.5})"), "presence_penalty");
  EXPECT_EQ(field_of_failure(R"({"frequency_penalty": -3})"), "frequency_penalty");
  EXPECT_EQ(field_of_failure(R"({"repetition_penalty": 0})"), "repetition_penalty");
  EXPECT_EQ(field_of_failure(R"({"logit_bias": {"5": 101}})"), "logit_bias");
  EXPECT_EQ(field_of_failure(R"({"logit_bias": {"-1": 1}})"), "logit_bias");
  EXPECT_EQ(field_of_failure(R"({"logit_bias": {"x": 1}})"), "logit_bias");
  EXPECT_EQ(field_of_failure(R"({"max_tokens": 0})"), "max_tokens");
  EXPECT_EQ(field_of_failure(R"({"max_tokens": -5})"), "max_tokens");
  EXPECT_EQ(field_of_failure(R"({"stop": ["ok", ""]})"), "stop");
  EXPECT_EQ(field_of_failure(R"({"stop_token_ids": [-2]})"), "stop_token_ids");
  EXPECT_EQ(field_of_failure(R"({"top_logprobs": 6, "logprobs": true})"), "top_logprobs");
  EXPECT_EQ(field_of_failure(R"({"top_logprobs": 2})"), "top_logprobs");  // needs logprobs
}

TEST(GenerationConfig, WrongTypesNameTheirField) {
  EXPECT_EQ(field_of_failure(R"({"temperature": "hot"})"), "temperature");
  EXPECT_EQ(field_of_failure(R"({"top_k": 2.5})"), "top_k");
  EXPECT_EQ(field_of_failure(R"({"seed": "7"})"), "seed");
  EXPECT_EQ(field_of_failure(R"({"stop": [1]})"), "stop");
  EXPECT_EQ(field_of_failure(R"({"logprobs": 1})"), "logprobs");
  EXPECT_EQ(field_of_failure(R"({"stop_token_ids": 2})"), "stop_token_ids");
  EXPECT_EQ(field_of_failure(R"({"max_tokens": 1e300})"), "max_tokens");
}

TEST(GenerationConfig, UnknownKeysAreRefusedNotIgnored) {
  try {
    parse_generation_config(R"({"temprature": 0.5})");
    FAIL() << "a misspelt key was accepted";
  } catch (const graphrt::Error& e) {
    EXPECT_EQ(e.context_value("field"), "temprature");
    EXPECT_NE(std::string(e.what()).find("temperature"), std::string::npos) << e.what();
  }
  EXPECT_THROW(parse_generation_config("[1]"), graphrt::Error);
  EXPECT_THROW(parse_generation_config("{"), graphrt::Error);
}

TEST(GenerationConfig, MalformedTextNamesTheByteAndTheLastOfARepeatedFieldCounts) {
  try {
    parse_generation_config(R"({"top_p": 0.5,)");
    FAIL() << "malformed text was accepted";
  } catch (const graphrt::Error& e) {
    EXPECT_EQ(e.kind(), graphrt::ErrorKind::kInvalidArgument);
    EXPECT_EQ(e.context_value("offset"), "14") << e.what();
    EXPECT_NE(std::string(e.what()).find("the generation config is not valid JSON"), std::string::npos) << e.what();
  }
  EXPECT_EQ(parse_generation_config(R"({"top_p": 0.1, "top_p": 0.9})").top_p, 0.9);
}

TEST(GenerationConfig, DefaultsFromTheFixturesChatConfig) {
  GRAPHRT_REQUIRE_FIXTURES();
  const std::string path = graphrt_test::fixture_path("mlc/tiny_gpt2_chat/mlc-chat-config.json");
  const auto bytes = graphrt_test::read_file(path);
  const GenerationConfig c =
      graphrt::generation_defaults_from_chat_config(std::string(bytes.begin(), bytes.end()));
  EXPECT_EQ(c.temperature, 1.0);
  EXPECT_EQ(c.top_p, 1.0);
  EXPECT_EQ(c.presence_penalty, 0.0);
  EXPECT_EQ(c.frequency_penalty, 0.0);
  const GenerationConfig other = graphrt::generation_defaults_from_chat_config(
      R"({"temperature": 0.6, "top_p": 0.9, "presence_penalty": 0.1, "frequency_penalty": 0.2,
          "repetition_penalty": 1.3, "unknown_key": 1})");
  EXPECT_EQ(other.temperature, 0.6);
  EXPECT_EQ(other.top_p, 0.9);
  EXPECT_EQ(other.presence_penalty, 0.1);
  EXPECT_EQ(other.frequency_penalty, 0.2);
  EXPECT_EQ(other.repetition_penalty, 1.0);  // written by MLC, never applied by it
  try {
    graphrt::generation_defaults_from_chat_config(R"({"top_p": 3})");
    FAIL();
  } catch (const graphrt::Error& e) {
    EXPECT_EQ(e.context_value("field"), "top_p");
  }
}

}  // namespace
