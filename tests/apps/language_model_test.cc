// graphrt::LanguageModel (graphrt/language_model.h) through libgraphrt's public API, on
// fixtures/relax-ffi/relax_tiny_llm_gqa (TVM v0.26 on its paged KV cache): the prefill and
// decode steps of its case.json give TVM's logits bit for bit, a prompt is prefilled in
// chunks, sequences are independent, and every refusal names what is at fault.
#include <gtest/gtest.h>

#include <cstring>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "fixture_cases.h"
#include "graphrt/language_model.h"
#include "graphrt/session.h"
#include "test_support.h"

namespace {

using graphrt::Error;
using graphrt::ErrorKind;
using graphrt::LanguageModel;
using graphrt::LanguageModelOptions;

const char* const kCase = "relax-ffi/relax_tiny_llm_gqa";

std::shared_ptr<graphrt::Model> load(const std::string& fixture_file) {
  graphrt::ModelSource source;
  source.path = graphrt_test::fixture_path(fixture_file);
  return graphrt::Session(graphrt::runtime(), graphrt::cpu()).load(source);
}

std::shared_ptr<graphrt::Model> load_case() { return load(std::string(kCase) + "/deploy_relax.so"); }

// The case's cache_config (the sizes its create step passes).
LanguageModelOptions case_options() {
  const nlohmann::json c = graphrt_test::case_json(kCase)["cache_config"];
  LanguageModelOptions o;
  o.max_batch_size = c["max_batch_size"].get<int64_t>();
  o.max_total_seq_len = c["max_total_seq_len"].get<int64_t>();
  o.prefill_chunk_size = c["prefill_chunk_size"].get<int64_t>();
  o.page_size = c["page_size"].get<int64_t>();
  return o;
}

graphrt_test::Npy case_npy(const std::string& file) {
  return graphrt_test::read_npy(graphrt_test::fixture_path(std::string(kCase) + "/" + file));
}

std::vector<int32_t> tokens(const std::string& file) {
  const graphrt_test::Npy a = case_npy(file);
  EXPECT_EQ(kDLInt, a.dtype.code);
  EXPECT_EQ(32, a.dtype.bits);
  std::vector<int32_t> out(static_cast<size_t>(a.numel()));
  std::memcpy(out.data(), a.data.data(), out.size() * sizeof(int32_t));
  return out;
}

void expect_bits(const graphrt::NDArray& got, const std::string& file) {
  const graphrt_test::Npy want = case_npy(file);
  EXPECT_EQ(want.shape, got.shape()) << file;
  ASSERT_EQ(want.data.size(), got.nbytes()) << file;
  EXPECT_EQ(0, std::memcmp(got->data, want.data.data(), want.data.size())) << file << " differs";
}

void expect_near(const graphrt::NDArray& got, const std::string& file, float tolerance) {
  const graphrt_test::Npy want = case_npy(file);
  ASSERT_EQ(want.data.size(), got.nbytes()) << file;
  const float* g = static_cast<const float*>(got->data);
  const float* w = reinterpret_cast<const float*>(want.data.data());
  for (size_t i = 0; i < want.data.size() / sizeof(float); ++i) ASSERT_NEAR(w[i], g[i], tolerance) << file << " [" << i << "]";
}

// Runs `f`, which must throw a graphrt::Error of `kind`; returns it.
using graphrt_test::error_of;

TEST(LanguageModel, PrefillAndDecodeGiveTvmsLogitsBitForBit) {
  GRAPHRT_REQUIRE_FIXTURES();
  const std::shared_ptr<graphrt::Model> model = load_case();
  LanguageModel lm(*model, case_options());
  EXPECT_EQ(graphrt_test::case_json(kCase)["model"]["vocab"].get<int64_t>(), lm.vocab_size());
  lm.add_sequence(0);
  expect_bits(lm.prefill(0, tokens("input_ids_prefill.npy")), "output_prefill_logits.npy");
  expect_bits(lm.decode(0, tokens("input_ids_decode0.npy").at(0)), "output_decode0_logits.npy");
  expect_bits(lm.decode(0, tokens("input_ids_decode1.npy").at(0)), "output_decode1_logits.npy");
  EXPECT_EQ(7, lm.total_sequence_length());  // the case's expect_int: 5 + 1 + 1
  lm.remove_sequence(0);
  EXPECT_EQ(0, lm.total_sequence_length());
}

TEST(LanguageModel, SequencesAreIndependentAndIdsAreTheCallers) {
  GRAPHRT_REQUIRE_FIXTURES();
  const std::shared_ptr<graphrt::Model> model = load_case();
  LanguageModelOptions o = case_options();
  o.max_batch_size = 2;
  LanguageModel lm(*model, o);
  lm.add_sequence(41);
  lm.add_sequence(7);
  const std::vector<int32_t> prompt = tokens("input_ids_prefill.npy");
  // 41 takes the prompt in two calls, with 7's whole prompt and first decode between them.
  lm.prefill(41, {prompt.begin(), prompt.begin() + 2});
  expect_bits(lm.prefill(7, prompt), "output_prefill_logits.npy");
  expect_bits(lm.decode(7, tokens("input_ids_decode0.npy").at(0)), "output_decode0_logits.npy");
  expect_near(lm.prefill(41, {prompt.begin() + 2, prompt.end()}), "output_prefill_logits.npy", 1e-5f);
  EXPECT_EQ(11, lm.total_sequence_length());
  lm.remove_sequence(7);
  expect_near(lm.decode(41, tokens("input_ids_decode0.npy").at(0)), "output_decode0_logits.npy", 1e-5f);
  EXPECT_EQ(6, lm.total_sequence_length());
}

TEST(LanguageModel, APromptLongerThanTheChunkIsPrefilledInChunks) {
  GRAPHRT_REQUIRE_FIXTURES();
  const std::shared_ptr<graphrt::Model> model = load_case();
  LanguageModelOptions o = case_options();
  o.prefill_chunk_size = 2;  // the case's 5-token prompt: passes of 2, 2 and 1 tokens
  LanguageModel lm(*model, o);
  lm.add_sequence(0);
  expect_near(lm.prefill(0, tokens("input_ids_prefill.npy")), "output_prefill_logits.npy", 1e-5f);
  expect_near(lm.decode(0, tokens("input_ids_decode0.npy").at(0)), "output_decode0_logits.npy", 1e-5f);
  EXPECT_EQ(6, lm.total_sequence_length());
}

TEST(LanguageModel, AFunctionTheModelLacksIsNamedWithItsOption) {
  GRAPHRT_REQUIRE_FIXTURES();
  const std::shared_ptr<graphrt::Model> model = load_case();
  for (const char* option : {"create_cache", "prefill", "decode"}) {
    SCOPED_TRACE(option);
    LanguageModelOptions o = case_options();
    std::string& name = option[0] == 'c' ? o.create_cache : option[0] == 'p' ? o.prefill : o.decode;
    name = "batch_" + name;
    const Error e = error_of([&] { LanguageModel lm(*model, o); }, ErrorKind::kNotFound);
    EXPECT_EQ(name, e.context_value("function"));
    EXPECT_EQ(option, e.context_value("option"));
    EXPECT_NE(std::string(e.message()).find("functions: "), std::string::npos) << e.what();  // what there is
  }
}

TEST(LanguageModel, SizesAndModelsItCannotUseAreRefused) {
  GRAPHRT_REQUIRE_FIXTURES();
  const std::shared_ptr<graphrt::Model> model = load_case();
  LanguageModelOptions o = case_options();
  o.prefill_chunk_size = 0;
  EXPECT_EQ("prefill_chunk_size",
            error_of([&] { LanguageModel lm(*model, o); }, ErrorKind::kInvalidArgument).context_value("option"));
  // A cache larger than graphrt's caps: the create function's refusal, naming it.
  o = case_options();
  o.max_total_seq_len = int64_t{1} << 30;  // 2^26 pages of 16
  const Error big = error_of([&] { LanguageModel lm(*model, o); }, ErrorKind::kResourceExhausted);
  EXPECT_EQ("create_tir_paged_kv_cache", big.context_value("function")) << big.what();
  const std::shared_ptr<graphrt::Model> graph = load("mlp/deploy_factory.so");
  error_of([&] { LanguageModel lm(*graph, case_options()); }, ErrorKind::kInvalidArgument);
}

TEST(LanguageModel, UnknownSequencesAndPromptsTheCacheCannotHoldAreRefusedBeforeAnyPass) {
  GRAPHRT_REQUIRE_FIXTURES();
  const std::shared_ptr<graphrt::Model> model = load_case();
  LanguageModel lm(*model, case_options());  // 64 tokens per sequence
  for (const auto& call : std::vector<std::function<void()>>{[&] { lm.prefill(3, {1, 2}); }, [&] { lm.decode(3, 1); },
                                                             [&] { lm.remove_sequence(3); }}) {
    const Error e = error_of(call, ErrorKind::kNotFound);
    EXPECT_EQ("3", e.context_value("sequence")) << e.what();
  }
  lm.add_sequence(3);
  EXPECT_EQ("3", error_of([&] { lm.add_sequence(3); }, ErrorKind::kInvalidArgument).context_value("sequence"));
  const Error long_prompt = error_of([&] { lm.prefill(3, std::vector<int32_t>(65, 1)); }, ErrorKind::kOutOfRange);
  EXPECT_EQ("max_total_seq_len", long_prompt.context_value("option")) << long_prompt.what();
  EXPECT_EQ(0, lm.total_sequence_length());  // no chunk of it ran
  error_of([&] { lm.prefill(3, {}); }, ErrorKind::kInvalidArgument);
  error_of([&] { lm.prefill(3, {1, 96}); }, ErrorKind::kOutOfRange);  // the vocabulary is [0, 96)
  error_of([&] { lm.decode(3, -1); }, ErrorKind::kOutOfRange);
  EXPECT_EQ(0, lm.total_sequence_length());
  // Filled to the brim by chunks, the sequence takes no further token.
  lm.prefill(3, std::vector<int32_t>(64, 1));
  EXPECT_EQ(64, lm.total_sequence_length());
  EXPECT_EQ("max_total_seq_len", error_of([&] { lm.decode(3, 1); }, ErrorKind::kOutOfRange).context_value("option"));
  lm.remove_sequence(3);
  lm.add_sequence(3);  // its pages came back
  expect_bits(lm.prefill(3, tokens("input_ids_prefill.npy")), "output_prefill_logits.npy");
}

}  // namespace
