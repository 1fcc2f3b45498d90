// A Runtime is constructed empty; the process's default one is composed by
// libgraphrt from the top: the core's registrations, then every layer above.
// Its own process: the default runtime must not exist when the first test
// starts, so that its creation races between threads.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <thread>
#include <vector>

#include "graphrt/library.h"
#include "graphrt/registry.h"
#include "graphrt/runtime.h"

using namespace graphrt;

namespace {
bool has(const std::vector<std::string>& names, const std::string& name) {
  return std::find(names.begin(), names.end(), name) != names.end();
}
}  // namespace

TEST(RuntimeComposition, DefaultIsCreatedOnceFromAnyThread) {
  std::vector<Runtime*> seen(8, nullptr);
  std::atomic<bool> go{false};
  std::vector<std::thread> threads;
  for (size_t i = 0; i < seen.size(); ++i) {
    threads.emplace_back([&, i] {
      while (!go.load()) std::this_thread::yield();
      seen[i] = &runtime();
    });
  }
  go = true;
  for (auto& t : threads) t.join();
  for (Runtime* r : seen) EXPECT_EQ(r, &runtime());
}

TEST(RuntimeComposition, DefaultHoldsTheCoreAndEveryLayer) {
  Runtime& r = runtime();
  EXPECT_TRUE(r.device_api_or_null(kDLCPU));                       // the core
  EXPECT_TRUE(r.function("__tvm_set_device"));                      // the core
  EXPECT_TRUE(r.function("runtime.module.loadbinary_const_loader"));  // the core
  EXPECT_TRUE(r.function("tvm.graph_executor.create"));             // graph executor
  EXPECT_TRUE(r.function("runtime.module.loadbinary_GraphExecutorFactory"));
  EXPECT_TRUE(r.function("runtime.module.loadbinary_cuda"));        // CUDA back end
  EXPECT_TRUE(r.function("graphrt.vm.assemble"));                   // VM back end
  EXPECT_TRUE(has(library_loader_names(), "elf"));                  // ELF back end
  EXPECT_TRUE(has(library_loader_names(), "elf-object"));
}

TEST(RuntimeComposition, ConstructedRuntimeIsEmpty) {
  Runtime empty;
  EXPECT_TRUE(empty.function_names().empty());
  EXPECT_FALSE(empty.device_api_or_null(kDLCPU));
  EXPECT_FALSE(empty.function("tvm.graph_executor.create"));
}

TEST(RuntimeComposition, ConstructedRuntimeKeepsItsOwnRegistrations) {
  Runtime own;
  own.set_function("test.composition.own", make_function([](const TVMArgs&, RetValue* ret) { ret->set_int(7); },
                                                         "test.composition.own"));
  ASSERT_TRUE(own.function("test.composition.own"));
  EXPECT_EQ(call_function(own.function("test.composition.own"), ArgList()).as_int(), 7);
  EXPECT_EQ(own.function_names(), std::vector<std::string>{"test.composition.own"});
  // The default runtime does not see it, nor the other way round.
  EXPECT_FALSE(registry_get("test.composition.own"));
  EXPECT_FALSE(own.function("tvm.graph_executor.create"));
  try {
    own.set_function("test.composition.own", PackedFunc(), false);
    FAIL() << "a second registration without override was accepted";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kFailedPrecondition) << e.what();
  }
  EXPECT_TRUE(own.remove_function("test.composition.own"));
  EXPECT_TRUE(own.function_names().empty());
}
