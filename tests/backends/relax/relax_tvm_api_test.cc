// A Relax export run with TVM's own C++ deploy code (tvm/runtime/*.h), built
// against graphrt's TVM-path headers and libgraphrt only, and through the C
// API (TVMFuncCall) as TVM's C users call it.
#include <gtest/gtest.h>

#include <tvm/runtime/c_runtime_api.h>
#include <tvm/runtime/module.h>
#include <tvm/runtime/ndarray.h>
#include <tvm/runtime/packed_func.h>

#include <cstring>
#include <string>
#include <vector>

#include "test_support.h"

using tvm::runtime::Module;
using tvm::runtime::NDArray;
using tvm::runtime::PackedFunc;

namespace {

NDArray load_npy(const std::string& path) {
  graphrt_test::Npy a = graphrt_test::read_npy(path);
  NDArray out = NDArray::Empty(tvm::runtime::ShapeTuple(a.shape), a.dtype, DLDevice{kDLCPU, 0});
  out.CopyFromBytes(a.data.data(), a.data.size());
  return out;
}

std::vector<uint8_t> bytes_of(const NDArray& a, size_t n) {
  std::vector<uint8_t> out(n);
  a.CopyToBytes(out.data(), n);
  return out;
}

TEST(RelaxTvmApi, DeployCodeRunsBothBranchesOfControlFlow) {
  GRAPHRT_REQUIRE_FIXTURES();
  const std::string dir = graphrt_test::fixture_path("relax/relax_control_flow");
  Module ex = Module::LoadFromFile(dir + "/deploy_relax.so");
  Module vm = ex.GetFunction("vm_load_executable")();
  vm.GetFunction("vm_initialization")(static_cast<int>(kDLCPU), 0, 2);
  PackedFunc main = vm.GetFunction("main");
  for (const std::string suffix : {"", "_else"}) {
    NDArray y = main(load_npy(dir + "/input_x" + suffix + ".npy"));
    graphrt_test::Npy expected = graphrt_test::read_npy(dir + "/output_0" + suffix + ".npy");
    EXPECT_EQ(bytes_of(y, expected.data.size()), std::vector<uint8_t>(expected.data.begin(), expected.data.end()))
        << "input set '" << suffix << "'";
  }
}

TEST(RelaxTvmApi, CApiCallsTheVmFunction) {
  GRAPHRT_REQUIRE_FIXTURES();
  const std::string dir = graphrt_test::fixture_path("relax/relax_dynamic_batch");
  TVMModuleHandle ex = nullptr, vm = nullptr;
  ASSERT_EQ(TVMModLoadFromFile((dir + "/deploy_relax.so").c_str(), "", &ex), 0) << TVMGetLastError();
  TVMFunctionHandle load = nullptr, init = nullptr, main = nullptr;
  ASSERT_EQ(TVMModGetFunction(ex, "vm_load_executable", 0, &load), 0);
  TVMValue ret;
  int ret_code = 0;
  ASSERT_EQ(TVMFuncCall(load, nullptr, nullptr, 0, &ret, &ret_code), 0) << TVMGetLastError();
  ASSERT_EQ(ret_code, kTVMModuleHandle);
  vm = ret.v_handle;
  ASSERT_EQ(TVMModGetFunction(vm, "vm_initialization", 0, &init), 0);
  TVMValue init_args[3];
  int init_codes[3] = {kDLInt, kDLInt, kDLInt};
  init_args[0].v_int64 = kDLCPU;
  init_args[1].v_int64 = 0;
  init_args[2].v_int64 = 2;
  ASSERT_EQ(TVMFuncCall(init, init_args, init_codes, 3, &ret, &ret_code), 0) << TVMGetLastError();
  ASSERT_EQ(TVMModGetFunction(vm, "main", 0, &main), 0);
  for (const std::string suffix : {"", "_n1"}) {
    NDArray x = load_npy(dir + "/input_x" + suffix + ".npy");
    TVMValue arg;
    arg.v_handle = const_cast<DLTensor*>(x.operator->());
    int code = kTVMDLTensorHandle;
    ASSERT_EQ(TVMFuncCall(main, &arg, &code, 1, &ret, &ret_code), 0) << TVMGetLastError();
    ASSERT_EQ(ret_code, kTVMNDArrayHandle);
    graphrt_test::Npy expected = graphrt_test::read_npy(dir + "/output_0" + suffix + ".npy");
    std::vector<uint8_t> got(expected.data.size());
    ASSERT_EQ(TVMArrayCopyToBytes(static_cast<TVMArrayHandle>(ret.v_handle), got.data(), got.size()), 0);
    EXPECT_EQ(got, std::vector<uint8_t>(expected.data.begin(), expected.data.end())) << suffix;
    TVMArrayFree(static_cast<TVMArrayHandle>(ret.v_handle));
  }
  TVMFuncFree(main);
  TVMFuncFree(init);
  TVMFuncFree(load);
  TVMModFree(vm);
  TVMModFree(ex);
}

}  // namespace
