/* graphrt VM dynamic module C ABI (versions 1 and 2).
 *
 * A shared library provides VM native modules through a creation function,
 * addressed as `lib.so@create_fn?key=value&k2=v2` (default creation function:
 * graphrt_vm_dynamic_module_create; keys and values arrive percent-decoded).
 * The host passes the highest ABI version it supports; the library must refuse
 * (return non-zero) when it needs a newer one and must set `abi_version` in the
 * module it fills (1 or 2), which the host checks again. Params live only
 * during the call; copy what you keep. Errors are reported by returning
 * non-zero after writing a NUL-terminated message into `error` (capacity
 * `error_capacity`).
 *
 * Version 1: functions in `functions`; values are scalars, a 'r' argument
 * arrives as the DLTensor* of a tensor ref (NULL for other refs) and results
 * cannot be refs.
 *
 * Version 2: functions in `functions2`, called with a graphrt_vm_abi_call that
 * gives access to the host (`call->host`): any ref crosses as an opaque
 * graphrt_vm_abi_ref* handle (tensor, buffer or list; NULL for a null ref),
 * results may be refs, and the module may import functions of modules linked
 * before it (`imports`, called through host->call_import). Handles are boxes:
 * each one is released exactly once by its owner. VmRef arguments are owned by
 * the host for the duration of the call; a ref result is owned by the host
 * once the function returns (one the library created, or ref_clone of an
 * argument); handles returned by host functions are owned by the caller. When
 * a host function fails it returns non-zero / NULL and remembers why; the
 * module function should then return non-zero, and the host reports that
 * remembered error (an interrupt, a budget or a trap in an import) instead of
 * the module's message. On failure the host releases ref results already set.
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

/* The newest ABI version the host supports; it also loads every version from
 * GRAPHRT_VM_DYNAMIC_ABI_MIN_VERSION on. */
#define GRAPHRT_VM_DYNAMIC_ABI_VERSION 2u
#define GRAPHRT_VM_DYNAMIC_ABI_MIN_VERSION 1u
#define GRAPHRT_VM_DYNAMIC_DEFAULT_CREATE "graphrt_vm_dynamic_module_create"
#define GRAPHRT_VM_DYNAMIC_EXPORT __attribute__((visibility("default")))

/* A host ref (v2): opaque, see the ownership rules above. */
typedef struct graphrt_vm_abi_ref graphrt_vm_abi_ref;

typedef union graphrt_vm_abi_value {
  int32_t i32;
  int64_t i64;
  float f32;
  double f64;
  DLTensor* tensor;        /* v1 'r' arguments */
  graphrt_vm_abi_ref* ref; /* v2 'r' arguments and results */
} graphrt_vm_abi_value;

/* Value types, in the order of the calling-convention letters i I f F r. */
enum {
  GRAPHRT_VM_ABI_I32 = 0,
  GRAPHRT_VM_ABI_I64 = 1,
  GRAPHRT_VM_ABI_F32 = 2,
  GRAPHRT_VM_ABI_F64 = 3,
  GRAPHRT_VM_ABI_REF = 4
};

/* VmRef kinds (graphrt_vm_abi_host.ref_kind). */
enum { GRAPHRT_VM_ABI_NULL = 0, GRAPHRT_VM_ABI_BUFFER = 1, GRAPHRT_VM_ABI_LIST = 2, GRAPHRT_VM_ABI_TENSOR = 3 };

typedef struct graphrt_vm_abi_string_pair {
  const char* key;
  const char* value;
} graphrt_vm_abi_string_pair;

struct graphrt_vm_abi_host;

/* The running call (v2): passed to every function, and back to the host. */
typedef struct graphrt_vm_abi_call {
  const struct graphrt_vm_abi_host* host;
  void* host_data; /* the host's; do not touch */
} graphrt_vm_abi_call;

/* Host services for v2 modules. Every function takes the running call. */
typedef struct graphrt_vm_abi_host {
  uint32_t abi_version;
  /* refs */
  int (*ref_kind)(graphrt_vm_abi_call* call, const graphrt_vm_abi_ref* ref);
  graphrt_vm_abi_ref* (*ref_clone)(graphrt_vm_abi_call* call, const graphrt_vm_abi_ref* ref);
  void (*ref_release)(graphrt_vm_abi_call* call, graphrt_vm_abi_ref* ref);
  /* tensors: the DLTensor of a tensor ref (NULL otherwise); a new zero-filled
   * host tensor */
  DLTensor* (*tensor_dl)(graphrt_vm_abi_call* call, const graphrt_vm_abi_ref* ref);
  graphrt_vm_abi_ref* (*tensor_create)(graphrt_vm_abi_call* call, int ndim, const int64_t* shape, DLDataType dtype);
  /* buffers: bytes and size of a buffer ref (NULL otherwise; *writable = 0 for
   * read-only buffers such as rodata); a new buffer holding a copy of `data` */
  uint8_t* (*buffer_data)(graphrt_vm_abi_call* call, const graphrt_vm_abi_ref* ref, size_t* size, int* writable);
  graphrt_vm_abi_ref* (*buffer_create)(graphrt_vm_abi_call* call, const void* data, size_t size);
  /* lists: size (-1 when not a list); element `index` (a ref element comes back
   * as a new handle); append an element (a ref is shared, not moved); a new
   * empty list */
  int64_t (*list_size)(graphrt_vm_abi_call* call, const graphrt_vm_abi_ref* list);
  int (*list_get)(graphrt_vm_abi_call* call, const graphrt_vm_abi_ref* list, int64_t index, int* type,
                  graphrt_vm_abi_value* out);
  int (*list_push)(graphrt_vm_abi_call* call, graphrt_vm_abi_ref* list, int type, graphrt_vm_abi_value value);
  graphrt_vm_abi_ref* (*list_create)(graphrt_vm_abi_call* call);
  /* imports: calls the module's import `index` (order of `imports`); values as
   * in a module function, ref results owned by the caller */
  int (*call_import)(graphrt_vm_abi_call* call, size_t index, const graphrt_vm_abi_value* args, size_t arg_count,
                     graphrt_vm_abi_value* results, size_t result_count);
} graphrt_vm_abi_host;

/* One exported function: `signature` is a non-variadic cconv ("0ii_i"). */
typedef int (*graphrt_vm_abi_function_fn)(void* self, const graphrt_vm_abi_value* args, size_t arg_count,
                                          graphrt_vm_abi_value* results, size_t result_count, char* error,
                                          size_t error_capacity);

typedef struct graphrt_vm_abi_function {
  const char* name;
  const char* signature;
  graphrt_vm_abi_function_fn fn;
} graphrt_vm_abi_function;

/* v2 functions also get the running call. */
typedef int (*graphrt_vm_abi_function2_fn)(void* self, graphrt_vm_abi_call* call, const graphrt_vm_abi_value* args,
                                           size_t arg_count, graphrt_vm_abi_value* results, size_t result_count,
                                           char* error, size_t error_capacity);

typedef struct graphrt_vm_abi_function2 {
  const char* name;
  const char* signature;
  graphrt_vm_abi_function2_fn fn;
} graphrt_vm_abi_function2;

/* v2: a function of another module ("module.function") this module calls;
 * resolved when the module is linked, against modules linked before it. An
 * optional import that is missing fails only when called. */
typedef struct graphrt_vm_abi_import {
  const char* full_name;
  const char* signature;
  int optional;
} graphrt_vm_abi_import;

/* v2: a module that must be linked before this one, with a minimum version. */
typedef struct graphrt_vm_abi_dependency {
  const char* name;
  uint32_t min_version;
  int optional;
} graphrt_vm_abi_dependency;

/* Filled by the creation function; strings and tables must stay valid until
 * `destroy(self)` is called (the host calls it before dlclose). The host
 * zero-fills the struct first, so a v1 library leaves the v2 fields zero. */
typedef struct graphrt_vm_abi_module {
  uint32_t abi_version;
  const char* name;
  uint32_t version;
  size_t function_count;                     /* entries of `functions` (v1) or `functions2` (v2) */
  const graphrt_vm_abi_function* functions;  /* v1 */
  void* self;
  void (*destroy)(void* self);
  /* version 2 */
  const graphrt_vm_abi_function2* functions2;
  size_t import_count;
  const graphrt_vm_abi_import* imports;
  size_t dependency_count;
  const graphrt_vm_abi_dependency* dependencies;
} graphrt_vm_abi_module;

typedef int (*graphrt_vm_abi_create_fn)(uint32_t max_abi_version, size_t param_count,
                                        const graphrt_vm_abi_string_pair* params, graphrt_vm_abi_module* out,
                                        char* error, size_t error_capacity);

#ifdef __cplusplus
}
#endif

#endif /* GRAPHRT_VM_DYNAMIC_MODULE_ABI_H_ */
