// graphrt::LanguageModel on OpenCL (PoCL here and in CI) through libgraphrt's public API: the
// shared MLC package's OpenCL library (fixtures/mlc/tiny_gpt2_chat, tiny_gpt2_chat-opencl.so:
// the paged KV cache's GPU attention kernels, TVM's DLight schedules) with its weights and KV
// cache in device memory. case.json's serving scenario gives TVM's logits within the case's
// tolerance, batched or one sequence per pass; fork at a split page and popn on the device give
// the logits TVM gave for the same tokens; a decode step moves the token ids and the cache's
// tables in (one upload each) and the sampled logits out, nothing else; a folder without the device's library, or a model
// library that is not there, is refused naming the file. Skips without an OpenCL device, except
// in CI (CI=true) or with GRAPHRT_REQUIRE_OPENCL=1.
#include <dlfcn.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdint>
#include <cstdlib>
#include <string>
#include <vector>

#include "graphrt/device_api.h"
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
using graphrt_test::mlc::case_options;
using graphrt_test::mlc::expected;
using graphrt_test::mlc::ids_of;
using graphrt_test::mlc::max_error;
using graphrt_test::mlc::package_case;
using graphrt_test::mlc::package_dir;
using graphrt_test::mlc::run_scenario;

constexpr DLDevice kOpencl{kDLOpenCL, 0};

bool opencl_required() {
  const char* ci = std::getenv("CI");
  const char* req = std::getenv("GRAPHRT_REQUIRE_OPENCL");
  return (ci && std::string(ci) == "true") || (req && std::string(req) == "1");
}

// "" when opencl:0 can be used, else why not.
std::string unavailable_reason() {
  try {
    graphrt::check_device_available(kOpencl);
    return "";
  } catch (const Error& e) {
    return e.message();
  }
}

#define REQUIRE_OPENCL_DEVICE()                                                                      \
  do {                                                                                               \
    GRAPHRT_REQUIRE_FIXTURES();                                                                      \
    const std::string why_ = unavailable_reason();                                                   \
    if (!why_.empty() && opencl_required())                                                          \
      FAIL() << "no usable OpenCL device, and CI / GRAPHRT_REQUIRE_OPENCL=1 requires one: " << why_; \
    if (!why_.empty()) GTEST_SKIP() << "no usable OpenCL device: " << why_;                          \
  } while (0)

graphrt::Session opencl_session() { return graphrt::Session(graphrt::runtime(), kOpencl); }

double tolerance() { return package_case()["tolerance"].get<double>(); }

using graphrt_test::error_of;

TEST(OpenclLanguageModel, TheServingScenarioGivesTvmsLogits) {
  REQUIRE_OPENCL_DEVICE();
  LanguageModel lm(opencl_session(), package_dir(), case_options());
  const std::string library = package_case()["device_libraries"]["opencl"]["library"];
  EXPECT_EQ(package_dir() + "/" + library, lm.model_library());
  EXPECT_TRUE(lm.batches_sequences());
  EXPECT_EQ(50257, lm.vocab_size());
  // Nine logit arrays: the OpenCL library has no softmax_with_temperature (MLC samples on the host).
  EXPECT_EQ(9u, run_scenario(lm, tolerance(), false).size());
  lm.add_sequence(20);
  const graphrt::StepLogits one = lm.step({{20, {464}}});
  const Error e = error_of([&] { lm.softmax_with_temperature(one, {1.0f}); }, ErrorKind::kNotFound);
  EXPECT_EQ("softmax_with_temperature", e.context_value("function"));
}

TEST(OpenclLanguageModel, OneSequencePerPassGivesTheSameLogits) {
  REQUIRE_OPENCL_DEVICE();
  MlcFolderOptions o = case_options();
  o.use_batch_functions = false;
  LanguageModel lm(opencl_session(), package_dir(), o);
  EXPECT_FALSE(lm.batches_sequences());
  run_scenario(lm, tolerance(), false);
}

TEST(OpenclLanguageModel, ForkAtASplitPageAndPopnContinueAsTvm) {
  REQUIRE_OPENCL_DEVICE();
  LanguageModel lm(opencl_session(), package_dir(), case_options());
  graphrt_test::mlc::fork_and_popn(lm, tolerance());
}

// What the OpenCL interposer (opencl_transfer_counter.c) counted so far, where graphrt's OpenCL
// library is it (GRAPHRT_OPENCL_LIBRARY, as opencl_language_model_transfers_test sets).
struct Transfers {
  uint64_t writes = 0, write_bytes = 0, reads = 0, read_bytes = 0, copies = 0, copy_bytes = 0, launches = 0;
  Transfers operator-(const Transfers& o) const {
    return {writes - o.writes, write_bytes - o.write_bytes, reads - o.reads, read_bytes - o.read_bytes,
            copies - o.copies, copy_bytes - o.copy_bytes, launches - o.launches};
  }
};

using CountsFn = void (*)(uint64_t*);

CountsFn transfer_counter() {
  const char* path = std::getenv("GRAPHRT_OPENCL_LIBRARY");
  void* handle = path ? dlopen(path, RTLD_NOW | RTLD_NOLOAD) : nullptr;  // graphrt opened it
  return handle ? reinterpret_cast<CountsFn>(dlsym(handle, "opencl_transfer_counts")) : nullptr;
}

Transfers transfers(CountsFn counts) {
  uint64_t v[8] = {};
  counts(v);
  return {v[0], v[1], v[2], v[3], v[4], v[5], v[6]};
}

TEST(OpenclLanguageModel, ADecodeStepMovesTheTokensAndTheTablesInAndTheLogitsOut) {
  REQUIRE_OPENCL_DEVICE();
  LanguageModel lm(opencl_session(), package_dir(), case_options());
  const CountsFn counts = transfer_counter();
  if (!counts) GTEST_SKIP() << "transfer counter not loaded (GRAPHRT_OPENCL_LIBRARY=libopencl_transfer_counter.so)";
  const uint64_t row = static_cast<uint64_t>(lm.vocab_size()) * sizeof(float);
  const nlohmann::json c = package_case();
  size_t checked = 0;
  for (const nlohmann::json& st : c["scenario"]) {
    const std::string op = st["op"];
    SCOPED_TRACE(op);
    if (op == "add_sequence") {
      for (const nlohmann::json& id : st["seq_ids"]) lm.add_sequence(id.get<int64_t>());
      continue;
    }
    if (op != "batch_prefill" && op != "batch_decode") break;  // the steps up to the first removal
    std::vector<graphrt::SequenceStep> steps;
    for (size_t i = 0; i < st["seq_ids"].size(); ++i)
      steps.push_back({st["seq_ids"][i].get<int64_t>(), ids_of(st["input_ids"][i])});
    const Transfers before = transfers(counts);
    const graphrt::StepLogits logits = lm.step(steps);
    const Transfers step = transfers(counts) - before;
    EXPECT_LE(max_error(logits, expected(st["expect_logits"])), tolerance());
    // In: the token ids, the tables of the KV cache (one staged upload), and for a prefill the
    // positions of the logits wanted. Out: those logits, one row per sequence, in one read.
    EXPECT_EQ(op == "batch_prefill" ? 3u : 2u, step.writes);
    EXPECT_LE(step.write_bytes, 16384u);
    EXPECT_EQ(1u, step.reads);
    EXPECT_EQ(steps.size() * row, step.read_bytes);
    EXPECT_EQ(0u, step.copies);
    EXPECT_GT(step.launches, 0u);
    ++checked;
  }
  EXPECT_EQ(5u, checked);
  // One sequence: decode, the same traffic.
  lm.add_sequence(30);
  lm.step({{30, {464, 3139}}});
  const Transfers before = transfers(counts);
  lm.step({{30, {286}}});
  const Transfers one = transfers(counts) - before;
  EXPECT_EQ(2u, one.writes);
  EXPECT_EQ(1u, one.reads);
  EXPECT_EQ(row, one.read_bytes);
}

TEST(OpenclLanguageModel, AFolderWithoutTheDevicesLibraryIsRefusedNamingTheFile) {
  GRAPHRT_REQUIRE_FIXTURES();
  // Refused before any device is used: these need no OpenCL driver.
  graphrt_test::ScratchDir dir("mlc_no_opencl_library");
  const nlohmann::json c = package_case();
  for (const nlohmann::json& f : c["files"]) {
    const std::string name = f;
    if (name.find("-opencl.so") != std::string::npos) continue;
    ASSERT_EQ(0, symlink((package_dir() + "/" + name).c_str(), (dir.path() + "/" + name).c_str())) << name;
  }
  const std::string base = dir.path().substr(dir.path().rfind('/') + 1);
  const Error e = error_of([&] { LanguageModel lm(opencl_session(), dir.path()); }, ErrorKind::kNotFound);
  EXPECT_EQ(dir.path() + "/" + base + "-opencl.so", e.context_value("file")) << e.what();
  // The package ships no Vulkan library (TVM's Vulkan build of it is wrong on lavapipe).
  const Error v = error_of([&] { LanguageModel lm(graphrt::Session(graphrt::runtime(), DLDevice{kDLVulkan, 0}),
                                                  package_dir()); },
                           ErrorKind::kNotFound);
  EXPECT_EQ(package_dir() + "/tiny_gpt2_chat-vulkan.so", v.context_value("file")) << v.what();
  MlcFolderOptions o;
  o.model_lib = dir.path() + "/elsewhere-opencl.so";
  const Error m = error_of([&] { LanguageModel lm(opencl_session(), package_dir(), o); }, ErrorKind::kNotFound);
  EXPECT_NE(std::string::npos, std::string(m.what()).find(o.model_lib)) << m.what();
  EXPECT_EQ(o.model_lib, m.context_value("file")) << m.what();
}

}  // namespace
