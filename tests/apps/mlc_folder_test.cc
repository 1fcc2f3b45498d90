// graphrt::LanguageModel on an MLC-LLM model folder (fixtures/mlc/tiny_gpt2_chat, made by TVM
// v0.26 as MLC's compiler makes one) through libgraphrt's public API: case.json's serving
// scenario (three sequences in one batch_prefill, batch_decode steps, a sequence removed, one
// forked, a single-sequence prefill and decode, softmax_with_temperature) gives TVM's logits
// within the case's tolerance, batched, chunked or one sequence per pass; the folder's refusals
// name the file, field or function at fault; a bf16 tensor cache (f32-to-bf16, written here from
// the raw shards) is widened on load and moves the logits by no more than bf16's precision.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <cstring>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include "fixture_cases.h"
#include "graphrt/language_model.h"
#include "graphrt/session.h"
#include "mlc_scenario.h"
#include "scratch_dir.h"
#include "test_support.h"

namespace {

using graphrt::Error;
using graphrt::ErrorKind;
using graphrt::LanguageModel;
using graphrt::MlcFolderOptions;
using graphrt::StepLogits;
using nlohmann::json;

using graphrt_test::mlc::case_options;
using graphrt_test::mlc::expected;
using graphrt_test::mlc::ids_of;
using graphrt_test::mlc::max_error;
using graphrt_test::mlc::package_case;
using graphrt_test::mlc::package_dir;
using graphrt_test::mlc::run_scenario;

graphrt::Session cpu_session() { return graphrt::Session(graphrt::runtime(), graphrt::cpu()); }

using graphrt_test::error_of;

// A copy of the package made of links to its files, but those in `skip`.
void link_package(const std::string& to, const std::vector<std::string>& skip) {
  const json c = package_case();
  for (const json& f : c["files"]) {
    const std::string name = f;
    if (std::find(skip.begin(), skip.end(), name) != skip.end()) continue;
    ASSERT_EQ(0, symlink((package_dir() + "/" + name).c_str(), (to + "/" + name).c_str())) << name;
  }
}

void write_file(const std::string& path, const std::string& text) {
  std::ofstream(path, std::ios::binary) << text;
}

TEST(MlcFolder, TheServingScenarioGivesTvmsLogits) {
  GRAPHRT_REQUIRE_FIXTURES();
  LanguageModel lm(cpu_session(), package_dir(), case_options());
  EXPECT_TRUE(lm.is_mlc_folder());
  EXPECT_TRUE(lm.batches_sequences());
  EXPECT_EQ(package_dir() + "/" + package_case()["library"].get<std::string>(), lm.model_library());
  EXPECT_EQ(50257, lm.vocab_size());
  EXPECT_EQ("llama", lm.chat_config().model_type);
  std::vector<std::string> names;
  for (const graphrt::MlcParam& p : lm.metadata().params) names.push_back(p.name);
  EXPECT_EQ(package_case()["params_order"].get<std::vector<std::string>>(), names);
  EXPECT_EQ(2, lm.metadata().num_key_value_heads);
  EXPECT_EQ(10u, run_scenario(lm, package_case()["tolerance"].get<double>()).size());
}

TEST(MlcFolder, ForkAtASplitPageAndPopnContinueAsTvm) {
  GRAPHRT_REQUIRE_FIXTURES();
  LanguageModel lm(cpu_session(), package_dir(), case_options());
  graphrt_test::mlc::fork_and_popn(lm, package_case()["tolerance"].get<double>());
}

TEST(MlcFolder, DefaultSizesComeFromTheConfigAndTheLibrary) {
  GRAPHRT_REQUIRE_FIXTURES();
  LanguageModel lm(cpu_session(), package_dir());
  // mlc-chat-config.json and _metadata: context window 2048, chunk 128, max_batch_size 16.
  EXPECT_EQ(16, lm.options().max_batch_size);
  EXPECT_EQ(2048, lm.options().max_total_seq_len);
  EXPECT_EQ(128, lm.options().prefill_chunk_size);
  EXPECT_EQ(2048, lm.max_sequence_length());
  run_scenario(lm, package_case()["tolerance"].get<double>());
}

TEST(MlcFolder, OneSequencePerPassGivesTheSameLogits) {
  GRAPHRT_REQUIRE_FIXTURES();
  MlcFolderOptions o = case_options();
  o.use_batch_functions = false;
  LanguageModel lm(cpu_session(), package_dir(), o);
  EXPECT_FALSE(lm.batches_sequences());
  run_scenario(lm, package_case()["tolerance"].get<double>());
}

TEST(MlcFolder, StepsLargerThanAChunkOrTheBatchAreSplitIntoPasses) {
  GRAPHRT_REQUIRE_FIXTURES();
  MlcFolderOptions o = case_options();
  o.prefill_chunk_size = 4;  // the 5 + 5 + 7 prompt tokens: five batch_prefill passes
  o.max_num_sequence = 2;    // three sequences: two batch_decode passes
  LanguageModel lm(cpu_session(), package_dir(), o);
  run_scenario(lm, package_case()["tolerance"].get<double>());
}

TEST(MlcFolder, StepsAreRefusedBeforeAnyPass) {
  GRAPHRT_REQUIRE_FIXTURES();
  LanguageModel lm(cpu_session(), package_dir(), case_options());
  lm.add_sequence(0);
  lm.add_sequence(1);
  EXPECT_EQ("0", error_of([&] { lm.step({{0, {1}}, {0, {2}}}); }, ErrorKind::kInvalidArgument).context_value("sequence"));
  EXPECT_EQ("5", error_of([&] { lm.step({{0, {1}}, {5, {2}}}); }, ErrorKind::kNotFound).context_value("sequence"));
  EXPECT_EQ("1", error_of([&] { lm.step({{0, {1}}, {1, {50257}}}); }, ErrorKind::kOutOfRange).context_value("sequence"));
  error_of([&] { lm.step({{0, {1}}, {1, {}}}); }, ErrorKind::kInvalidArgument);
  error_of([&] { lm.step({}); }, ErrorKind::kInvalidArgument);
  EXPECT_EQ("3", error_of([&] { lm.fork_sequence(3, 4); }, ErrorKind::kNotFound).context_value("sequence"));
  error_of([&] { lm.fork_sequence(0, 1); }, ErrorKind::kInvalidArgument);
  EXPECT_EQ(0, lm.total_sequence_length());
  const StepLogits one = lm.step({{0, {464, 3139}}});
  EXPECT_THROW(one.row(1), Error);
  const Error t = error_of([&] { lm.softmax_with_temperature(one, {0.5f, 1.0f}); }, ErrorKind::kInvalidArgument);
  EXPECT_EQ("softmax_with_temperature", t.context_value("function"));
}

TEST(MlcFolder, AMissingConfigOrFieldIsRefusedNamingIt) {
  GRAPHRT_REQUIRE_FIXTURES();
  graphrt_test::ScratchDir dir("mlc_no_config");
  link_package(dir.path(), {"mlc-chat-config.json"});
  const Error missing = error_of([&] { LanguageModel lm(cpu_session(), dir.path()); }, ErrorKind::kNotFound);
  EXPECT_EQ(dir.path() + "/mlc-chat-config.json", missing.context_value("file")) << missing.what();

  json config = json::parse(graphrt_test::read_text(package_dir() + "/mlc-chat-config.json"));
  for (const char* field : {"vocab_size", "prefill_chunk_size", "model_type"}) {
    SCOPED_TRACE(field);
    json without = config;
    without.erase(field);
    write_file(dir.path() + "/mlc-chat-config.json", without.dump());
    const Error e = error_of([&] { LanguageModel lm(cpu_session(), dir.path()); }, ErrorKind::kNotFound);
    EXPECT_EQ(field, e.context_value("field")) << e.what();
    EXPECT_EQ(dir.path() + "/mlc-chat-config.json", e.context_value("file"));
  }
  json wrong = config;
  wrong["vocab_size"] = "50257";
  write_file(dir.path() + "/mlc-chat-config.json", wrong.dump());
  EXPECT_EQ("vocab_size", error_of([&] { LanguageModel lm(cpu_session(), dir.path()); }, ErrorKind::kTypeMismatch)
                              .context_value("field"));
  wrong = config;
  wrong["tensor_parallel_shards"] = 2;  // the library was compiled for 1
  write_file(dir.path() + "/mlc-chat-config.json", wrong.dump());
  EXPECT_EQ("tensor_parallel_shards",
            error_of([&] { LanguageModel lm(cpu_session(), dir.path()); }, ErrorKind::kInvalidArgument)
                .context_value("field"));
  write_file(dir.path() + "/mlc-chat-config.json", "{\"model_type\": ");
  EXPECT_NE(std::string::npos, error_of([&] { LanguageModel lm(cpu_session(), dir.path()); }, ErrorKind::kInvalidArgument)
                                   .message()
                                   .find("not valid JSON"));
}

TEST(MlcFolder, AMissingShardOrLibraryIsRefusedNamingIt) {
  GRAPHRT_REQUIRE_FIXTURES();
  {
    graphrt_test::ScratchDir dir("mlc_no_shard");
    link_package(dir.path(), {"params_shard_1.bin"});
    const Error e = error_of([&] { LanguageModel lm(cpu_session(), dir.path()); }, ErrorKind::kNotFound);
    EXPECT_NE(std::string::npos, std::string(e.what()).find("params_shard_1.bin")) << e.what();
  }
  {
    graphrt_test::ScratchDir dir("mlc_no_manifest");
    link_package(dir.path(), {"tensor-cache.json"});
    const Error e = error_of([&] { LanguageModel lm(cpu_session(), dir.path()); }, ErrorKind::kNotFound);
    EXPECT_NE(std::string::npos, std::string(e.what()).find(dir.path() + "/tensor-cache.json")) << e.what();
    // The manifest's name before TVM v0.22 (ndarray-cache.json) is read where the new one is absent.
    ASSERT_EQ(0, symlink((package_dir() + "/tensor-cache.json").c_str(), (dir.path() + "/ndarray-cache.json").c_str()));
    LanguageModel lm(cpu_session(), dir.path(), case_options());
    const json c = package_case();
    for (const json& st : c["scenario"]) {
      if (st["op"] != "prefill") continue;
      lm.add_sequence(st["seq_id"].get<int64_t>());
      EXPECT_EQ(0, max_error(lm.step({{st["seq_id"].get<int64_t>(), ids_of(st["input_ids"])}}),
                             expected(st["expect_logits"])));
    }
  }
  {
    graphrt_test::ScratchDir dir("mlc_no_library");
    link_package(dir.path(), {"tiny_gpt2_chat-cpu.so"});
    const Error e = error_of([&] { LanguageModel lm(cpu_session(), dir.path()); }, ErrorKind::kNotFound);
    // The folder's own name, then the -cpu.so it would have taken.
    const std::string base = dir.path().substr(dir.path().rfind('/') + 1);
    EXPECT_EQ(dir.path() + "/" + base + "-cpu.so", e.context_value("file")) << e.what();
    // The one library for the device there is found whatever the folder is called.
    EXPECT_EQ(package_dir() + "/tiny_gpt2_chat-cpu.so", LanguageModel::find_model_library(package_dir(), graphrt::cpu()));
    EXPECT_EQ(dir.path() + "/tiny_gpt2_chat-opencl.so",
              LanguageModel::find_model_library(dir.path(), DLDevice{kDLOpenCL, 0}));
  }
}

TEST(MlcFolder, ALibraryLackingAFunctionIsRefusedNamingIt) {
  GRAPHRT_REQUIRE_FIXTURES();
  // A token-id language model (no _metadata, no embed) given as the model library.
  MlcFolderOptions o;
  o.model_lib = graphrt_test::fixture_path("relax-ffi/relax_tiny_llm_gqa/deploy_relax.so");
  const Error e = error_of([&] { LanguageModel lm(cpu_session(), package_dir(), o); }, ErrorKind::kNotFound);
  EXPECT_EQ("_metadata", e.context_value("function")) << e.what();
}

// bf16 as MLC's converter writes it (TVM's tvmjs): round to nearest even within the finite
// range, truncate outside it (infinities, NaN).
uint16_t to_bf16(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  if ((u & 0x7f800000u) == 0x7f800000u) return static_cast<uint16_t>(u >> 16);
  const uint32_t rounded = (u + 0x7fffu + ((u >> 16) & 1u)) >> 16;
  return (rounded & 0x7f80u) == 0x7f80u ? static_cast<uint16_t>(u >> 16) : static_cast<uint16_t>(rounded);
}

float from_bf16(uint16_t h) {
  const uint32_t u = uint32_t(h) << 16;
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}

// The package with its weights as an f32-to-bf16 tensor cache (the same shards' layout, each
// float32 tensor stored as bf16 halves).
void write_bf16_package(const std::string& to) {
  link_package(to, {"tensor-cache.json", "params_shard_0.bin", "params_shard_1.bin", "params_shard_2.bin"});
  json manifest = json::parse(graphrt_test::read_text(package_dir() + "/tensor-cache.json"));
  for (json& shard : manifest["records"]) {
    const std::vector<uint8_t> raw = graphrt_test::read_file(package_dir() + "/" + shard["dataPath"].get<std::string>());
    std::vector<uint16_t> halves;
    for (json& t : shard["records"]) {
      ASSERT_EQ("float32", t["dtype"]);
      const size_t n = t["nbytes"].get<size_t>() / 4;
      const size_t at = t["byteOffset"].get<size_t>();
      t["byteOffset"] = halves.size() * 2;
      t["nbytes"] = n * 2;
      t["format"] = "f32-to-bf16";
      for (size_t i = 0; i < n; ++i) {
        float f;
        std::memcpy(&f, raw.data() + at + i * 4, 4);
        halves.push_back(to_bf16(f));
      }
    }
    shard["nbytes"] = halves.size() * 2;
    write_file(to + "/" + shard["dataPath"].get<std::string>(),
               std::string(reinterpret_cast<const char*>(halves.data()), halves.size() * 2));
  }
  write_file(to + "/tensor-cache.json", manifest.dump(2));
}

TEST(MlcFolder, ABf16CacheIsWidenedOnLoad) {
  GRAPHRT_REQUIRE_FIXTURES();
  graphrt_test::ScratchDir dir("mlc_bf16");
  write_bf16_package(dir.path());
  // Widening: each loaded float32 is the bf16 half of the raw weight, shifted up (exactly).
  const graphrt::PackedFunc load = graphrt::runtime().function("vm.builtin.tensor_cache.load");
  const graphrt::PackedFunc get = graphrt::runtime().function("vm.builtin.tensor_cache.get");
  const graphrt::PackedFunc clear = graphrt::runtime().function("vm.builtin.tensor_cache.clear");
  ASSERT_TRUE(load && get && clear);
  graphrt::call_function(load, graphrt::ArgList().add_string(dir.path()).add_int(kDLCPU).add_int(0));
  const graphrt::NDArray widened =
      graphrt::call_function(get, graphrt::ArgList().add_string("model.layers.0.mlp.down_proj.weight")).as_ndarray();
  graphrt::call_function(load, graphrt::ArgList().add_string(package_dir()).add_int(kDLCPU).add_int(0));
  const graphrt::NDArray raw =
      graphrt::call_function(get, graphrt::ArgList().add_string("model.layers.0.mlp.down_proj.weight")).as_ndarray();
  graphrt::call_function(clear, graphrt::ArgList());
  ASSERT_EQ(raw.shape(), widened.shape());
  ASSERT_EQ("float32", graphrt::dtype_to_string(widened.dtype()));
  const float* w = static_cast<const float*>(widened->data);
  const float* r = static_cast<const float*>(raw->data);
  size_t moved = 0;
  for (size_t i = 0; i < raw.nbytes() / 4; ++i) {
    ASSERT_EQ(from_bf16(to_bf16(r[i])), w[i]) << i;
    ASSERT_LE(std::fabs(w[i] - r[i]), std::ldexp(std::fabs(r[i]), -8)) << i;  // half a bf16 ulp: 2^-8 relative
    moved += w[i] != r[i];
  }
  EXPECT_GT(moved, raw.nbytes() / 8);  // most float32 weights are not bf16 values

  // The scenario on bf16 weights: every weight's relative error is at most 2^-9; through two
  // layers' four matmuls, the norms and the lm_head the logits' error stays a small multiple of
  // that times their scale. The bound checked: 2^-9 x 8 stages x the largest |logit| of the
  // step (about 1.6 % of it; measured: 0.009-0.012 against bounds of 0.038-0.042), and the
  // logits must have moved (the bf16 weights were used).
  LanguageModel lm(cpu_session(), dir.path(), case_options());
  const std::vector<double> errors = run_scenario(lm, 0);
  ASSERT_EQ(10u, errors.size());
  size_t i = 0;
  const json c = package_case();
  for (const json& st : c["scenario"]) {
    if (!st.contains("expect_logits")) continue;
    const graphrt_test::Npy want = expected(st["expect_logits"]);
    const float* v = reinterpret_cast<const float*>(want.data.data());
    double scale = 0;
    for (size_t k = 0; k < want.data.size() / 4; ++k) scale = std::max(scale, std::fabs(double(v[k])));
    EXPECT_LE(errors[i], std::ldexp(scale, -9) * 8) << st["expect_logits"];
    EXPECT_GT(errors[i], 0) << st["expect_logits"];
    ++i;
  }
}

}  // namespace
