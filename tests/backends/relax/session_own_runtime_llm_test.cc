// The Relax back end's caches over a Session's own runtime: a language model
// (fixtures/relax-ffi/relax_tiny_llm_gqa, TVM v0.26 on its paged KV cache)
// driven through graphrt::LanguageModel, and the tensor cache's functions,
// allocate and copy through the device APIs of the runtime they are
// registered in, and the kernels' workspace (TVMBackendAllocWorkspace names no
// runtime) comes from the running VM's: neither builds the process's default
// runtime. Its own process (as session_own_runtime_test):
// the default must not exist when it starts, so that building it can be seen.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <cstdint>
#include <cstring>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include "fixture_cases.h"
#include "graphrt/language_model.h"
#include "graphrt/session.h"
#include "own_runtime_support.h"
#include "scratch_dir.h"
#include "test_support.h"

namespace {

using namespace graphrt;
using graphrt_test::CountingCpu;

const char* const kCase = "relax-ffi/relax_tiny_llm_gqa";

// The default runtime's CPU, once it is built: what it hands out is counted.
const std::shared_ptr<CountingCpu>& default_cpu() {
  static const auto cpu = std::make_shared<CountingCpu>();
  return cpu;
}

std::unique_ptr<Runtime> counting_default_runtime_factory() {
  std::unique_ptr<Runtime> built = graphrt_test::flagging_default_runtime_factory();
  built->register_device_api(kDLCPU, default_cpu());
  return built;
}

// Builds the default runtime once every test is done: it must have been built by the factory
// installed here; else it existed before the tests and their checks meant nothing.
class DefaultRuntimeNotBuiltBefore : public ::testing::Environment {
 public:
  void SetUp() override { install_default_runtime_factory(&counting_default_runtime_factory); }
  void TearDown() override {
    runtime();
    EXPECT_TRUE(graphrt_test::default_runtime_built())
        << "the default runtime existed before the tests began: nothing was checked";
  }
};
// gtest owns the environments it is given.
[[maybe_unused]] ::testing::Environment* const kEnvironment =
    ::testing::AddGlobalTestEnvironment(std::make_unique<DefaultRuntimeNotBuiltBefore>().release());

class OwnRuntimeCaches : public ::testing::Test {
 protected:
  void SetUp() override {
    own_ = graphrt_test::compose_own_runtime();
    own_->register_device_api(kDLCPU, cpu_);
  }

  std::shared_ptr<CountingCpu> cpu_ = std::make_shared<CountingCpu>();
  std::unique_ptr<Runtime> own_;  // outlives the models and arrays below (declared before them)
};

void write_file(const std::string& path, const std::string& bytes) {
  std::ofstream out(path, std::ios::binary);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

RetValue call(const Runtime& runtime, const std::string& name, const ArgList& args) {
  const PackedFunc f = runtime.function(name);
  if (!f) throw Error(ErrorKind::kNotFound, "no function " + name);
  return call_function(f, args);
}

// First in the file: run in its order, it finds the default runtime not built yet, and checks
// that it stays so.
TEST_F(OwnRuntimeCaches, TheTensorCachesCopiesComeFromItsRuntime) {
  // A shard of three float32 tensors: 16 bytes at 0 (64-byte aligned: a view of the mapping),
  // 8 at 16 and 4 at 24 (off the alignment: copies); the manifest as TVM writes it.
  const std::vector<float> values = {1.5f, -2.0f, 0.25f, 8.0f, 3.0f, -0.5f, 100.0f};
  const std::string shard(reinterpret_cast<const char*>(values.data()), values.size() * sizeof(float));
  auto record = [](const char* name, int64_t n, size_t offset) {
    return nlohmann::json{{"name", name},   {"shape", {n}},         {"dtype", "float32"},
                          {"format", "raw"}, {"nbytes", n * 4}, {"byteOffset", offset}};
  };
  graphrt_test::ScratchDir dir("own_runtime_tensor_cache");
  write_file(dir.path() + "/params_shard_0.bin", shard);
  const nlohmann::json manifest = {
      {"metadata", nlohmann::json::object()},
      {"records",
       {{{"dataPath", "params_shard_0.bin"},
         {"format", "raw-shard"},
         {"nbytes", shard.size()},
         {"records", {record("aligned", 4, 0), record("off_a", 2, 16), record("off_b", 1, 24)}},
         {"md5sum", "x"}}}}};
  write_file(dir.path() + "/tensor-cache.json", manifest.dump());

  const bool default_built = graphrt_test::default_runtime_built();  // by another test of this process
  const int default_allocs = default_cpu()->allocs();
  const int allocs = cpu_->allocs();
  call(*own_, "vm.builtin.tensor_cache.load", ArgList().add_string(dir.path()).add_int(kDLCPU).add_int(0));
  EXPECT_EQ(allocs + 2, cpu_->allocs());  // the two copies; the aligned tensor is a view
  auto get = [&](const char* name) {
    return call(*own_, "vm.builtin.tensor_cache.get", ArgList().add_string(name)).as_ndarray();
  };
  const NDArray aligned = get("aligned"), off_a = get("off_a"), off_b = get("off_b");
  EXPECT_FALSE(cpu_->holds(aligned->data, aligned.nbytes()));
  EXPECT_TRUE(cpu_->holds(off_a->data, off_a.nbytes()));
  EXPECT_TRUE(cpu_->holds(off_b->data, off_b.nbytes()));
  EXPECT_EQ(0, std::memcmp(aligned->data, &values[0], 16));
  EXPECT_EQ(0, std::memcmp(off_a->data, &values[4], 8));
  EXPECT_EQ(0, std::memcmp(off_b->data, &values[6], 4));

  // A borrowed DLTensor is copied into an array of the cache's runtime.
  std::vector<int64_t> borrowed = {9, 10};
  const NDArray wrapped = NDArray::wrap(borrowed.data(), {2}, DLDataType{kDLInt, 64, 1}, cpu(), nullptr);
  call(*own_, "vm.builtin.tensor_cache.update", ArgList().add_string("x").add_tensor(wrapped.handle()));
  const NDArray x = get("x");
  EXPECT_NE(x->data, static_cast<void*>(borrowed.data()));
  EXPECT_TRUE(cpu_->holds(x->data, x.nbytes()));
  EXPECT_EQ(0, std::memcmp(x->data, borrowed.data(), 16));
  call(*own_, "vm.builtin.tensor_cache.clear", ArgList());
  EXPECT_EQ(default_built, graphrt_test::default_runtime_built()) << "the tensor cache built the default runtime";
  EXPECT_EQ(default_allocs, default_cpu()->allocs());
}

graphrt_test::Npy case_npy(const std::string& file) {
  return graphrt_test::read_npy(graphrt_test::fixture_path(std::string(kCase) + "/" + file));
}

std::vector<int32_t> tokens(const std::string& file) {
  const graphrt_test::Npy a = case_npy(file);
  std::vector<int32_t> out(static_cast<size_t>(a.numel()));
  std::memcpy(out.data(), a.data.data(), out.size() * sizeof(int32_t));
  return out;
}

// language_model_test's tolerance for these steps: TVM's logits bit for bit.
void expect_bits(const NDArray& got, const std::string& file) {
  const graphrt_test::Npy want = case_npy(file);
  EXPECT_EQ(want.shape, got.shape()) << file;
  ASSERT_EQ(want.data.size(), got.nbytes()) << file;
  EXPECT_EQ(0, std::memcmp(got->data, want.data.data(), want.data.size())) << file << " differs";
}

TEST_F(OwnRuntimeCaches, ALanguageModelsKvCacheAllocatesFromTheSessionsRuntime) {
  GRAPHRT_REQUIRE_FIXTURES();
  const nlohmann::json c = graphrt_test::case_json(kCase);
  LanguageModelOptions o;
  o.max_batch_size = c["cache_config"]["max_batch_size"].get<int64_t>();
  o.max_total_seq_len = c["cache_config"]["max_total_seq_len"].get<int64_t>();
  o.prefill_chunk_size = c["cache_config"]["prefill_chunk_size"].get<int64_t>();
  o.page_size = c["cache_config"]["page_size"].get<int64_t>();
  const nlohmann::json& m = c["model"];
  // One float32 page tensor per layer: [pages, 2 (K, V), kv_heads, page_size, head_dim].
  const int64_t pages = (o.max_total_seq_len + o.page_size - 1) / o.page_size + 1;
  const size_t page_bytes = static_cast<size_t>(pages * 2 * m["kv_heads"].get<int64_t>() * o.page_size *
                                                m["head_dim"].get<int64_t>() * 4);

  const bool default_built = graphrt_test::default_runtime_built();  // by another test of this process
  Session session(*own_, cpu());
  ModelSource source;
  source.path = graphrt_test::fixture_path(std::string(kCase) + "/deploy_relax.so");
  const std::shared_ptr<Model> model = session.load(source);
  const int pages_before = cpu_->allocs_of(page_bytes);
  LanguageModel lm(*model, o);
  EXPECT_EQ(m["layers"].get<int>(), cpu_->allocs_of(page_bytes) - pages_before)
      << "the cache's page tensors did not come from the session's CPU";
  lm.add_sequence(0);
  int allocs = cpu_->allocs();
  const NDArray prefill = lm.prefill(0, tokens("input_ids_prefill.npy"));
  expect_bits(prefill, "output_prefill_logits.npy");
  EXPECT_GT(cpu_->allocs(), allocs);  // the token tensor, the cache's tables of the pass
  for (const char* step : {"decode0", "decode1"}) {
    allocs = cpu_->allocs();
    expect_bits(lm.decode(0, tokens(std::string("input_ids_") + step + ".npy").at(0)),
                std::string("output_") + step + "_logits.npy");
    // The first decode's token tensor and tables (of other lengths than the prefill's) come
    // from the session's CPU; the second reuses them and allocates nothing at all.
    if (std::string(step) == "decode0") EXPECT_GT(cpu_->allocs(), allocs) << step;
    else EXPECT_EQ(cpu_->allocs(), allocs) << step;
  }
  EXPECT_EQ(7, lm.total_sequence_length());  // the case's 5 + 1 + 1 tokens
  // The kernels' workspace (rms_norm's, transpose_append's) comes through TVM's C ABI, which
  // names no runtime: it is the running VM's runtime's (RunningDeviceApis), so nothing builds
  // the default or reaches its CPU.
  EXPECT_EQ(default_built, graphrt_test::default_runtime_built()) << "the language model built the default runtime";
  EXPECT_EQ(0, default_cpu()->allocs()) << "an array of the model or its cache came from the default runtime";
}

}  // namespace
