/* A dynamic VM module for the tests: `sample` with parameters
 * scale (default 1) and offset (default 0):
 *   sample.scaled_add 0ii_i  -> (a + b) * scale + offset
 *   sample.sum        0r_F   -> sum of a float32 tensor's elements
 * A second creation function claims a future ABI version so the host's check
 * can be tested, and a third refuses creation. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "modules/vm/vm_dynamic_module_abi.h"

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
  if (max_abi_version < GRAPHRT_VM_DYNAMIC_ABI_VERSION) {
    snprintf(error, error_capacity, "sample needs VM ABI %u", GRAPHRT_VM_DYNAMIC_ABI_VERSION);
    return 1;
  }
  return fill(GRAPHRT_VM_DYNAMIC_ABI_VERSION, param_count, params, out);
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
