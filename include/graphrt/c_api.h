/* graphrt's C API: what bindings and other languages use.
 *
 * Every int-returning function returns 0 on success. On failure the graphrt_*
 * functions below return the negated error kind (-GRAPHRT_ERROR_NOT_FOUND,
 * ...), while TVM's own functions (TVM*, TVM's signatures, from
 * tvm/runtime/c_runtime_api.h and c_backend_api.h) keep TVM's -1. After any
 * failure, TVMGetLastError() gives the message and graphrt_last_error_kind()
 * the kind (both thread-local). No C++ exception crosses this boundary
 * (TVMThrowLastError, for C++ callers, throws on purpose). */
#ifndef GRAPHRT_C_API_H_
#define GRAPHRT_C_API_H_

#include "graphrt/export.h"
#include "graphrt/tvm_abi.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- errors ---- */
/* What kind of failure the last one was (graphrt::ErrorKind's values). */
#define GRAPHRT_ERROR_INVALID_ARGUMENT 2     /* malformed input: a corrupt file, a bad value or shape */
#define GRAPHRT_ERROR_NOT_FOUND 3            /* a file, symbol, function, input or output that does not exist */
#define GRAPHRT_ERROR_OUT_OF_RANGE 4         /* an index past the end of what it indexes */
#define GRAPHRT_ERROR_UNSUPPORTED 5          /* valid input that graphrt does not implement */
#define GRAPHRT_ERROR_RESOURCE_EXHAUSTED 6   /* memory, budgets and limits */
#define GRAPHRT_ERROR_DEVICE 7               /* a device or driver failure */
#define GRAPHRT_ERROR_INTERRUPTED 8          /* a run stopped on request */
#define GRAPHRT_ERROR_TYPE_MISMATCH 9        /* a value of the wrong type (an argument, a handle) */
#define GRAPHRT_ERROR_FAILED_PRECONDITION 10 /* a call made in the wrong state */
#define GRAPHRT_ERROR_INTERNAL 11            /* a broken invariant of graphrt itself */
/* The kind of the calling thread's last failure, by any function of this
 * header, TVM's included: as TVMGetLastError(), it is kept until the next
 * failure (a success does not reset it), so read it right after the call that
 * failed. An error set with TVMAPISetLastError is an invalid argument unless
 * its message starts with a TVM-style class prefix ("IndexError: ",
 * "KeyError: ", "TypeError: ", ...); before any failure it is
 * GRAPHRT_ERROR_INVALID_ARGUMENT. */
GRAPHRT_API int graphrt_last_error_kind(void);

/* ---- modules ---- */
/* loader: "dlopen" (default when NULL) or "elf" (embedded loader, no dlopen). */
GRAPHRT_API int graphrt_module_load(const char* path, const char* loader, TVMModuleHandle* out);
GRAPHRT_API int graphrt_module_load_from_memory(const void* data, size_t size, const char* loader, TVMModuleHandle* out);
/* A library with no TVM blob and no TVM-ABI symbol is refused: its functions are not known to
 * be packed functions. GRAPHRT_LOAD_TRUST_EXPORTS loads it anyway and calls its exported
 * functions as packed functions (hand-written kernels without TVM markers). */
#define GRAPHRT_LOAD_TRUST_EXPORTS 1
GRAPHRT_API int graphrt_module_load_with_flags(const char* path, const char* loader, int flags, TVMModuleHandle* out);
/* Strings below live in thread-local storage until the next call. */
GRAPHRT_API int graphrt_module_type_key(TVMModuleHandle mod, const char** out);
GRAPHRT_API int graphrt_module_num_imports(TVMModuleHandle mod, int* out);
/* Returns a new reference: free it with TVMModFree. */
GRAPHRT_API int graphrt_module_get_import(TVMModuleHandle mod, int index, TVMModuleHandle* out);
/* Newline-separated function names of this module (not its imports). */
GRAPHRT_API int graphrt_module_function_names(TVMModuleHandle mod, const char** out);
/* What a module of this kind is and how it is used, when its kind says ("a Relax executable
 * (...): run it with a Relax VM ..."), else "": for the message of a function it lacks. */
GRAPHRT_API int graphrt_module_usage_hint(TVMModuleHandle mod, const char** out);
/* Indented text of the whole module tree. */
GRAPHRT_API int graphrt_module_describe(TVMModuleHandle mod, const char** out);
GRAPHRT_API int graphrt_load_plugin(const char* path);

/* ---- arrays ---- */
/* A view of `handle` with another shape/dtype sharing its memory (new reference). */
GRAPHRT_API int graphrt_array_view(TVMArrayHandle handle, const tvm_index_t* shape, int ndim, int dtype_code, int dtype_bits,
                       int dtype_lanes, TVMArrayHandle* out);
/* The same, starting `byte_offset` bytes into `handle`'s data (TVM's _create_view). */
GRAPHRT_API int graphrt_array_view_at(TVMArrayHandle handle, const tvm_index_t* shape, int ndim, int dtype_code, int dtype_bits,
                          int dtype_lanes, uint64_t byte_offset, TVMArrayHandle* out);

/* ---- devices and streams ---- */
/* *available = 1 when usable; otherwise *reason says why (thread-local). */
GRAPHRT_API int graphrt_device_available(int device_type, int device_id, int* available, const char** reason);
/* Thread-pool size for parallel kernels (n <= 0: TVM_NUM_THREADS / cores). */
GRAPHRT_API int graphrt_set_num_threads(int n);
GRAPHRT_API int graphrt_get_num_threads(int* out);

/* ---- params (TVM save_param_dict format) ---- */
/* Parses a params blob: *names is newline-separated (thread-local), *arrays an
 * array of *count new NDArray handles (free each with TVMArrayFree, then the
 * array itself with graphrt_free_handle_array). */
GRAPHRT_API int graphrt_params_load(const void* data, size_t size, int* count, const char** names, TVMArrayHandle** arrays);
GRAPHRT_API void graphrt_free_handle_array(TVMArrayHandle* arrays);
/* Serialises `count` named arrays; *out points at thread-local bytes. */
GRAPHRT_API int graphrt_params_save(int count, const char** names, TVMArrayHandle* arrays, const char** out, size_t* out_size);

/* ---- warnings ---- */
/* The library never prints: warnings (level 1) go to this callback, or nowhere
 * when it is NULL (the default). */
typedef void (*graphrt_log_callback)(int level, const char* message, void* user_data);
GRAPHRT_API void graphrt_set_log_callback(graphrt_log_callback callback, void* user_data);

/* ---- the VM (modules/vm): global functions, through TVMFuncGetGlobal / TVMFuncCall ----
 *   graphrt.vm.load(path, [module...])     a .vmbc/.vmasm module (kTVMModuleHandle) whose
 *                                          functions take ints, floats, DLTensor/NDArray,
 *                                          bytes, lists and NULL by their signature; one
 *                                          result comes back as itself, several as one list
 *                                          object of type key "graphrt.vm.Results"
 *   graphrt.vm.list(types, item...)        a new list (kTVMObjectHandle, "graphrt.vm.List";
 *                                          free with TVMObjectFree); `types` is a string
 *                                          with one letter per item: i i32, I i64, f f32,
 *                                          F f64, r ref
 *   graphrt.vm.list_size(list)             element count
 *   graphrt.vm.list_get(list, i)           element i, converted like a result
 *   graphrt.vm.list_types(list)            the elements' type letters
 *   graphrt.vm.interrupt(module), graphrt.vm.set_instruction_budget(n) */

/* Registers the built-in back ends, devices and global functions now; every call
 * that needs them otherwise does so on first use (bindings call this at import,
 * so that the first model load does not pay for it). */
GRAPHRT_API int graphrt_init(void);

/* Version string of graphrt and of the TVM ABI it implements. */
GRAPHRT_API const char* graphrt_version(void);

#ifdef __cplusplus
}
#endif

#endif /* GRAPHRT_C_API_H_ */
