/* Dynamic VM modules for the tests.
 *
 * ABI v1, `sample` (sample_create), parameters scale (default 1) and offset
 * (default 0):
 *   sample.scaled_add 0ii_i  -> (a + b) * scale + offset
 *   sample.sum        0r_F   -> sum of a float32 tensor's elements
 * Another creation function claims a future ABI version so the host's check
 * can be tested, and another refuses creation.
 *
 * ABI v2, `sample2` (sample2_create), parameter scale (default 1), imports the
 * optional `host.step 0i_i` from a module linked before it:
 *   sample2.pair     0if_r  -> list [i32 a * scale, f32 b]
 *   sample2.list_sum 0r_I   -> sum of the i32/i64 elements of a list, nested lists included
 *   sample2.length   0r_i   -> byte size of a buffer
 *   sample2.twice    0r_r   -> a new float32 tensor, each element doubled
 *   sample2.keep     0r_rr  -> the argument (any ref) and a new list holding it
 *   sample2.apply    0i_i   -> host.step(host.step(x)) * scale */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backends/vm/host/vm_dynamic_module_abi.h"

typedef struct sample_state {
  int32_t scale;
  int32_t offset;
} sample_state;

static int scaled_add(void* self, const graphrt_vm_abi_value* args, size_t arg_count, graphrt_vm_abi_value* results,
                      size_t result_count, char* error, size_t error_capacity) {
  const sample_state* s = (const sample_state*)self;
  if (arg_count != 2 || result_count != 1) {
    snprintf(error, error_capacity, "scaled_add: bad arity");
    return 1;
  }
  results[0].i32 = (args[0].i32 + args[1].i32) * s->scale + s->offset;
  return 0;
}

static int tensor_sum(void* self, const graphrt_vm_abi_value* args, size_t arg_count, graphrt_vm_abi_value* results,
                      size_t result_count, char* error, size_t error_capacity) {
  (void)self;
  (void)arg_count;
  (void)result_count;
  const DLTensor* t = args[0].tensor;
  if (!t || t->dtype.code != kDLFloat || t->dtype.bits != 32) {
    snprintf(error, error_capacity, "sum: expected a float32 tensor");
    return 1;
  }
  int64_t n = 1;
  for (int i = 0; i < t->ndim; ++i) n *= t->shape[i];
  double total = 0;
  for (int64_t i = 0; i < n; ++i) total += ((const float*)t->data)[i];
  results[0].f64 = total;
  return 0;
}

static const graphrt_vm_abi_function kFunctions[] = {
    {"scaled_add", "0ii_i", scaled_add},
    {"sum", "0r_F", tensor_sum},
};

static void destroy(void* self) { free(self); }

static int fill(uint32_t abi_version, size_t param_count, const graphrt_vm_abi_string_pair* params,
                graphrt_vm_abi_module* out) {
  sample_state* s = (sample_state*)calloc(1, sizeof(sample_state));
  s->scale = 1;
  for (size_t i = 0; i < param_count; ++i) {
    if (strcmp(params[i].key, "scale") == 0) s->scale = atoi(params[i].value);
    if (strcmp(params[i].key, "offset") == 0) s->offset = atoi(params[i].value);
  }
  out->abi_version = abi_version;
  out->name = "sample";
  out->version = 2;
  out->function_count = sizeof(kFunctions) / sizeof(kFunctions[0]);
  out->functions = kFunctions;
  out->self = s;
  out->destroy = destroy;
  return 0;
}

GRAPHRT_VM_DYNAMIC_EXPORT int sample_create(uint32_t max_abi_version, size_t param_count,
                                            const graphrt_vm_abi_string_pair* params, graphrt_vm_abi_module* out,
                                            char* error, size_t error_capacity) {
  if (max_abi_version < 1) {
    snprintf(error, error_capacity, "sample needs VM ABI 1");
    return 1;
  }
  return fill(1, param_count, params, out);
}

GRAPHRT_VM_DYNAMIC_EXPORT int graphrt_vm_dynamic_module_create(uint32_t max_abi_version, size_t param_count,
                                                               const graphrt_vm_abi_string_pair* params,
                                                               graphrt_vm_abi_module* out, char* error,
                                                               size_t error_capacity) {
  return sample_create(max_abi_version, param_count, params, out, error, error_capacity);
}

GRAPHRT_VM_DYNAMIC_EXPORT int sample_create_future_abi(uint32_t max_abi_version, size_t param_count,
                                                       const graphrt_vm_abi_string_pair* params,
                                                       graphrt_vm_abi_module* out, char* error,
                                                       size_t error_capacity) {
  (void)max_abi_version;
  (void)error;
  (void)error_capacity;
  return fill(99, param_count, params, out);
}

GRAPHRT_VM_DYNAMIC_EXPORT int sample_create_refuse(uint32_t max_abi_version, size_t param_count,
                                                   const graphrt_vm_abi_string_pair* params,
                                                   graphrt_vm_abi_module* out, char* error, size_t error_capacity) {
  (void)max_abi_version;
  (void)param_count;
  (void)params;
  (void)out;
  snprintf(error, error_capacity, "refused on purpose");
  return 1;
}

/* ---- ABI v2 ---- */

#define HOST (call->host)

static int fail(char* error, size_t error_capacity, const char* message) {
  snprintf(error, error_capacity, "%s", message);
  return 1;
}

static int pair(void* self, graphrt_vm_abi_call* call, const graphrt_vm_abi_value* args, size_t arg_count,
                graphrt_vm_abi_value* results, size_t result_count, char* error, size_t error_capacity) {
  const sample_state* s = (const sample_state*)self;
  (void)arg_count;
  (void)result_count;
  graphrt_vm_abi_ref* list = HOST->list_create(call);
  graphrt_vm_abi_value a, b;
  a.i32 = args[0].i32 * s->scale;
  b.f32 = args[1].f32;
  if (!list || HOST->list_push(call, list, GRAPHRT_VM_ABI_I32, a) || HOST->list_push(call, list, GRAPHRT_VM_ABI_F32, b)) {
    if (list) HOST->ref_release(call, list);
    return fail(error, error_capacity, "pair: list");
  }
  results[0].ref = list;
  return 0;
}

static int sum_list(graphrt_vm_abi_call* call, const graphrt_vm_abi_ref* list, int64_t* total) {
  const int64_t n = HOST->list_size(call, list);
  if (n < 0) return 1;
  for (int64_t i = 0; i < n; ++i) {
    int type = 0;
    graphrt_vm_abi_value v;
    if (HOST->list_get(call, list, i, &type, &v)) return 1;
    if (type == GRAPHRT_VM_ABI_I32) *total += v.i32;
    if (type == GRAPHRT_VM_ABI_I64) *total += v.i64;
    if (type == GRAPHRT_VM_ABI_REF && v.ref) {
      const int inner = HOST->ref_kind(call, v.ref) == GRAPHRT_VM_ABI_LIST ? sum_list(call, v.ref, total) : 0;
      HOST->ref_release(call, v.ref);
      if (inner) return 1;
    }
  }
  return 0;
}

static int list_sum(void* self, graphrt_vm_abi_call* call, const graphrt_vm_abi_value* args, size_t arg_count,
                    graphrt_vm_abi_value* results, size_t result_count, char* error, size_t error_capacity) {
  (void)self;
  (void)arg_count;
  (void)result_count;
  int64_t total = 0;
  if (HOST->ref_kind(call, args[0].ref) != GRAPHRT_VM_ABI_LIST) return fail(error, error_capacity, "list_sum: expected a list");
  if (sum_list(call, args[0].ref, &total)) return fail(error, error_capacity, "list_sum: failed");
  results[0].i64 = total;
  return 0;
}

static int length(void* self, graphrt_vm_abi_call* call, const graphrt_vm_abi_value* args, size_t arg_count,
                  graphrt_vm_abi_value* results, size_t result_count, char* error, size_t error_capacity) {
  (void)self;
  (void)arg_count;
  (void)result_count;
  size_t size = 0;
  int writable = 0;
  if (!HOST->buffer_data(call, args[0].ref, &size, &writable)) return fail(error, error_capacity, "length: expected a buffer");
  results[0].i32 = (int32_t)size;
  return 0;
}

static int twice(void* self, graphrt_vm_abi_call* call, const graphrt_vm_abi_value* args, size_t arg_count,
                 graphrt_vm_abi_value* results, size_t result_count, char* error, size_t error_capacity) {
  (void)self;
  (void)arg_count;
  (void)result_count;
  const DLTensor* in = HOST->tensor_dl(call, args[0].ref);
  if (!in || in->dtype.code != kDLFloat || in->dtype.bits != 32) return fail(error, error_capacity, "twice: expected a float32 tensor");
  graphrt_vm_abi_ref* out = HOST->tensor_create(call, in->ndim, in->shape, in->dtype);
  if (!out) return fail(error, error_capacity, "twice: tensor_create");
  const DLTensor* o = HOST->tensor_dl(call, out);
  int64_t n = 1;
  for (int i = 0; i < in->ndim; ++i) n *= in->shape[i];
  for (int64_t i = 0; i < n; ++i) ((float*)o->data)[i] = 2 * ((const float*)in->data)[i];
  results[0].ref = out;
  return 0;
}

static int keep(void* self, graphrt_vm_abi_call* call, const graphrt_vm_abi_value* args, size_t arg_count,
                graphrt_vm_abi_value* results, size_t result_count, char* error, size_t error_capacity) {
  (void)self;
  (void)arg_count;
  (void)result_count;
  graphrt_vm_abi_ref* list = HOST->list_create(call);
  graphrt_vm_abi_value v;
  v.ref = args[0].ref;
  if (!list || HOST->list_push(call, list, GRAPHRT_VM_ABI_REF, v)) {
    if (list) HOST->ref_release(call, list);
    return fail(error, error_capacity, "keep: list");
  }
  results[0].ref = HOST->ref_clone(call, args[0].ref);
  results[1].ref = list;
  return 0;
}

static int apply(void* self, graphrt_vm_abi_call* call, const graphrt_vm_abi_value* args, size_t arg_count,
                 graphrt_vm_abi_value* results, size_t result_count, char* error, size_t error_capacity) {
  const sample_state* s = (const sample_state*)self;
  (void)arg_count;
  (void)result_count;
  graphrt_vm_abi_value once, again;
  if (HOST->call_import(call, 0, args, 1, &once, 1) || HOST->call_import(call, 0, &once, 1, &again, 1)) {
    return fail(error, error_capacity, "apply: host.step failed");
  }
  results[0].i32 = again.i32 * s->scale;
  return 0;
}

static const graphrt_vm_abi_function2 kFunctions2[] = {
    {"pair", "0if_r", pair},       {"list_sum", "0r_I", list_sum}, {"length", "0r_i", length},
    {"twice", "0r_r", twice},      {"keep", "0r_rr", keep},        {"apply", "0i_i", apply},
};

static const graphrt_vm_abi_import kImports2[] = {{"host.step", "0i_i", 1}};

GRAPHRT_VM_DYNAMIC_EXPORT int sample2_create(uint32_t max_abi_version, size_t param_count,
                                             const graphrt_vm_abi_string_pair* params, graphrt_vm_abi_module* out,
                                             char* error, size_t error_capacity) {
  if (max_abi_version < 2) {
    snprintf(error, error_capacity, "sample2 needs VM ABI 2");
    return 1;
  }
  sample_state* s = (sample_state*)calloc(1, sizeof(sample_state));
  s->scale = 1;
  for (size_t i = 0; i < param_count; ++i) {
    if (strcmp(params[i].key, "scale") == 0) s->scale = atoi(params[i].value);
  }
  out->abi_version = 2;
  out->name = "sample2";
  out->version = 1;
  out->function_count = sizeof(kFunctions2) / sizeof(kFunctions2[0]);
  out->functions2 = kFunctions2;
  out->import_count = 1;
  out->imports = kImports2;
  out->self = s;
  out->destroy = destroy;
  return 0;
}
