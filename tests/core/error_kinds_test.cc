// Errors keep their kind: for each kind, one real trigger, seen through the
// C++ API (graphrt::Error::kind) and through the C API (a graphrt_* call's
// negated kind, TVM's -1 and graphrt_last_error_kind()). Linked against
// libgraphrt as users link it; its own process, because it points the CUDA
// back end at a driver that does not exist.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <new>
#include <string>
#include <thread>
#include <vector>

#include "graphrt/c_api.h"
#include "graphrt/device_api.h"
#include "graphrt/graph_executor.h"
#include "graphrt/runtime.h"
#include "test_support.h"

using namespace graphrt;

namespace {

// Before anything starts the CUDA back end: a machine with a GPU must fail
// the device trigger as one without does.
const bool kNoDriver = setenv("GRAPHRT_CUDA_DRIVER", "/nonexistent/libcuda.so.1", 1) == 0;

// The kind `body` throws; fails the test when it throws nothing or no graphrt::Error.
ErrorKind kind_of(const std::function<void()>& body) {
  try {
    body();
  } catch (const Error& e) {
    return e.kind();
  }
  ADD_FAILURE() << "no graphrt::Error was thrown";
  return ErrorKind::kInternal;
}

std::string write_temp(const std::string& name, const std::string& bytes) {
  const std::string path = testing::TempDir() + "/error_kinds_" + name;
  std::ofstream(path, std::ios::binary) << bytes;
  return path;
}

// A params file cut short: a real corrupt file.
std::string truncated_params() {
  std::vector<uint8_t> bytes = graphrt_test::read_file(graphrt_test::fixture_path("mlp/deploy_params.params"));
  return std::string(bytes.begin(), bytes.begin() + static_cast<long>(bytes.size() / 2));
}

std::shared_ptr<GraphExecutor> mlp_executor() {
  Module factory = load_module(graphrt_test::fixture_path("mlp/deploy_factory.so"));
  return graph_executor_of(call_function(factory->require_function("default"), ArgList().add_device(cpu())).as_module());
}

// A VM program that never ends, for the interrupt trigger.
std::string spin_program() {
  return write_temp("spin.vmasm", R"(
module spin version 1
func forever "0_i" export
entry:
  const.i32 %i0, 1
  br loop
loop:
  br loop
end
)");
}

// For modules loaded from now on: the spin loop must run until interrupted.
void unlimited_vm_budget() {
  call_function(registry_get("graphrt.vm.set_instruction_budget"), ArgList().add_int(int64_t(1) << 62));
}

// Calls `call` on another thread and interrupts it from this one until it
// returns (an interrupt stops the calls running when it is made).
template <typename Call, typename Interrupt>
void interrupt_while_running(Call call, Interrupt interrupt) {
  std::atomic<bool> done{false};
  std::thread worker([&] {
    call();
    done = true;
  });
  while (!done) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
    interrupt();
  }
  worker.join();
}

// ---- C++ ------------------------------------------------------------------

TEST(ErrorKindsCpp, InvalidArgumentCorruptParams) {
  GRAPHRT_REQUIRE_FIXTURES();
  auto ex = mlp_executor();
  EXPECT_EQ(kind_of([&] { ex->load_params(truncated_params()); }), ErrorKind::kInvalidArgument);
}

TEST(ErrorKindsCpp, NotFoundMissingFileAndFunction) {
  EXPECT_EQ(kind_of([] { load_module(testing::TempDir() + "/no_such_model.so"); }), ErrorKind::kNotFound);
  GRAPHRT_REQUIRE_FIXTURES();
  Module lib = load_module(graphrt_test::fixture_path("mlp/deploy_lib.so"));
  EXPECT_EQ(kind_of([&] { lib->require_function("no_such_function"); }), ErrorKind::kNotFound);
}

TEST(ErrorKindsCpp, OutOfRangeOutputIndex) {
  GRAPHRT_REQUIRE_FIXTURES();
  auto ex = mlp_executor();
  EXPECT_EQ(kind_of([&] { ex->get_output(ex->num_outputs()); }), ErrorKind::kOutOfRange);
}

TEST(ErrorKindsCpp, UnsupportedDeviceType) {
  EXPECT_EQ(kind_of([] { NDArray::empty({4}, DLDataType{kDLFloat, 32, 1}, DLDevice{kDLMetal, 0}); }),
            ErrorKind::kUnsupported);
}

TEST(ErrorKindsCpp, ResourceExhaustedHugeArray) {
  // 2^60 bytes: a valid shape no host can allocate.
  EXPECT_EQ(kind_of([] { NDArray::empty({int64_t(1) << 58}, DLDataType{kDLFloat, 32, 1}, cpu()); }),
            ErrorKind::kResourceExhausted);
}

TEST(ErrorKindsCpp, DeviceWithoutDriver) {
  ASSERT_TRUE(kNoDriver);
  if (!device_api_or_null(kDLCUDA)) GTEST_SKIP() << "this build has no CUDA back end";
  EXPECT_EQ(kind_of([] { NDArray::empty({4}, DLDataType{kDLFloat, 32, 1}, cuda(0)); }), ErrorKind::kDevice);
  EXPECT_EQ(kind_of([] { check_device_available(cuda(0)); }), ErrorKind::kDevice);
}

TEST(ErrorKindsCpp, InterruptedVmCall) {
  PackedFunc vm_load = registry_get("graphrt.vm.load");
  if (!vm_load) GTEST_SKIP() << "this build has no VM back end";
  unlimited_vm_budget();
  Module m = call_function(vm_load, ArgList().add_string(spin_program())).as_module();
  PackedFunc forever = m->require_function("forever");
  PackedFunc interrupt = registry_get("graphrt.vm.interrupt");
  ErrorKind kind = ErrorKind::kInternal;
  interrupt_while_running([&] { kind = kind_of([&] { call_function(forever, ArgList()); }); },
                          [&] { call_function(interrupt, ArgList().add_module(m)); });
  EXPECT_EQ(kind, ErrorKind::kInterrupted);
}

TEST(ErrorKindsCpp, TypeMismatchArgument) {
  PackedFunc set_device = registry_get("__tvm_set_device");
  ASSERT_TRUE(set_device);
  EXPECT_EQ(kind_of([&] { call_function(set_device, ArgList().add_string("cpu").add_int(0)); }),
            ErrorKind::kTypeMismatch);
}

TEST(ErrorKindsCpp, FailedPreconditionRunBeforeInputs) {
  GRAPHRT_REQUIRE_FIXTURES();
  auto ex = mlp_executor();
  EXPECT_EQ(kind_of([&] { ex->run(); }), ErrorKind::kFailedPrecondition) << "inputs are not set";
}

TEST(ErrorKindsCpp, InternalFromTvmCheck) {
  // A C packed function whose body reports a TVM InternalError: the kind
  // travels through the C boundary and back into C++.
  PackedFunc f = make_function([](const TVMArgs&, RetValue*) {
    throw Error(ErrorKind::kInternal, "InternalError: check failed");
  });
  TVMFunctionHandle handle = f.release();
  TVMValue ret;
  int code = 0;
  EXPECT_EQ(TVMFuncCall(handle, nullptr, nullptr, 0, &ret, &code), -1);
  EXPECT_EQ(graphrt_last_error_kind(), GRAPHRT_ERROR_INTERNAL);
  EXPECT_EQ(kind_of([] { TVMThrowLastError(); }), ErrorKind::kInternal);
  TVMFuncFree(handle);
}

// ---- context and rethrow ---------------------------------------------------

TEST(ErrorContext, RepeatedKeyKeepsTheOuterValue) {
  Error e(ErrorKind::kNotFound, "no such symbol");
  e.with("file", "lib.o").with("symbol", "f").with("file", "model.tar").with("file", "lib.o");
  EXPECT_EQ(e.context_value("file"), "lib.o") << "the innermost value comes first";
  ASSERT_EQ(e.context().size(), 3u) << "the same value twice is kept once";
  EXPECT_EQ(e.context()[2].first, "file");
  EXPECT_EQ(e.context()[2].second, "model.tar");
  EXPECT_STREQ(e.what(), "no such symbol [file: lib.o (in model.tar), symbol: f]");
}

TEST(ErrorContext, RethrowWithContextKeepsTheKind) {
  try {
    try {
      throw Error(ErrorKind::kOutOfRange, "index 9 out of range");
    } catch (Error& inner) {
      throw inner.with("node", "dense");
    }
  } catch (const Error& outer) {
    EXPECT_EQ(outer.kind(), ErrorKind::kOutOfRange);
    EXPECT_EQ(outer.context_value("node"), "dense");
  }
}

TEST(ErrorContext, KindNamesAreStable) {
  EXPECT_STREQ(error_kind_name(ErrorKind::kNotFound), "not found");
  EXPECT_STREQ(error_kind_name(ErrorKind::kResourceExhausted), "resource exhausted");
  EXPECT_STREQ(error_kind_name(static_cast<ErrorKind>(99)), "internal");
  EXPECT_EQ(Error("plain").kind(), ErrorKind::kInvalidArgument);
}

// ---- C ---------------------------------------------------------------------

// Runs a graphrt_* call: expects the negated kind back and the same kind from
// graphrt_last_error_kind().
void expect_graphrt_kind(int rc, int kind) {
  EXPECT_EQ(rc, -kind) << TVMGetLastError();
  EXPECT_EQ(graphrt_last_error_kind(), kind) << TVMGetLastError();
}

// TVM's own calls keep -1; the kind is still recorded.
void expect_tvm_kind(int rc, int kind) {
  EXPECT_EQ(rc, -1) << TVMGetLastError();
  EXPECT_EQ(graphrt_last_error_kind(), kind) << TVMGetLastError();
}

TEST(ErrorKindsC, InvalidArgumentCorruptParams) {
  GRAPHRT_REQUIRE_FIXTURES();
  const std::string bytes = truncated_params();
  int count = 0;
  const char* names = nullptr;
  TVMArrayHandle* arrays = nullptr;
  expect_graphrt_kind(graphrt_params_load(bytes.data(), bytes.size(), &count, &names, &arrays),
                      GRAPHRT_ERROR_INVALID_ARGUMENT);
}

TEST(ErrorKindsC, NotFoundMissingFileAndGlobal) {
  TVMModuleHandle mod = nullptr;
  const std::string missing = testing::TempDir() + "/no_such_model.so";
  expect_graphrt_kind(graphrt_module_load(missing.c_str(), nullptr, &mod), GRAPHRT_ERROR_NOT_FOUND);
  expect_tvm_kind(TVMModLoadFromFile(missing.c_str(), "so", &mod), GRAPHRT_ERROR_NOT_FOUND);
  // A successful call leaves the last failure's kind in place.
  int threads = 0;
  ASSERT_EQ(graphrt_get_num_threads(&threads), 0);
  EXPECT_EQ(graphrt_last_error_kind(), GRAPHRT_ERROR_NOT_FOUND);
}

TEST(ErrorKindsC, OutOfRangeImportIndex) {
  GRAPHRT_REQUIRE_FIXTURES();
  const std::string path = graphrt_test::fixture_path("mlp/deploy_lib.so");
  TVMModuleHandle mod = nullptr;
  ASSERT_EQ(graphrt_module_load(path.c_str(), nullptr, &mod), 0) << TVMGetLastError();
  int n = 0;
  ASSERT_EQ(graphrt_module_num_imports(mod, &n), 0);
  TVMModuleHandle import = nullptr;
  expect_graphrt_kind(graphrt_module_get_import(mod, n, &import), GRAPHRT_ERROR_OUT_OF_RANGE);
  TVMModFree(mod);
}

TEST(ErrorKindsC, UnsupportedLoadFromMemoryWithDlopen) {
  const char bytes[] = "\x7f" "ELF";
  TVMModuleHandle mod = nullptr;
  expect_graphrt_kind(graphrt_module_load_from_memory(bytes, sizeof(bytes), "dlopen", &mod), GRAPHRT_ERROR_UNSUPPORTED);
  const int64_t shape[] = {4};
  TVMArrayHandle array = nullptr;
  expect_tvm_kind(TVMArrayAlloc(shape, 1, kDLFloat, 32, 1, kDLMetal, 0, &array), GRAPHRT_ERROR_UNSUPPORTED);
}

TEST(ErrorKindsC, ResourceExhaustedHugeArray) {
  const int64_t shape[] = {int64_t(1) << 58};
  TVMArrayHandle array = nullptr;
  expect_tvm_kind(TVMArrayAlloc(shape, 1, kDLFloat, 32, 1, kDLCPU, 0, &array), GRAPHRT_ERROR_RESOURCE_EXHAUSTED);
}

TEST(ErrorKindsC, DeviceWithoutDriver) {
  if (!device_api_or_null(kDLCUDA)) GTEST_SKIP() << "this build has no CUDA back end";
  const int64_t shape[] = {4};
  TVMArrayHandle array = nullptr;
  expect_tvm_kind(TVMArrayAlloc(shape, 1, kDLFloat, 32, 1, kDLCUDA, 0, &array), GRAPHRT_ERROR_DEVICE);
  // Availability is an answer, not a failure.
  int available = 1;
  const char* reason = nullptr;
  ASSERT_EQ(graphrt_device_available(kDLCUDA, 0, &available, &reason), 0);
  EXPECT_EQ(available, 0);
  EXPECT_NE(std::string(reason).find("libcuda.so.1 not found"), std::string::npos) << reason;
}

TEST(ErrorKindsC, InterruptedVmCall) {
  TVMFunctionHandle load = nullptr, interrupt = nullptr;
  ASSERT_EQ(TVMFuncGetGlobal("graphrt.vm.load", &load), 0);
  if (!load) GTEST_SKIP() << "this build has no VM back end";
  ASSERT_EQ(TVMFuncGetGlobal("graphrt.vm.interrupt", &interrupt), 0);
  unlimited_vm_budget();
  const std::string path = spin_program();
  TVMValue arg, ret;
  int code = kTVMStr, ret_code = 0;
  arg.v_str = path.c_str();
  ASSERT_EQ(TVMFuncCall(load, &arg, &code, 1, &ret, &ret_code), 0) << TVMGetLastError();
  ASSERT_EQ(ret_code, kTVMModuleHandle);
  TVMModuleHandle mod = ret.v_handle;
  TVMFunctionHandle forever = nullptr;
  ASSERT_EQ(TVMModGetFunction(mod, "forever", 0, &forever), 0);
  int rc = 0, kind = 0;
  interrupt_while_running(
      [&] {
        TVMValue out;
        int out_code = 0;
        rc = TVMFuncCall(forever, nullptr, nullptr, 0, &out, &out_code);
        kind = graphrt_last_error_kind();  // the worker's own last error
      },
      [&] {
        TVMValue m;
        m.v_handle = mod;
        int m_code = kTVMModuleHandle;
        TVMValue out;
        int out_code = 0;
        TVMFuncCall(interrupt, &m, &m_code, 1, &out, &out_code);
      });
  EXPECT_EQ(rc, -1);
  EXPECT_EQ(kind, GRAPHRT_ERROR_INTERRUPTED);
  TVMFuncFree(forever);
  TVMFuncFree(load);
  TVMFuncFree(interrupt);
  TVMModFree(mod);
}

TEST(ErrorKindsC, TypeMismatchNullHandle) {
  const char* key = nullptr;
  expect_graphrt_kind(graphrt_module_type_key(nullptr, &key), GRAPHRT_ERROR_TYPE_MISMATCH);
  TVMFunctionHandle set_device = nullptr;
  ASSERT_EQ(TVMFuncGetGlobal("__tvm_set_device", &set_device), 0);
  TVMValue args[2];
  int codes[2] = {kTVMStr, kDLInt};
  args[0].v_str = "cpu";
  args[1].v_int64 = 0;
  TVMValue ret;
  int ret_code = 0;
  expect_tvm_kind(TVMFuncCall(set_device, args, codes, 2, &ret, &ret_code), GRAPHRT_ERROR_TYPE_MISMATCH);
  TVMFuncFree(set_device);
}

TEST(ErrorKindsC, FailedPreconditionRunBeforeInputs) {
  GRAPHRT_REQUIRE_FIXTURES();
  auto ex = mlp_executor();
  PackedFunc run = make_function([ex](const TVMArgs&, RetValue*) { ex->run(); });
  TVMFunctionHandle handle = run.release();
  TVMValue ret;
  int code = 0;
  expect_tvm_kind(TVMFuncCall(handle, nullptr, nullptr, 0, &ret, &code), GRAPHRT_ERROR_FAILED_PRECONDITION);
  TVMFuncFree(handle);
}

TEST(ErrorKindsC, InternalAndTvmPrefixes) {
  // A kernel or a front end reports through TVMAPISetLastError; a TVM-style
  // class prefix names the kind, no prefix is an invalid argument.
  TVMAPISetLastError("InternalError: check failed: x > 0");
  EXPECT_EQ(graphrt_last_error_kind(), GRAPHRT_ERROR_INTERNAL);
  TVMAPISetLastError("IndexError: index 3 out of range");
  EXPECT_EQ(graphrt_last_error_kind(), GRAPHRT_ERROR_OUT_OF_RANGE);
  TVMAPISetLastError("Assert fail: shape mismatch");
  EXPECT_EQ(graphrt_last_error_kind(), GRAPHRT_ERROR_INVALID_ARGUMENT);
}

TEST(ErrorKindsC, BadAllocBecomesResourceExhausted) {
  PackedFunc f = make_function([](const TVMArgs&, RetValue*) { throw std::bad_alloc(); });
  TVMFunctionHandle handle = f.release();
  TVMValue ret;
  int code = 0;
  expect_tvm_kind(TVMFuncCall(handle, nullptr, nullptr, 0, &ret, &code), GRAPHRT_ERROR_RESOURCE_EXHAUSTED);
  TVMFuncFree(handle);
}

}  // namespace
