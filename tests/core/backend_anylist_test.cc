// TVMBackendAnyList*: the cells relax-generated host code moves values
// through, in TVM's TVMRetValue layout; ownership checked under ASan/LSan.
#include <gtest/gtest.h>

#include <string>

#include "graphrt/c_api.h"
#include "graphrt/tvm_abi.h"

extern "C" {
int TVMBackendAnyListSetPackedArg(void* anylist, int index, TVMValue* args, int* type_codes, int arg_offset);
int TVMBackendAnyListResetItem(void* anylist, int index);
int TVMBackendAnyListMoveFromPackedReturn(void* anylist, int index, TVMValue* args, int* type_codes, int ret_offset);
}

namespace {

struct Cell {
  TVMValue value;
  int type_code;
};

TEST(BackendAnyList, MovesValuesBetweenCellsAndArgumentStacks) {
  Cell cells[3];
  for (Cell& c : cells) {
    c.value.v_handle = nullptr;
    c.type_code = kTVMNullptr;
  }
  TVMValue stack[4];
  int codes[4];
  // An int and a string returned by a call land in cells 0 and 1.
  stack[0].v_int64 = 42;
  codes[0] = kTVMArgInt;
  ASSERT_EQ(TVMBackendAnyListMoveFromPackedReturn(cells, 0, stack, codes, 0), 0);
  std::string text = "hello";
  stack[1].v_str = text.c_str();
  codes[1] = kTVMStr;
  ASSERT_EQ(TVMBackendAnyListMoveFromPackedReturn(cells, 1, stack, codes, 1), 0);
  text = "changed";  // the cell holds its own copy
  // An array handle carries its reference into cell 2.
  int64_t shape[1] = {4};
  TVMArrayHandle array = nullptr;
  ASSERT_EQ(TVMArrayAlloc(shape, 1, kDLFloat, 16, 1, kDLCPU, 0, &array), 0);
  stack[2].v_handle = array;
  codes[2] = kTVMNDArrayHandle;
  ASSERT_EQ(TVMBackendAnyListMoveFromPackedReturn(cells, 2, stack, codes, 2), 0);

  // Lent back out as arguments, the list keeping ownership.
  for (int i = 0; i < 3; ++i) ASSERT_EQ(TVMBackendAnyListSetPackedArg(cells, i, stack, codes, i + 1), 0);
  EXPECT_EQ(codes[1], kTVMArgInt);
  EXPECT_EQ(stack[1].v_int64, 42);
  EXPECT_EQ(codes[2], kTVMStr);
  EXPECT_EQ(std::string(stack[2].v_str), "hello");
  EXPECT_EQ(codes[3], kTVMNDArrayHandle);
  EXPECT_EQ(stack[3].v_handle, static_cast<void*>(array));
  EXPECT_EQ(static_cast<DLTensor*>(stack[3].v_handle)->dtype.bits, 16);

  // Reset releases (the string's copy and the array's reference: LSan sees leaks).
  for (int i = 0; i < 3; ++i) {
    ASSERT_EQ(TVMBackendAnyListResetItem(cells, i), 0);
    EXPECT_EQ(cells[i].type_code, kTVMNullptr);
  }
  EXPECT_NE(TVMBackendAnyListResetItem(nullptr, 0), 0);
  EXPECT_NE(std::string(TVMGetLastError()).find("null"), std::string::npos);
}

}  // namespace
