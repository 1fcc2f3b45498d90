// Linking: cross-module imports in both directions, signature and version
// checks, __init/__deinit ordering.
#include <gtest/gtest.h>

#include "graphrt/error.h"

#include <memory>
#include <vector>

#include "backends/vm/bytecode/assembler.h"
#include "backends/vm/host/context.h"
#include "backends/vm/host/native_module.h"
#include "backends/vm/bytecode/bytecode_program.h"
#include "vm_test_util.h"

namespace {

using namespace graphrt::vm;
using vm_test::build;
using vm_test::I;

const char* kLib = R"(
module mathlib version 3
func square "0i_i" export
  mul.i32 %i1, %i0, %i0
  ret %i1
end
)";

// native `host` imports mathlib.square and exports sum_squares(n).
std::shared_ptr<NativeModule> make_host() {
  auto host = std::make_shared<NativeModule>("host", 1);
  host->add_dependency("mathlib", 2).add_import("mathlib.square", "0i_i");
  host->add_function("sum_squares", "0i_i", [](NativeCall& c) {
    int32_t total = 0;
    for (int32_t k = 1; k <= c.i32(0); ++k) total += c.call_import(0, {Value::from_i32(k)})[0].i32;
    c.ret_i32(total);
  });
  return host;
}

const char* kApp = R"(
module app version 1
dependency host 1
import mathlib.square "0i_i"
import host.sum_squares "0i_i"
func run "0i_ii" export
  call @mathlib.square(%i0) -> (%i1)
  call @host.sum_squares(%i0) -> (%i2)
  ret %i1, %i2
end
)";

TEST(VmContext, CallsCrossModulesBothWays) {
  Context ctx(Instance::create());
  ctx.register_module(build(kLib));
  ctx.register_module(make_host());
  ctx.register_module(build(kApp));
  const int32_t n = 7;
  auto r = ctx.invoke("app.run", {I(n)});
  int32_t expected = 0;
  for (int32_t k = 1; k <= n; ++k) expected += k * k;
  EXPECT_EQ(r[0].i32, n * n);
  EXPECT_EQ(r[1].i32, expected);
}

TEST(VmContext, SignatureMismatchRefusedAtLink) {
  Context ctx(Instance::create());
  ctx.register_module(build(kLib));
  auto bad = build(R"(
module bad version 1
import mathlib.square "0I_I"
func f "0_v" export
  ret
end
)");
  try {
    ctx.register_module(bad);
    FAIL();
  } catch (const graphrt::Error& e) {
    EXPECT_NE(std::string(e.what()).find("signature mismatch"), std::string::npos);
    EXPECT_EQ(e.context_value("import"), "mathlib.square");
    EXPECT_EQ(e.context_value("module"), "bad");
  }
  EXPECT_FALSE(ctx.has_module("bad"));
}

TEST(VmContext, MissingImportAndVersionChecks) {
  Context ctx(Instance::create());
  EXPECT_THROW(ctx.register_module(build(kApp)), graphrt::Error);  // host missing
  ctx.register_module(build(kLib));
  auto old_host = std::make_shared<NativeModule>("host", 1);
  old_host->add_dependency("mathlib", 4);  // mathlib is version 3
  EXPECT_THROW(ctx.register_module(old_host), graphrt::Error);
  auto optional = build(R"(
module opt version 1
dependency nothere 1 optional
import nothere.fn "0_v" optional
func f "0_i" export
  const.i32 %i0, 5
  ret %i0
end
func g "0_v" export
  call @nothere.fn()
  ret
end
)");
  ctx.register_module(optional);
  EXPECT_EQ(ctx.invoke("opt.f", {})[0].i32, 5);
  EXPECT_THROW(ctx.invoke("opt.g", {}), graphrt::Error);  // unresolved optional import traps
}

TEST(VmContext, InitAndDeinitOrder) {
  auto log = std::make_shared<std::vector<int32_t>>();
  auto logger = std::make_shared<NativeModule>("log", 1);
  logger->add_function("record", "0i", [log](NativeCall& c) { log->push_back(c.i32(0)); });
  const char* kTemplate = R"(
module M version 1
import log.record "0i"
func __init "0v" export
  const.i32 %i0, ID
  call @log.record(%i0)
  ret
end
func __deinit "0v" export
  const.i32 %i0, -ID
  call @log.record(%i0)
  ret
end
)";
  auto make = [&](const std::string& name, int id) {
    std::string s = kTemplate;
    s.replace(s.find("M version"), 1, name);
    for (size_t p; (p = s.find("ID")) != std::string::npos;) s.replace(p, 2, std::to_string(id));
    return build(s);
  };
  {
    Context ctx(Instance::create());
    ctx.register_module(logger);
    ctx.register_module(make("first", 1));
    ctx.register_module(make("second", 2));
    EXPECT_EQ(*log, (std::vector<int32_t>{1, 2}));
  }
  EXPECT_EQ(*log, (std::vector<int32_t>{1, 2, -2, -1}));
}

TEST(VmContext, FailingInitRollsBack) {
  Context ctx(Instance::create());
  auto m = build(R"(
module broken version 1
func __init "0v" export
  const.i32 %i0, 3
  fail %i0, "init refused"
end
)");
  EXPECT_THROW(ctx.register_module(m), graphrt::Error);
  EXPECT_FALSE(ctx.has_module("broken"));
}

TEST(VmContext, HostArgumentsChecked) {
  Context ctx(Instance::create());
  ctx.register_module(build(kLib));
  EXPECT_THROW(ctx.invoke("mathlib.square", {Value::from_f32(1.0f)}), graphrt::Error);
  EXPECT_THROW(ctx.invoke("mathlib.nothing", {}), graphrt::Error);
  EXPECT_THROW(ctx.invoke("unqualified", {}), graphrt::Error);
}

// A dependency declared without a source comes from the Program's instance:
// the factory registry hosts fill (Instance::register_module_factory).
TEST(VmProgram, SourcelessDependencyComesFromTheInstanceFactory) {
  const char* kUser = R"(
module user version 1
dependency host 2
import host.step "0i_i"
func run "0i_i" export
  call @host.step(%i0) -> (%i1)
  ret %i1
end
)";
  auto instance = Instance::create();
  int made = 0;
  instance->register_module_factory("host", [&made] {
    ++made;
    auto m = std::make_shared<NativeModule>("host", 2);
    m->add_function("step", "0i_i", [](NativeCall& c) { c.ret_i32(c.i32(0) + 10); });
    return m;
  });
  ProgramOptions options;
  options.instance = instance;
  Program program(build(kUser), options);
  EXPECT_EQ(program.call("run", {I(5)})[0].i32, 15);
  EXPECT_EQ(made, 1);

  ProgramOptions bare;
  bare.instance = Instance::create();
  try {
    Program missing(build(kUser), bare);
    FAIL() << "linked without the host module";
  } catch (const graphrt::Error& e) {
    EXPECT_NE(std::string(e.what()).find("host"), std::string::npos) << e.what();
  }
}

}  // namespace
