// A Relax executable's tensor constants through the params cache
// (src/params_cache.cc, ExecutableModuleNode::use_params_cache): the VM over
// constants mapped read-only from the cache gives TVM's outputs bit for bit; a
// second load maps the file as it is; a cache made from another model file, or
// before the model changed, is rewritten with a warning; constants are
// replaced only by arrays that fit them.
#include <gtest/gtest.h>

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <mutex>

#include "fixture_cases.h"
#include "mapped_file_of.h"
#include "scratch_dir.h"
#include "graphrt/log.h"
#include "graphrt/runtime.h"
#include "backends/relax/executable_module.h"
#include "relax_cases.h"

namespace {

using namespace graphrt;
using graphrt_test::ScratchDir;
using graphrt_test::mapped_file_of;
using graphrt::relax::ExecutableModuleNode;

std::string copy_file(const std::string& from, const std::string& to) {
  std::ifstream in(from, std::ios::binary);
  std::ofstream(to, std::ios::binary | std::ios::trunc) << in.rdbuf();
  return to;
}

ino_t inode_of(const std::string& path) {
  struct stat st;
  return stat(path.c_str(), &st) == 0 ? st.st_ino : 0;
}

class CapturedWarnings {
 public:
  CapturedWarnings() { set_log_callback(&CapturedWarnings::on_log, this); }
  ~CapturedWarnings() { set_log_callback(nullptr, nullptr); }
  std::string all() {
    std::lock_guard<std::mutex> lock(mutex_);
    return text_;
  }

 private:
  static void on_log(LogLevel, const char* message, void* self) {
    auto* me = static_cast<CapturedWarnings*>(self);
    std::lock_guard<std::mutex> lock(me->mutex_);
    me->text_ += std::string(message) + "\n";
  }
  std::mutex mutex_;
  std::string text_;
};

ExecutableModuleNode& executable_of(const Module& lib) {
  auto* node = dynamic_cast<ExecutableModuleNode*>(lib.get());
  if (!node) throw Error("not a Relax executable module: " + lib->type_key());
  return *node;
}

std::string use_cache(const Module& lib, const std::string& cache, const std::string& model) {
  return call_function(lib->require_function("use_params_cache"), ArgList().add_string(cache).add_string(model))
      .as_string();
}

// Every input set of the case through `vm`: TVM's outputs, bit for bit.
void expect_vm_outputs(const Module& vm, const graphrt_test::RelaxCase& rc) {
  for (int round = 0; round < 2; ++round) {  // the second reuses the VM's storage
    for (const auto& set : rc.sets) {
      ArgList args;
      for (const NDArray& a : graphrt_test::relax_inputs(set)) args.add_ndarray(a);
      const std::vector<NDArray> got = graphrt_test::flatten_result(call_function(vm->require_function(rc.entry), args));
      ASSERT_EQ(got.size(), set.outputs.size());
      for (size_t i = 0; i < got.size(); ++i)
        EXPECT_EQ(graphrt_test::compare_output(got[i], set.outputs[i], 0), "") << set.outputs[i];
    }
  }
}

// The same through a new VM over `lib`.
void expect_tvm_outputs(const Module& lib, const graphrt_test::RelaxCase& rc) {
  expect_vm_outputs(graphrt_test::relax_vm(lib), rc);
}

class RelaxParamsCache : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    const std::string dir = graphrt_test::fixtures_dir().empty() ? "" : graphrt_test::fixtures_dir() + "/relax/" + GetParam();
    struct stat st;
    if (dir.empty() || stat(dir.c_str(), &st) != 0) {
      if (graphrt_test::fixtures_required()) FAIL() << "Relax fixture " << GetParam() << " missing and required";
      GTEST_SKIP() << "Relax fixture " << GetParam() << " not found";
    }
    rc_ = graphrt_test::relax_case(GetParam());
    model_ = copy_file(rc_.dir + "/deploy_relax.so", dir_.path() + "/deploy_relax.so");
    cache_ = dir_.path() + "/model.params-cache";
  }

  ScratchDir dir_{"relax_params_cache"};
  graphrt_test::RelaxCase rc_;
  std::string model_;
  std::string cache_;
};

TEST_P(RelaxParamsCache, MappedConstantsGiveTvmsOutputsBitExact) {
  CapturedWarnings warnings;
  Module lib = load_module(model_);
  const ParamList decoded = executable_of(lib).tensor_constants();
  ASSERT_FALSE(decoded.empty());
  std::vector<std::string> decoded_bytes;
  for (const auto& c : decoded) {
    decoded_bytes.emplace_back(static_cast<const char*>(c.second->data), c.second.nbytes());
    EXPECT_EQ(c.first.compare(0, 2, "c["), 0) << c.first;
  }
  EXPECT_EQ(use_cache(lib, cache_, model_), "written");
  const ParamList mapped = executable_of(lib).tensor_constants();
  ASSERT_EQ(mapped.size(), decoded.size());
  for (size_t i = 0; i < mapped.size(); ++i) {
    EXPECT_EQ(mapped[i].first, decoded[i].first);
    EXPECT_EQ(mapped_file_of(mapped[i].second->data), cache_) << mapped[i].first;
    EXPECT_EQ(reinterpret_cast<uintptr_t>(mapped[i].second->data) % 64, 0u) << mapped[i].first;
    EXPECT_EQ(std::string(static_cast<const char*>(mapped[i].second->data), mapped[i].second.nbytes()), decoded_bytes[i]);
  }
  expect_tvm_outputs(lib, rc_);

  // Another load (as another replica would) maps the file as it is.
  const ino_t inode = inode_of(cache_);
  Module again = load_module(model_);
  EXPECT_EQ(use_cache(again, cache_, model_), "mapped");
  EXPECT_EQ(inode_of(cache_), inode);
  expect_tvm_outputs(again, rc_);
  EXPECT_EQ(warnings.all(), "");
}

TEST_P(RelaxParamsCache, StaleCacheIsRewritten) {
  {
    Module lib = load_module(model_);
    ASSERT_EQ(use_cache(lib, cache_, model_), "written");
  }
  // The model file changes (same bytes, a new modification time): the cache is stale.
  const struct timespec times[2] = {{0, UTIME_OMIT}, {1000000000, 0}};
  ASSERT_EQ(utimensat(AT_FDCWD, model_.c_str(), times, 0), 0);
  const ino_t inode = inode_of(cache_);
  CapturedWarnings warnings;
  Module lib = load_module(model_);
  EXPECT_EQ(use_cache(lib, cache_, model_), "rebuilt");
  EXPECT_NE(inode_of(cache_), inode);
  EXPECT_NE(warnings.all().find("stale params cache"), std::string::npos) << warnings.all();
  expect_tvm_outputs(lib, rc_);
}

INSTANTIATE_TEST_SUITE_P(Fixtures, RelaxParamsCache, ::testing::Values("relax_mlp", "relax_cnn"));

class RelaxParamsCacheRules : public RelaxParamsCache {};

TEST_P(RelaxParamsCacheRules, ACacheOfAnotherModelIsRewrittenFromThisOne) {
  const std::string other = graphrt_test::fixtures_dir() + "/relax/relax_cnn/deploy_relax.so";
  {
    Module cnn = load_module(other);
    ASSERT_EQ(use_cache(cnn, cache_, other), "written");
  }
  CapturedWarnings warnings;
  Module lib = load_module(model_);
  EXPECT_EQ(use_cache(lib, cache_, model_), "rebuilt");
  EXPECT_NE(warnings.all().find("params cache"), std::string::npos) << warnings.all();
  expect_tvm_outputs(lib, rc_);
}

TEST_P(RelaxParamsCacheRules, ConstantsAreReplacedOnlyByArraysThatFit) {
  Module lib = load_module(model_);
  ExecutableModuleNode& exe = executable_of(lib);
  const ParamList constants = exe.tensor_constants();
  ASSERT_FALSE(constants.empty());
  const auto& first = constants.front();
  auto expect_refused = [&](const ParamList& arrays, ErrorKind kind, const std::string& words) {
    try {
      exe.replace_constants(arrays);
      ADD_FAILURE() << "no error for " << words;
    } catch (const Error& e) {
      EXPECT_EQ(e.kind(), kind) << e.what();
      EXPECT_NE(std::string(e.what()).find(words), std::string::npos) << e.what();
    }
  };
  expect_refused({{"c[999999]", first.second}}, ErrorKind::kNotFound, "no tensor constant 'c[999999]'");
  expect_refused({{"weights", first.second}}, ErrorKind::kNotFound, "no tensor constant 'weights'");
  expect_refused({{first.first, NDArray::empty({1, 2, 3}, first.second.dtype(), cpu())}}, ErrorKind::kInvalidArgument,
                 "(1, 2, 3), the constant");
  // A view one element into a larger array: the right shape, but not 64-byte aligned.
  std::vector<int64_t> wider = first.second.shape();
  wider.insert(wider.begin(), 2);
  NDArray big = NDArray::empty(wider, first.second.dtype(), cpu());
  NDArray unaligned = NDArray::wrap(static_cast<char*>(big->data) + 4, first.second.shape(), first.second.dtype(), cpu(),
                                    nullptr);
  expect_refused({{first.first, unaligned}}, ErrorKind::kInvalidArgument, "64-byte aligned");

  // An array that fits is taken: VMs made from then on run over it, and a VM made before keeps
  // the constants it started with.
  Module before = graphrt_test::relax_vm(lib);
  NDArray zeros = NDArray::empty(first.second.shape(), first.second.dtype(), cpu());
  std::memset(zeros->data, 0, zeros.nbytes());
  exe.replace_constants({{first.first, zeros}});
  EXPECT_EQ(exe.tensor_constants().front().second->data, zeros->data);
  expect_vm_outputs(before, rc_);
  {
    Module after = graphrt_test::relax_vm(lib);
    const auto& set = rc_.sets.front();
    ArgList args;
    for (const NDArray& a : graphrt_test::relax_inputs(set)) args.add_ndarray(a);
    const std::vector<NDArray> got = graphrt_test::flatten_result(call_function(after->require_function(rc_.entry), args));
    ASSERT_FALSE(got.empty());
    EXPECT_NE(graphrt_test::compare_output(got[0], set.outputs[0], 0), "") << "the zeroed constant changed nothing";
  }
  NDArray copy = NDArray::empty(first.second.shape(), first.second.dtype(), cpu());
  copy.copy_from(first.second.handle());
  exe.replace_constants({{first.first, copy}});
  expect_tvm_outputs(lib, rc_);
}

INSTANTIATE_TEST_SUITE_P(Fixture, RelaxParamsCacheRules, ::testing::Values("relax_mlp"));

}  // namespace
