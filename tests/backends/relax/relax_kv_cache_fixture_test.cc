// The language-model fixtures (fixtures/relax-ffi cases whose case.json has
// "steps": relax_tiny_llm_gqa, TVM v0.26 on its paged KV cache) driven step
// by step through libgraphrt's public API as an engine drives them (create
// the cache, add a sequence, begin a forward pass, prefill, end it, decode,
// ...; replayed on graphrt::LanguageModel): every logit is TVM's, bit for bit.
#include <gtest/gtest.h>

#include <dirent.h>

#include <algorithm>
#include <fstream>
#include <string>
#include <vector>

#include "common/relax_steps.h"
#include "graphrt/runtime.h"
#include "graphrt/session.h"
#include "test_support.h"

namespace {

// The case folders under fixtures/relax-ffi whose case.json has a "steps" list.
std::vector<std::string> step_cases() {
  std::vector<std::string> out;
  const std::string root = graphrt_test::fixtures_dir() + "/relax-ffi";
  DIR* d = opendir(root.c_str());
  if (!d) return out;
  while (dirent* e = readdir(d)) {
    const std::string dir = root + "/" + e->d_name;
    std::ifstream in(dir + "/case.json");
    const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    if (text.find("\"steps\"") != std::string::npos) out.push_back(dir);
  }
  closedir(d);
  std::sort(out.begin(), out.end());
  return out;
}

std::shared_ptr<graphrt::Model> load(const std::string& path) {
  graphrt::ModelSource source;
  source.path = path;
  return graphrt::Session(graphrt::runtime(), graphrt::cpu()).load(source);
}

TEST(RelaxKvCacheFixtures, StepsGiveTvmsLogitsBitForBit) {
  GRAPHRT_REQUIRE_FIXTURES();
  const std::vector<std::string> cases = step_cases();
  ASSERT_FALSE(cases.empty()) << "no relax-ffi case with steps (relax_tiny_llm_gqa)";
  for (const std::string& dir : cases) {
    SCOPED_TRACE(dir);
    const std::shared_ptr<graphrt::Model> model = load(dir + "/deploy_relax.so");
    const std::vector<graphrt_apps::StepCheck> checks = graphrt_apps::run_relax_steps(*model, dir + "/case.json", 0.0);
    size_t tensors = 0;
    for (const graphrt_apps::StepCheck& c : checks) {
      EXPECT_TRUE(c.matches) << c.what << ": " << c.problem;
      if (c.tensor) {
        ++tensors;
        EXPECT_TRUE(c.bit_exact) << c.what;
      }
    }
    EXPECT_GE(tensors, 1u);
  }
}

TEST(RelaxKvCacheFixtures, ASecondRunOfTheStepsOnTheSameLibraryGivesTheSameLogits) {
  GRAPHRT_REQUIRE_FIXTURES();
  for (const std::string& dir : step_cases()) {
    SCOPED_TRACE(dir);
    const std::shared_ptr<graphrt::Model> model = load(dir + "/deploy_relax.so");
    for (int run = 0; run < 2; ++run)
      for (const graphrt_apps::StepCheck& c : graphrt_apps::run_relax_steps(*model, dir + "/case.json", 0.0))
        EXPECT_TRUE(c.matches) << "run " << run << ": " << c.what << ": " << c.problem;
  }
}

}  // namespace
