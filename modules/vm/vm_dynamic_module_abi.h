/* graphrt VM dynamic module C ABI (version 1).
 *
 * A shared library provides VM native modules through a creation function,
 * addressed as `lib.so@create_fn?key=value&k2=v2` (default creation function:
 * graphrt_vm_dynamic_module_create). The host passes the highest ABI version
 * it supports; the library must refuse (return non-zero) when it needs a newer
 * one and must set `abi_version` in the module it fills, which the host checks
 * again. Params live only during the call; copy what you keep.
 *
 * Values crossing the ABI are scalars; a 'r' argument arrives as the DLTensor*
 * of a tensor ref (NULL for other refs), and results cannot be refs. Errors are
 * reported by returning non-zero after writing a NUL-terminated message into
 * `error` (capacity `error_capacity`).
 *
 * Plain C so a module can be built by any compiler; no graphrt headers needed.
 */
#ifndef GRAPHRT_VM_DYNAMIC_MODULE_ABI_H_
#define GRAPHRT_VM_DYNAMIC_MODULE_ABI_H_

#include <dlpack/dlpack.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define GRAPHRT_VM_DYNAMIC_ABI_VERSION 1u
#define GRAPHRT_VM_DYNAMIC_DEFAULT_CREATE "graphrt_vm_dynamic_module_create"
#define GRAPHRT_VM_DYNAMIC_EXPORT __attribute__((visibility("default")))

typedef union graphrt_vm_abi_value {
  int32_t i32;
  int64_t i64;
  float f32;
  double f64;
  DLTensor* tensor;
} graphrt_vm_abi_value;

typedef struct graphrt_vm_abi_string_pair {
  const char* key;
  const char* value;
} graphrt_vm_abi_string_pair;

/* One exported function: `signature` is a non-variadic cconv ("0ii_i"). */
typedef int (*graphrt_vm_abi_function_fn)(void* self, const graphrt_vm_abi_value* args, size_t arg_count,
                                          graphrt_vm_abi_value* results, size_t result_count, char* error,
                                          size_t error_capacity);

typedef struct graphrt_vm_abi_function {
  const char* name;
  const char* signature;
  graphrt_vm_abi_function_fn fn;
} graphrt_vm_abi_function;

/* Filled by the creation function; strings and the function table must stay
 * valid until `destroy(self)` is called (the host calls it before dlclose). */
typedef struct graphrt_vm_abi_module {
  uint32_t abi_version;
  const char* name;
  uint32_t version;
  size_t function_count;
  const graphrt_vm_abi_function* functions;
  void* self;
  void (*destroy)(void* self);
} graphrt_vm_abi_module;

typedef int (*graphrt_vm_abi_create_fn)(uint32_t max_abi_version, size_t param_count,
                                        const graphrt_vm_abi_string_pair* params, graphrt_vm_abi_module* out,
                                        char* error, size_t error_capacity);

#ifdef __cplusplus
}
#endif

#endif /* GRAPHRT_VM_DYNAMIC_MODULE_ABI_H_ */
