// The tvm-ffi adapter (src/abi/ffi_convention.cc) and the tvm-ffi C functions
// generated v0.22+ code calls (src/abi/ffi_env_api.cc), against hand-written
// functions of tvm-ffi's safe-call signature. The type indices expected here
// are tvm-ffi's (its c_api.h TVMFFITypeIndex), written out as numbers.
#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <vector>

#include "abi/ffi_abi.h"
#include "abi/ffi_convention.h"
#include "abi/ffi_env_api.h"
#include "graphrt/module.h"
#include "graphrt/ndarray.h"
#include "graphrt/packed_func.h"

using namespace graphrt;

namespace {

std::vector<TVMFFIAny> seen;  // the arguments the last recording call got

extern "C" int record_args(void*, const TVMFFIAny* args, int32_t num_args, TVMFFIAny* result) {
  seen.assign(args, args + num_args);
  result->type_index = 1;  // Int
  result->v_int64 = num_args * 10;
  return 0;
}

int deleted = 0;
struct StrObject {
  TVMFFIObject header;
  TVMFFIByteArray bytes;
};
StrObject returned_string;
void count_delete(void*, int flags) {
  if (flags & 1) ++deleted;  // the strong part
}

extern "C" int return_string(void*, const TVMFFIAny*, int32_t, TVMFFIAny* result) {
  static const char text[] = "made by tvm-ffi";
  returned_string.header.combined_ref_count = 1 | (uint64_t{1} << 32);
  returned_string.header.type_index = 65;  // Str
  returned_string.header.deleter = &count_delete;
  returned_string.bytes = TVMFFIByteArray{text, sizeof(text) - 1};
  result->type_index = 65;
  result->v_obj = &returned_string.header;
  return 0;
}

extern "C" int raise_index_error(void*, const TVMFFIAny*, int32_t, TVMFFIAny*) {
  const char* parts[] = {"index ", nullptr, "7", " is out of range"};
  TVMFFIErrorSetRaisedFromCStrParts("IndexError", parts, 4);
  return -1;
}

extern "C" int fail_silently(void*, const TVMFFIAny*, int32_t, TVMFFIAny*) { return -1; }

PackedFunc ffi_function(TVMFFISafeCallType f, const char* name) {
  return make_ref<FunctionNode>(FunctionNode::FfiSafeCall{reinterpret_cast<void*>(f)}, name, Ref<Object>());
}

TEST(FfiConvention, PackedArgumentsArriveAsTvmFfiValues) {
  NDArray a = NDArray::empty({2, 3}, DLDataType{kDLFloat, 32, 1}, DLDevice{kDLCPU, 0});
  ArgList args;
  args.add_int(-5).add_float(2.5).add_ndarray(a).add_string("x").add_device(DLDevice{kDLCPU, 1}).add_handle(nullptr);
  RetValue ret;
  ffi_function(&record_args, "record_args")->call(args.args(), &ret);
  ASSERT_EQ(seen.size(), 6u);
  EXPECT_EQ(seen[0].type_index, 1);  // Int
  EXPECT_EQ(seen[0].v_int64, -5);
  EXPECT_EQ(seen[1].type_index, 3);  // Float
  EXPECT_EQ(seen[1].v_float64, 2.5);
  EXPECT_EQ(seen[2].type_index, 7);  // DLTensor*: the array itself
  EXPECT_EQ(seen[2].v_ptr, static_cast<void*>(a.handle()));
  EXPECT_EQ(seen[3].type_index, 8);  // const char*
  EXPECT_STREQ(seen[3].v_c_str, "x");
  EXPECT_EQ(seen[4].type_index, 6);  // Device
  EXPECT_EQ(seen[4].v_device.device_id, 1);
  EXPECT_EQ(seen[5].type_index, 0);  // None: a null handle is passed as nothing
  for (const TVMFFIAny& v : seen) EXPECT_EQ(v.zero_padding, 0u);
  EXPECT_EQ(ret.code(), kDLInt);
  EXPECT_EQ(ret.as_int(), 60);
}

TEST(FfiConvention, AStringObjectResultIsCopiedAndReleasedOnce) {
  deleted = 0;
  RetValue ret;
  ffi_function(&return_string, "return_string")->call(ArgList().args(), &ret);
  EXPECT_EQ(ret.as_string(), "made by tvm-ffi");
  EXPECT_EQ(deleted, 1);
}

TEST(FfiConvention, ARaisedErrorKeepsItsKindAndMessageAndNamesTheSymbol) {
  RetValue ret;
  try {
    ffi_function(&raise_index_error, "take")->call(ArgList().args(), &ret);
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kOutOfRange);
    EXPECT_NE(std::string(e.what()).find("IndexError: index 7 is out of range"), std::string::npos) << e.what();
    EXPECT_EQ(e.context_value("symbol"), "take");
  }
}

TEST(FfiConvention, AFailureWithoutAMessageSaysSoInsteadOfAnOlderError) {
  set_last_error("an older error");
  RetValue ret;
  try {
    ffi_function(&fail_silently, "quiet")->call(ArgList().args(), &ret);
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()).find("an older error"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("quiet"), std::string::npos) << e.what();
  }
}

TEST(FfiConvention, AGraphrtObjectCannotBePassedAndTheArgumentIsNamed) {
  PackedFunc packed = make_function([](const TVMArgs&, RetValue*) {}, "f");
  RetValue as_arg;
  as_arg.set_function(packed);
  try {
    RetValue ret;
    ffi_function(&record_args, "record_args")->call(as_arg.as_args(), &ret);
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kTypeMismatch);
    EXPECT_EQ(e.context_value("argument"), "0");
  }
}

TEST(FfiEnvApi, FunctionCallConvertsTvmFfiArgumentsForAGraphrtFunction) {
  std::vector<std::string> got;
  PackedFunc f = make_function([&](const TVMArgs& args, RetValue* ret) {
    for (int i = 0; i < args.size(); ++i) got.push_back(std::to_string(args.code(i)));
    got.push_back(args.as_string(1));
    got.push_back(args.as_string(2));
    ret->set_int(args.as_int(0) + 1);
  }, "callee");
  TVMFFIAny args[4];
  std::memset(args, 0, sizeof(args));
  args[0].type_index = 1;  // Int
  args[0].v_int64 = 41;
  args[1].type_index = 11;  // SmallStr of 3 bytes, inline
  args[1].zero_padding = 3;
  std::memcpy(args[1].v_bytes, "abc", 3);
  StrObject str{{1, 65, 0, nullptr}, {"a longer string", 15}};
  args[2].type_index = 65;  // Str object
  args[2].v_obj = &str.header;
  args[3].type_index = 0;  // None
  TVMFFIAny result;
  std::memset(&result, 0, sizeof(result));
  ASSERT_EQ(TVMFFIFunctionCall(f.get(), args, 4, &result), 0) << last_error();
  EXPECT_EQ(result.type_index, 1);
  EXPECT_EQ(result.v_int64, 42);
  const std::vector<std::string> want = {std::to_string(kDLInt), std::to_string(kTVMStr), std::to_string(kTVMStr),
                                         std::to_string(kTVMNullptr), "abc", "a longer string"};
  EXPECT_EQ(got, want);
}

TEST(FfiEnvApi, FunctionCallOfAnUnknownTypeFailsNamingIt) {
  PackedFunc f = make_function([](const TVMArgs&, RetValue*) {}, "callee");
  TVMFFIAny arg;
  std::memset(&arg, 0, sizeof(arg));
  arg.type_index = 71;  // Array
  TVMFFIAny result;
  std::memset(&result, 0, sizeof(result));
  EXPECT_NE(TVMFFIFunctionCall(f.get(), &arg, 1, &result), 0);
  EXPECT_NE(last_error().find("ffi.Array"), std::string::npos) << last_error();
}

int inits = 0;
void* const kMade = reinterpret_cast<void*>(0x1234);
int make_handle(void** out) {
  ++inits;
  *out = kMade;
  return 0;
}
int make_nothing(void** out) {
  *out = nullptr;
  return 0;
}

TEST(FfiEnvApi, HandleInitOnceInitialisesOnceAndRefusesANullHandle) {
  void* handle = nullptr;
  inits = 0;
  EXPECT_EQ(TVMFFIHandleInitOnce(&handle, &make_handle), 0);
  EXPECT_EQ(TVMFFIHandleInitOnce(&handle, &make_handle), 0);
  EXPECT_EQ(handle, kMade);
  EXPECT_EQ(inits, 1);
  void* empty = nullptr;
  EXPECT_NE(TVMFFIHandleInitOnce(&empty, &make_nothing), 0);
  EXPECT_EQ(empty, nullptr);
}

TEST(FfiEnvApi, LookupFromImportsWithoutAContextSaysTheContextIsNotSet) {
  void* out = nullptr;
  EXPECT_NE(TVMFFIEnvModLookupFromImports(nullptr, "kernel", &out), 0);
  EXPECT_NE(last_error().find("__tvm_ffi__library_ctx"), std::string::npos) << last_error();
}

}  // namespace
