// The runtime is created with its built-in registrations before any user
// registration lands, so a user's override made first thing in main() (here:
// before any load) replaces the built-in one and stays.
#include <gtest/gtest.h>

#include "graphrt/graph_executor.h"
#include "graphrt/module.h"
#include "graphrt/registry.h"
#include "graphrt/runtime.h"
#include "test_support.h"

using namespace graphrt;

TEST(UserRegistration, OverrideBeforeFirstLoadIsKept) {
  int calls = 0;
  // Nothing has touched the runtime in this process yet.
  registry_set("runtime.module.loadbinary_GraphExecutorFactory",
               make_function([&calls](const TVMArgs&, RetValue*) {
                 ++calls;
                 throw Error("user factory loader called");
               }, "user loader"));
  try {
    load_module(graphrt_test::fixture_path("mlp/deploy_factory.so"));
    FAIL() << "the user's loader was not used";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("user factory loader called"), std::string::npos) << e.what();
  }
  EXPECT_EQ(calls, 1);
  // The built-in registrations are all there beside it.
  EXPECT_TRUE(registry_get("tvm.graph_executor.create"));
  EXPECT_TRUE(registry_get("runtime.module.loadbinary_cuda"));
  EXPECT_TRUE(device_api_or_null(kDLCPU));
}
