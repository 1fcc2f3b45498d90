// The C API: errors come back as codes + messages, never exceptions.
#include "fixture_cases.h"
#include "graphrt/c_api.h"
#include "graphrt/ndarray.h"
#include "graphrt/object.h"

#include <cstring>
#include <thread>

TEST(CApi, LoadCallAndErrors) {
  TVMModuleHandle mod = nullptr;
  EXPECT_EQ(-GRAPHRT_ERROR_NOT_FOUND, graphrt_module_load("/no/such/model.so", nullptr, &mod));
  EXPECT_NE(std::string(TVMGetLastError()).find("/no/such/model.so"), std::string::npos);
  EXPECT_EQ(-1, TVMModLoadFromFile("/tmp/model.onnx", nullptr, &mod));  // TVM's calls keep -1
  EXPECT_EQ(graphrt_last_error_kind(), GRAPHRT_ERROR_UNSUPPORTED);
  EXPECT_NE(std::string(TVMGetLastError()).find("onnx"), std::string::npos);
  GRAPHRT_REQUIRE_FIXTURES();

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

// ---- TVM v0.18 C API calls beyond the basics ----

extern "C" int TVMArrayGetTypeIndex(TVMArrayHandle handle, unsigned* out_tindex);

TEST(CApi, PythonErrorSlotAndBacktrace) {
  int python_exception = 0;
  TVMAPISetLastError("plain failure");
  EXPECT_EQ(TVMGetLastPythonError(), nullptr);
  EXPECT_EQ(TVMGetLastBacktrace(), nullptr);  // graphrt errors carry context, not backtraces

  TVMAPISetLastPythonError(&python_exception);
  EXPECT_EQ(TVMGetLastPythonError(), &python_exception);
  EXPECT_NE(std::string(TVMGetLastError()).find("Python exception"), std::string::npos) << TVMGetLastError();
  std::thread([] { EXPECT_EQ(TVMGetLastPythonError(), nullptr); }).join();  // per thread

  TVMAPISetLastError("newer failure");  // a new error replaces the Python one
  EXPECT_EQ(TVMGetLastPythonError(), nullptr);
  EXPECT_STREQ(TVMGetLastError(), "newer failure");
  TVMDropLastPythonError();  // nothing to drop: the message stays
  EXPECT_STREQ(TVMGetLastError(), "newer failure");

  TVMAPISetLastPythonError(&python_exception);
  TVMDropLastPythonError();
  EXPECT_EQ(TVMGetLastPythonError(), nullptr);
  EXPECT_STREQ(TVMGetLastError(), "");
}

TEST(CApi, ThrowLastErrorRethrowsTheMessage) {
  TVMModuleHandle mod = nullptr;
  ASSERT_NE(0, TVMModLoadFromFile("/no/such/lib.so", "so", &mod));
  try {
    TVMThrowLastError();
    FAIL() << "TVMThrowLastError returned";
  } catch (const graphrt::Error& e) {
    EXPECT_NE(std::string(e.what()).find("/no/such/lib.so"), std::string::npos) << e.what();
  }
}

namespace {
int32_t function_refs(TVMFunctionHandle f) { return static_cast<graphrt::Object*>(f)->ref_count(); }
int32_t array_refs(TVMArrayHandle a) { return graphrt::NDArrayNode::from_handle(a)->refs.load(); }
int noop_callback(TVMValue*, int*, int, TVMRetValueHandle, void*) { return 0; }
}  // namespace

TEST(CApi, CbArgToReturnTakesAReference) {
  TVMFunctionHandle f = nullptr;
  ASSERT_EQ(0, TVMFuncCreateFromCFunc(noop_callback, nullptr, nullptr, &f));
  TVMValue value;
  value.v_handle = f;
  int code = kTVMPackedFuncHandle;
  ASSERT_EQ(1, function_refs(f));
  ASSERT_EQ(0, TVMCbArgToReturn(&value, &code));
  EXPECT_EQ(2, function_refs(f));
  EXPECT_EQ(code, kTVMPackedFuncHandle);
  EXPECT_EQ(value.v_handle, f);
  TVMFuncFree(value.v_handle);

  // A moved object (rvalue-reference argument): its slot's reference moves over.
  graphrt::Object* slot = static_cast<graphrt::Object*>(f);
  value.v_handle = &slot;
  code = kTVMObjectRValueRefArg;
  ASSERT_EQ(0, TVMCbArgToReturn(&value, &code));
  EXPECT_EQ(code, kTVMPackedFuncHandle);
  EXPECT_EQ(value.v_handle, f);
  EXPECT_EQ(slot, nullptr);
  EXPECT_EQ(1, function_refs(f));
  TVMFuncFree(f);

  int64_t shape[1] = {4};
  TVMArrayHandle a = nullptr;
  ASSERT_EQ(0, TVMArrayAlloc(shape, 1, kDLFloat, 32, 1, kDLCPU, 0, &a));
  value.v_handle = a;
  code = kTVMNDArrayHandle;
  ASSERT_EQ(0, TVMCbArgToReturn(&value, &code));
  EXPECT_EQ(2, array_refs(a));
  TVMArrayFree(a);
  TVMArrayFree(a);

  value.v_int64 = 7;
  code = kTVMArgInt;
  ASSERT_EQ(0, TVMCbArgToReturn(&value, &code));
  EXPECT_EQ(value.v_int64, 7);
  EXPECT_EQ(code, kTVMArgInt);

  value.v_str = "text";
  code = kTVMStr;
  EXPECT_NE(0, TVMCbArgToReturn(&value, &code));
  EXPECT_NE(std::string(TVMGetLastError()).find("str"), std::string::npos) << TVMGetLastError();
}

TEST(CApi, BytesReturnAndByteArrayFree) {
  auto body = [](TVMValue*, int*, int, TVMRetValueHandle ret, void*) -> int {
    static const char payload[] = {'a', '\0', 'b'};
    TVMByteArray bytes{payload, sizeof(payload)};
    TVMValue v;
    v.v_handle = &bytes;
    int code = kTVMBytes;
    return TVMCFuncSetReturn(ret, &v, &code, 1);
  };
  TVMFunctionHandle f = nullptr;
  ASSERT_EQ(0, TVMFuncCreateFromCFunc(body, nullptr, nullptr, &f));
  TVMValue ret;
  int ret_code = -1;
  ASSERT_EQ(0, TVMFuncCall(f, nullptr, nullptr, 0, &ret, &ret_code)) << TVMGetLastError();
  ASSERT_EQ(ret_code, kTVMBytes);
  auto* bytes = static_cast<TVMByteArray*>(ret.v_handle);
  ASSERT_EQ(bytes->size, 3u);
  EXPECT_EQ(std::string(bytes->data, bytes->size), std::string("a\0b", 3));
  EXPECT_EQ(0, TVMByteArrayFree(bytes));
  EXPECT_EQ(0, TVMByteArrayFree(nullptr));
  TVMByteArray foreign{"x", 1};
  EXPECT_NE(0, TVMByteArrayFree(&foreign));
  EXPECT_NE(std::string(TVMGetLastError()).find("not a byte array"), std::string::npos) << TVMGetLastError();
  TVMFuncFree(f);
}

TEST(CApi, ObjectTypeIndicesFollowTvm) {
  unsigned index = 99;
  char* key = nullptr;
  ASSERT_EQ(0, TVMObjectTypeKey2Index("runtime.Module", &index));
  EXPECT_EQ(index, 1u);
  ASSERT_EQ(0, TVMObjectTypeKey2Index("runtime.PackedFunc", &index));
  EXPECT_EQ(index, 7u);
  ASSERT_EQ(0, TVMObjectTypeIndex2Key(2, &key));
  EXPECT_STREQ(key, "runtime.NDArray");
  ASSERT_EQ(0, TVMObjectTypeIndex2Key(0, &key));
  EXPECT_STREQ(key, "runtime.Object");
  EXPECT_NE(0, TVMObjectTypeKey2Index("no.such.Type", &index));
  EXPECT_NE(std::string(TVMGetLastError()).find("no.such.Type"), std::string::npos);
  EXPECT_NE(0, TVMObjectTypeIndex2Key(100000, &key));
  EXPECT_NE(std::string(TVMGetLastError()).find("100000"), std::string::npos);

  int derived = -1;
  ASSERT_EQ(0, TVMObjectDerivedFrom(7, 0, &derived));
  EXPECT_EQ(derived, 1);
  ASSERT_EQ(0, TVMObjectDerivedFrom(7, 7, &derived));
  EXPECT_EQ(derived, 1);
  ASSERT_EQ(0, TVMObjectDerivedFrom(7, 1, &derived));
  EXPECT_EQ(derived, 0);
  EXPECT_NE(0, TVMObjectDerivedFrom(100000, 0, &derived));

  TVMFunctionHandle system_lib = nullptr;
  ASSERT_EQ(0, TVMFuncGetGlobal("runtime.SystemLib", &system_lib));
  ASSERT_EQ(0, TVMObjectGetTypeIndex(system_lib, &index));
  EXPECT_EQ(index, 7u);
  TVMValue ret;
  int ret_code = -1;
  ASSERT_EQ(0, TVMFuncCall(system_lib, nullptr, nullptr, 0, &ret, &ret_code)) << TVMGetLastError();
  ASSERT_EQ(ret_code, kTVMModuleHandle);
  ASSERT_EQ(0, TVMObjectGetTypeIndex(ret.v_handle, &index));
  EXPECT_EQ(index, 1u);
  TVMModFree(ret.v_handle);
  TVMFuncFree(system_lib);
  EXPECT_NE(0, TVMObjectGetTypeIndex(nullptr, &index));

  int64_t shape[1] = {1};
  TVMArrayHandle a = nullptr;
  ASSERT_EQ(0, TVMArrayAlloc(shape, 1, kDLFloat, 32, 1, kDLCPU, 0, &a));
  ASSERT_EQ(0, TVMArrayGetTypeIndex(a, &index));
  EXPECT_EQ(index, 2u);
  TVMArrayFree(a);
}

TEST(CApi, AllocDataSpaceWithScope) {
  DLDevice cpu{kDLCPU, 0};
  DLDataType f32{kDLFloat, 32, 1};
  int64_t shape[2] = {3, 5};
  void* data = nullptr;
  ASSERT_EQ(0, TVMDeviceAllocDataSpaceWithScope(cpu, 2, shape, f32, nullptr, &data)) << TVMGetLastError();
  ASSERT_NE(data, nullptr);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(data) % 64, 0u);
  std::memset(data, 0x5a, 3 * 5 * sizeof(float));  // the whole tensor fits (ASan checks)
  EXPECT_EQ(0, TVMDeviceFreeDataSpace(cpu, data));
  ASSERT_EQ(0, TVMDeviceAllocDataSpaceWithScope(cpu, 2, shape, f32, "global", &data));
  EXPECT_EQ(0, TVMDeviceFreeDataSpace(cpu, data));
  EXPECT_NE(0, TVMDeviceAllocDataSpaceWithScope(cpu, 2, shape, f32, "global.texture", &data));
  EXPECT_NE(std::string(TVMGetLastError()).find("global.texture"), std::string::npos) << TVMGetLastError();
  EXPECT_NE(0, TVMDeviceAllocDataSpaceWithScope(cpu, -1, shape, f32, nullptr, &data));
}

TEST(CApi, StreamStreamSynchronize) {
  EXPECT_EQ(0, TVMStreamStreamSynchronize(kDLCPU, 0, nullptr, nullptr)) << TVMGetLastError();
  EXPECT_NE(0, TVMStreamStreamSynchronize(kDLMetal, 0, nullptr, nullptr));  // no Metal device API
  EXPECT_NE(std::string(TVMGetLastError()).find("no device API"), std::string::npos) << TVMGetLastError();
  // A device type outside DLPack's enum is an error, not undefined behaviour (UBSan checks).
  EXPECT_NE(0, TVMStreamStreamSynchronize(99, 0, nullptr, nullptr));
  EXPECT_NE(std::string(TVMGetLastError()).find("device type 99"), std::string::npos) << TVMGetLastError();
  EXPECT_NE(0, TVMSynchronize(99, 0, nullptr));
  int available = 1;
  const char* reason = nullptr;
  ASSERT_EQ(0, graphrt_device_available(99, 0, &available, &reason));
  EXPECT_EQ(available, 0);
  EXPECT_NE(std::string(reason).find("device type 99"), std::string::npos) << reason;
}

namespace {
int32_t object_refs(TVMObjectHandle h) { return static_cast<graphrt::Object*>(h)->ref_count(); }
}  // namespace

// The references a block carries after its arguments are dropped before the call, whether it
// then succeeds or fails; a block refused for its counts or its frees' type codes drops none.
TEST(CApi, CallBlockDropsTheCallersFrees) {
  int64_t shape[1] = {2};
  TVMArrayHandle a = nullptr;
  ASSERT_EQ(0, TVMArrayAlloc(shape, 1, kDLFloat, 32, 1, kDLCPU, 0, &a));
  TVMFunctionHandle make_array = nullptr, array_size = nullptr;
  ASSERT_EQ(0, TVMFuncGetGlobal("runtime.Array", &make_array));
  ASSERT_EQ(0, TVMFuncGetGlobal("runtime.ArraySize", &array_size));
  ASSERT_NE(make_array, nullptr);
  ASSERT_NE(array_size, nullptr);
  TVMValue args[4];
  int codes[4];
  graphrt_call_block block{};
  block.function = make_array;
  block.args = args;
  block.type_codes = codes;
  args[0].v_handle = a;
  codes[0] = kTVMNDArrayHandle;
  block.num_args = 1;
  ASSERT_EQ(0, graphrt_function_call_block(&block)) << TVMGetLastError();
  ASSERT_EQ(block.ret_type_code, kTVMObjectHandle);
  TVMObjectHandle tuple = block.ret_value.v_handle;  // holds one reference to a
  ASSERT_EQ(0, TVMObjectRetain(tuple));
  ASSERT_EQ(object_refs(tuple), 2);
  ASSERT_EQ(array_refs(a), 2);
  TVMValue ret;
  int ret_code;
  ASSERT_EQ(0, TVMFuncCall(make_array, args, codes, 1, &ret, &ret_code)) << TVMGetLastError();
  TVMObjectHandle second = ret.v_handle;  // another reference to a, through a second tuple
  ASSERT_EQ(array_refs(a), 3);

  // One argument, then three frees: the second tuple, one reference of the first, a NULL.
  args[1].v_handle = second;
  codes[1] = kTVMObjectHandle;
  args[2].v_handle = tuple;
  codes[2] = kTVMObjectHandle;
  args[3].v_handle = nullptr;
  codes[3] = kTVMNDArrayHandle;
  block.num_free = 3;

  // Refused blocks drop nothing.
  block.num_free = -1;
  EXPECT_EQ(-GRAPHRT_ERROR_INVALID_ARGUMENT, graphrt_function_call_block(&block));
  EXPECT_NE(std::string(TVMGetLastError()).find("negative free count -1"), std::string::npos) << TVMGetLastError();
  block.num_free = 3;
  codes[3] = kTVMPackedFuncHandle;
  EXPECT_EQ(-GRAPHRT_ERROR_INVALID_ARGUMENT, graphrt_function_call_block(&block));
  EXPECT_NE(std::string(TVMGetLastError()).find("value 3 to free has type code 10"), std::string::npos)
      << TVMGetLastError();
  codes[3] = kTVMNDArrayHandle;
  block.args = nullptr;
  EXPECT_EQ(-GRAPHRT_ERROR_INVALID_ARGUMENT, graphrt_function_call_block(&block));
  EXPECT_NE(std::string(TVMGetLastError()).find("1 arguments and 3 frees but no argument"), std::string::npos)
      << TVMGetLastError();
  block.args = args;
  EXPECT_EQ(object_refs(tuple), 2);
  EXPECT_EQ(array_refs(a), 3);

  // Accepted: the frees go before the call (the new tuple takes its own reference to a).
  ASSERT_EQ(0, graphrt_function_call_block(&block)) << TVMGetLastError();
  ASSERT_EQ(block.ret_type_code, kTVMObjectHandle);
  TVMObjectHandle third = block.ret_value.v_handle;
  EXPECT_EQ(object_refs(tuple), 1);
  EXPECT_EQ(array_refs(a), 3);  // a, the first tuple's, the third's (the second tuple is gone)

  // A call that fails still drops its frees: ArraySize of an array is a type error.
  block.function = array_size;
  args[1].v_handle = third;
  block.num_free = 1;
  EXPECT_NE(0, graphrt_function_call_block(&block));
  EXPECT_EQ(array_refs(a), 2);
  // So does a block with frees and no function (the error comes after them).
  block.function = nullptr;
  args[0].v_handle = tuple;
  codes[0] = kTVMObjectHandle;
  block.num_args = 0;
  block.num_free = 1;
  EXPECT_EQ(-GRAPHRT_ERROR_TYPE_MISMATCH, graphrt_function_call_block(&block));
  EXPECT_NE(std::string(TVMGetLastError()).find("null function handle"), std::string::npos);
  EXPECT_EQ(array_refs(a), 1);  // the first tuple dropped its reference with its last one
  EXPECT_EQ(0, TVMArrayFree(a));
  EXPECT_EQ(0, TVMFuncFree(make_array));
  EXPECT_EQ(0, TVMFuncFree(array_size));
}

TEST(CApi, CallBlockCallsAndFillsTheResult) {
  graphrt_call_block block{};
  EXPECT_EQ(-GRAPHRT_ERROR_TYPE_MISMATCH, graphrt_function_call_block(nullptr));
  EXPECT_NE(std::string(TVMGetLastError()).find("null block"), std::string::npos);
  EXPECT_EQ(-GRAPHRT_ERROR_TYPE_MISMATCH, graphrt_function_call_block(&block));
  EXPECT_NE(std::string(TVMGetLastError()).find("null function handle"), std::string::npos);
  GRAPHRT_REQUIRE_FIXTURES();

  TVMModuleHandle mod = nullptr;
  ASSERT_EQ(0, graphrt_module_load(graphrt_test::fixture_path("multi_io/deploy_lib.so").c_str(), nullptr, &mod));
  TVMFunctionHandle fn = nullptr;
  ASSERT_EQ(0, TVMModGetFunction(mod, "tvmgen_default_fused_multiply", 0, &fn));
  int64_t shape[2] = {2, 3};
  TVMArrayHandle in = nullptr, out = nullptr;
  ASSERT_EQ(0, TVMArrayAlloc(shape, 2, kDLInt, 32, 1, kDLCPU, 0, &in));
  ASSERT_EQ(0, TVMArrayAlloc(shape, 2, kDLInt, 32, 1, kDLCPU, 0, &out));
  int32_t values[6] = {1, 2, 3, 4, 5, 6};
  ASSERT_EQ(0, TVMArrayCopyFromBytes(in, values, sizeof(values)));
  TVMValue args[2];
  int codes[2] = {kTVMNDArrayHandle, kTVMNDArrayHandle};
  args[0].v_handle = in;
  args[1].v_handle = out;
  block.function = fn;
  block.args = args;
  block.type_codes = codes;
  block.num_args = -1;
  EXPECT_EQ(-GRAPHRT_ERROR_INVALID_ARGUMENT, graphrt_function_call_block(&block));
  block.num_args = 2;
  block.args = nullptr;
  EXPECT_EQ(-GRAPHRT_ERROR_INVALID_ARGUMENT, graphrt_function_call_block(&block));
  block.args = args;
  ASSERT_EQ(0, graphrt_function_call_block(&block)) << TVMGetLastError();
  EXPECT_EQ(block.ret_type_code, kTVMNullptr);
  EXPECT_EQ(block.ret_type_index, 0u);
  EXPECT_GE(block.elapsed_ns, 0);
  int32_t result[6];
  ASSERT_EQ(0, TVMArrayCopyToBytes(out, result, sizeof(result)));
  int32_t reference[6];
  TVMValue ret;
  int ret_code;
  ASSERT_EQ(0, TVMFuncCall(fn, args, codes, 2, &ret, &ret_code)) << TVMGetLastError();
  ASSERT_EQ(0, TVMArrayCopyToBytes(out, reference, sizeof(reference)));
  EXPECT_EQ(0, std::memcmp(result, reference, sizeof(result)));
  for (int i = 0; i < 6; ++i) EXPECT_EQ(result[i], values[i] * 3);
  // The kernel's own error (one argument short) comes back as the block's code, as TVMFuncCall's.
  block.num_args = 1;
  EXPECT_NE(0, graphrt_function_call_block(&block));
  EXPECT_EQ(block.ret_type_code, kTVMNullptr);

  // An object result carries its type index: a global function returning an Array.
  TVMFunctionHandle make_array = nullptr;
  ASSERT_EQ(0, TVMFuncGetGlobal("runtime.Array", &make_array));
  ASSERT_NE(make_array, nullptr);
  graphrt_call_block make{};
  make.function = make_array;
  make.args = args;
  make.type_codes = codes;
  make.num_args = 1;
  ASSERT_EQ(0, graphrt_function_call_block(&make)) << TVMGetLastError();
  ASSERT_EQ(make.ret_type_code, kTVMObjectHandle);
  unsigned index = 0, array_index = 1;
  ASSERT_EQ(0, TVMObjectGetTypeIndex(make.ret_value.v_handle, &index));
  ASSERT_EQ(0, TVMObjectTypeKey2Index("Array", &array_index));
  EXPECT_EQ(make.ret_type_index, index);
  EXPECT_EQ(index, array_index);
  EXPECT_EQ(0, TVMObjectFree(make.ret_value.v_handle));
  EXPECT_EQ(0, TVMFuncFree(make_array));
  EXPECT_EQ(0, TVMArrayFree(in));
  EXPECT_EQ(0, TVMArrayFree(out));
  EXPECT_EQ(0, TVMFuncFree(fn));
  EXPECT_EQ(0, TVMModFree(mod));
}
