// The VM from C++ through its typed header (graphrt/vm.h) and libgraphrt's
// public API alone: bytecode round trip, load and call, the function
// queries, tracing, lists, limits, and a runtime without the VM.
#include <gtest/gtest.h>

#include <stdlib.h>
#include <unistd.h>

#include <fstream>
#include <string>
#include <vector>

#include "graphrt/error.h"
#include "graphrt/vm.h"

namespace {

using graphrt::Error;
using graphrt::RetValue;
using graphrt::VmApi;

const char* kProgram = R"(module typed version 1
func add "0ii_i" export
  add.i32 %i2, %i0, %i1
  ret %i2
end
func pair "0I_Ir" export
  const.i32 %i0, 2
  list.alloc %r0, %i0
  ret %I0, %r0
end
func spin "0_i" export
loop:
  br loop
end
)";

class VmTypedApi : public ::testing::Test {
 protected:
  void SetUp() override {
    char pattern[] = "/tmp/graphrt_vm_typed_XXXXXX";
    ASSERT_NE(mkdtemp(pattern), nullptr);
    dir_ = pattern;
    path_ = dir_ + "/typed.vmbc";
    std::ofstream(path_, std::ios::binary) << vm_.assemble(kProgram);
  }
  void TearDown() override {
    unlink(path_.c_str());
    rmdir(dir_.c_str());
  }

  VmApi vm_;
  std::string dir_, path_;
};

TEST_F(VmTypedApi, BytecodeRoundTrip) {
  const std::string image = vm_.assemble(kProgram);
  EXPECT_EQ(image.substr(0, 4), "GRVM");
  EXPECT_NO_THROW(vm_.verify(image));
  const std::string text = vm_.disassemble(image);
  EXPECT_NE(text.find("add.i32 %i2, %i0, %i1"), std::string::npos) << text;
  EXPECT_EQ(vm_.assemble(text), image);
  try {
    vm_.assemble("module bad version 1\nfunc f \"0_i\" export\n  frobnicate %i0\nend\n");
    FAIL() << "bad text assembled";
  } catch (const Error& e) {
    EXPECT_EQ(e.context_value("line"), "3") << e.what();
  }
  EXPECT_THROW(vm_.verify(image.substr(0, image.size() / 2)), Error);
}

TEST_F(VmTypedApi, LoadCallAndAskAboutFunctions) {
  const graphrt::Module m = vm_.load(path_);
  graphrt::ArgList args;
  args.add_int(40).add_int(2);
  EXPECT_EQ(graphrt::call_function(m->require_function("add"), args).as_int(), 42);
  EXPECT_EQ(vm_.module_name(m), "typed");
  EXPECT_EQ(vm_.signature(m, "add"), "0ii_i");
  EXPECT_EQ(vm_.argument_types(m, "pair"), "I");
  EXPECT_EQ(vm_.result_types(m, "pair"), "Ir");
  try {
    vm_.signature(m, "missing");
    FAIL() << "a missing function has a signature";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), graphrt::ErrorKind::kNotFound) << e.what();
  }
  const graphrt::Module linked = vm_.link({path_});
  EXPECT_EQ(graphrt::call_function(linked->require_function("typed.add"), args).as_int(), 42);
}

TEST_F(VmTypedApi, TracerSeesInstructionsUntilRemoved) {
  const graphrt::Module m = vm_.load(path_);
  std::vector<std::string> lines;
  vm_.set_tracer(m, [&lines](const std::string& line) { lines.push_back(line); });
  graphrt::ArgList args;
  args.add_int(1).add_int(2);
  graphrt::call_function(m->require_function("add"), args);
  ASSERT_FALSE(lines.empty());
  EXPECT_EQ(lines.front().rfind("typed.add@", 0), 0u) << lines.front();
  const size_t traced = lines.size();
  vm_.set_tracer(m, nullptr);
  graphrt::call_function(m->require_function("add"), args);
  EXPECT_EQ(lines.size(), traced);
}

TEST_F(VmTypedApi, ListsBuiltAndRead) {
  RetValue seven, half, bytes;
  seven.set_int(7);
  half.set_float(0.5);
  bytes.set_bytes("ab");
  const graphrt::Ref<graphrt::Object> list = vm_.list("IFr", {seven, half, bytes});
  EXPECT_EQ(list->object_type_key(), std::string("graphrt.vm.List"));
  EXPECT_EQ(vm_.list_size(list), 3);
  EXPECT_EQ(vm_.list_types(list), "IFr");
  EXPECT_EQ(vm_.list_get(list, 0).as_int(), 7);
  EXPECT_DOUBLE_EQ(vm_.list_get(list, 1).as_float(), 0.5);
  EXPECT_EQ(vm_.list_get(list, 2).as_string(), "ab");
  try {
    vm_.list_get(list, 3);
    FAIL() << "index 3 of a 3-item list was read";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), graphrt::ErrorKind::kOutOfRange) << e.what();
  }
}

TEST_F(VmTypedApi, BudgetOfModulesLoadedAfterwards) {
  vm_.set_instruction_budget(5000);
  const graphrt::Module limited = vm_.load(path_);
  vm_.set_instruction_budget(100000000);
  try {
    graphrt::call_function(limited->require_function("spin"), graphrt::ArgList());
    FAIL() << "spin returned";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("(5000 branches"), std::string::npos) << e.what();
  }
  EXPECT_THROW(vm_.set_memory_limit(0), Error);
}

TEST(VmTypedApiRuntime, AnEmptyRuntimeHasNoVm) {
  graphrt::Runtime empty;
  try {
    VmApi vm(empty);
    FAIL() << "an empty runtime has a VM";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), graphrt::ErrorKind::kNotFound) << e.what();
    EXPECT_EQ(e.context_value("function"), "graphrt.vm.assemble") << e.what();
  }
}

}  // namespace
