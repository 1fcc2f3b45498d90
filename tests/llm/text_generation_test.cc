// Text generation on the MLC-LLM package fixture (mlc/tiny_gpt2_chat) through the public C++
// API: case.json's greedy completions and chat answer as text (TVM's run, the reference
// tokenizer's ids), streaming, stops, budgets, seeds across runs and batch compositions.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "graphrt/error.h"
#include "graphrt/runtime.h"
#include "graphrt/text_generation.h"
#include "test_support.h"

namespace {

using graphrt::GenerationConfig;
using graphrt::TextGenerator;
using nlohmann::json;

class TextGeneration : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    if (graphrt_test::fixtures_dir().empty()) return;
    const std::string folder = graphrt_test::fixture_path("mlc/tiny_gpt2_chat");
    const auto bytes = graphrt_test::read_file(folder + "/case.json");
    case_ = new json(json::parse(bytes.begin(), bytes.end()));
    session_ = new graphrt::Session(graphrt::runtime(), graphrt::cpu());
    generator_ = new TextGenerator(*session_, folder);
  }
  static void TearDownTestSuite() {
    delete generator_;
    delete session_;
    delete case_;
  }
  void SetUp() override {
    GRAPHRT_REQUIRE_FIXTURES();
    ASSERT_NE(generator_, nullptr);
  }
  static GenerationConfig greedy(int64_t max_tokens) {
    GenerationConfig config = generator_->default_config();
    config.temperature = 0;
    config.max_tokens = max_tokens;
    return config;
  }
  static json* case_;
  static graphrt::Session* session_;
  static TextGenerator* generator_;
};
json* TextGeneration::case_ = nullptr;
graphrt::Session* TextGeneration::session_ = nullptr;
TextGenerator* TextGeneration::generator_ = nullptr;

bool valid_utf8(const std::string& s) {
  for (size_t i = 0; i < s.size();) {
    const unsigned char c = s[i];
    const size_t n = c < 0x80 ? 1 : (c >> 5) == 6 ? 2 : (c >> 4) == 14 ? 3 : (c >> 3) == 30 ? 4 : 0;
    if (n == 0 || i + n > s.size()) return false;
    for (size_t k = 1; k < n; ++k) {
      if ((static_cast<unsigned char>(s[i + k]) >> 6) != 2) return false;
    }
    i += n;
  }
  return true;
}

TEST_F(TextGeneration, GreedyCompletionsAreCaseJsonsText) {
  for (const json& c : (*case_)["greedy_completions"]) {
    const auto result = generator_->generate(c["prompt"], greedy(c["max_tokens"]));
    EXPECT_EQ(result.text, c["text"].get<std::string>()) << c["prompt"];
    EXPECT_EQ(result.tokens, c["output_ids"].get<std::vector<int32_t>>());
    EXPECT_EQ(result.finish_reason, graphrt::FinishReason::kLength);
    EXPECT_EQ(result.prompt_tokens, static_cast<int64_t>(c["prompt_ids"].size()));
  }
}

TEST_F(TextGeneration, ChatAnswerIsCaseJsonsText) {
  const json& chat = (*case_)["chat"];
  const auto messages = graphrt::parse_chat_messages(chat["messages"].dump());
  EXPECT_EQ(generator_->chat_prompt_ids(messages), chat["prompt_ids"].get<std::vector<int32_t>>());
  const auto result = generator_->chat(messages, greedy(chat["max_tokens"]));
  EXPECT_EQ(result.text, chat["text"].get<std::string>());
  EXPECT_EQ(result.tokens, chat["output_ids"].get<std::vector<int32_t>>());
}

TEST_F(TextGeneration, StreamedPiecesAreWholeCharactersJoiningToTheText) {
  for (const json& c : (*case_)["greedy_completions"]) {
    std::string joined;
    int pieces = 0;
    const auto result = generator_->stream(c["prompt"], greedy(c["max_tokens"]), [&](const std::string& piece) {
      EXPECT_FALSE(piece.empty());
      EXPECT_TRUE(valid_utf8(piece)) << "piece " << pieces;
      joined += piece;
      ++pieces;
    });
    EXPECT_EQ(joined, c["text"].get<std::string>());
    EXPECT_EQ(result.text, joined);
    EXPECT_GT(pieces, 8);
  }
}

TEST_F(TextGeneration, StopStringsStopTokensAndTheBudget) {
  const json& c = (*case_)["greedy_completions"][0];
  const std::string full = c["text"];
  const std::vector<int32_t> ids = c["output_ids"];

  GenerationConfig config = greedy(16);
  config.stop = {" theoret", "never there"};
  auto result = generator_->generate(c["prompt"], config);
  EXPECT_EQ(result.text, full.substr(0, full.find(" theoret")));
  EXPECT_EQ(result.finish_reason, graphrt::FinishReason::kStop);

  config = greedy(16);
  config.stop_token_ids = {ids[5]};
  result = generator_->generate(c["prompt"], config);
  EXPECT_EQ(result.tokens, std::vector<int32_t>(ids.begin(), ids.begin() + 6));  // the stop token is sampled
  EXPECT_EQ(result.text, generator_->tokenizer().decode(std::vector<int32_t>(ids.begin(), ids.begin() + 5)));
  EXPECT_EQ(result.finish_reason, graphrt::FinishReason::kStop);

  result = generator_->generate(c["prompt"], greedy(5));
  EXPECT_EQ(result.tokens, std::vector<int32_t>(ids.begin(), ids.begin() + 5));
  EXPECT_EQ(result.finish_reason, graphrt::FinishReason::kLength);
}

TEST_F(TextGeneration, SeedsRepeatAcrossRunsAndBatchCompositions) {
  const json& prompts = (*case_)["greedy_completions"];
  GenerationConfig config = generator_->default_config();
  config.max_tokens = 10;
  config.temperature = 1.0;
  config.seed = 1234;
  const std::string prompt = prompts[1]["prompt"];
  const auto alone = generator_->generate(prompt, config);
  EXPECT_EQ(generator_->generate(prompt, config).tokens, alone.tokens);

  GenerationConfig other = config;
  other.seed = 99;
  other.top_k = 20;
  // Batches of two and three requests (one batch_prefill, then batch_decode steps), the seeded
  // request in a different place each time.
  auto batch = generator_->generate_batch({prompts[0]["prompt"], prompt}, {other, config});
  EXPECT_EQ(batch[1].tokens, alone.tokens);
  EXPECT_EQ(batch[1].text, alone.text);
  GenerationConfig short_one = other;
  short_one.max_tokens = 2;  // leaves the batch early
  batch = generator_->generate_batch({prompt, prompts[2]["prompt"], prompts[0]["prompt"]}, {config, short_one, other});
  EXPECT_EQ(batch[0].tokens, alone.tokens);
  EXPECT_EQ(batch[1].tokens.size(), 2u);

  GenerationConfig reseeded = config;
  reseeded.seed = 1235;
  EXPECT_NE(generator_->generate(prompt, reseeded).tokens, alone.tokens);
}

TEST_F(TextGeneration, GreedyBatchEqualsTheSingleCompletions) {
  const json& prompts = (*case_)["greedy_completions"];
  std::vector<std::string> texts;
  for (const json& c : prompts) texts.push_back(c["prompt"]);
  const auto batch = generator_->generate_batch(texts, std::vector<GenerationConfig>(texts.size(), greedy(16)));
  for (size_t i = 0; i < texts.size(); ++i) EXPECT_EQ(batch[i].text, prompts[i]["text"].get<std::string>()) << i;
}

TEST_F(TextGeneration, FieldsOutOfRangeAreErrorsNamingThem) {
  GenerationConfig config = greedy(4);
  config.logit_bias = {{50257, 1.0f}};  // one past the vocabulary
  try {
    generator_->generate("Hello", config);
    FAIL() << "a bias past the vocabulary was accepted";
  } catch (const graphrt::Error& e) {
    EXPECT_EQ(e.context_value("field"), "logit_bias");
  }
  config = greedy(4);
  config.top_logprobs = 3;
  try {
    generator_->generate("Hello", config);
    FAIL() << "top_logprobs without logprobs was accepted";
  } catch (const graphrt::Error& e) {
    EXPECT_EQ(e.context_value("field"), "top_logprobs");
  }
  // The model is left clean: the next request runs as usual.
  const json& c = (*case_)["greedy_completions"][2];
  EXPECT_EQ(generator_->generate(c["prompt"], greedy(16)).text, c["text"].get<std::string>());
}

}  // namespace
