// graphrt_function_call_block (include/graphrt/c_api.h): TVMFuncCall with its arguments and
// result in one caller-held block, so that a binding pays one foreign call of one argument per
// invocation and needs no second call to tell what kind of object came back.
#include <chrono>

#include "graphrt/c_api.h"
#include "graphrt/packed_func.h"
#include "abi/c_api_support.h"
#include "abi/object_types.h"

using namespace graphrt;

namespace {
void check_block(const graphrt_call_block* block) {
  if (!block) throw Error(ErrorKind::kTypeMismatch, "graphrt_function_call_block: null block");
  if (!block->function) throw Error(ErrorKind::kTypeMismatch, "graphrt_function_call_block: null function handle");
  if (block->num_args < 0)
    throw Error("graphrt_function_call_block: negative argument count " + std::to_string(block->num_args));
  if (block->num_args > 0 && (!block->args || !block->type_codes))
    throw Error("graphrt_function_call_block: " + std::to_string(block->num_args) +
                " arguments but no argument or type-code array");
}

int64_t now_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
      .count();
}
}  // namespace

extern "C" GRAPHRT_API int graphrt_function_call_block(graphrt_call_block* block) {
  return graphrt_api_guard([&] {
    check_block(block);
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
