// The VM through the C API alone (graphrt/c_api.h, TVMFuncCall): list
// arguments built with graphrt.vm.list, list results and several results read
// back with graphrt.vm.list_size / list_get / list_types, and a dynamic
// module of ABI v2 whose list results reach the caller.
#include <gtest/gtest.h>

#include <fstream>
#include <string>
#include <vector>

#include "graphrt/c_api.h"

namespace {

const char* kProgram = R"(
module lists version 1
import sample2.pair "0if_r"
func stats "0r_iIr" export
entry:
  list.size %i0, %r0
  const.i32 %i1, 0
  const.i64 %I0, 0
  const.i32 %i2, 1
  br loop
loop:
  cmp.lt.s.i32 %i3, %i1, %i0
  br_if %i3, body, done
body:
  list.get.i64 %I1, %r0, %i1
  add.i64 %I0, %I0, %I1
  add.i32 %i1, %i1, %i2
  br loop
done:
  const.i32 %i4, 2
  list.alloc %r1, %i4
  list.resize %r1, %i4
  const.i32 %i5, 0
  list.set.i64 %r1, %i5, %I0
  list.set.ref %r1, %i2, %r0
  ret %i0, %I0, %r1
end
func pair "0if_r" export
  call @sample2.pair(%i0, %f0) -> (%r0)
  ret %r0
end
)";

std::string write_temp(const std::string& name, const std::string& text) {
  const std::string path = testing::TempDir() + "/" + name;
  std::ofstream(path) << text;
  return path;
}

// One TVM value with its type code.
struct Arg {
  TVMValue value;
  int code;
};
Arg int_arg(int64_t v) {
  Arg a;
  a.value.v_int64 = v;
  a.code = kTVMArgInt;
  return a;
}
Arg float_arg(double v) {
  Arg a;
  a.value.v_float64 = v;
  a.code = kTVMArgFloat;
  return a;
}
Arg str_arg(const char* s) {
  Arg a;
  a.value.v_str = s;
  a.code = kTVMStr;
  return a;
}
Arg object_arg(void* handle) {
  Arg a;
  a.value.v_handle = handle;
  a.code = kTVMObjectHandle;
  return a;
}

// Calls `f`; returns 0 or -1 as TVMFuncCall does.
int call(TVMFunctionHandle f, const std::vector<Arg>& args, Arg* ret) {
  std::vector<TVMValue> values;
  std::vector<int> codes;
  for (const Arg& a : args) {
    values.push_back(a.value);
    codes.push_back(a.code);
  }
  return TVMFuncCall(f, values.data(), codes.data(), static_cast<int>(values.size()), &ret->value, &ret->code);
}

TVMFunctionHandle global(const char* name) {
  TVMFunctionHandle f = nullptr;
  EXPECT_EQ(0, TVMFuncGetGlobal(name, &f)) << TVMGetLastError();
  EXPECT_NE(f, nullptr) << name;
  return f;
}

std::string type_key(void* object) {
  unsigned index = 0;
  char* key = nullptr;
  EXPECT_EQ(0, TVMObjectGetTypeIndex(object, &index));
  EXPECT_EQ(0, TVMObjectTypeIndex2Key(index, &key));
  return key ? key : "";
}

class VmCApiLists : public testing::Test {
 protected:
  void SetUp() override {
    list_ = global("graphrt.vm.list");
    size_ = global("graphrt.vm.list_size");
    get_ = global("graphrt.vm.list_get");
    types_ = global("graphrt.vm.list_types");
    load_ = global("graphrt.vm.load");
  }
  void TearDown() override {
    for (TVMFunctionHandle f : {list_, size_, get_, types_, load_}) TVMFuncFree(f);
  }
  int64_t size_of(void* list) {
    Arg ret;
    EXPECT_EQ(0, call(size_, {object_arg(list)}, &ret)) << TVMGetLastError();
    return ret.value.v_int64;
  }
  Arg element(void* list, int64_t i) {
    Arg ret;
    EXPECT_EQ(0, call(get_, {object_arg(list), int_arg(i)}, &ret)) << TVMGetLastError();
    return ret;
  }
  std::string types_of(void* list) {
    Arg ret;
    EXPECT_EQ(0, call(types_, {object_arg(list)}, &ret)) << TVMGetLastError();
    return ret.code == kTVMStr ? ret.value.v_str : "";
  }
  TVMModuleHandle load(const std::vector<std::string>& paths) {
    std::vector<Arg> args;
    for (const std::string& p : paths) args.push_back(str_arg(p.c_str()));
    Arg ret;
    EXPECT_EQ(0, call(load_, args, &ret)) << TVMGetLastError();
    return ret.code == kTVMModuleHandle ? ret.value.v_handle : nullptr;
  }

  TVMFunctionHandle list_ = nullptr, size_ = nullptr, get_ = nullptr, types_ = nullptr, load_ = nullptr;
};

TEST_F(VmCApiLists, ListArgumentInSeveralResultsOut) {
  TVMModuleHandle mod = load({write_temp("lists.vmasm", kProgram), std::string(VM_SAMPLE_MODULE_PATH) + "@sample2_create?scale=%33"});
  ASSERT_NE(mod, nullptr);
  TVMFunctionHandle stats = nullptr;
  ASSERT_EQ(0, TVMModGetFunction(mod, "stats", 0, &stats)) << TVMGetLastError();

  Arg input;
  ASSERT_EQ(0, call(list_, {str_arg("III"), int_arg(5), int_arg(7), int_arg(30)}, &input)) << TVMGetLastError();
  ASSERT_EQ(input.code, kTVMObjectHandle);
  EXPECT_EQ(type_key(input.value.v_handle), "graphrt.vm.List");

  Arg results;
  ASSERT_EQ(0, call(stats, {object_arg(input.value.v_handle)}, &results)) << TVMGetLastError();
  ASSERT_EQ(results.code, kTVMObjectHandle);
  void* r = results.value.v_handle;
  EXPECT_EQ(type_key(r), "graphrt.vm.Results");
  ASSERT_EQ(size_of(r), 3);
  EXPECT_EQ(types_of(r), "iIr");
  EXPECT_EQ(element(r, 0).value.v_int64, 3);
  EXPECT_EQ(element(r, 1).value.v_int64, 42);
  Arg inner = element(r, 2);
  ASSERT_EQ(inner.code, kTVMObjectHandle);
  EXPECT_EQ(type_key(inner.value.v_handle), "graphrt.vm.List");
  EXPECT_EQ(types_of(inner.value.v_handle), "Ir");
  EXPECT_EQ(element(inner.value.v_handle, 0).value.v_int64, 42);
  // The list inside is the argument itself, not a copy.
  Arg same = element(inner.value.v_handle, 1);
  ASSERT_EQ(same.code, kTVMObjectHandle);
  EXPECT_EQ(element(same.value.v_handle, 2).value.v_int64, 30);
  EXPECT_EQ(types_of(same.value.v_handle), "III");

  // Errors: a list element of the wrong type traps in the function; bad list calls are named.
  Arg wrong, ret;
  ASSERT_EQ(0, call(list_, {str_arg("i"), int_arg(1)}, &wrong)) << TVMGetLastError();
  EXPECT_EQ(-1, call(stats, {object_arg(wrong.value.v_handle)}, &ret));
  EXPECT_NE(std::string(TVMGetLastError()).find("list element 0 is i32, not i64"), std::string::npos)
      << TVMGetLastError();
  EXPECT_EQ(-1, call(get_, {object_arg(r), int_arg(3)}, &ret));
  EXPECT_NE(std::string(TVMGetLastError()).find("out of range"), std::string::npos) << TVMGetLastError();
  EXPECT_EQ(-1, call(list_, {str_arg("ix"), int_arg(1), int_arg(2)}, &ret));
  EXPECT_NE(std::string(TVMGetLastError()).find("'x' is not a type letter"), std::string::npos) << TVMGetLastError();
  EXPECT_EQ(-1, call(size_, {int_arg(1)}, &ret));
  EXPECT_NE(std::string(TVMGetLastError()).find("not a VM list"), std::string::npos) << TVMGetLastError();

  for (void* o : {input.value.v_handle, r, inner.value.v_handle, same.value.v_handle, wrong.value.v_handle}) {
    TVMObjectFree(o);
  }
  TVMFuncFree(stats);
  TVMModFree(mod);
}

TEST_F(VmCApiLists, DynamicModuleListResultThroughBytecode) {
  TVMModuleHandle mod = load({write_temp("lists2.vmasm", kProgram), std::string(VM_SAMPLE_MODULE_PATH) + "@sample2_create?scale=%33"});
  ASSERT_NE(mod, nullptr);
  TVMFunctionHandle pair = nullptr;
  ASSERT_EQ(0, TVMModGetFunction(mod, "pair", 0, &pair)) << TVMGetLastError();
  Arg ret;
  ASSERT_EQ(0, call(pair, {int_arg(4), float_arg(0.5)}, &ret)) << TVMGetLastError();
  ASSERT_EQ(ret.code, kTVMObjectHandle);
  EXPECT_EQ(types_of(ret.value.v_handle), "if");
  EXPECT_EQ(element(ret.value.v_handle, 0).value.v_int64, 12);  // 4 * scale (%33 decodes to 3)
  EXPECT_EQ(element(ret.value.v_handle, 1).value.v_float64, 0.5);
  TVMObjectFree(ret.value.v_handle);
  TVMFuncFree(pair);
  TVMModFree(mod);
}

}  // namespace
