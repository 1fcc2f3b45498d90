// The C API: errors come back as codes + messages, never exceptions.
#include "fixture_cases.h"
#include "graphrt/c_api.h"

TEST(CApi, LoadCallAndErrors) {
  TVMModuleHandle mod = nullptr;
  EXPECT_EQ(-1, graphrt_module_load("/no/such/model.so", nullptr, &mod));
  EXPECT_NE(std::string(TVMGetLastError()).find("/no/such/model.so"), std::string::npos);
  EXPECT_EQ(-1, TVMModLoadFromFile("/tmp/model.onnx", nullptr, &mod));
  EXPECT_NE(std::string(TVMGetLastError()).find("onnx"), std::string::npos);
  if (graphrt_test::fixtures_dir().empty()) GTEST_SKIP() << "fixtures folder not found";

  ASSERT_EQ(0, graphrt_module_load(graphrt_test::fixture_path("multi_io/deploy_lib.so").c_str(), nullptr, &mod));
  TVMFunctionHandle fn = nullptr;
  ASSERT_EQ(0, TVMModGetFunction(mod, "tvmgen_default_fused_multiply", 0, &fn));
  ASSERT_NE(fn, nullptr);
  TVMFunctionHandle missing = reinterpret_cast<TVMFunctionHandle>(1);
  ASSERT_EQ(0, TVMModGetFunction(mod, "nope", 1, &missing));
  EXPECT_EQ(missing, nullptr);

  int64_t shape[2] = {2, 3};
  TVMArrayHandle in = nullptr, out = nullptr;
  ASSERT_EQ(0, TVMArrayAlloc(shape, 2, kDLInt, 32, 1, kDLCPU, 0, &in));
  ASSERT_EQ(0, TVMArrayAlloc(shape, 2, kDLInt, 32, 1, kDLCPU, 0, &out));
  int32_t values[6] = {1, 2, 3, 4, 5, 6};
  ASSERT_EQ(0, TVMArrayCopyFromBytes(in, values, sizeof(values)));
  EXPECT_EQ(-1, TVMArrayCopyFromBytes(in, values, 5));
  TVMValue args[2];
  int codes[2] = {kTVMNDArrayHandle, kTVMNDArrayHandle};
  args[0].v_handle = in;
  args[1].v_handle = out;
  TVMValue ret;
  int ret_code;
  ASSERT_EQ(0, TVMFuncCall(fn, args, codes, 2, &ret, &ret_code)) << TVMGetLastError();
  int32_t result[6];
  ASSERT_EQ(0, TVMArrayCopyToBytes(out, result, sizeof(result)));
  for (int i = 0; i < 6; ++i) EXPECT_EQ(result[i], values[i] * 3);

  // Wrong argument count: the kernel's own check, reported through the C API.
  EXPECT_EQ(-1, TVMFuncCall(fn, args, codes, 1, &ret, &ret_code));
  EXPECT_NE(std::string(TVMGetLastError()).find("num_args"), std::string::npos) << TVMGetLastError();

  TVMArrayFree(in);
  TVMArrayFree(out);
  TVMFuncFree(fn);
  TVMModFree(mod);
}

TEST(CApi, GlobalRegistryAndCallbacks) {
  TVMFunctionHandle f = nullptr;
  auto body = [](TVMValue* args, int* codes, int n, TVMRetValueHandle ret, void*) -> int {
    if (n != 1 || codes[0] != kTVMArgInt) {
      TVMAPISetLastError("want one int");
      return -1;
    }
    TVMValue v;
    v.v_int64 = args[0].v_int64 * 2;
    int code = kTVMArgInt;
    return TVMCFuncSetReturn(ret, &v, &code, 1);
  };
  ASSERT_EQ(0, TVMFuncCreateFromCFunc(body, nullptr, nullptr, &f));
  ASSERT_EQ(0, TVMFuncRegisterGlobal("test.double", f, 0));
  EXPECT_EQ(-1, TVMFuncRegisterGlobal("test.double", f, 0));
  TVMFunctionHandle g = nullptr;
  ASSERT_EQ(0, TVMFuncGetGlobal("test.double", &g));
  TVMValue arg, ret;
  arg.v_int64 = 21;
  int code = kTVMArgInt, ret_code = 0;
  ASSERT_EQ(0, TVMFuncCall(g, &arg, &code, 1, &ret, &ret_code));
  EXPECT_EQ(ret_code, kTVMArgInt);
  EXPECT_EQ(ret.v_int64, 42);
  code = kTVMStr;
  arg.v_str = "x";
  EXPECT_EQ(-1, TVMFuncCall(g, &arg, &code, 1, &ret, &ret_code));
  EXPECT_STREQ(TVMGetLastError(), "want one int");
  TVMFuncFree(g);
  TVMFuncFree(f);
  TVMFuncRemoveGlobal("test.double");
}
