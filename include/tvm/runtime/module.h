// tvm::runtime::Module (defined with PackedFunc, which it returns).
#ifndef TVM_RUNTIME_MODULE_H_
#define TVM_RUNTIME_MODULE_H_

#include <tvm/runtime/packed_func.h>

#endif  // TVM_RUNTIME_MODULE_H_
