/* Kernels of the demo MLP, written by hand against TVM's packed C ABI (what TVM's C host
 * codegen emits): int fn(TVMValue* args, int* type_codes, int num_args, TVMValue* ret,
 * int* ret_code, void* resource_handle). Each checks its arguments as TVM-generated code
 * does and reports mismatches through TVMAPISetLastError (resolved from libgraphrt at load
 * time, as C-codegen TVM libraries do). */
#include <math.h>
#include <stdio.h>

#include "graphrt/tvm_abi.h"

void TVMAPISetLastError(const char* msg);

#define DEMO_EXPORT __attribute__((visibility("default")))

static int fail(const char* fn, const char* what, int index) {
  char msg[256];
  snprintf(msg, sizeof(msg), "%s: argument %d: %s", fn, index, what);
  TVMAPISetLastError(msg);
  return -1;
}

/* Checks that argument i is a float32 tensor of the given 1-D or 2-D shape (d1 < 0: 1-D). */
static int check_tensor(const char* fn, TVMValue* args, int* codes, int i, int64_t d0, int64_t d1,
                        const DLTensor** out) {
  if (codes[i] != kTVMDLTensorHandle && codes[i] != kTVMNDArrayHandle) return fail(fn, "expected a tensor", i);
  const DLTensor* t = (const DLTensor*)args[i].v_handle;
  if (!t || !t->data) return fail(fn, "null tensor", i);
  if (t->dtype.code != kDLFloat || t->dtype.bits != 32 || t->dtype.lanes != 1)
    return fail(fn, "expected dtype float32", i);
  int ndim = d1 < 0 ? 1 : 2;
  if (t->ndim != ndim) return fail(fn, d1 < 0 ? "expected a 1-D tensor" : "expected a 2-D tensor", i);
  if (t->shape[0] != d0 || (ndim == 2 && t->shape[1] != d1)) {
    char what[128];
    if (ndim == 2)
      snprintf(what, sizeof(what), "expected shape (%lld, %lld)", (long long)d0, (long long)d1);
    else
      snprintf(what, sizeof(what), "expected shape (%lld,)", (long long)d0);
    return fail(fn, what, i);
  }
  if (t->strides) {
    int64_t expect = 1;
    for (int k = ndim - 1; k >= 0; --k) {
      if (t->shape[k] != 1 && t->strides[k] != expect) return fail(fn, "expected a compact tensor", i);
      expect *= t->shape[k];
    }
  }
  *out = t;
  return 0;
}

static const float* fdata(const DLTensor* t) { return (const float*)((const char*)t->data + t->byte_offset); }

/* out[b, o] = relu(sum_i x[b, i] * w[o, i] + bias[o]);  x (B, I), w (O, I), bias (O,), out (B, O) */
static int dense(const char* fn, TVMValue* args, int* codes, int num_args, int softmax) {
  if (num_args != 4) {
    char msg[128];
    snprintf(msg, sizeof(msg), "%s: expected 4 arguments (x, w, bias, out), got %d", fn, num_args);
    TVMAPISetLastError(msg);
    return -1;
  }
  if (!args || !codes) return fail(fn, "null argument array", 0);
  const DLTensor *x, *w, *bias, *out;
  if (codes[0] != kTVMDLTensorHandle && codes[0] != kTVMNDArrayHandle) return fail(fn, "expected a tensor", 0);
  const DLTensor* x0 = (const DLTensor*)args[0].v_handle;
  if (!x0 || x0->ndim != 2) return fail(fn, "expected a 2-D tensor", 0);
  if (codes[1] != kTVMDLTensorHandle && codes[1] != kTVMNDArrayHandle) return fail(fn, "expected a tensor", 1);
  const DLTensor* w0 = (const DLTensor*)args[1].v_handle;
  if (!w0 || w0->ndim != 2) return fail(fn, "expected a 2-D tensor", 1);
  int64_t B = x0->shape[0], I = x0->shape[1], O = w0->shape[0];
  if (check_tensor(fn, args, codes, 0, B, I, &x) || check_tensor(fn, args, codes, 1, O, I, &w) ||
      check_tensor(fn, args, codes, 2, O, -1, &bias) || check_tensor(fn, args, codes, 3, B, O, &out))
    return -1;
  const float *xd = fdata(x), *wd = fdata(w), *bd = fdata(bias);
  float* od = (float*)((char*)out->data + out->byte_offset);
  for (int64_t b = 0; b < B; ++b) {
    float* row = od + b * O;
    for (int64_t o = 0; o < O; ++o) {
      float acc = bd[o];
      for (int64_t i = 0; i < I; ++i) acc += xd[b * I + i] * wd[o * I + i];
      row[o] = softmax ? acc : (acc > 0.0f ? acc : 0.0f);
    }
    if (softmax) {
      float m = row[0], sum = 0.0f;
      for (int64_t o = 1; o < O; ++o) m = row[o] > m ? row[o] : m;
      for (int64_t o = 0; o < O; ++o) {
        row[o] = expf(row[o] - m);
        sum += row[o];
      }
      for (int64_t o = 0; o < O; ++o) row[o] /= sum;
    }
  }
  return 0;
}

DEMO_EXPORT int demo_dense_bias_relu(TVMValue* args, int* codes, int num_args, TVMValue* ret, int* ret_code,
                                     void* resource) {
  (void)ret; (void)ret_code; (void)resource;
  return dense("demo_dense_bias_relu", args, codes, num_args, 0);
}

DEMO_EXPORT int demo_dense_bias_softmax(TVMValue* args, int* codes, int num_args, TVMValue* ret, int* ret_code,
                                        void* resource) {
  (void)ret; (void)ret_code; (void)resource;
  return dense("demo_dense_bias_softmax", args, codes, num_args, 1);
}
