/* TVM's packed C calling convention (v0.16-v0.18 ABI), under TVM's exact names.
 *
 * Generated code hard-codes these layouts and codes, so they are part of the
 * binary contract: TVMValue is 8 bytes, type codes are TVM's numbers. The
 * definitions live in the TVM-path headers, so that graphrt and code written
 * against TVM's headers share one copy of them. */
#ifndef GRAPHRT_TVM_ABI_H_
#define GRAPHRT_TVM_ABI_H_

#include "tvm/runtime/c_backend_api.h"
#include "tvm/runtime/c_runtime_api.h"

#endif /* GRAPHRT_TVM_ABI_H_ */
