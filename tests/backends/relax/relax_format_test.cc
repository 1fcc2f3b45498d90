// Corrupt Relax executables are refused at load with one-line errors naming
// the field (and the function): each case patches a real fixture's
// executable and feeds the record to the registered loader.
#include <gtest/gtest.h>

#include "fixture_cases.h"
#include "graphrt/binary_loader.h"
#include "graphrt/runtime.h"
#include "backends/relax/executable_module.h"
#include "backends/relax/executable_writer.h"
#include "backends/relax/instruction.h"
#include "relax_cases.h"

namespace {

using graphrt::relax::Executable;

class RelaxFormat : public ::testing::Test {
 protected:
  void SetUp() override { GRAPHRT_REQUIRE_FIXTURES(); }

  // The executable of a shared case, as its library's blob holds it.
  static Executable fixture_executable(const std::string& name) {
    graphrt::Module lib = graphrt::load_module(graphrt_test::fixture_path("relax/" + name + "/deploy_relax.so"));
    auto* node = dynamic_cast<graphrt::relax::ExecutableModuleNode*>(lib.get());
    if (!node) throw graphrt::Error("root module is not a Relax executable");
    return node->executable();
  }

  // Loads `payload` as a relax.VMExecutable record and makes a VM of it; the error, or "".
  static graphrt::Error load_error(const std::string& payload) {
    try {
      graphrt::BlobReader reader(reinterpret_cast<const uint8_t*>(payload.data()), payload.size());
      graphrt::Module exe = graphrt::load_binary("relax.VMExecutable", reader);
      graphrt::call_function(exe->require_function("vm_load_executable"), graphrt::ArgList());
    } catch (const graphrt::Error& e) {
      return e;
    }
    return graphrt::Error("no error");
  }

  static graphrt::Error load_error(const Executable& exe) { return load_error(graphrt::relax::write_executable_record(exe)); }

  // Index of the first Call instruction of `function` whose callee is `callee`.
  static int64_t find_call(const Executable& exe, const std::string& function, const std::string& callee) {
    const auto& f = exe.functions[static_cast<size_t>(exe.find_function(function))];
    for (int64_t pc = f.start_instr; pc < f.end_instr; ++pc) {
      auto in = graphrt::relax::read_instruction(exe, pc);
      if (in.op == graphrt::relax::Opcode::kCall && exe.functions[static_cast<size_t>(in.func_index)].name == callee)
        return pc;
    }
    throw graphrt::Error("no call to " + callee);
  }
  static int64_t& word(Executable& exe, int64_t pc, int64_t k) {
    return exe.instr_data[static_cast<size_t>(exe.instr_offset[static_cast<size_t>(pc)] + k)];
  }
};

void expect_one_line(const graphrt::Error& e) {
  const std::string text = e.what();
  EXPECT_EQ(text.find('\n'), std::string::npos) << text;
}

TEST_F(RelaxFormat, UnchangedExecutableRoundTripsAndLoads) {
  Executable exe = fixture_executable("relax_mlp");
  const std::string payload = graphrt::relax::write_executable_record(exe);
  graphrt::BlobReader reader(reinterpret_cast<const uint8_t*>(payload.data()), payload.size());
  graphrt::Module m = graphrt::load_binary("relax.VMExecutable", reader);
  EXPECT_TRUE(reader.at_end());
  auto* node = dynamic_cast<graphrt::relax::ExecutableModuleNode*>(m.get());
  ASSERT_NE(node, nullptr);
  EXPECT_EQ(node->executable().instr_data, exe.instr_data);
  EXPECT_EQ(graphrt::relax::write_executable_record(node->executable()), payload);
}

TEST_F(RelaxFormat, TruncatedRecordsAreRefusedAtEveryLength) {
  const std::string payload = graphrt::relax::write_executable_record(fixture_executable("relax_control_flow"));
  for (size_t n : {size_t{0}, size_t{7}, size_t{12}, size_t{30}, payload.size() / 3, payload.size() / 2, payload.size() - 1}) {
    std::string cut = payload.substr(0, n);
    // Keep the outer length consistent with what is left, so the executable itself is short.
    if (n >= 8) {
      const uint64_t inner = n - 8;
      std::memcpy(&cut[0], &inner, 8);
    }
    const graphrt::Error e = load_error(cut);
    EXPECT_NE(std::string(e.what()), "no error") << n;
    const std::string text = e.what();
    // A short read names what it expected; a count that cannot fit names the counted field.
    EXPECT_TRUE(text.find("truncated") != std::string::npos || text.find("bad length for") != std::string::npos)
        << n << ": " << text;
    expect_one_line(e);
  }
}

TEST_F(RelaxFormat, WrongMagicIsRefused) {
  std::string payload = graphrt::relax::write_executable_record(fixture_executable("relax_mlp"));
  payload[8] ^= 0x5a;
  const graphrt::Error e = load_error(payload);
  EXPECT_NE(std::string(e.what()).find("bad magic"), std::string::npos) << e.what();
  EXPECT_EQ(e.context_value("field"), "magic");
  expect_one_line(e);
}

TEST_F(RelaxFormat, WrongVersionIsUnsupported) {
  Executable exe = fixture_executable("relax_mlp");
  exe.version = "0.99";
  const graphrt::Error e = load_error(exe);
  EXPECT_EQ(e.kind(), graphrt::ErrorKind::kUnsupported) << e.what();
  EXPECT_EQ(e.context_value("field"), "version");
  EXPECT_NE(std::string(e.what()).find("0.99"), std::string::npos);
}

TEST_F(RelaxFormat, ConstantIndexOutOfRangeNamesFieldAndFunction) {
  Executable exe = fixture_executable("relax_mlp");
  const int64_t pc = find_call(exe, "main", "vm.builtin.check_tensor_info");
  word(exe, pc, 4 + 2) = graphrt::relax::make_arg(graphrt::relax::ArgKind::kConstIdx, 100000);
  const graphrt::Error e = load_error(exe);
  EXPECT_EQ(e.kind(), graphrt::ErrorKind::kOutOfRange) << e.what();
  EXPECT_EQ(e.context_value("field"), "constant index");
  EXPECT_EQ(e.context_value("function"), "main");
  EXPECT_EQ(e.context_value("instruction"), std::to_string(pc));
  expect_one_line(e);
}

TEST_F(RelaxFormat, FunctionIndexOutOfRangeIsRefused) {
  Executable exe = fixture_executable("relax_mlp");
  const int64_t pc = find_call(exe, "main", "vm.builtin.null_value");
  word(exe, pc, 2) = static_cast<int64_t>(exe.functions.size());
  const graphrt::Error e = load_error(exe);
  EXPECT_EQ(e.kind(), graphrt::ErrorKind::kOutOfRange) << e.what();
  EXPECT_EQ(e.context_value("field"), "function index");
  EXPECT_EQ(e.context_value("function"), "main");
}

TEST_F(RelaxFormat, JumpOutOfTheFunctionIsRefused) {
  Executable exe = fixture_executable("relax_control_flow");
  const auto& main = exe.functions[static_cast<size_t>(exe.find_function("main"))];
  int64_t goto_pc = -1;
  for (int64_t pc = main.start_instr; pc < main.end_instr; ++pc)
    if (graphrt::relax::read_instruction(exe, pc).op == graphrt::relax::Opcode::kGoto) goto_pc = pc;
  ASSERT_GE(goto_pc, 0);
  word(exe, goto_pc, 1) = main.end_instr - goto_pc;  // one past the last instruction
  const graphrt::Error e = load_error(exe);
  EXPECT_EQ(e.kind(), graphrt::ErrorKind::kOutOfRange) << e.what();
  EXPECT_EQ(e.context_value("field"), "goto offset");
  EXPECT_EQ(e.context_value("function"), "main");
  expect_one_line(e);
}

TEST_F(RelaxFormat, IfFalseTargetOutsideTheFunctionIsRefused) {
  Executable exe = fixture_executable("relax_control_flow");
  const auto& main = exe.functions[static_cast<size_t>(exe.find_function("main"))];
  for (int64_t pc = main.start_instr; pc < main.end_instr; ++pc)
    if (graphrt::relax::read_instruction(exe, pc).op == graphrt::relax::Opcode::kIf) word(exe, pc, 2) = -1000;
  const graphrt::Error e = load_error(exe);
  EXPECT_EQ(e.context_value("field"), "if false_offset") << e.what();
}

TEST_F(RelaxFormat, RegisterFileTooSmallIsRefused) {
  Executable exe = fixture_executable("relax_mlp");
  exe.functions[static_cast<size_t>(exe.find_function("main"))].register_file_size = 3;
  const graphrt::Error e = load_error(exe);
  EXPECT_EQ(e.kind(), graphrt::ErrorKind::kOutOfRange) << e.what();
  EXPECT_EQ(e.context_value("function"), "main");
  EXPECT_NE(std::string(e.what()).find("register file of 3"), std::string::npos) << e.what();
  expect_one_line(e);
}

TEST_F(RelaxFormat, CallWithTheWrongArgumentCountIsRefused) {
  Executable exe = fixture_executable("relax_control_flow");
  // main calls then_branch(x): make then_branch take two arguments.
  auto& then_branch = exe.functions[static_cast<size_t>(exe.find_function("then_branch"))];
  then_branch.num_args = 2;
  then_branch.param_names.push_back("y");
  const graphrt::Error e = load_error(exe);
  EXPECT_EQ(e.context_value("field"), "num_args") << e.what();
  EXPECT_EQ(e.context_value("function"), "main");
}

TEST_F(RelaxFormat, UnknownBuiltinIsRefusedAtLoadNamingIt) {
  Executable exe = fixture_executable("relax_mlp");
  exe.functions[static_cast<size_t>(exe.find_function("vm.builtin.null_value"))].name = "vm.builtin.no_such_builtin";
  const graphrt::Error e = load_error(exe);
  EXPECT_EQ(e.kind(), graphrt::ErrorKind::kNotFound) << e.what();
  EXPECT_EQ(e.context_value("function"), "vm.builtin.no_such_builtin");
  expect_one_line(e);
}

TEST_F(RelaxFormat, MissingKernelIsRefusedWhenTheLibraryIsNotImported) {
  // The record alone has no library: its kernels resolve nowhere.
  const graphrt::Error e = load_error(fixture_executable("relax_mlp"));
  EXPECT_EQ(e.kind(), graphrt::ErrorKind::kNotFound) << e.what();
  EXPECT_EQ(e.context_value("function"), "fused_matmul_add_relu");
}

TEST_F(RelaxFormat, StatsAndTextListFunctionsAndCode) {
  graphrt::Module lib = graphrt::load_module(graphrt_test::fixture_path("relax/relax_control_flow/deploy_relax.so"));
  const std::string stats = graphrt::call_function(lib->require_function("stats"), graphrt::ArgList()).as_string();
  EXPECT_NE(stats.find("vm.builtin.read_if_cond"), std::string::npos) << stats;
  const std::string text = graphrt::call_function(lib->require_function("as_text"), graphrt::ArgList()).as_string();
  EXPECT_NE(text.find("@main(x):"), std::string::npos) << text;
  EXPECT_NE(text.find("  If    %5, 4"), std::string::npos) << text;
  EXPECT_NE(text.find("  call  vm.builtin.copy in: %6 dst: %7"), std::string::npos) << text;
}

TEST_F(RelaxFormat, InstructionBudgetStopsACallNamingTheFunction) {
  graphrt::Module lib = graphrt::load_module(graphrt_test::fixture_path("relax/relax_chain/deploy_relax.so"));
  graphrt::Module vm = graphrt_test::relax_vm(lib);
  graphrt::ArgList budget;
  budget.add_int(50);
  graphrt::call_function(vm->require_function("set_instruction_budget"), budget);
  const auto rc = graphrt_test::relax_case("relax_chain");
  graphrt::ArgList args;
  for (const auto& a : graphrt_test::relax_inputs(rc.sets.front())) args.add_ndarray(a);
  try {
    graphrt::call_function(vm->require_function("forward"), args);
    FAIL() << "no error";
  } catch (const graphrt::Error& e) {
    EXPECT_EQ(e.kind(), graphrt::ErrorKind::kResourceExhausted) << e.what();
    EXPECT_EQ(e.context_value("function"), "forward");
  }
}

TEST_F(RelaxFormat, WrongInputShapeNamesTheParameter) {
  graphrt::Module vm = graphrt_test::relax_vm(graphrt::load_module(graphrt_test::fixture_path("relax/relax_mlp/deploy_relax.so")));
  graphrt::ArgList args;
  args.add_ndarray(graphrt::NDArray::empty({1, 783}, DLDataType{kDLFloat, 32, 1}, graphrt::cpu()));
  try {
    graphrt::call_function(vm->require_function("main"), args);
    FAIL() << "no error";
  } catch (const graphrt::Error& e) {
    const std::string text = e.what();
    EXPECT_NE(text.find("param=x"), std::string::npos) << text;
    EXPECT_NE(text.find("shape[1] is 783, expected 784"), std::string::npos) << text;
    EXPECT_EQ(e.context_value("function"), "main");
  }
}

}  // namespace
