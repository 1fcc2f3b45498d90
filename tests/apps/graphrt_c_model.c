/* graphrt's C API for models (graphrt_model_*, graphrt_runner_*: the session
 * layer) from C, against real exports: a graph one-file and three-file form
 * (mlp) and a Relax executable with a symbolic batch of both ABIs
 * (relax_dynamic_batch, TVM v0.20 and v0.26). Metadata is checked against the
 * shapes of the case's own .npy files, outputs bit for bit against TVM's
 * (both cases' tolerance is 0), mistakes by their error kind.
 *
 * usage: graphrt_c_model FIXTURES_DIR   (exit 77: fixtures absent, skipped) */
#include <graphrt/c_api.h>

#include "c_test_support.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A call that must fail with error kind `kind` (its return value is -kind). */
#define CHECK_FAILS(kind, call)                                                                       \
  do {                                                                                                \
    int rc_ = (call);                                                                                 \
    if (rc_ != -(kind) || graphrt_last_error_kind() != (kind)) {                                      \
      fprintf(stderr, "%s:%d: %s returned %d, not -%d (%s)\n", __FILE__, __LINE__, #call, rc_, kind, \
              rc_ ? TVMGetLastError() : "");                                                          \
      exit(1);                                                                                        \
    }                                                                                                 \
  } while (0)

static DLTensor tensor_of(Npy* a) {
  DLTensor t;
  memset(&t, 0, sizeof(t));
  t.data = a->values;
  t.device.device_type = kDLCPU;
  t.ndim = a->ndim;
  t.dtype.code = kDLFloat;
  t.dtype.bits = 32;
  t.dtype.lanes = 1;
  t.shape = a->shape;
  return t;
}

/* Output 0 of the runner's last run equals `want`, shape and bytes. */
static void check_output(graphrt_runner_t runner, Npy* want) {
  TVMArrayHandle y;
  int n, i;
  CHECK_CALL(graphrt_runner_num_outputs(runner, &n));
  CHECK_TRUE(n == 1);
  CHECK_CALL(graphrt_runner_get_output(runner, 0, &y));
  CHECK_TRUE(y->ndim == want->ndim);
  for (i = 0; i < want->ndim; ++i) CHECK_TRUE(y->shape[i] == want->shape[i]);
  CHECK_TRUE(memcmp((char*)y->data + y->byte_offset, want->values, want->count * sizeof(float)) == 0);
  CHECK_CALL(TVMArrayFree(y));
}

/* The last run's structured result (graphrt_runner_get_result, read with graphrt_value_*): a
 * tensor equal to `want`, or (`in_tuple`: a graph's outputs) a tuple of one such tensor; and the
 * accessors' mistakes by their kind: an index outside the tuple, the wrong kind, NULL. */
static void check_result(graphrt_runner_t runner, Npy* want, int in_tuple) {
  TVMValue value, item;
  int code, item_code, kind, rank;
  int64_t size;
  TVMArrayHandle y;
  CHECK_CALL(graphrt_runner_get_result(runner, &value, &code));
  CHECK_CALL(graphrt_value_kind(&value, code, &kind));
  if (in_tuple) {
    CHECK_TRUE(kind == GRAPHRT_VALUE_TUPLE);
    CHECK_CALL(graphrt_value_tuple_size(value.v_handle, &size));
    CHECK_TRUE(size == 1);
    CHECK_FAILS(GRAPHRT_ERROR_OUT_OF_RANGE, graphrt_value_tuple_item(value.v_handle, 1, &item, &item_code));
    CHECK_FAILS(GRAPHRT_ERROR_OUT_OF_RANGE, graphrt_value_tuple_item(value.v_handle, -1, &item, &item_code));
    CHECK_FAILS(GRAPHRT_ERROR_TYPE_MISMATCH, graphrt_value_shape_rank(value.v_handle, &rank));
    CHECK_FAILS(GRAPHRT_ERROR_INVALID_ARGUMENT, graphrt_value_tuple_item(value.v_handle, 0, NULL, &item_code));
    CHECK_CALL(graphrt_value_tuple_item(value.v_handle, 0, &item, &item_code));
    CHECK_CALL(TVMObjectFree(value.v_handle));
    value = item;
    code = item_code;
    CHECK_CALL(graphrt_value_kind(&value, code, &kind));
  }
  CHECK_TRUE(kind == GRAPHRT_VALUE_TENSOR && code == kTVMNDArrayHandle);
  y = (TVMArrayHandle)value.v_handle;
  CHECK_TRUE(y->ndim == want->ndim && y->shape[0] == want->shape[0]);
  CHECK_TRUE(memcmp((char*)y->data + y->byte_offset, want->values, want->count * sizeof(float)) == 0);
  CHECK_CALL(TVMArrayFree(y));
  CHECK_FAILS(GRAPHRT_ERROR_INVALID_ARGUMENT, graphrt_value_tuple_size(NULL, &size));
  CHECK_FAILS(GRAPHRT_ERROR_INVALID_ARGUMENT, graphrt_value_kind(NULL, kTVMNullptr, &kind));
  CHECK_FAILS(GRAPHRT_ERROR_INVALID_ARGUMENT, graphrt_runner_get_result(runner, NULL, &code));
}

static void check_graph_model(const char* dir, const graphrt_model_options* options, const char* path) {
  graphrt_model_t model;
  graphrt_runner_t runner;
  graphrt_tensor_info info;
  Npy x = read_npy(dir, "input_data.npy"), want = read_npy(dir, "output_0.npy");
  DLTensor xt = tensor_of(&x);
  const char *name, *params;
  int n, kind, i, round;
  CHECK_CALL(graphrt_model_load(path, options, &model));
  CHECK_CALL(graphrt_model_kind(model, &kind));
  CHECK_TRUE(kind == 0);
  CHECK_CALL(graphrt_model_num_functions(model, &n));
  CHECK_TRUE(n == 1);
  CHECK_CALL(graphrt_model_function_name(model, 0, &name));
  CHECK_TRUE(strcmp(name, "default") == 0);
  CHECK_CALL(graphrt_model_num_inputs(model, NULL, &n));
  CHECK_TRUE(n == 1); /* the params are bound, not inputs */
  CHECK_CALL(graphrt_model_input_info(model, NULL, 0, &info));
  CHECK_TRUE(strcmp(info.name, "data") == 0 && info.known && info.symbols == NULL);
  CHECK_TRUE(info.dtype.code == kDLFloat && info.dtype.bits == 32 && info.ndim == x.ndim);
  for (i = 0; i < x.ndim; ++i) CHECK_TRUE(info.shape[i] == x.shape[i]);
  CHECK_CALL(graphrt_model_num_outputs(model, "default", &n));
  CHECK_TRUE(n == 1);
  CHECK_CALL(graphrt_model_output_info(model, "default", 0, &info));
  CHECK_TRUE(info.ndim == want.ndim && info.shape[info.ndim - 1] == want.shape[want.ndim - 1]);
  CHECK_CALL(graphrt_model_param_names(model, &params));
  CHECK_TRUE(strstr(params, "p0\n") != NULL);
  for (round = 0; round < 2; ++round) { /* the executor made at load, then a new one */
    CHECK_CALL(graphrt_runner_create(model, NULL, &runner));
    if (round == 0)
      CHECK_CALL(graphrt_runner_set_input(runner, "data", &xt));
    else
      CHECK_CALL(graphrt_runner_set_input_zero_copy(runner, "data", &xt));
    CHECK_CALL(graphrt_runner_run(runner));
    check_output(runner, &want);
    check_result(runner, &want, 1);
    CHECK_FAILS(GRAPHRT_ERROR_NOT_FOUND, graphrt_runner_set_input(runner, "nope", &xt));
    /* The error lists the inputs there are. */
    CHECK_TRUE(strstr(TVMGetLastError(), "unknown input 'nope' (data inputs: data; params: p0") != NULL);
    graphrt_runner_free(runner);
  }
  CHECK_FAILS(GRAPHRT_ERROR_OUT_OF_RANGE, graphrt_model_input_info(model, NULL, 1, &info));
  CHECK_FAILS(GRAPHRT_ERROR_NOT_FOUND, graphrt_runner_create(model, "main", &runner));
  graphrt_model_free(model);
  free(x.values);
  free(want.values);
}

/* relax_dynamic_batch: main(x: float32[n, 64]); two input sets, n = 5 and 1. */
static void check_relax_model(const char* dir) {
  char path[4096];
  graphrt_model_t model;
  graphrt_runner_t runner;
  graphrt_tensor_info info;
  Npy x = read_npy(dir, "input_x.npy"), want = read_npy(dir, "output_0.npy");
  Npy x1 = read_npy(dir, "input_x_n1.npy"), want1 = read_npy(dir, "output_0_n1.npy");
  DLTensor xt = tensor_of(&x), x1t = tensor_of(&x1);
  TVMArrayHandle y;
  TVMValue result;
  int n, kind, result_code;
  snprintf(path, sizeof(path), "%s/deploy_relax.so", dir);
  CHECK_CALL(graphrt_model_load(path, NULL, &model));
  CHECK_CALL(graphrt_model_kind(model, &kind));
  CHECK_TRUE(kind == 1);
  CHECK_CALL(graphrt_model_num_inputs(model, "main", &n));
  CHECK_TRUE(n == 1);
  CHECK_CALL(graphrt_model_input_info(model, NULL, 0, &info));
  CHECK_TRUE(strcmp(info.name, "x") == 0 && info.known && info.ndim == 2);
  CHECK_TRUE(info.dtype.code == kDLFloat && info.dtype.bits == 32);
  CHECK_TRUE(x.shape[0] != x1.shape[0]);                       /* the batch varies between the sets, */
  CHECK_TRUE(info.shape[0] == -1 && info.symbols[0] >= 0);     /* so it is symbolic, */
  CHECK_TRUE(info.shape[1] == x.shape[1] && info.symbols[1] == -1); /* the features fixed */
  CHECK_CALL(graphrt_model_num_outputs(model, NULL, &n));
  CHECK_TRUE(n == 0); /* a Relax function's outputs are known after a run */
  CHECK_CALL(graphrt_runner_create(model, NULL, &runner));
  CHECK_FAILS(GRAPHRT_ERROR_FAILED_PRECONDITION, graphrt_runner_run(runner)); /* x not set */
  CHECK_FAILS(GRAPHRT_ERROR_FAILED_PRECONDITION, graphrt_runner_get_result(runner, &result, &result_code));
  CHECK_CALL(graphrt_runner_set_input(runner, "x", &xt));
  CHECK_CALL(graphrt_runner_run(runner));
  check_output(runner, &want);
  CHECK_CALL(graphrt_runner_set_input_zero_copy(runner, "x", &x1t));
  CHECK_CALL(graphrt_runner_run(runner));
  check_output(runner, &want1);
  check_result(runner, &want1, 0);
  CHECK_FAILS(GRAPHRT_ERROR_OUT_OF_RANGE, graphrt_runner_get_output(runner, 1, &y));
  graphrt_runner_free(runner);
  graphrt_model_free(model);
  free(x.values);
  free(want.values);
  free(x1.values);
  free(want1.values);
}

int main(int argc, char** argv) {
  char dir[2048], lib[4096], graph[4096], params[4096];
  graphrt_model_options three;
  graphrt_model_t model = NULL;
  FILE* probe;
  if (argc < 2) return fprintf(stderr, "usage: %s FIXTURES_DIR\n", argv[0]), 2;
  snprintf(dir, sizeof(dir), "%s/mlp", argv[1]);
  snprintf(lib, sizeof(lib), "%s/deploy_factory.so", dir);
  probe = fopen(lib, "rb");
  if (!probe) return fprintf(stderr, "skipped: no fixtures at %s\n", argv[1]), 77;
  fclose(probe);

  check_graph_model(dir, NULL, lib);
  memset(&three, 0, sizeof(three));
  snprintf(lib, sizeof(lib), "%s/deploy_lib.so", dir);
  snprintf(graph, sizeof(graph), "%s/deploy_graph.json", dir);
  snprintf(params, sizeof(params), "%s/deploy_params.params", dir);
  three.graph_json_path = graph;
  three.params_path = params;
  check_graph_model(dir, &three, lib);

  snprintf(dir, sizeof(dir), "%s/relax/relax_dynamic_batch", argv[1]);
  check_relax_model(dir);
  snprintf(dir, sizeof(dir), "%s/relax-ffi/relax_dynamic_batch", argv[1]);
  check_relax_model(dir);

  /* Mistakes, named by the library: a params file as the model, a kernels
   * library without its graph, a null handle. */
  CHECK_TRUE(graphrt_model_load(params, NULL, &model) < 0 && strstr(TVMGetLastError(), "params file") != NULL);
  CHECK_TRUE(graphrt_model_load(lib, NULL, &model) < 0 && strstr(TVMGetLastError(), "graph JSON") != NULL);
  CHECK_FAILS(GRAPHRT_ERROR_INVALID_ARGUMENT, graphrt_runner_run(NULL));
  CHECK_TRUE(model == NULL);
  printf("graphrt_c_model: ok\n");
  return 0;
}
