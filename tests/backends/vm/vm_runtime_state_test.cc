// The VM back end's state belongs to the runtime it was registered into:
// limits set through one runtime's graphrt.vm.* functions hold that runtime's
// VM code and objects, and leave another runtime's alone.
#include <gtest/gtest.h>

#include <stdlib.h>
#include <unistd.h>

#include <fstream>
#include <string>
#include <vector>

#include "graphrt/error.h"
#include "graphrt/runtime.h"
#include "backends/vm/register.h"
#include "vm_packed_values.h"

namespace {

using graphrt::Error;
using graphrt::RetValue;
using graphrt::Runtime;
using vm_test::int_arg;
using vm_test::string_arg;

const std::string kCountedLoop = std::string("module counted version 1\n") + vm_test::kSumFunction;

RetValue call(const Runtime& runtime, const std::string& function, const std::vector<RetValue>& args) {
  graphrt::PackedFunc f = runtime.function(function);
  if (!f) throw Error("no function " + function);
  return vm_test::call_packed(f, args);
}

class VmRuntimeState : public ::testing::Test {
 protected:
  void SetUp() override {
    graphrt::vm::register_backend(limited_);
    graphrt::vm::register_backend(other_);
    char pattern[] = "/tmp/graphrt_vm_state_XXXXXX";
    ASSERT_NE(mkdtemp(pattern), nullptr);
    dir_ = pattern;
    path_ = dir_ + "/counted.vmbc";
    std::ofstream(path_, std::ios::binary) << call(other_, "graphrt.vm.assemble", {string_arg(kCountedLoop)}).as_string();
  }
  void TearDown() override {
    unlink(path_.c_str());
    rmdir(dir_.c_str());
  }
  // counted.sum(n) through `runtime`'s graphrt.vm.load.
  int64_t sum(const Runtime& runtime, int n) {
    const graphrt::Module m = call(runtime, "graphrt.vm.load", {string_arg(path_)}).as_module();
    graphrt::ArgList arg;
    arg.add_int(n);
    return graphrt::call_function(m->require_function("sum"), arg).as_int();
  }

  Runtime limited_, other_;
  std::string dir_, path_;
};

TEST_F(VmRuntimeState, BudgetHoldsOnlyTheRuntimeThatSetIt) {
  call(limited_, "graphrt.vm.set_instruction_budget", {int_arg(5000)});
  try {
    sum(limited_, 10000);
    FAIL() << "10000 iterations ran under a budget of 5000";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("(5000 branches"), std::string::npos) << e.what();
  }
  EXPECT_EQ(sum(other_, 10000), int64_t{10000} * 9999 / 2);
}

TEST_F(VmRuntimeState, MemoryLimitHoldsOnlyTheRuntimeThatSetIt) {
  call(limited_, "graphrt.vm.set_memory_limit", {int_arg(1000)});
  // A list holding 4000 bytes: a read-only VM buffer charged when it is made.
  RetValue bytes;
  bytes.set_bytes(std::string(4000, 'x'));
  const std::vector<RetValue> item{string_arg("r"), bytes};
  try {
    call(limited_, "graphrt.vm.list", item);
    FAIL() << "a 4000-byte buffer was made under a 1000-byte limit";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), graphrt::ErrorKind::kResourceExhausted) << e.what();
    EXPECT_EQ(e.context_value("limit"), "1000") << e.what();
  }
  EXPECT_EQ(call(other_, "graphrt.vm.list_size", {call(other_, "graphrt.vm.list", item)}).as_int(), 1);
}

}  // namespace
