/* Kernels of the heavy MLP of bench/heavy_mlp.py: dense layers whose weights are packed as
 * TVM's dense_pack schedule packs them, w[O / 16][I][16], so that one pass over the weights
 * serves every row of the batch. With several MB of weights per layer, one row is bound by
 * reading the weights from memory; a batch of rows reads them once (each 16-output block of
 * a layer stays in cache while the rows go over it), which is what dynamic batching buys.
 *
 *   heavy_dense_pack_bias_relu(x (B, I), w (O/16, I, 16), bias (O,), out (B, O))
 *   heavy_dense_pack_bias     (the same without the relu)
 *
 * Every output element is bias + x[b, 0] * w[.., 0, ..] + x[b, 1] * w[.., 1, ..] + ... in that
 * order, one multiply and one add each (pack with -ffp-contract=off), whatever B is and
 * wherever the row sits in the batch: a row's answer is the same bits at every batch size. */
#include <stdint.h>

#include "graphrt/tvm_abi.h"

void TVMAPISetLastError(const char* msg);

#define HEAVY_EXPORT __attribute__((visibility("default")))
#define BLOCK 16 /* outputs per packed weight block */
#define ROWS 8   /* rows whose accumulators are kept together */

static int fail(const char* msg) {
  TVMAPISetLastError(msg);
  return -1;
}

static const DLTensor* f32_tensor(TVMValue* args, int* codes, int i, int ndim) {
  if (codes[i] != kTVMDLTensorHandle && codes[i] != kTVMNDArrayHandle) return 0;
  const DLTensor* t = (const DLTensor*)args[i].v_handle;
  if (!t || !t->data || t->ndim != ndim || t->dtype.code != kDLFloat || t->dtype.bits != 32 || t->dtype.lanes != 1)
    return 0;
  if (t->strides) return 0; /* compact tensors only: TVM's graph executor passes no strides */
  return t;
}

static const float* f32_data(const DLTensor* t) { return (const float*)((const char*)t->data + t->byte_offset); }

/* Sixteen floats: one packed weight row of a block, or one row's accumulators for it. The
 * arithmetic on it is elementwise (a multiply, then an add), as on sixteen scalars. */
typedef float vf16 __attribute__((vector_size(64)));

static inline vf16 load16(const float* p) {
  vf16 v;
  __builtin_memcpy(&v, p, sizeof v);
  return v;
}

/* One 16-output block of `rows` rows (a constant where it is inlined: the accumulators stay in
 * registers): acc[r] = bias + sum over i of x[r, i] * w[i, :]. */
static inline __attribute__((always_inline)) void block(const float* x, int64_t I, const float* wb,
                                                        const float* bias, float* out, int64_t O, int rows,
                                                        int relu) {
  vf16 acc[ROWS];
  const vf16 b = load16(bias);
  for (int r = 0; r < rows; ++r) acc[r] = b;
  for (int64_t i = 0; i < I; ++i) {
    const vf16 w = load16(wb + i * BLOCK);
    for (int r = 0; r < rows; ++r) acc[r] += x[r * I + i] * w;
  }
  for (int r = 0; r < rows; ++r) {
    vf16 v = acc[r];
    if (relu)
      for (int j = 0; j < BLOCK; ++j) v[j] = v[j] < 0.0f ? 0.0f : v[j];
    __builtin_memcpy(out + r * O, &v, sizeof v);
  }
}

static int dense_pack(TVMValue* args, int* codes, int num_args, int relu) {
  if (!args || !codes || num_args != 4) return fail("heavy_dense_pack: expected 4 arguments (x, w, bias, out)");
  const DLTensor* x = f32_tensor(args, codes, 0, 2);
  const DLTensor* w = f32_tensor(args, codes, 1, 3);
  const DLTensor* bias = f32_tensor(args, codes, 2, 1);
  const DLTensor* out = f32_tensor(args, codes, 3, 2);
  if (!x || !w || !bias || !out)
    return fail("heavy_dense_pack: expected compact float32 x (B, I), w (O/16, I, 16), bias (O,), out (B, O)");
  const int64_t B = x->shape[0], I = x->shape[1], O = out->shape[1];
  if (w->shape[2] != BLOCK || w->shape[1] != I || w->shape[0] * BLOCK != O || bias->shape[0] != O ||
      out->shape[0] != B)
    return fail("heavy_dense_pack: shapes do not agree (x (B, I), w (O/16, I, 16), bias (O,), out (B, O))");
  const float* xd = f32_data(x);
  const float* wd = f32_data(w);
  const float* bd = f32_data(bias);
  float* od = (float*)((char*)out->data + out->byte_offset);
  for (int64_t ob = 0; ob < O / BLOCK; ++ob) {
    /* Every row tile of the batch goes over this block's weights while they are in cache. */
    for (int64_t b0 = 0; b0 < B; b0 += ROWS) {
      const float* xb = xd + b0 * I;
      const float* wb = wd + ob * I * BLOCK;
      float* ob_out = od + b0 * O + ob * BLOCK;
      switch (B - b0 < ROWS ? (int)(B - b0) : ROWS) {
#define ROWS_CASE(n) \
  case n: block(xb, I, wb, bd + ob * BLOCK, ob_out, O, n, relu); break;
        ROWS_CASE(1) ROWS_CASE(2) ROWS_CASE(3) ROWS_CASE(4) ROWS_CASE(5) ROWS_CASE(6) ROWS_CASE(7) ROWS_CASE(8)
#undef ROWS_CASE
      }
    }
  }
  return 0;
}

HEAVY_EXPORT int heavy_dense_pack_bias_relu(TVMValue* args, int* codes, int num_args, TVMValue* ret, int* ret_code,
                                            void* resource) {
  (void)ret, (void)ret_code, (void)resource;
  return dense_pack(args, codes, num_args, 1);
}

HEAVY_EXPORT int heavy_dense_pack_bias(TVMValue* args, int* codes, int num_args, TVMValue* ret, int* ret_code,
                                       void* resource) {
  (void)ret, (void)ret_code, (void)resource;
  return dense_pack(args, codes, num_args, 0);
}
