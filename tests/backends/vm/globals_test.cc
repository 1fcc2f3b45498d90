// VmModule globals: typed per-context slots that __init sets up, verified
// accesses, text and binary forms (format v2; v1 still written and read).
#include <gtest/gtest.h>

#include <cstring>
#include <string>

#include "graphrt/error.h"
#include "backends/vm/bytecode/assembler.h"
#include "backends/vm/bytecode/binary_format.h"
#include "backends/vm/bytecode/bytecode_disassembler.h"
#include "backends/vm/bytecode/bytecode_verifier.h"
#include "vm_test_util.h"

namespace {

using namespace graphrt::vm;
using vm_test::I;

const char* kCounter = R"(
module counter version 1
import tensor.numel "0r_I"
global i32 next_id
global i64 total
global f32 scale
global f64 unused
global ref last
func __init "0v" export
  const.i32 %i0, 10
  global.store.i32 @next_id, %i0
  const.f32 %f0, 2.5
  global.store.f32 @scale, %f0
  ret
end
func take "0_i" export
  global.load.i32 %i0, @next_id
  const.i32 %i1, 1
  add.i32 %i2, %i0, %i1
  global.store.i32 @next_id, %i2
  ret %i0
end
func remember "0r_I" export
  global.store.ref @last, %r0
  global.load.ref %r1, @last
  call @tensor.numel(%r1) -> (%I0)
  global.load.i64 %I1, @total
  add.i64 %I1, %I1, %I0
  global.store.i64 @total, %I1
  ret %I1
end
func scaled "0f_f" export
  global.load.f32 %f1, @scale
  mul.f32 %f2, %f0, %f1
  ret %f2
end
)";

TEST(VmGlobals, InitSetsStateThatLaterCallsSee) {
  vm_test::Harness h(kCounter);
  EXPECT_EQ(h.call("take", {})[0].i32, 10);
  EXPECT_EQ(h.call("take", {})[0].i32, 11);
  EXPECT_EQ(h.call("take", {})[0].i32, 12);
  EXPECT_FLOAT_EQ(h.call("scaled", {vm_test::F(4.0f)})[0].f32, 10.0f);
}

TEST(VmGlobals, EachContextHasItsOwnGlobals) {
  vm_test::Harness a(kCounter), b(kCounter);
  EXPECT_EQ(a.call("take", {})[0].i32, 10);
  EXPECT_EQ(a.call("take", {})[0].i32, 11);
  EXPECT_EQ(b.call("take", {})[0].i32, 10);
}

TEST(VmGlobals, RefGlobalsKeepTheirObject) {
  vm_test::Harness h(R"(
module keep version 1
import tensor.alloc "0iiCID_r"
import tensor.numel "0r_I"
global ref kept
func __init "0v" export
  const.i32 %i0, 2
  const.i32 %i1, 32
  const.i64 %I0, 3
  const.i64 %I1, 4
  call.variadic @tensor.alloc(%i0, %i1, [%I0, %I1]) -> (%r0)
  global.store.ref @kept, %r0
  ret
end
func size "0_I" export
  global.load.ref %r0, @kept
  call @tensor.numel(%r0) -> (%I0)
  ret %I0
end
)");
  EXPECT_EQ(h.call("size", {})[0].i64, 12);
}

// Verifier: ordinal range and type agreement, unique names.
void expect_rejected(ModuleDef def, const std::string& what) {
  try {
    verify_module(def);
    FAIL() << "accepted; expected " << what;
  } catch (const graphrt::Error& e) {
    EXPECT_NE(std::string(e.what()).find(what), std::string::npos) << e.what();
  }
}

TEST(VmGlobals, VerifierChecksEveryAccess) {
  const ModuleDef good = assemble(kCounter);
  EXPECT_NO_THROW(verify_module(good));

  ModuleDef wrong_type = good;
  wrong_type.globals[0].type = ValueType::kF32;  // next_id is accessed as i32
  expect_rejected(wrong_type, "global.store.i32 on global 'next_id' of type f32");

  ModuleDef missing = good;
  missing.globals.resize(1);  // scale (ordinal 2) is gone
  expect_rejected(missing, "global ordinal 2 out of range");

  ModuleDef duplicate = good;
  duplicate.globals[1].name = "next_id";
  expect_rejected(duplicate, "duplicate global name");

  ModuleDef dotted = good;
  dotted.globals[1].name = "a.b";
  expect_rejected(dotted, "invalid global name");
}

TEST(VmGlobals, AssemblerRejectsUnknownGlobalsAndTypes) {
  EXPECT_THROW(assemble("module m\nfunc f \"0_i\"\n  global.load.i32 %i0, @nope\n  ret %i0\nend\n"), graphrt::Error);
  EXPECT_THROW(assemble("module m\nglobal u8 x\n"), graphrt::Error);
}

TEST(VmGlobals, TextAndBinaryRoundTrip) {
  const ModuleDef def = assemble(kCounter);
  const std::vector<uint8_t> bytes = write_module_def(def);
  uint32_t version = 0;
  std::memcpy(&version, bytes.data() + 4, 4);
  EXPECT_EQ(version, 2u);  // globals need format v2
  const ModuleDef back = read_module_def(bytes.data(), bytes.size());
  ASSERT_EQ(back.globals.size(), 5u);
  EXPECT_EQ(back.globals[4].name, "last");
  EXPECT_EQ(back.globals[4].type, ValueType::kRef);
  const std::string text = disassemble(back);
  EXPECT_NE(text.find("global i64 total"), std::string::npos) << text;
  EXPECT_NE(text.find("global.store.i32 @next_id, %i2"), std::string::npos) << text;
  EXPECT_EQ(write_module_def(assemble(text)), bytes);
}

TEST(VmGlobals, ModulesWithoutNewFeaturesStayFormatV1) {
  const std::vector<uint8_t> bytes = write_module_def(assemble("module m\nfunc f \"0_i\"\n  const.i32 %i0, 1\n  ret %i0\nend\n"));
  uint32_t version = 0;
  std::memcpy(&version, bytes.data() + 4, 4);
  EXPECT_EQ(version, 1u);
  std::vector<uint8_t> future = bytes;
  const uint32_t v3 = 3;
  std::memcpy(future.data() + 4, &v3, 4);
  EXPECT_THROW(read_module_def(future.data(), future.size()), graphrt::Error);
}

TEST(VmGlobals, DependencySourceRoundTrips) {
  const ModuleDef def =
      assemble("module m\ndependency sample 2 from \"lib/sample.so@create?scale=%33\"\nfunc f \"0\"\n  ret\nend\n");
  ASSERT_EQ(def.dependencies.size(), 1u);
  EXPECT_EQ(def.dependencies[0].source, "lib/sample.so@create?scale=%33");
  const std::vector<uint8_t> bytes = write_module_def(def);
  const ModuleDef back = read_module_def(bytes.data(), bytes.size());
  EXPECT_EQ(back.dependencies[0].source, def.dependencies[0].source);
  EXPECT_EQ(write_module_def(assemble(disassemble(back))), bytes);
}

}  // namespace
