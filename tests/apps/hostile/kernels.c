/* Kernels for the hostile-input tests: TVM's packed C signature, written
 * without graphrt's headers so that a crafted library can be built with a
 * plain `cc -shared`. Sub-byte and bool tensors hold one byte per element,
 * as in every TVM kernel of the graph-executor ABI. */
#include <dlpack/dlpack.h>
#include <stdint.h>

typedef union {
  int64_t v_int64;
  double v_float64;
  void* v_handle;
  const char* v_str;
} TVMValue;

#define EXPORT __attribute__((visibility("default")))

#ifdef TVM_CONTEXT_SLOT
/* What TVM's code generator defines: it marks a kernels-only library as TVM's
 * (a graphrt-pack build or a blob-carrying library has its own markers). */
EXPORT void* __tvm_module_ctx = 0;
#endif

static int64_t numel(const DLTensor* t) {
  int64_t n = 1;
  for (int i = 0; i < t->ndim; ++i) n *= t->shape[i];
  return n;
}

static void* data(const DLTensor* t) { return (char*)t->data + t->byte_offset; }

/* out = x xor p (bool) */
EXPORT int bool_xor(TVMValue* args, int* codes, int n, TVMValue* ret, int* ret_code, void* h) {
  (void)codes; (void)n; (void)ret; (void)ret_code; (void)h;
  const DLTensor *x = args[0].v_handle, *p = args[1].v_handle;
  DLTensor* out = args[2].v_handle;
  const uint8_t *a = data(x), *b = data(p);
  uint8_t* o = data(out);
  for (int64_t i = 0; i < numel(out); ++i) o[i] = (uint8_t)((a[i] != 0) ^ (b[i] != 0));
  return 0;
}

/* out = clip(x + p, -8, 7) (int4, one int8 per element) */
EXPORT int int4_add(TVMValue* args, int* codes, int n, TVMValue* ret, int* ret_code, void* h) {
  (void)codes; (void)n; (void)ret; (void)ret_code; (void)h;
  const DLTensor *x = args[0].v_handle, *p = args[1].v_handle;
  DLTensor* out = args[2].v_handle;
  const int8_t *a = data(x), *b = data(p);
  int8_t* o = data(out);
  for (int64_t i = 0; i < numel(out); ++i) {
    int v = a[i] + b[i];
    o[i] = (int8_t)(v < -8 ? -8 : v > 7 ? 7 : v);
  }
  return 0;
}

/* out = x + 1 (float32) */
EXPORT int f32_inc(TVMValue* args, int* codes, int n, TVMValue* ret, int* ret_code, void* h) {
  (void)codes; (void)n; (void)ret; (void)ret_code; (void)h;
  const DLTensor* x = args[0].v_handle;
  DLTensor* out = args[1].v_handle;
  const float* a = data(x);
  float* o = data(out);
  for (int64_t i = 0; i < numel(out); ++i) o[i] = a[i] + 1.0f;
  return 0;
}
