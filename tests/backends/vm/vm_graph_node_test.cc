// A graph node whose function is a VM export: the VM calls the library's
// TVM kernel by name, and the graph's output still matches TVM's. Plus the
// VM through the C API only (graphrt.vm.* global functions, TVMFuncCall):
// scalars and tensors in and out, budgets and interrupts of graph nodes,
// modules that a packed program declares.
#include <atomic>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <thread>

#include "fixture_cases.h"
#include "graphrt/blob_reader.h"
#include "graphrt/c_api.h"
#include "backends/vm/bytecode/assembler.h"
#include "backends/vm/bytecode/binary_format.h"
#include "backends/vm/bytecode/bytecode_program.h"

using namespace graphrt;
using namespace graphrt_test;

namespace {

const char* kNodeProgram = R"(
module nodes version 1
import tvm.call "0rCrD"
func vm_dense_relu "0rrrr" export
  const.ref.rodata %r4, "tvmgen_default_fused_nn_contrib_dense_pack_add_nn_relu"
  call.variadic @tvm.call(%r4, [%r0, %r1, %r2, %r3])
  ret
end
func vm_spin "0rrrr" export
loop:
  br loop
end
func vm_missing_kernel "0rrrr" export
  const.ref.rodata %r4, "no_such_kernel"
  call.variadic @tvm.call(%r4, [%r0, %r1, %r2, %r3])
  ret
end
)";

// The mlp kernels library with a graphrt_vm blob record imported, as
// graphrt-pack lays it out (library -> graphrt_vm).
Module library_with_vm(const std::string& program = kNodeProgram) {
  Module lib = load_module(fixture_path("mlp/deploy_lib.so"));
  std::vector<uint8_t> bytecode = vm::write_module_def(vm::assemble(program));
  std::vector<uint8_t> payload = vm::Program::make_payload(bytecode);
  BlobReader reader(payload.data(), payload.size(), "vm payload");
  Module vm_module = load_binary("graphrt_vm", reader);
  EXPECT_TRUE(reader.at_end());
  lib->add_import(vm_module);
  vm_module->attach_environment(lib.get());
  return lib;
}

std::string mlp_graph_calling(const std::string& vm_function) {
  auto graph = nlohmann::json::parse(read_text(fixture_path("mlp/deploy_graph.json")));
  for (auto& node : graph["nodes"]) {
    if (node["op"] == "tvm_op" && node["attrs"]["func_name"] == "tvmgen_default_fused_nn_contrib_dense_pack_add_nn_relu")
      node["attrs"]["func_name"] = vm_function;
  }
  return graph.dump();
}

}  // namespace

TEST(VmGraphNode, NodeRunsVmFunctionThatCallsKernel) {
  GRAPHRT_REQUIRE_FIXTURES();
  Module lib = library_with_vm();
  EXPECT_EQ(lib->imports()[0]->type_key(), "graphrt_vm");
  auto ex = create_graph_executor(mlp_graph_calling("vm_dense_relu"), lib,
                                  read_text(fixture_path("mlp/deploy_params.params")), {cpu()});
  set_case_inputs(*ex, "mlp");
  ex->run();
  EXPECT_EQ("", compare_output(ex->get_output(0), fixture_path("mlp/output_0.npy"), 0));
}

TEST(VmGraphNode, MissingKernelInsideVmNamesNodeAndKernel) {
  GRAPHRT_REQUIRE_FIXTURES();
  Module lib = library_with_vm();
  auto ex = create_graph_executor(mlp_graph_calling("vm_missing_kernel"), lib,
                                  read_text(fixture_path("mlp/deploy_params.params")), {cpu()});
  set_case_inputs(*ex, "mlp");
  try {
    ex->run();
    FAIL() << "expected the VM's kernel lookup to fail";
  } catch (const Error& e) {
    std::string msg = e.what();
    EXPECT_NE(msg.find("no_such_kernel"), std::string::npos) << msg;
    EXPECT_NE(msg.find("vm_missing_kernel"), std::string::npos) << msg;
  }
}

namespace {

PackedFunc global(const std::string& name) {
  PackedFunc f = registry_get(name);
  EXPECT_TRUE(f) << name;
  return f;
}

// Restores the process-wide budget after a test changed it through the C API.
struct BudgetScope {
  explicit BudgetScope(int64_t n) { set(n); }
  ~BudgetScope() { set(100000000); }
  static void set(int64_t n) {
    ArgList args;
    args.add_int(n);
    call_function(global("graphrt.vm.set_instruction_budget"), args);
  }
};

std::string write_temp(const std::string& name, const std::string& text) {
  const std::string path = testing::TempDir() + "/" + name;
  std::ofstream(path) << text;
  return path;
}

const char* kScalarProgram = R"(
module capi version 1
import tensor.numel "0r_I"
func add "0ii_i" export
  add.i32 %i2, %i0, %i1
  ret %i2
end
func halve "0F_F" export
  const.f64 %F1, 0.5
  mul.f64 %F2, %F0, %F1
  ret %F2
end
func count "0r_I" export
  call @tensor.numel(%r0) -> (%I0)
  ret %I0
end
)";

}  // namespace

// The C API alone: load a .vmasm through the registry, call with TVM values.
TEST(VmCApi, LoadAndCallWithScalarsAndTensors) {
  const std::string path = write_temp("capi.vmasm", kScalarProgram);
  TVMFunctionHandle load = nullptr;
  ASSERT_EQ(0, TVMFuncGetGlobal("graphrt.vm.load", &load)) << TVMGetLastError();
  ASSERT_NE(load, nullptr);
  TVMValue arg;
  int code = kTVMStr;
  arg.v_str = path.c_str();
  TVMValue ret;
  int ret_code = 0;
  ASSERT_EQ(0, TVMFuncCall(load, &arg, &code, 1, &ret, &ret_code)) << TVMGetLastError();
  ASSERT_EQ(ret_code, kTVMModuleHandle);
  TVMModuleHandle mod = ret.v_handle;

  TVMFunctionHandle add = nullptr;
  ASSERT_EQ(0, TVMModGetFunction(mod, "add", 0, &add)) << TVMGetLastError();
  TVMValue args[2];
  int codes[2] = {kTVMArgInt, kTVMArgInt};
  args[0].v_int64 = 40;
  args[1].v_int64 = 2;
  ASSERT_EQ(0, TVMFuncCall(add, args, codes, 2, &ret, &ret_code)) << TVMGetLastError();
  EXPECT_EQ(ret_code, kTVMArgInt);
  EXPECT_EQ(ret.v_int64, 42);

  TVMFunctionHandle halve = nullptr;
  ASSERT_EQ(0, TVMModGetFunction(mod, "halve", 0, &halve));
  codes[0] = kTVMArgFloat;
  args[0].v_float64 = 5.0;
  ASSERT_EQ(0, TVMFuncCall(halve, args, codes, 1, &ret, &ret_code)) << TVMGetLastError();
  EXPECT_EQ(ret_code, kTVMArgFloat);
  EXPECT_DOUBLE_EQ(ret.v_float64, 2.5);

  TVMFunctionHandle count = nullptr;
  ASSERT_EQ(0, TVMModGetFunction(mod, "count", 0, &count));
  int64_t shape[2] = {3, 7};
  float data[21] = {};
  DLTensor t{data, {kDLCPU, 0}, 2, {kDLFloat, 32, 1}, shape, nullptr, 0};
  codes[0] = kTVMDLTensorHandle;
  args[0].v_handle = &t;
  ASSERT_EQ(0, TVMFuncCall(count, args, codes, 1, &ret, &ret_code)) << TVMGetLastError();
  EXPECT_EQ(ret.v_int64, 21);

  // wrong argument type: a clean error naming the function
  codes[0] = kTVMStr;
  args[0].v_str = "x";
  EXPECT_EQ(-1, TVMFuncCall(count, args, codes, 1, &ret, &ret_code));
  EXPECT_NE(std::string(TVMGetLastError()).find("count"), std::string::npos) << TVMGetLastError();

  TVMFuncFree(add);
  TVMFuncFree(halve);
  TVMFuncFree(count);
  TVMModFree(mod);
  TVMFuncFree(load);
}

TEST(VmGraphNode, LoopingNodeStopsAtTheBudget) {
  GRAPHRT_REQUIRE_FIXTURES();
  BudgetScope low(20000);
  Module lib = library_with_vm();
  auto ex = create_graph_executor(mlp_graph_calling("vm_spin"), lib,
                                  read_text(fixture_path("mlp/deploy_params.params")), {cpu()});
  set_case_inputs(*ex, "mlp");
  try {
    ex->run();
    FAIL() << "a node looping forever returned";
  } catch (const Error& e) {
    const std::string msg = e.what();
    EXPECT_NE(msg.find("instruction budget exhausted (20000"), std::string::npos) << msg;
    EXPECT_NE(msg.find("vm_spin"), std::string::npos) << msg;
  }
}

TEST(VmGraphNode, InterruptFromAnotherThreadStopsTheNode) {
  GRAPHRT_REQUIRE_FIXTURES();
  BudgetScope unlimited(INT64_MAX);
  Module lib = library_with_vm();
  auto ex = create_graph_executor(mlp_graph_calling("vm_spin"), lib,
                                  read_text(fixture_path("mlp/deploy_params.params")), {cpu()});
  set_case_inputs(*ex, "mlp");
  std::atomic<bool> done{false};
  std::string error;
  std::thread runner([&] {
    try {
      ex->run();
    } catch (const Error& e) {
      error = e.what();
    }
    done = true;
  });
  PackedFunc interrupt = global("graphrt.vm.interrupt");
  while (!done) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    ArgList args;
    args.add_module(lib);  // the library: its VM imports are found in its tree
    call_function(interrupt, args);
  }
  runner.join();
  EXPECT_NE(error.find("VM invocation interrupted"), std::string::npos) << error;
  EXPECT_NE(error.find("vm_spin"), std::string::npos) << error;
}

// A packed program that declares the dynamic module it needs gets it linked
// at load, and its functions are callable through the library.
TEST(VmGraphNode, RecordLinksTheModulesItDeclares) {
  GRAPHRT_REQUIRE_FIXTURES();
  const std::string program = std::string(R"(
module nodes version 1
dependency sample 2 from ")") + VM_SAMPLE_MODULE_PATH + R"(@sample_create?scale=%33"
import sample.scaled_add "0ii_i"
func scaled "0ii_i" export
  call @sample.scaled_add(%i0, %i1) -> (%i2)
  ret %i2
end
)";
  Module lib = library_with_vm(program);
  PackedFunc scaled = lib->get_function("scaled", /*query_imports=*/true);
  ASSERT_TRUE(scaled);
  ArgList args;
  args.add_int(4).add_int(5);
  EXPECT_EQ(call_function(scaled, args).as_int(), 27);

  // A missing declared module fails at load, naming it.
  const std::string missing = R"(
module nodes version 1
dependency sample 2 from "/nonexistent/sample.so"
func f "0" export
  ret
end
)";
  try {
    library_with_vm(missing);
    FAIL() << "linked a program whose declared module is missing";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("/nonexistent/sample.so"), std::string::npos) << e.what();
  }
}
