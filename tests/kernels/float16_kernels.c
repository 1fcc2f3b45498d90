/* A model's kernels in TVM's packed-function ABI that compute in float16 and
 * bfloat16 the way compiled code does: the compiler lowers every half
 * conversion to a runtime helper call. Built by the tests with clang-14
 * (__fp16: __gnu_h2f_ieee / __gnu_f2h_ieee / __truncdfhf2, the helpers LLVM 14
 * emits for TVM's float16 models) and with gcc (_Float16: __extendhfsf2 /
 * __truncsfhf2 / __truncdfhf2 / __extendhfdf2, the newer ABI). Linked with
 * -nostdlib so the helpers stay imports that the runtime must provide.
 *
 *   fused_scale_f16(x, w, y):  y = f16(f32(x) * f32(w) + 0.5f)
 *   fused_third_f16(x, z):     z = f16(f64(x) / 3.0 + 1e-7)  (kept in double)
 *   fused_mul_bf16(b, c, o):   o = bf16(f32(b) * f32(c))   (bf16 raw bits)
 */
#include <stdint.h>

#if defined(__clang__)
typedef __fp16 half_t;
#else
typedef _Float16 half_t;
#endif

/* The bfloat16 narrowing helper, called with the integer-register ABI that
 * TVM's runtime and LLVM <= 16 use (compilers here lack __bf16). */
extern uint16_t __truncsfbf2(float value);

typedef struct {
  void* data;
  struct { int32_t device_type, device_id; } device;
  int32_t ndim;
  struct { uint8_t code, bits; uint16_t lanes; } dtype;
  int64_t* shape;
  int64_t* strides;
  uint64_t byte_offset;
} Tensor;

typedef union {
  int64_t v_int64;
  double v_float64;
  void* v_handle;
} Value;

enum { kDLTensorHandle = 7, kNDArrayHandle = 13 };

/* The module context variable TVM's C host codegen defines in every library:
 * the loader's sign that the exported functions are packed functions. */
void* __tvm_module_ctx = 0;

static Tensor* tensor_arg(Value* args, int* codes, int i) {
  if (codes[i] != kDLTensorHandle && codes[i] != kNDArrayHandle) return 0;
  return (Tensor*)args[i].v_handle;
}

static int64_t numel(const Tensor* t) {
  int64_t n = 1;
  for (int i = 0; i < t->ndim; ++i) n *= t->shape[i];
  return n;
}

static void* data(const Tensor* t) { return (char*)t->data + t->byte_offset; }

int fused_scale_f16(Value* args, int* codes, int num_args, Value* ret, int* ret_code, void* resource) {
  (void)ret, (void)ret_code, (void)resource;
  if (num_args != 3) return -1;
  Tensor *x = tensor_arg(args, codes, 0), *w = tensor_arg(args, codes, 1), *y = tensor_arg(args, codes, 2);
  if (!x || !w || !y) return -1;
  const half_t *xp = data(x), *wp = data(w);
  half_t* yp = data(y);
  for (int64_t i = 0, n = numel(y); i < n; ++i) yp[i] = (half_t)((float)xp[i] * (float)wp[i] + 0.5f);
  return 0;
}

int fused_third_f16(Value* args, int* codes, int num_args, Value* ret, int* ret_code, void* resource) {
  (void)ret, (void)ret_code, (void)resource;
  if (num_args != 2) return -1;
  Tensor *x = tensor_arg(args, codes, 0), *z = tensor_arg(args, codes, 1);
  if (!x || !z) return -1;
  const half_t* xp = data(x);
  half_t* zp = data(z);
  for (int64_t i = 0, n = numel(z); i < n; ++i) zp[i] = (half_t)((double)xp[i] / 3.0 + 1e-7);
  return 0;
}

static float bf16_to_float(uint16_t bits) {
  union { uint32_t u; float f; } v;
  v.u = (uint32_t)bits << 16;
  return v.f;
}

int fused_mul_bf16(Value* args, int* codes, int num_args, Value* ret, int* ret_code, void* resource) {
  (void)ret, (void)ret_code, (void)resource;
  if (num_args != 3) return -1;
  Tensor *b = tensor_arg(args, codes, 0), *c = tensor_arg(args, codes, 1), *o = tensor_arg(args, codes, 2);
  if (!b || !c || !o) return -1;
  const uint16_t *bp = data(b), *cp = data(c);
  uint16_t* op = data(o);
  for (int64_t i = 0, n = numel(o); i < n; ++i) op[i] = __truncsfbf2(bf16_to_float(bp[i]) * bf16_to_float(cp[i]));
  return 0;
}
