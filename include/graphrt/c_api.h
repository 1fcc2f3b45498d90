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

/* ---- calls with their arguments and result in one block ----
 * For bindings whose every foreign call and every argument of one costs (Python's ctypes):
 * the caller keeps blocks, writes a function and its arguments into one and makes one call of
 * one argument per invocation. graphrt_function_call_block(block) calls block->function with
 * block->args / block->type_codes (block->num_args of them, as TVMFuncCall takes them) and
 * fills the ret_* fields: ret_value and ret_type_code as TVMFuncCall returns them (a returned
 * handle is the caller's), ret_type_index the type index of a kTVMObjectHandle result (what
 * TVMObjectGetTypeIndex would say; 0 for other results), elapsed_ns the call's own duration
 * (a binding can tell from it whether releasing its interpreter lock pays).
 * block->num_free values after the arguments (args[num_args .. num_args + num_free), with
 * their type codes) are references the caller drops, so that a binding frees what its
 * program let go of (the previous call's result) in the next call instead of a foreign call
 * each: kTVMNDArrayHandle ones as TVMArrayFree, kTVMObjectHandle ones as TVMObjectFree, a
 * NULL handle skipped. They are dropped before the function is called, whether or not the
 * call then succeeds (a null function handle too); a negative count, a missing array, or
 * another type code among them fails the whole block with nothing dropped and nothing called
 * (GRAPHRT_ERROR_INVALID_ARGUMENT). */
typedef struct graphrt_call_block {
  /* what a call sets, first: a binding writes them and reads the results with one copy each */
  TVMFunctionHandle function;
  int num_args;
  int num_free;
  TVMValue ret_value;
  int ret_type_code;
  uint32_t ret_type_index;
  int64_t elapsed_ns;
  /* where the arguments are, usually set once per block */
  TVMValue* args;
  int* type_codes;
} graphrt_call_block;
GRAPHRT_API int graphrt_function_call_block(graphrt_call_block* block);

/* ---- arrays ---- */
/* A view of `handle` with another shape/dtype sharing its memory (new reference). */
GRAPHRT_API int graphrt_array_view(TVMArrayHandle handle, const tvm_index_t* shape, int ndim, int dtype_code, int dtype_bits,
                       int dtype_lanes, TVMArrayHandle* out);
/* The same, starting `byte_offset` bytes into `handle`'s data (TVM's _create_view). */
GRAPHRT_API int graphrt_array_view_at(TVMArrayHandle handle, const tvm_index_t* shape, int ndim, int dtype_code, int dtype_bits,
                          int dtype_lanes, uint64_t byte_offset, TVMArrayHandle* out);

/* ---- values (graphrt/value.h): what functions and runners return ----
 * A result is a packed value (a TVMValue and its type code, as TVMFuncCall returns it); these
 * read its structure with no function called by name. A tuple or a shape is an object handle
 * (free it with TVMObjectFree), a tensor an array handle (TVMArrayHandle). The tuple and shape
 * functions take object handles (values of type code kTVMObjectHandle) only: an array handle is
 * no object. Another kind of object: GRAPHRT_ERROR_TYPE_MISMATCH; NULL handle or pointer:
 * GRAPHRT_ERROR_INVALID_ARGUMENT. */
#define GRAPHRT_VALUE_NONE 0
#define GRAPHRT_VALUE_TENSOR 1
#define GRAPHRT_VALUE_TUPLE 2
#define GRAPHRT_VALUE_SHAPE 3
#define GRAPHRT_VALUE_INT 4
#define GRAPHRT_VALUE_FLOAT 5
#define GRAPHRT_VALUE_STRING 6
#define GRAPHRT_VALUE_OBJECT 7 /* a module, function or other object (a closure, a KV cache) */
/* One of GRAPHRT_VALUE_*; a raw handle, device or dtype is a type mismatch. */
GRAPHRT_API int graphrt_value_kind(const TVMValue* value, int type_code, int* out);
GRAPHRT_API int graphrt_value_tuple_size(TVMObjectHandle tuple, int64_t* out);
/* Item `index` as a new packed value (objects carry a reference; strings are thread-local);
 * an index outside the tuple: GRAPHRT_ERROR_OUT_OF_RANGE. */
GRAPHRT_API int graphrt_value_tuple_item(TVMObjectHandle tuple, int64_t index, TVMValue* out, int* out_type_code);
GRAPHRT_API int graphrt_value_shape_rank(TVMObjectHandle shape, int* out);
/* The dims, valid as long as the shape. */
GRAPHRT_API int graphrt_value_shape_dims(TVMObjectHandle shape, const int64_t** out);

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

/* ---- models (the session layer, graphrt/session.h) ----
 * One typed way in for any artifact graphrt reads: a graph one-file export,
 * .tar, tvmc package or three-file form, or a Relax executable, of any ABI.
 *
 *   graphrt_model_t model;
 *   graphrt_model_load("deploy.so", NULL, &model);
 *   graphrt_runner_t runner;
 *   graphrt_runner_create(model, NULL, &runner);      (NULL: the entry, "default" / "main")
 *   graphrt_runner_set_input(runner, "x", &x);        (a DLTensor, copied)
 *   graphrt_runner_run(runner);
 *   graphrt_runner_get_output(runner, 0, &y);         (free y with TVMArrayFree)
 *   graphrt_runner_free(runner); graphrt_model_free(model);
 *
 * A model is used by any number of threads; a runner by one thread at a time
 * (make one per thread): a call that overlaps another thread's call on the same
 * runner fails with GRAPHRT_ERROR_FAILED_PRECONDITION (calls that do not overlap
 * cannot be told apart). Models load through the process's default runtime. */
typedef struct graphrt_model* graphrt_model_t;
typedef struct graphrt_runner* graphrt_runner_t;

/* How to load; NULL options (or all fields zero) load a one-file export or a
 * Relax executable on the CPU with the dlopen loader. */
typedef struct {
  const char* graph_json_path; /* three-file form: the graph JSON (the path is then the kernels library) */
  const char* params_path;     /* three-file form: the params file (optional) */
  const char* loader;          /* NULL or "": dlopen; "elf": loaded without dlopen */
  int trust_exports;           /* 1: call exported functions of a library that is not TVM's */
  int device_type;             /* 0: the CPU (kDLCPU) */
  int device_id;
  const char* memory_plan;     /* graph: NULL or "" (the default), "tvm", "liveness", "auto" */
} graphrt_model_options;

/* An input or output as the model says it: the pointers stay valid as long as
 * the model. `known` 0: the artifact gives no dtype and shape (a Relax
 * parameter its code does not check); `shape` has -1 for a symbolic dimension,
 * and `symbols` (NULL for graphs) the symbolic variable of each dimension
 * (equal values, equal sizes; -1 for a fixed one). */
typedef struct {
  const char* name;
  int known;
  DLDataType dtype;
  int ndim;
  const int64_t* shape;
  const int64_t* symbols;
} graphrt_tensor_info;

GRAPHRT_API int graphrt_model_load(const char* path, const graphrt_model_options* options, graphrt_model_t* out);
GRAPHRT_API void graphrt_model_free(graphrt_model_t model);
/* 0: a graph (one function, "default"), 1: a Relax executable. */
GRAPHRT_API int graphrt_model_kind(graphrt_model_t model, int* out);
GRAPHRT_API int graphrt_model_num_functions(graphrt_model_t model, int* out);
GRAPHRT_API int graphrt_model_function_name(graphrt_model_t model, int index, const char** out);
/* `function` NULL or "": the entry. Params bound at load are not inputs. A
 * Relax function's outputs are known after a run only (num_outputs 0). */
GRAPHRT_API int graphrt_model_num_inputs(graphrt_model_t model, const char* function, int* out);
GRAPHRT_API int graphrt_model_input_info(graphrt_model_t model, const char* function, int index, graphrt_tensor_info* out);
GRAPHRT_API int graphrt_model_num_outputs(graphrt_model_t model, const char* function, int* out);
GRAPHRT_API int graphrt_model_output_info(graphrt_model_t model, const char* function, int index, graphrt_tensor_info* out);
/* The names of the params bound at load, one a line (valid as long as the model). */
GRAPHRT_API int graphrt_model_param_names(graphrt_model_t model, const char** out);

/* A runner of `function` (NULL or "": the entry); it keeps the model alive. */
GRAPHRT_API int graphrt_runner_create(graphrt_model_t model, const char* function, graphrt_runner_t* out);
GRAPHRT_API void graphrt_runner_free(graphrt_runner_t runner);
/* Input `name` from `value`: a copy, or (zero_copy) the caller's memory, which
 * must stay valid and unchanged until the runs using it are done (the runner
 * keeps no reference: a DLTensor has no owner to keep). A copied input after a
 * zero-copy one goes to the runner's own storage, never into the memory lent.
 * Refused with GRAPHRT_ERROR_INVALID_ARGUMENT naming the input, nothing read:
 * NULL `value`, NULL `data` (of a tensor with elements) or `shape`, `ndim` not
 * the function's rank, a negative dimension; strides that are not compact
 * row-major (zero-copy; a copy refuses them too); a zero-copy tensor of a
 * Relax function on another device than the model's. */
GRAPHRT_API int graphrt_runner_set_input(graphrt_runner_t runner, const char* name, const DLTensor* value);
GRAPHRT_API int graphrt_runner_set_input_zero_copy(graphrt_runner_t runner, const char* name, const DLTensor* value);
GRAPHRT_API int graphrt_runner_run(graphrt_runner_t runner);
GRAPHRT_API int graphrt_runner_num_outputs(graphrt_runner_t runner, int* out);
/* Output `index` of the last run: a new array handle on the runner's storage
 * (free it with TVMArrayFree; the next run may overwrite what it holds). */
GRAPHRT_API int graphrt_runner_get_output(graphrt_runner_t runner, int index, TVMArrayHandle* out);
/* The last run's result as one packed value (read it with graphrt_value_*): a Relax
 * function's return value as it is (a tensor, a nested tuple, a shape, an int, ...), a graph's
 * outputs as a tuple of tensors. Before any run: GRAPHRT_ERROR_FAILED_PRECONDITION. */
GRAPHRT_API int graphrt_runner_get_result(graphrt_runner_t runner, TVMValue* out, int* out_type_code);

/* ---- language models as MLC-LLM ships them (graphrt/text_generation.h) ----
 * A model folder (mlc-chat-config.json, the tensor cache, the tokenizer's files, the library),
 * text in and text out; the same behaviour as graphrt-run's --generate and Python's
 * graphrt.LanguageModel.
 *
 *   graphrt_lm_t lm;
 *   graphrt_lm_open("dist/tiny_gpt2_chat", NULL, 0, 0, &lm);   (NULL: <name>-cpu.so beside)
 *   const char* text;
 *   graphrt_lm_generate(lm, "Once upon a time,", "{\"temperature\": 0, \"max_tokens\": 16}",
 *                       NULL, NULL, &text, NULL);
 *   graphrt_lm_free(lm);
 *
 * `config_json`: NULL or a JSON object of generation fields over the model's defaults
 * (temperature, top_p, top_k, presence_penalty, frequency_penalty, repetition_penalty,
 * logit_bias, seed, max_tokens, stop, stop_token_ids, logprobs, top_logprobs); an unknown
 * field or a value out of range fails, naming it. Strings handed out are the calling thread's
 * until its next call of the same function. One thread at a time per model. */
typedef struct graphrt_lm* graphrt_lm_t;
/* A piece of streamed text (whole UTF-8 characters); a non-zero return stops the generation
 * (the call then fails with kInterrupted). */
typedef int (*graphrt_text_callback)(const char* piece, size_t size, void* user_data);

/* model_lib NULL or "": <folder>/<name>-<device>.so; device_type 0: the CPU. */
GRAPHRT_API int graphrt_lm_open(const char* folder, const char* model_lib, int device_type, int device_id, graphrt_lm_t* out);
GRAPHRT_API void graphrt_lm_free(graphrt_lm_t lm);
/* The token ids of `text` (no special tokens added). */
GRAPHRT_API int graphrt_lm_tokenize(graphrt_lm_t lm, const char* text, const int32_t** ids, size_t* count);
GRAPHRT_API int graphrt_lm_detokenize(graphrt_lm_t lm, const int32_t* ids, size_t count, const char** text);
/* A completion of `prompt` (encoded as is); `on_text` (may be NULL) gets each piece as it is
 * released. *text: the completion; *result_json (may be NULL): {"text", "finish_reason",
 * "tokens", "prompt_tokens", "logprobs", "time_to_first_token_s", "decode_s"}. */
GRAPHRT_API int graphrt_lm_generate(graphrt_lm_t lm, const char* prompt, const char* config_json,
                                    graphrt_text_callback on_text, void* user_data, const char** text,
                                    const char** result_json);
/* The assistant's answer under the model's conv_template; messages_json:
 * [{"role": "system"|"user"|"assistant"|"tool", "content": "..."}, ...]. */
GRAPHRT_API int graphrt_lm_chat(graphrt_lm_t lm, const char* messages_json, const char* config_json,
                                graphrt_text_callback on_text, void* user_data, const char** text,
                                const char** result_json);
/* The model's request defaults, as a JSON object of generation fields. */
GRAPHRT_API int graphrt_lm_default_config(graphrt_lm_t lm, const char** config_json);

/* Steps of the model itself (graphrt::LanguageModel::step): sequences of the KV cache under
 * the caller's ids, and one call per step that appends each sequence's new tokens and gives the
 * logits of its last one; no tokenizer, no sampler. As MLC's engine: a step of one token per
 * sequence is one batch_decode (KV cache's begin_forward, the model, end_forward), else one
 * batch_prefill (split where it passes the prefill chunk or the batch size).
 *
 *   int64_t ids[2] = {0, 1};
 *   int32_t prompts[5] = {464, 3139, 286, 7454, 2402};
 *   int64_t offsets[3] = {0, 3, 5};                  sequence i: prompts[offsets[i] .. offsets[i + 1])
 *   const float* logits;                             float32 [2, vocab]: row i is sequence i's
 *   graphrt_lm_add_sequence(lm, 0); graphrt_lm_add_sequence(lm, 1);
 *   graphrt_lm_step(lm, 2, ids, prompts, offsets, &logits);
 *   int32_t next[2] = {argmax(logits), argmax(logits + vocab)};
 *   graphrt_lm_step(lm, 2, ids, next, NULL, &logits);   offsets NULL: one token each (a decode)
 *
 * *logits is owned by `lm` and holds until its next step, sequence call, generation or free.
 * Sequence ids are not negative; the generation calls above take ids not in use. Refused before
 * any forward pass, naming the sequence ("sequence" in the message): n 0 or NULL arrays
 * (invalid argument), a sequence not added (not found) or twice in the step, no token, a token
 * outside [0, vocab) or a sequence past its length limit (out of range), offsets that do not
 * start at 0 or go down. A steady decode allocates nothing (after its first steps). */
/* A language model of a library alone whose forward functions take token ids and hold their
 * weights (prefill / decode on the KV cache, as the relax_tiny_llm_* fixtures): only the calls
 * below (the text calls fail with failed precondition). max_total_seq_len, prefill_chunk_size
 * 0: 64 and 16 (graphrt::LanguageModelOptions); one sequence per forward pass. */
GRAPHRT_API int graphrt_lm_open_library(const char* path, int64_t max_total_seq_len, int64_t prefill_chunk_size,
                                        int device_type, int device_id, graphrt_lm_t* out);
GRAPHRT_API int graphrt_lm_add_sequence(graphrt_lm_t lm, int64_t seq_id);
GRAPHRT_API int graphrt_lm_remove_sequence(graphrt_lm_t lm, int64_t seq_id);
GRAPHRT_API int graphrt_lm_vocab_size(graphrt_lm_t lm, int64_t* out);
GRAPHRT_API int graphrt_lm_step(graphrt_lm_t lm, size_t n, const int64_t* seq_ids, const int32_t* tokens,
                                const int64_t* offsets, const float** logits);

/* ---- warnings ---- */
/* The library never prints: warnings (level 1) go to this callback, or nowhere
 * when it is NULL (the default). */
typedef void (*graphrt_log_callback)(int level, const char* message, void* user_data);
GRAPHRT_API void graphrt_set_log_callback(graphrt_log_callback callback, void* user_data);

/* ---- the VM (backends/vm): global functions, through TVMFuncGetGlobal / TVMFuncCall ----
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
