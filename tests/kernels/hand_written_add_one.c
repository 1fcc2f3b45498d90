/* A hand-written kernel library in TVM's packed-function ABI that carries no
 * TVM marker (no __tvm_module_ctx, no __TVM* slot, no TVM import): graphrt
 * loads it only with the trust-exports option.
 *
 *   add_one(x, y):  y = x + 1 (float32, any shape)
 */
#include <graphrt/tvm_abi.h>

static DLTensor* float_tensor_arg(TVMValue* args, int* codes, int i) {
  if (codes[i] != kTVMDLTensorHandle && codes[i] != kTVMNDArrayHandle) return 0;
  DLTensor* t = (DLTensor*)args[i].v_handle;
  return t->dtype.code == kDLFloat && t->dtype.bits == 32 && t->dtype.lanes == 1 ? t : 0;
}

__attribute__((visibility("default"))) int add_one(TVMValue* args, int* codes, int num_args, TVMValue* ret,
                                                   int* ret_code, void* resource) {
  (void)ret, (void)ret_code, (void)resource;
  if (num_args != 2) return -1;
  DLTensor *x = float_tensor_arg(args, codes, 0), *y = float_tensor_arg(args, codes, 1);
  if (!x || !y || x->ndim != y->ndim) return -1;
  int64_t n = 1;
  for (int i = 0; i < x->ndim; ++i) {
    if (x->shape[i] != y->shape[i]) return -1;
    n *= x->shape[i];
  }
  const float* in = (const float*)((const char*)x->data + x->byte_offset);
  float* out = (float*)((char*)y->data + y->byte_offset);
  for (int64_t i = 0; i < n; ++i) out[i] = in[i] + 1.0f;
  return 0;
}
