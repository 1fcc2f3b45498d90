// Continuous batching on the MLC-LLM package fixture (mlc/tiny_gpt2_chat) through the public C++ API:
// requests stepped together, joining and leaving between steps, give case.json's greedy completions and
// chat answer as text (TVM's run, the reference tokenizer's ids); a seed gives the same tokens alone and
// in a batch; admission waits for room in the cache; cancelled requests leave the cache at the next step;
// requests that can never fit and a full queue are errors naming the option.
#include <gtest/gtest.h>

#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "graphrt/continuous_batcher.h"
#include "graphrt/error.h"
#include "graphrt/runtime.h"
#include "test_support.h"

namespace {

using graphrt::BatchEnd;
using graphrt::BatchOutcome;
using graphrt::ContinuousBatcher;
using graphrt::ContinuousBatcherOptions;
using graphrt::GenerationConfig;
using graphrt::TextGenerator;
using nlohmann::json;

class ContinuousBatching : public ::testing::Test {
 protected:
  void SetUp() override {
    GRAPHRT_REQUIRE_FIXTURES();
    folder_ = graphrt_test::fixture_path("mlc/tiny_gpt2_chat");
    const auto bytes = graphrt_test::read_file(folder_ + "/case.json");
    case_ = json::parse(bytes.begin(), bytes.end());
    if (!session_) session_ = new graphrt::Session(graphrt::runtime(), graphrt::cpu());
  }
  static void TearDownTestSuite() {
    delete default_generator_;
    delete session_;
    default_generator_ = nullptr;
    session_ = nullptr;
  }
  // The folder with the library's sizes, opened once for the tests that take them (each leaves
  // its cache empty); other sizes open the folder again.
  TextGenerator& generator() {
    if (!default_generator_) default_generator_ = new TextGenerator(*session_, folder_);
    return *default_generator_;
  }
  std::unique_ptr<TextGenerator> generator(graphrt::MlcFolderOptions options) {
    return std::make_unique<TextGenerator>(*session_, folder_, options);
  }
  static GenerationConfig greedy(const TextGenerator& gen, int64_t max_tokens) {
    GenerationConfig config = gen.default_config();
    config.temperature = 0;
    config.max_tokens = max_tokens;
    return config;
  }
  // Steps until idle; each request's outcome by id, and the largest decode pass seen.
  static std::map<int64_t, BatchOutcome> drain(ContinuousBatcher& batcher, int64_t* widest = nullptr) {
    std::map<int64_t, BatchOutcome> out;
    for (int guard = 0; !batcher.idle() && guard < 10000; ++guard) {
      graphrt::BatchStepReport report = batcher.step();
      if (widest) *widest = std::max(*widest, report.decode_sequences);
      for (BatchOutcome& o : report.ended) out[o.request] = std::move(o);
    }
    return out;
  }
  std::string folder_;
  json case_;
  static graphrt::Session* session_;
  static TextGenerator* default_generator_;
};
graphrt::Session* ContinuousBatching::session_ = nullptr;
TextGenerator* ContinuousBatching::default_generator_ = nullptr;

TEST_F(ContinuousBatching, RequestsSteppedTogetherGiveTheFixturesText) {
  TextGenerator* gen = &generator();
  ContinuousBatcher batcher(*gen);
  std::map<int64_t, std::string> want;
  std::map<int64_t, std::string> streamed;
  for (const json& c : case_["greedy_completions"]) {
    const int64_t id = batcher.add({gen->tokenizer().encode(c["prompt"]), greedy(*gen, c["max_tokens"]), {}});
    want[id] = c["text"];
  }
  batcher.step();  // the first three prefill together; the chat joins between steps
  batcher.step();
  const json& chat = case_["chat"];
  std::vector<graphrt::ChatMessage> messages;
  for (const json& m : chat["messages"]) messages.push_back({m["role"], m["content"]});
  int64_t chat_id = 0;
  chat_id = batcher.add({gen->chat_prompt_ids(messages), greedy(*gen, chat["max_tokens"]),
                         [&streamed, &chat_id](const std::string& piece) { streamed[chat_id] += piece; }});
  want[chat_id] = chat["text"];
  int64_t widest = 0;
  const auto outcomes = drain(batcher, &widest);
  ASSERT_EQ(outcomes.size(), want.size());
  for (const auto& [id, text] : want) {
    const BatchOutcome& o = outcomes.at(id);
    EXPECT_EQ(o.end, BatchEnd::kFinished) << id;
    EXPECT_EQ(o.result.text, text) << id;
    EXPECT_EQ(o.result.finish_reason, graphrt::FinishReason::kLength) << id;
  }
  EXPECT_EQ(streamed[chat_id], chat["text"].get<std::string>());
  EXPECT_EQ(outcomes.at(chat_id).result.prompt_tokens, static_cast<int64_t>(chat["prompt_ids"].size()));
  EXPECT_EQ(widest, 4);  // all four decoded in one pass
  EXPECT_EQ(gen->language_model().total_sequence_length(), 0);  // every sequence left the cache
}

TEST_F(ContinuousBatching, PromptsPrefilledInChunksGiveTheSameText) {
  TextGenerator* gen = &generator();
  ContinuousBatcherOptions options;
  options.prefill_tokens_per_step = 3;  // each 5-7 token prompt takes two or three steps
  ContinuousBatcher batcher(*gen, options);
  std::map<int64_t, std::string> want;
  for (const json& c : case_["greedy_completions"])
    want[batcher.add({gen->tokenizer().encode(c["prompt"]), greedy(*gen, c["max_tokens"]), {}})] = c["text"];
  const graphrt::BatchStepReport first = batcher.step();
  EXPECT_EQ(first.prefill_tokens, 3);
  EXPECT_TRUE(first.sampled.empty());
  const auto outcomes = drain(batcher);
  for (const auto& [id, text] : want) EXPECT_EQ(outcomes.at(id).result.text, text) << id;
}

TEST_F(ContinuousBatching, ASeedGivesTheSameTokensAloneAndInABatch) {
  TextGenerator* gen = &generator();
  GenerationConfig config = gen->default_config();
  config.temperature = 1.0f;
  config.seed = 42;
  config.max_tokens = 10;
  const std::vector<int32_t> prompt = gen->tokenizer().encode(case_["greedy_completions"][1]["prompt"]);
  ContinuousBatcher alone_batcher(*gen);
  const int64_t alone_id = alone_batcher.add({prompt, config, {}});
  const std::vector<int32_t> alone = drain(alone_batcher).at(alone_id).result.tokens;
  ASSERT_EQ(alone.size(), 10u);

  ContinuousBatcher batcher(*gen);
  for (int i = 0; i < 7; ++i) {
    GenerationConfig other = config;
    other.seed = 100 + i;
    other.max_tokens = 2 + i;  // they leave at different steps
    batcher.add({gen->tokenizer().encode(case_["greedy_completions"][i % 3]["prompt"]), other, {}});
  }
  batcher.step();
  const int64_t id = batcher.add({prompt, config, {}});  // joins a running batch
  EXPECT_EQ(drain(batcher).at(id).result.tokens, alone);
}

TEST_F(ContinuousBatching, AdmissionWaitsForRoomInTheCache) {
  graphrt::MlcFolderOptions options;
  options.max_total_seq_len = 64;  // 4 pages of 16
  options.max_num_sequence = 4;
  auto gen = generator(options);
  ContinuousBatcher batcher(*gen);
  EXPECT_EQ(batcher.capacity_pages(), 4);
  std::map<int64_t, std::string> want;
  for (const json& c : case_["greedy_completions"])  // 5-7 prompt tokens + 16: 2 pages each
    want[batcher.add({gen->tokenizer().encode(c["prompt"]), greedy(*gen, 16), {}})] = c["text"];
  batcher.step();
  EXPECT_EQ(batcher.running(), 2u);
  EXPECT_EQ(batcher.waiting(), 1u);
  EXPECT_EQ(batcher.pages_reserved(), 4);
  EXPECT_EQ(batcher.pages_in_use(), 2);  // one page of prompt each
  // A request cancelled behind one that waits for room leaves at the next step all the same.
  const int64_t behind = batcher.add({{464, 3139}, greedy(*gen, 4), {}});
  batcher.cancel(behind);
  const graphrt::BatchStepReport next = batcher.step();
  ASSERT_FALSE(next.ended.empty());
  EXPECT_EQ(next.ended[0].request, behind);
  EXPECT_EQ(next.ended[0].end, BatchEnd::kCancelled);
  EXPECT_EQ(batcher.waiting(), 1u);
  const auto outcomes = drain(batcher);
  for (const auto& [id, text] : want) EXPECT_EQ(outcomes.at(id).result.text, text) << id;
  EXPECT_EQ(batcher.pages_reserved(), 0);
}

TEST_F(ContinuousBatching, CancelledRequestsLeaveTheCacheAtTheNextStep) {
  TextGenerator* gen = &generator();
  ContinuousBatcher batcher(*gen);
  const json& c = case_["greedy_completions"][0];
  const int64_t running = batcher.add({gen->tokenizer().encode(c["prompt"]), greedy(*gen, 200), {}});
  batcher.step();
  batcher.step();
  const int64_t queued = batcher.add({gen->tokenizer().encode(c["prompt"]), greedy(*gen, 200), {}});
  EXPECT_GT(gen->language_model().total_sequence_length(), 0);
  batcher.cancel(running);
  batcher.cancel(queued);
  const graphrt::BatchStepReport report = batcher.step();
  ASSERT_EQ(report.ended.size(), 2u);
  for (const BatchOutcome& o : report.ended) EXPECT_EQ(o.end, BatchEnd::kCancelled);
  EXPECT_TRUE(batcher.idle());
  EXPECT_EQ(batcher.pages_in_use(), 0);
  EXPECT_EQ(batcher.pages_reserved(), 0);
  EXPECT_EQ(gen->language_model().total_sequence_length(), 0);
  const int64_t next = batcher.add({gen->tokenizer().encode(c["prompt"]), greedy(*gen, 16), {}});
  EXPECT_EQ(drain(batcher).at(next).result.text, c["text"].get<std::string>());
}

TEST_F(ContinuousBatching, RequestsThatCannotFitAreErrorsNamingTheOption) {
  graphrt::MlcFolderOptions options;
  options.max_total_seq_len = 32;
  auto gen = generator(options);
  ContinuousBatcherOptions batching;
  batching.max_waiting = 2;
  ContinuousBatcher batcher(*gen, batching);
  try {
    batcher.add({std::vector<int32_t>(40, 464), greedy(*gen, 4), {}});
    FAIL() << "a prompt past the sequence limit was queued";
  } catch (const graphrt::Error& e) {
    EXPECT_EQ(e.kind(), graphrt::ErrorKind::kOutOfRange);
    EXPECT_EQ(e.context_value("field"), "prompt");
    EXPECT_EQ(e.context_value("option"), "max_total_seq_len");
  }
  GenerationConfig bad = greedy(*gen, 4);
  bad.top_logprobs = 3;  // without logprobs
  EXPECT_THROW(batcher.add({{464}, bad, {}}), graphrt::Error);
  batcher.add({{464, 3139}, greedy(*gen, 4), {}});
  batcher.add({{464, 3139}, greedy(*gen, 4), {}});
  try {
    batcher.add({{464, 3139}, greedy(*gen, 4), {}});
    FAIL() << "a third request was queued past max_waiting 2";
  } catch (const graphrt::Error& e) {
    EXPECT_EQ(e.kind(), graphrt::ErrorKind::kResourceExhausted);
    EXPECT_EQ(e.context_value("option"), "max_waiting");
  }
  EXPECT_EQ(drain(batcher).size(), 2u);
}

}  // namespace
