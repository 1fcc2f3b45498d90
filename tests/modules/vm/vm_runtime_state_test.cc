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
#include "modules/vm/register.h"

namespace {

using graphrt::Error;
using graphrt::RetValue;
using graphrt::Runtime;

// sum of 0..n-1: n loop iterations, one branch budget unit each (and more).
const char* kCountedLoop = R"(module counted version 1
func sum "0i_i" export
entry:
  const.i32 %i1, 0
  const.i32 %i2, 0
  const.i32 %i3, 1
  br loop
loop:
  cmp.lt.s.i32 %i4, %i2, %i0
  br_if %i4, body, done
body:
  add.i32 %i1, %i1, %i2
  add.i32 %i2, %i2, %i3
  br loop
done:
  ret %i1
end
)";

RetValue call(const Runtime& runtime, const std::string& function, const std::vector<RetValue>& args) {
  graphrt::PackedFunc f = runtime.function(function);
  if (!f) throw Error("no function " + function);
  std::vector<TVMValue> values;
  std::vector<int> codes;
  for (const RetValue& a : args) {
    values.push_back(a.value());
    codes.push_back(a.code());
  }
  RetValue ret;
  f->call(graphrt::TVMArgs(values.data(), codes.data(), static_cast<int>(values.size())), &ret);
  return ret;
}

RetValue integer(int64_t v) {
  RetValue r;
  r.set_int(v);
  return r;
}

RetValue text(const std::string& s) {
  RetValue r;
  r.set_string(s);
  return r;
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
    std::ofstream(path_, std::ios::binary) << call(other_, "graphrt.vm.assemble", {text(kCountedLoop)}).as_string();
  }
  void TearDown() override {
    unlink(path_.c_str());
    rmdir(dir_.c_str());
  }
  // counted.sum(n) through `runtime`'s graphrt.vm.load.
  int64_t sum(const Runtime& runtime, int n) {
    const graphrt::Module m = call(runtime, "graphrt.vm.load", {text(path_)}).as_module();
    graphrt::ArgList arg;
    arg.add_int(n);
    return graphrt::call_function(m->require_function("sum"), arg).as_int();
  }

  Runtime limited_, other_;
  std::string dir_, path_;
};

TEST_F(VmRuntimeState, BudgetHoldsOnlyTheRuntimeThatSetIt) {
  call(limited_, "graphrt.vm.set_instruction_budget", {integer(5000)});
  try {
    sum(limited_, 10000);
    FAIL() << "10000 iterations ran under a budget of 5000";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("(5000 branches"), std::string::npos) << e.what();
  }
  EXPECT_EQ(sum(other_, 10000), int64_t{10000} * 9999 / 2);
}

TEST_F(VmRuntimeState, MemoryLimitHoldsOnlyTheRuntimeThatSetIt) {
  call(limited_, "graphrt.vm.set_memory_limit", {integer(1000)});
  // A list holding 4000 bytes: a read-only VM buffer charged when it is made.
  RetValue bytes;
  bytes.set_bytes(std::string(4000, 'x'));
  const std::vector<RetValue> item{text("r"), bytes};
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
