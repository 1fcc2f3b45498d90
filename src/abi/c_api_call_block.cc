// graphrt_function_call_block (include/graphrt/c_api.h): TVMFuncCall with its arguments and
// result in one caller-held block, so that a binding pays one foreign call of one argument per
// invocation, needs no second call to tell what kind of object came back, and drops the
// references its program let go of since the last call without a foreign call each.
#include <chrono>

#include "graphrt/c_api.h"
#include "graphrt/packed_func.h"
#include "abi/c_api_support.h"
#include "abi/object_types.h"

using namespace graphrt;

namespace {
// Everything that would stop the block before its frees: checked first, so that a refused block
// drops nothing (its caller still holds those references) and an accepted one drops them all.
void check_block(const graphrt_call_block* block) {
  if (!block) throw Error(ErrorKind::kTypeMismatch, "graphrt_function_call_block: null block");
  if (block->num_args < 0)
    throw Error("graphrt_function_call_block: negative argument count " + std::to_string(block->num_args));
  if (block->num_free < 0)
    throw Error("graphrt_function_call_block: negative free count " + std::to_string(block->num_free));
  if ((block->num_args > 0 || block->num_free > 0) && (!block->args || !block->type_codes))
    throw Error("graphrt_function_call_block: " + std::to_string(block->num_args) + " arguments and " +
                std::to_string(block->num_free) + " frees but no argument or type-code array");
  for (int i = block->num_args; i < block->num_args + block->num_free; ++i) {
    int code = block->type_codes[i];
    if (code != kTVMNDArrayHandle && code != kTVMObjectHandle)
      throw Error("graphrt_function_call_block: value " + std::to_string(i) + " to free has type code " +
                  std::to_string(code) + " (an array or object handle is freed)");
  }
}

// The caller's references after the arguments, dropped as TVMArrayFree / TVMObjectFree drop them.
void drop_frees(const graphrt_call_block* block) {
  for (int i = block->num_args; i < block->num_args + block->num_free; ++i) {
    void* handle = block->args[i].v_handle;
    if (!handle) continue;
    if (block->type_codes[i] == kTVMNDArrayHandle)
      NDArray::adopt_handle(static_cast<DLTensor*>(handle));  // the temporary's destructor drops it
    else
      static_cast<Object*>(handle)->dec_ref();
  }
}

int64_t now_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
      .count();
}
}  // namespace

extern "C" GRAPHRT_API int graphrt_function_call_block(graphrt_call_block* block) {
  return graphrt_api_guard([&] {
    check_block(block);
    drop_frees(block);
    if (!block->function) throw Error(ErrorKind::kTypeMismatch, "graphrt_function_call_block: null function handle");
    block->ret_type_code = kTVMNullptr;
    block->ret_value.v_handle = nullptr;
    block->ret_type_index = 0;
    int64_t start = now_ns();
    RetValue ret;
    static_cast<FunctionNode*>(block->function)->call(TVMArgs(block->args, block->type_codes, block->num_args), &ret);
    block->elapsed_ns = now_ns() - start;
    ret.release_to_c(&block->ret_value, &block->ret_type_code);
    if (block->ret_type_code == kTVMObjectHandle && block->ret_value.v_handle)
      block->ret_type_index = object_type_index(*static_cast<Object*>(block->ret_value.v_handle));
  });
}
