// A program that links the core without libgraphrt's composition unit (this
// one links graphrt_whitebox_core: the base and the core, no graph executor,
// no back end). Its default runtime holds the core's registrations only, and
// what needs a layer above fails naming what is missing.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "graphrt/library.h"
#include "graphrt/module.h"
#include "graphrt/registry.h"
#include "graphrt/runtime.h"
#include "test_support.h"

using namespace graphrt;

TEST(CoreOnlyRuntime, DefaultHoldsTheCoreRegistrationsOnly) {
  Runtime& r = runtime();
  EXPECT_TRUE(r.device_api_or_null(kDLCPU));
  EXPECT_TRUE(r.function("__tvm_set_device"));
  EXPECT_TRUE(r.function("runtime.SystemLib"));
  EXPECT_TRUE(r.function("runtime.module.loadbinary_const_loader"));
  EXPECT_FALSE(r.function("tvm.graph_executor.create"));
  EXPECT_FALSE(r.function("runtime.module.loadbinary_GraphExecutorFactory"));
  EXPECT_FALSE(r.function("runtime.module.loadbinary_cuda"));
  EXPECT_FALSE(r.function("graphrt.vm.assemble"));
  EXPECT_EQ(library_loader_names(), std::vector<std::string>{"dlopen"});
}

TEST(CoreOnlyRuntime, FactoryRecordWithoutTheGraphLayerIsRefusedByName) {
  GRAPHRT_REQUIRE_FIXTURES();
  try {
    load_module(graphrt_test::fixture_path("mlp/deploy_factory.so"));
    FAIL() << "a GraphExecutorFactory record loaded without the graph executor linked in";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kNotFound) << e.what();
    const std::string what = e.what();
    EXPECT_NE(what.find("blob record 'GraphExecutorFactory' has no loader registered"), std::string::npos) << what;
    EXPECT_NE(what.find("available: const_loader, metadata"), std::string::npos) << what;
  }
}
