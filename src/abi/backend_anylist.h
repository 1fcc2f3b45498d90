// TVM's AnyList backend calls (relax-generated host code moves values between
// a VM register file and packed-call argument stacks through them).
#pragma once

#include "graphrt/tvm_abi.h"

extern "C" {
int TVMBackendAnyListSetPackedArg(void* anylist, int index, TVMValue* args, int* type_codes, int arg_offset);
int TVMBackendAnyListResetItem(void* anylist, int index);
int TVMBackendAnyListMoveFromPackedReturn(void* anylist, int index, TVMValue* args, int* type_codes, int ret_offset);
}
