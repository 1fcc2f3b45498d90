/* Misuse of graphrt_runner_* (c_api.h says what each gets), against real
 * exports: mlp (a graph) and relax_dynamic_batch (a Relax executable, both
 * ABIs). A DLTensor with NULL data or shape, or a lying ndim, is an error
 * naming the input; a zero-copy tensor with strides that are not compact is
 * refused (graph and Relax); a copied input after a zero-copy one never writes
 * into the caller's lent buffer; a runner called by 8 threads at once refuses
 * the overlapping calls (failed precondition) instead of crashing, and still
 * answers TVM's outputs afterwards.
 *
 * usage: graphrt_c_runner_misuse FIXTURES_DIR   (exit 77: fixtures absent) */
#include <graphrt/c_api.h>

#include "c_test_support.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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

/* Output 0 of the runner's last run equals `want` byte for byte. */
static int output_is(graphrt_runner_t runner, const Npy* want) {
  TVMArrayHandle y;
  int same;
  if (graphrt_runner_get_output(runner, 0, &y) != 0) return 0;
  same = y->ndim == want->ndim && memcmp((char*)y->data + y->byte_offset, want->values, want->count * 4) == 0;
  TVMArrayFree(y);
  return same;
}

/* What every runner refuses of a DLTensor, copied and zero-copy, naming input `name`. */
static void check_bad_tensors(graphrt_runner_t runner, const char* name, Npy* x) {
  int zero_copy;
  for (zero_copy = 0; zero_copy < 2; ++zero_copy) {
    int (*set)(graphrt_runner_t, const char*, const DLTensor*) =
        zero_copy ? graphrt_runner_set_input_zero_copy : graphrt_runner_set_input;
    DLTensor t = tensor_of(x);
    int64_t lying[1] = {3};
    t.data = NULL;
    CHECK_REFUSED(GRAPHRT_ERROR_INVALID_ARGUMENT, "null data", set(runner, name, &t));
    CHECK_REFUSED(GRAPHRT_ERROR_INVALID_ARGUMENT, name, set(runner, name, &t));
    t = tensor_of(x);
    t.shape = NULL;
    CHECK_REFUSED(GRAPHRT_ERROR_INVALID_ARGUMENT, "null shape", set(runner, name, &t));
    t = tensor_of(x);
    t.ndim = 1000000; /* a shape array of that length would be read past its end */
    CHECK_REFUSED(GRAPHRT_ERROR_INVALID_ARGUMENT, name, set(runner, name, &t));
    t = tensor_of(x);
    t.ndim = 1;
    t.shape = lying; /* the function's rank is 2 */
    CHECK_REFUSED(GRAPHRT_ERROR_INVALID_ARGUMENT, "rank", set(runner, name, &t));
    CHECK_REFUSED(GRAPHRT_ERROR_INVALID_ARGUMENT, "null tensor", set(runner, name, NULL));
  }
}

/* The input over every other float of a buffer twice its size (each stride doubled): read as
 * compact memory it would be the input interleaved with garbage. */
static void check_strided_zero_copy(graphrt_runner_t runner, const char* name, Npy* x) {
  DLTensor t = tensor_of(x);
  int64_t strides[8];
  float* wide = (float*)aligned_alloc(64, (x->count * 2 * 4 + 63) / 64 * 64);
  int64_t step = 1;
  size_t i;
  int d;
  CHECK_TRUE(wide != NULL);
  for (i = 0; i < x->count; ++i) {
    wide[2 * i] = x->values[i];
    wide[2 * i + 1] = 1e30f;
  }
  for (d = x->ndim - 1; d >= 0; --d) {
    strides[d] = 2 * step;
    step *= x->shape[d];
  }
  t.data = wide;
  t.strides = strides;
  CHECK_REFUSED(GRAPHRT_ERROR_INVALID_ARGUMENT, "compact", graphrt_runner_set_input_zero_copy(runner, name, &t));
  CHECK_REFUSED(GRAPHRT_ERROR_INVALID_ARGUMENT, name, graphrt_runner_set_input_zero_copy(runner, name, &t));
  for (d = 0; d < x->ndim; ++d) strides[d] /= 2; /* compact strides, given explicitly: fine */
  t.data = x->values;
  CHECK_CALL(graphrt_runner_set_input_zero_copy(runner, name, &t));
  free(wide);
}

/* After a zero-copy input, a copied one goes to the runner's own storage: the lent buffer
 * keeps its bytes, and the run answers for the copied values. */
static void check_copy_after_zero_copy(graphrt_runner_t runner, const char* name, Npy* x, const Npy* want) {
  Npy lent = *x;
  DLTensor t;
  float* zeros = (float*)calloc(x->count, 4);
  lent.values = (float*)aligned_alloc(64, (x->count * 4 + 63) / 64 * 64);
  CHECK_TRUE(zeros && lent.values);
  memcpy(lent.values, x->values, x->count * 4);
  t = tensor_of(&lent);
  CHECK_CALL(graphrt_runner_set_input_zero_copy(runner, name, &t));
  CHECK_CALL(graphrt_runner_run(runner));
  CHECK_TRUE(output_is(runner, want));
  t.data = zeros;
  CHECK_CALL(graphrt_runner_set_input(runner, name, &t));
  CHECK_TRUE(memcmp(lent.values, x->values, x->count * 4) == 0); /* not written into */
  memset(lent.values, 0xff, x->count * 4);                       /* the caller reuses its buffer */
  t = tensor_of(x);
  CHECK_CALL(graphrt_runner_set_input(runner, name, &t));
  CHECK_CALL(graphrt_runner_run(runner));
  CHECK_TRUE(output_is(runner, want));
  free(lent.values);
  free(zeros);
}

typedef struct {
  graphrt_runner_t runner;
  const char* name;
  Npy* x;
  int refused, other_errors, calls;
} Shared;

static pthread_mutex_t counts = PTHREAD_MUTEX_INITIALIZER;

static void count(Shared* s, int rc) {
  pthread_mutex_lock(&counts);
  ++s->calls;
  if (rc == -GRAPHRT_ERROR_FAILED_PRECONDITION && strstr(TVMGetLastError(), "another thread") != NULL)
    ++s->refused;
  else if (rc != 0)
    ++s->other_errors;
  pthread_mutex_unlock(&counts);
}

static void* hammer(void* arg) {
  Shared* s = (Shared*)arg;
  DLTensor t = tensor_of(s->x);
  TVMArrayHandle y;
  int i, rc;
  for (i = 0; i < 300; ++i) {
    count(s, graphrt_runner_set_input(s->runner, s->name, &t));
    count(s, graphrt_runner_run(s->runner));
    rc = graphrt_runner_get_output(s->runner, 0, &y);
    /* out of range: another thread's set_input came between this run and now (Relax) */
    if (rc == -GRAPHRT_ERROR_OUT_OF_RANGE) rc = 0;
    count(s, rc);
    if (rc == 0 && y) TVMArrayFree(y);
    y = NULL;
  }
  return NULL;
}

static void check_shared_by_threads(graphrt_runner_t runner, const char* name, Npy* x, const Npy* want) {
  pthread_t threads[8];
  Shared s;
  int i;
  memset(&s, 0, sizeof(s));
  s.runner = runner;
  s.name = name;
  s.x = x;
  for (i = 0; i < 8; ++i) CHECK_TRUE(pthread_create(&threads[i], NULL, hammer, &s) == 0);
  for (i = 0; i < 8; ++i) pthread_join(threads[i], NULL);
  if (s.other_errors != 0 || s.refused == 0)
    fprintf(stderr, "8 threads, %d calls: %d refused, %d other errors\n", s.calls, s.refused, s.other_errors);
  CHECK_TRUE(s.other_errors == 0);
  CHECK_TRUE(s.refused > 0);
  {
    DLTensor t = tensor_of(x); /* one thread again: the runner answers as before */
    CHECK_CALL(graphrt_runner_set_input(runner, name, &t));
    CHECK_CALL(graphrt_runner_run(runner));
    CHECK_TRUE(output_is(runner, want));
  }
}

static void check_model(const char* path, const char* name, Npy* x, const Npy* want) {
  graphrt_model_t model;
  graphrt_runner_t runner;
  CHECK_CALL(graphrt_model_load(path, NULL, &model));
  CHECK_CALL(graphrt_runner_create(model, NULL, &runner));
  check_bad_tensors(runner, name, x);
  check_strided_zero_copy(runner, name, x);
  check_copy_after_zero_copy(runner, name, x, want);
  check_shared_by_threads(runner, name, x, want);
  graphrt_runner_free(runner);
  graphrt_model_free(model);
}

static void check_case(const char* dir, const char* library, const char* name, const char* input,
                       const char* output) {
  char path[4096];
  Npy x = read_npy(dir, input), want = read_npy(dir, output);
  snprintf(path, sizeof(path), "%s/%s", dir, library);
  check_model(path, name, &x, &want);
  free(x.values);
  free(want.values);
}

int main(int argc, char** argv) {
  char dir[2048], probe_path[4096];
  FILE* probe;
  if (argc < 2) return fprintf(stderr, "usage: %s FIXTURES_DIR\n", argv[0]), 2;
  snprintf(dir, sizeof(dir), "%s/mlp", argv[1]);
  snprintf(probe_path, sizeof(probe_path), "%s/deploy_factory.so", dir);
  probe = fopen(probe_path, "rb");
  if (!probe) return fprintf(stderr, "skipped: no fixtures at %s\n", argv[1]), 77;
  fclose(probe);
  check_case(dir, "deploy_factory.so", "data", "input_data.npy", "output_0.npy");
  snprintf(dir, sizeof(dir), "%s/relax/relax_dynamic_batch", argv[1]);
  check_case(dir, "deploy_relax.so", "x", "input_x.npy", "output_0.npy");
  snprintf(dir, sizeof(dir), "%s/relax-ffi/relax_dynamic_batch", argv[1]);
  check_case(dir, "deploy_relax.so", "x", "input_x.npy", "output_0.npy");
  printf("graphrt_c_runner_misuse: ok\n");
  return 0;
}
