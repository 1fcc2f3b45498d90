// An anylist is an array of TVM's 16-byte return-value cells, owned by the
// caller: {TVMValue, type code}. A cell owns what it holds, as TVM's
// TVMRetValue does: one reference of an object handle, or a heap
// std::string for kTVMStr/kTVMBytes.
#include "abi/backend_anylist.h"

#include <string>

#include "abi/c_api_support.h"
#include "graphrt/c_api.h"
#include "graphrt/error.h"

namespace {

struct AnyListCell {
  TVMValue value;
  int type_code;
};
static_assert(sizeof(AnyListCell) == 16, "TVM's TVMRetValue is a TVMValue and an int, 16 bytes");

AnyListCell& cell(void* anylist, int index) {
  if (!anylist) throw graphrt::Error("anylist call: null list");
  if (index < 0) throw graphrt::Error(graphrt::ErrorKind::kOutOfRange, "anylist call: negative index " + std::to_string(index));
  return static_cast<AnyListCell*>(anylist)[index];
}

void release(AnyListCell& c) {
  switch (c.type_code) {
    case kTVMStr:
    case kTVMBytes: delete static_cast<std::string*>(c.value.v_handle); break;
    case kTVMObjectHandle: TVMObjectFree(c.value.v_handle); break;
    case kTVMModuleHandle: TVMModFree(c.value.v_handle); break;
    case kTVMPackedFuncHandle: TVMFuncFree(c.value.v_handle); break;
    case kTVMNDArrayHandle: TVMArrayFree(static_cast<TVMArrayHandle>(c.value.v_handle)); break;
    default: break;
  }
  c.value.v_handle = nullptr;
  c.type_code = kTVMNullptr;
}

}  // namespace

// Lends the cell's value to a call: the list keeps the reference.
extern "C" GRAPHRT_API int TVMBackendAnyListSetPackedArg(void* anylist, int index, TVMValue* args, int* type_codes,
                                                   int arg_offset) {
  return graphrt::c_api_guard([&] {
    const AnyListCell& c = cell(anylist, index);
    if (c.type_code == kTVMBytes) throw graphrt::Error(graphrt::ErrorKind::kTypeMismatch, "anylist call: bytes cannot be passed as an argument");
    if (c.type_code == kTVMStr) {
      args[arg_offset].v_str = static_cast<const std::string*>(c.value.v_handle)->c_str();
    } else {
      args[arg_offset] = c.value;
    }
    type_codes[arg_offset] = c.type_code;
  });
}

extern "C" GRAPHRT_API int TVMBackendAnyListResetItem(void* anylist, int index) {
  return graphrt::c_api_guard([&] { release(cell(anylist, index)); });
}

// Takes over a packed call's return value (objects carry one reference to
// the receiver; strings and bytes point at the callee's storage and are copied).
extern "C" GRAPHRT_API int TVMBackendAnyListMoveFromPackedReturn(void* anylist, int index, TVMValue* args,
                                                           int* type_codes, int ret_offset) {
  return graphrt::c_api_guard([&] {
    AnyListCell& c = cell(anylist, index);
    release(c);
    const TVMValue v = args[ret_offset];
    const int code = type_codes[ret_offset];
    if (code == kTVMStr) {
      c.value.v_handle = new std::string(v.v_str ? v.v_str : "");
    } else if (code == kTVMBytes) {
      const auto* bytes = static_cast<const TVMByteArray*>(v.v_handle);
      c.value.v_handle = bytes ? new std::string(bytes->data, bytes->size) : new std::string();
    } else {
      c.value = v;
    }
    c.type_code = code;
  });
}
