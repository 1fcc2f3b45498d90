/* A C program over graphrt/c_api.h alone: one real trigger per error kind,
 * each checked by its return code (a graphrt_* call returns the negated kind,
 * a TVM* call -1) and by graphrt_last_error_kind(). The test runs it with
 * GRAPHRT_CUDA_DRIVER naming a driver that does not exist.
 *
 * usage: error_kinds_c FIXTURE_DIR SCRATCH_DIR   (exit 77: fixture absent) */
#include "graphrt/c_api.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int failures = 0;

/* rc must be `want_rc` and the recorded kind `kind`. */
static void expect(const char* what, int rc, int want_rc, int kind) {
  int got = graphrt_last_error_kind();
  if (rc != want_rc || got != kind) {
    fprintf(stderr, "%s: rc %d (want %d), kind %d (want %d): %s\n", what, rc, want_rc, got, kind, TVMGetLastError());
    ++failures;
  }
}
#define EXPECT_GRAPHRT(call, kind) expect(#call, (call), -(kind), (kind))
#define EXPECT_TVM(call, kind) expect(#call, (call), -1, (kind))

static char* read_all(const char* path, size_t* size) {
  FILE* f = fopen(path, "rb");
  char* data;
  long n;
  if (!f) return NULL;
  fseek(f, 0, SEEK_END);
  n = ftell(f);
  fseek(f, 0, SEEK_SET);
  data = malloc((size_t)n);
  *size = fread(data, 1, (size_t)n, f);
  fclose(f);
  return data;
}

static int call0(TVMFunctionHandle f) {
  TVMValue ret;
  int code;
  return TVMFuncCall(f, NULL, NULL, 0, &ret, &code);
}

static TVMModuleHandle graph_module(const char* fixture_dir) {
  char path[4096];
  TVMModuleHandle factory;
  TVMFunctionHandle create;
  TVMValue arg, ret;
  int code = kDLDevice, ret_code;
  snprintf(path, sizeof(path), "%s/deploy_factory.so", fixture_dir);
  if (graphrt_module_load(path, NULL, &factory) != 0 || TVMModGetFunction(factory, "default", 0, &create) != 0) {
    fprintf(stderr, "cannot load %s: %s\n", path, TVMGetLastError());
    exit(1);
  }
  arg.v_device.device_type = kDLCPU;
  arg.v_device.device_id = 0;
  if (TVMFuncCall(create, &arg, &code, 1, &ret, &ret_code) != 0) exit(1);
  TVMFuncFree(create);
  TVMModFree(factory);
  return ret.v_handle;
}

/* ---- interrupted: a VM call spinning on another thread ---- */
struct Spin {
  TVMFunctionHandle forever;
  int rc, kind, done;
};

static void* spin_thread(void* p) {
  struct Spin* s = p;
  s->rc = call0(s->forever);
  s->kind = graphrt_last_error_kind(); /* this thread's own last error */
  __atomic_store_n(&s->done, 1, __ATOMIC_RELEASE);
  return NULL;
}

static void check_interrupted(const char* scratch) {
  char path[4096];
  FILE* f;
  TVMFunctionHandle load, interrupt, budget;
  TVMValue arg, ret;
  int code, ret_code;
  struct Spin s = {NULL, 0, 0, 0};
  pthread_t thread;
  if (TVMFuncGetGlobal("graphrt.vm.load", &load) != 0 || !load) return; /* no VM back end */
  TVMFuncGetGlobal("graphrt.vm.interrupt", &interrupt);
  TVMFuncGetGlobal("graphrt.vm.set_instruction_budget", &budget);
  snprintf(path, sizeof(path), "%s/error_kinds_spin.vmasm", scratch);
  f = fopen(path, "w");
  fputs("module spin version 1\nfunc forever \"0_i\" export\nentry:\n  const.i32 %i0, 1\n  br loop\nloop:\n"
        "  br loop\nend\n", f);
  fclose(f);
  arg.v_int64 = (int64_t)1 << 62;
  code = kDLInt;
  TVMFuncCall(budget, &arg, &code, 1, &ret, &ret_code);
  arg.v_str = path;
  code = kTVMStr;
  if (TVMFuncCall(load, &arg, &code, 1, &ret, &ret_code) != 0) exit(1);
  TVMModGetFunction(ret.v_handle, "forever", 0, &s.forever);
  pthread_create(&thread, NULL, spin_thread, &s);
  arg.v_handle = ret.v_handle;
  while (!__atomic_load_n(&s.done, __ATOMIC_ACQUIRE)) {
    TVMValue out;
    int mod_code = kTVMModuleHandle, out_code;
    usleep(10000);
    TVMFuncCall(interrupt, &arg, &mod_code, 1, &out, &out_code);
  }
  pthread_join(thread, NULL);
  if (s.rc != -1 || s.kind != GRAPHRT_ERROR_INTERRUPTED) {
    fprintf(stderr, "interrupted VM call: rc %d, kind %d\n", s.rc, s.kind);
    ++failures;
  }
  TVMFuncFree(s.forever);
  TVMModFree(arg.v_handle);
  TVMFuncFree(load);
  TVMFuncFree(interrupt);
  TVMFuncFree(budget);
}

int main(int argc, char** argv) {
  char path[4096];
  const int64_t small[1] = {4}, huge[1] = {(int64_t)1 << 58};
  TVMArrayHandle array;
  TVMModuleHandle mod, import, gmod;
  TVMFunctionHandle run;
  const char *names, *key;
  TVMArrayHandle* arrays;
  char* params;
  size_t size;
  int count, n, available;

  if (argc < 3) return fprintf(stderr, "usage: %s FIXTURE_DIR SCRATCH_DIR\n", argv[0]), 2;
  snprintf(path, sizeof(path), "%s/deploy_params.params", argv[1]);
  params = read_all(path, &size);
  if (!params) return fprintf(stderr, "skipped: no fixture at %s\n", argv[1]), 77;

  /* invalid argument: a params file cut short */
  EXPECT_GRAPHRT(graphrt_params_load(params, size / 2, &count, &names, &arrays), GRAPHRT_ERROR_INVALID_ARGUMENT);
  free(params);

  /* not found: a model file that does not exist, by both calls */
  snprintf(path, sizeof(path), "%s/no_such_model.so", argv[2]);
  EXPECT_GRAPHRT(graphrt_module_load(path, NULL, &mod), GRAPHRT_ERROR_NOT_FOUND);
  EXPECT_TVM(TVMModLoadFromFile(path, "so", &mod), GRAPHRT_ERROR_NOT_FOUND);

  /* out of range: an import index past the module's imports */
  snprintf(path, sizeof(path), "%s/deploy_lib.so", argv[1]);
  if (graphrt_module_load(path, NULL, &mod) != 0 || graphrt_module_num_imports(mod, &n) != 0) return 1;
  EXPECT_GRAPHRT(graphrt_module_get_import(mod, n, &import), GRAPHRT_ERROR_OUT_OF_RANGE);
  TVMModFree(mod);

  /* unsupported: the dlopen loader from memory; a device type with no device API */
  EXPECT_GRAPHRT(graphrt_module_load_from_memory("\177ELF", 4, "dlopen", &mod), GRAPHRT_ERROR_UNSUPPORTED);
  EXPECT_TVM(TVMArrayAlloc(small, 1, kDLFloat, 32, 1, kDLMetal, 0, &array), GRAPHRT_ERROR_UNSUPPORTED);

  /* resource exhausted: 2^60 bytes */
  EXPECT_TVM(TVMArrayAlloc(huge, 1, kDLFloat, 32, 1, kDLCPU, 0, &array), GRAPHRT_ERROR_RESOURCE_EXHAUSTED);

  /* device: CUDA without its driver (skipped where the build has no CUDA back end) */
  if (graphrt_device_available(kDLCUDA, 0, &available, &key) == 0 && !strstr(key, "no device API")) {
    EXPECT_TVM(TVMArrayAlloc(small, 1, kDLFloat, 32, 1, kDLCUDA, 0, &array), GRAPHRT_ERROR_DEVICE);
  }

  /* interrupted */
  check_interrupted(argv[2]);

  /* type mismatch: a null module handle */
  EXPECT_GRAPHRT(graphrt_module_type_key(NULL, &key), GRAPHRT_ERROR_TYPE_MISMATCH);

  /* failed precondition: run() before the input is set */
  gmod = graph_module(argv[1]);
  if (TVMModGetFunction(gmod, "run", 0, &run) != 0) return 1;
  EXPECT_TVM(call0(run), GRAPHRT_ERROR_FAILED_PRECONDITION);
  TVMFuncFree(run);
  TVMModFree(gmod);

  /* internal: what a kernel reports with TVM's class prefix */
  TVMAPISetLastError("InternalError: check failed");
  expect("TVMAPISetLastError(InternalError)", -1, -1, GRAPHRT_ERROR_INTERNAL);

  if (failures) return fprintf(stderr, "%d error kind checks failed\n", failures), 1;
  printf("every error kind checked through the C API\n");
  return 0;
}
