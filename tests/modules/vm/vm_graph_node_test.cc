// A graph node whose function is a VM export: the VM calls the library's
// TVM kernel by name, and the graph's output still matches TVM's.
#include "fixture_cases.h"
#include "graphrt/blob_reader.h"
#include "modules/vm/assembler.h"
#include "modules/vm/binary_format.h"
#include "modules/vm/program.h"

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
func vm_missing_kernel "0rrrr" export
  const.ref.rodata %r4, "no_such_kernel"
  call.variadic @tvm.call(%r4, [%r0, %r1, %r2, %r3])
  ret
end
)";

// The mlp kernels library with a graphrt_vm blob record imported, as
// graphrt-pack lays it out (library -> graphrt_vm).
Module library_with_vm() {
  Module lib = load_module(fixture_path("mlp/deploy_lib.so"));
  std::vector<uint8_t> bytecode = vm::write_module_def(vm::assemble(kNodeProgram));
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
