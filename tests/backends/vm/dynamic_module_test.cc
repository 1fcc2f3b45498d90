// Dynamic native modules from a .so (tests/backends/vm/dynamic_sample_module.c).
#include <gtest/gtest.h>

#include "graphrt/error.h"

#include <vector>

#include "backends/vm/host/context.h"
#include "backends/vm/host/buffer.h"
#include "backends/vm/host/dynamic_module.h"
#include "backends/vm/host/list.h"
#include "backends/vm/host/tensor.h"
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

// ---- ABI v2 (sample2): refs both ways, imports.

const char* kHostStep = R"(
module host version 1
func step "0i_i" export
  const.i32 %i1, 1
  add.i32 %i0, %i0, %i1
  ret %i0
end
)";

const char* kHostSpin = R"(
module host version 1
func step "0i_i" export
loop:
  br loop
end
)";

std::string error_of(Context& ctx, const std::string& fn, const std::vector<Value>& args) {
  try {
    ctx.invoke(fn, args);
  } catch (const graphrt::Error& e) {
    return e.what();
  }
  return "(no error)";
}

VmRef make_list(std::vector<Value> items) {
  auto list = std::make_shared<List>();
  list->resize(static_cast<int64_t>(items.size()));
  for (size_t k = 0; k < items.size(); ++k) list->set(static_cast<int64_t>(k), items[k]);
  return list;
}

TEST(VmDynamicModuleV2, ListResultsAndListArguments) {
  Context ctx(Instance::create());
  ctx.register_module(load_dynamic_module(kLib + "@sample2_create?scale=%32"));
  const std::vector<Value> r = ctx.invoke("sample2.pair", {I(3), vm_test::F(1.5f)});
  ASSERT_EQ(r.size(), 1u);
  List* list = ref_as<List>(r[0].ref);
  ASSERT_NE(list, nullptr);
  ASSERT_EQ(list->size(), 2);
  EXPECT_EQ(list->get(0, ValueType::kI32).i32, 6);  // 3 * scale, scale percent-decoded
  EXPECT_EQ(list->get(1, ValueType::kF32).f32, 1.5f);

  const VmRef nested = make_list({I(10), vm_test::L(200), Value::from_ref(make_list({I(3000)})), vm_test::F(9.f)});
  EXPECT_EQ(ctx.invoke("sample2.list_sum", {Value::from_ref(nested)})[0].i64, 3210);
  EXPECT_NE(error_of(ctx, "sample2.list_sum", {Value::from_ref(nullptr)}).find("expected a list"), std::string::npos);
}

TEST(VmDynamicModuleV2, BufferAndTensorRefs) {
  Context ctx(Instance::create());
  ctx.register_module(load_dynamic_module(kLib + "@sample2_create"));
  auto buffer = std::make_shared<Buffer>(std::vector<uint8_t>(7, 0), true);
  EXPECT_EQ(ctx.invoke("sample2.length", {Value::from_ref(buffer)})[0].i32, 7);

  auto t = std::make_shared<OwnedTensor>(std::vector<int64_t>{2, 2}, DLDataType{kDLFloat, 32, 1});
  float* in = static_cast<float*>(t->dl()->data);
  for (int i = 0; i < 4; ++i) in[i] = 0.5f * static_cast<float>(i) - 1.f;
  const std::vector<Value> r = ctx.invoke("sample2.twice", {Value::from_ref(t)});
  Tensor* out = ref_as<Tensor>(r[0].ref);
  ASSERT_NE(out, nullptr);
  ASSERT_NE(out, t.get());
  ASSERT_EQ(out->dl()->ndim, 2);
  EXPECT_EQ(out->dl()->shape[0], 2);
  for (int i = 0; i < 4; ++i) EXPECT_EQ(static_cast<float*>(out->dl()->data)[i], 2 * in[i]);

  // A returned argument is the same object; the list shares it.
  const std::vector<Value> k = ctx.invoke("sample2.keep", {Value::from_ref(buffer)});
  ASSERT_EQ(k.size(), 2u);
  EXPECT_EQ(k[0].ref.get(), buffer.get());
  EXPECT_EQ(ref_as<List>(k[1].ref)->get(0, ValueType::kRef).ref.get(), buffer.get());
  EXPECT_EQ(ctx.invoke("sample2.keep", {Value::from_ref(nullptr)})[0].ref, nullptr);
}

TEST(VmDynamicModuleV2, ImportsCallModulesLinkedBefore) {
  Context ctx(Instance::create());
  ctx.register_module(vm_test::build(kHostStep));
  ctx.register_module(load_dynamic_module(kLib + "@sample2_create?scale=3"));
  EXPECT_EQ(ctx.invoke("sample2.apply", {I(5)})[0].i32, (5 + 1 + 1) * 3);

  // The import is optional: without `host` the module links and the call fails.
  Context alone(Instance::create());
  alone.register_module(load_dynamic_module(kLib + "@sample2_create"));
  EXPECT_NE(error_of(alone, "sample2.apply", {I(5)}).find("host.step"), std::string::npos);
}

TEST(VmDynamicModuleV2, ImportFailuresKeepTheirOwnError) {
  Context ctx(Instance::create());
  ctx.set_instruction_budget(1000);
  ctx.register_module(vm_test::build(kHostSpin));
  ctx.register_module(load_dynamic_module(kLib + "@sample2_create"));
  const std::string error = error_of(ctx, "sample2.apply", {I(5)});
  EXPECT_NE(error.find("budget exhausted"), std::string::npos) << error;
  EXPECT_EQ(error.find("apply: host.step failed"), std::string::npos) << error;
}

TEST(VmDynamicModuleV2, V1AndV2ModulesLinkTogether) {
  // sample (v1) and sample2 (v2) load side by side in one context.
  Context ctx(Instance::create());
  ctx.register_module(load_dynamic_module(kLib + "@sample_create?scale=2"));
  ctx.register_module(load_dynamic_module(kLib + "@sample2_create?scale=2"));
  EXPECT_EQ(ctx.invoke("sample.scaled_add", {I(1), I(2)})[0].i32, 6);
  EXPECT_EQ(ref_as<List>(ctx.invoke("sample2.pair", {I(1), vm_test::F(0.f)})[0].ref)->get(0, ValueType::kI32).i32, 2);
}

}  // namespace
