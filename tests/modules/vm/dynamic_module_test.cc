// Dynamic native modules from a .so (tests/modules/vm/dynamic_sample_module.c).
#include <gtest/gtest.h>

#include "graphrt/error.h"

#include <vector>

#include "modules/vm/context.h"
#include "modules/vm/dynamic_module.h"
#include "modules/vm/tensor.h"
#include "vm_test_util.h"

namespace {

using namespace graphrt::vm;
using vm_test::I;

const std::string kLib = VM_SAMPLE_MODULE_PATH;

const char* kUser = R"(
module user version 1
dependency sample 2
import sample.scaled_add "0ii_i"
func run "0ii_i" export
  call @sample.scaled_add(%i0, %i1) -> (%i2)
  ret %i2
end
)";

TEST(VmDynamicModule, ParametersReachTheModule) {
  Context ctx(Instance::create());
  ctx.register_module(load_dynamic_module(kLib + "@sample_create?scale=3&offset=10"));
  ctx.register_module(vm_test::build(kUser));
  const int32_t a = 4, b = 5;
  EXPECT_EQ(ctx.invoke("user.run", {I(a), I(b)})[0].i32, (a + b) * 3 + 10);
}

TEST(VmDynamicModule, ParametersArePercentDecoded) {
  Context ctx(Instance::create());
  ctx.register_module(load_dynamic_module(kLib + "@sample_create?scale=%33&off%73et=1%30"));
  ctx.register_module(vm_test::build(kUser));
  EXPECT_EQ(ctx.invoke("user.run", {I(4), I(5)})[0].i32, (4 + 5) * 3 + 10);
  EXPECT_THROW(load_dynamic_module(kLib + "@sample_create?scale=%3"), graphrt::Error);
  EXPECT_THROW(load_dynamic_module(kLib + "@sample_create?scale=%zz"), graphrt::Error);
}

TEST(VmDynamicModule, DefaultCreateFunction) {
  Context ctx(Instance::create());
  ctx.register_module(load_dynamic_module(kLib + "@?scale=2"));
  EXPECT_EQ(ctx.invoke("sample.scaled_add", {I(1), I(2)})[0].i32, 6);
  Context plain(Instance::create());
  plain.register_module(load_dynamic_module(kLib));
  EXPECT_EQ(plain.invoke("sample.scaled_add", {I(1), I(2)})[0].i32, 3);
}

TEST(VmDynamicModule, TensorArgumentsCrossAsDLTensor) {
  Context ctx(Instance::create());
  ctx.register_module(load_dynamic_module(kLib + "@sample_create"));
  auto t = std::make_shared<OwnedTensor>(std::vector<int64_t>{3}, DLDataType{kDLFloat, 32, 1});
  float* data = static_cast<float*>(t->dl()->data);
  data[0] = 1.5f;
  data[1] = 2.0f;
  data[2] = -0.25f;
  EXPECT_EQ(ctx.invoke("sample.sum", {Value::from_ref(t)})[0].f64, 1.5 + 2.0 - 0.25);
  EXPECT_THROW(ctx.invoke("sample.sum", {Value::from_ref(nullptr)}), graphrt::Error);
}

TEST(VmDynamicModule, AbiVersionMismatchRefused) {
  try {
    load_dynamic_module(kLib + "@sample_create_future_abi");
    FAIL();
  } catch (const graphrt::Error& e) {
    EXPECT_NE(std::string(e.what()).find("ABI version mismatch"), std::string::npos);
    EXPECT_EQ(e.context_value("file"), kLib);
  }
}

TEST(VmDynamicModule, LoadErrors) {
  EXPECT_THROW(load_dynamic_module(kLib + "@sample_create_refuse"), graphrt::Error);
  EXPECT_THROW(load_dynamic_module(kLib + "@no_such_symbol"), graphrt::Error);
  EXPECT_THROW(load_dynamic_module("/nonexistent/lib.so"), graphrt::Error);
}

}  // namespace
