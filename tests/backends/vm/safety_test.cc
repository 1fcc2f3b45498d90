// Safe by default: every entry point runs under an instruction budget, a
// running call can be interrupted from another thread, and only verified
// bytecode can become a module.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <string>
#include <thread>
#include <type_traits>

#include "graphrt/error.h"
#include "backends/vm/bytecode/assembler.h"
#include "backends/vm/bytecode/binary_format.h"
#include "backends/vm/host/limits.h"
#include "backends/vm/bytecode/bytecode_program.h"
#include "vm_test_util.h"

namespace {

using namespace graphrt::vm;
using vm_test::I;

const char* kSpinInInit = R"(
module spin_init version 1
func __init "0v" export
loop:
  br loop
end
)";

const char* kSpin = R"(
module spin version 1
func forever "0_i" export
entry:
  const.i32 %i0, 1
  br loop
loop:
  br loop
end
func add "0ii_i" export
  add.i32 %i2, %i0, %i1
  ret %i2
end
)";

// Restores the process-wide default budget when a test lowered it.
struct BudgetOverride {
  explicit BudgetOverride(uint64_t budget) : saved(limits().instruction_budget) {
    limits().instruction_budget = budget;
  }
  ~BudgetOverride() { limits().instruction_budget = saved; }
  uint64_t saved;
};

TEST(VmSafety, DefaultBudgetIsFinite) {
  EXPECT_EQ(Limits::kDefaultInstructionBudget, 100000000u);
  Stack stack;
  EXPECT_EQ(stack.budget(), limits().instruction_budget);
  Context context(Instance::create());
  EXPECT_EQ(context.instruction_budget(), limits().instruction_budget);
}

TEST(VmSafety, InitLoopStopsAtTheBudget) {
  BudgetOverride low(5000);
  Context context(Instance::create());
  try {
    context.register_module(vm_test::build(kSpinInInit));
    FAIL() << "an __init that loops forever was registered";
  } catch (const graphrt::Error& e) {
    EXPECT_NE(std::string(e.what()).find("instruction budget exhausted (5000"), std::string::npos) << e.what();
    EXPECT_EQ(e.context_value("function"), "__init");
    EXPECT_EQ(e.context_value("during"), "__init");
  }
  EXPECT_FALSE(context.has_module("spin_init"));  // rolled back
}

TEST(VmSafety, HostCallStopsAtTheContextBudget) {
  Context context(Instance::create());
  context.set_instruction_budget(1234);
  context.register_module(vm_test::build(kSpin));
  try {
    context.invoke("spin.forever", {});
    FAIL();
  } catch (const graphrt::Error& e) {
    EXPECT_NE(std::string(e.what()).find("budget exhausted"), std::string::npos) << e.what();
    EXPECT_EQ(e.context_value("function"), "forever");
    EXPECT_EQ(e.context_value("budget"), "1234");
  }
  EXPECT_EQ(context.invoke("spin.add", {I(2), I(3)})[0].i32, 5);  // a fresh budget per call
}

TEST(VmSafety, ProgramOptionSetsTheBudget) {
  const std::vector<uint8_t> bytes = write_module_def(assemble(kSpin));
  ProgramOptions options;
  options.instruction_budget = 77;
  auto program = Program::load(bytes.data(), bytes.size(), options);
  try {
    program->call("forever", {});
    FAIL();
  } catch (const graphrt::Error& e) {
    EXPECT_EQ(e.context_value("budget"), "77") << e.what();
  }
}

// Runs spin.forever on another thread under an unlimited budget and
// interrupts it from this one.
TEST(VmSafety, InterruptFromAnotherThreadStopsTheCall) {
  const std::vector<uint8_t> bytes = write_module_def(assemble(kSpin));
  ProgramOptions options;
  options.instruction_budget = UINT64_MAX;
  auto program = Program::load(bytes.data(), bytes.size(), options);
  std::atomic<bool> done{false};
  std::string error, function;
  std::thread worker([&] {
    try {
      program->call("forever", {});
    } catch (const graphrt::Error& e) {
      error = e.what();
      function = e.context_value("function");
    }
    done = true;
  });
  // Repeated because a request made before the call started does not stop it.
  while (!done) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    program->interrupt();
  }
  worker.join();
  EXPECT_NE(error.find("VM invocation interrupted"), std::string::npos) << error;
  EXPECT_EQ(function, "forever");
  // An interrupt stops the calls running when it was requested, not later ones.
  EXPECT_EQ(program->call("add", {I(20), I(22)})[0].i32, 42);
}

// The interpreter trusts verified bytecode: no way to build a module from an
// unverified def may exist.
static_assert(!std::is_constructible<BytecodeModule, ModuleDef>::value, "unverified construction");
static_assert(!std::is_constructible<BytecodeModule::VerifiedDef, ModuleDef>::value, "forged proof");
static_assert(!std::is_default_constructible<BytecodeModule::VerifiedDef>::value, "forged proof");

TEST(VmSafety, ModulesExistOnlyVerified) {
  ModuleDef def = assemble(kSpin);
  def.functions[1].registers[0] = 1;  // add uses %i2: now out of range
  EXPECT_THROW(BytecodeModule::create(def), graphrt::Error);
  const std::vector<uint8_t> bytes = write_module_def(def);
  EXPECT_THROW(BytecodeModule::load(bytes.data(), bytes.size()), graphrt::Error);
  EXPECT_THROW(Program::load(bytes.data(), bytes.size()), graphrt::Error);
}

TEST(VmSafety, BudgetText) {
  EXPECT_EQ(parse_budget("1000", "budget"), 1000u);
  EXPECT_THROW(parse_budget("0", "budget"), graphrt::Error);
  EXPECT_THROW(parse_budget("1e6", "budget"), graphrt::Error);
  EXPECT_THROW(parse_budget("", "budget"), graphrt::Error);
  EXPECT_THROW(parse_budget("99999999999999999999", "budget"), graphrt::Error);
}

}  // namespace
