/* A C program written against TVM's C API headers only: loads a Relax export
 * (deploy_relax.so of a relax_mlp case: TVM v0.20's packed ABI or v0.26's
 * tvm-ffi ABI), makes its VM through the module's packed functions as TVM's
 * C deploy code does (vm_load_executable, vm_initialization), calls main and
 * compares the output with TVM's own, bit for bit.
 *
 * usage: tvm_c_relax_deploy CASE_DIR   (exit 77: fixture absent, skipped) */
#include <tvm/runtime/c_backend_api.h>
#include <tvm/runtime/c_runtime_api.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CHECK_CALL(call)                                                        \
  do {                                                                          \
    if ((call) != 0) {                                                          \
      fprintf(stderr, "%s:%d: %s failed: %s\n", __FILE__, __LINE__, #call,      \
              TVMGetLastError());                                               \
      exit(1);                                                                  \
    }                                                                           \
  } while (0)
#define CHECK_TRUE(cond)                                                        \
  do {                                                                          \
    if (!(cond)) {                                                              \
      fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, #cond);  \
      exit(1);                                                                  \
    }                                                                           \
  } while (0)

/* Reads the payload of a float32 .npy file (format 1.0) into a new buffer. */
static float* read_npy_float32(const char* path, size_t* count) {
  FILE* f = fopen(path, "rb");
  unsigned char prefix[10];
  char* header;
  long size;
  size_t header_len;
  float* values;
  CHECK_TRUE(f != NULL);
  CHECK_TRUE(fread(prefix, 1, 10, f) == 10);
  header_len = (size_t)prefix[8] | ((size_t)prefix[9] << 8);
  header = (char*)calloc(header_len + 1, 1);
  CHECK_TRUE(header && fread(header, 1, header_len, f) == header_len);
  CHECK_TRUE(strstr(header, "'<f4'") != NULL);
  free(header);
  fseek(f, 0, SEEK_END);
  size = ftell(f);
  *count = ((size_t)size - 10 - header_len) / sizeof(float);
  fseek(f, (long)(10 + header_len), SEEK_SET);
  values = (float*)malloc(*count * sizeof(float));
  CHECK_TRUE(values && fread(values, sizeof(float), *count, f) == *count);
  fclose(f);
  return values;
}

static TVMFunctionHandle get_function(TVMModuleHandle mod, const char* name) {
  TVMFunctionHandle f = NULL;
  CHECK_CALL(TVMModGetFunction(mod, name, 0, &f));
  CHECK_TRUE(f != NULL);
  return f;
}

int main(int argc, char** argv) {
  char path[4096];
  TVMModuleHandle exe, vm;
  TVMFunctionHandle load, init, entry;
  TVMValue args[6], ret;
  int codes[6], ret_code, i;
  TVMArrayHandle x, y;
  int64_t in_shape[2] = {1, 784};
  size_t n_in, n_out;
  float *input, *expected, got[10];
  FILE* probe;

  if (argc < 2) return fprintf(stderr, "usage: %s CASE_DIR\n", argv[0]), 2;
  snprintf(path, sizeof(path), "%s/deploy_relax.so", argv[1]);
  probe = fopen(path, "rb");
  if (!probe) return fprintf(stderr, "skipped: no fixture at %s\n", argv[1]), 77;
  fclose(probe);
  CHECK_CALL(TVMModLoadFromFile(path, "so", &exe));

  /* vm = exe["vm_load_executable"](); vm["vm_initialization"](cpu, 0, pooled) */
  load = get_function(exe, "vm_load_executable");
  CHECK_CALL(TVMFuncCall(load, args, codes, 0, &ret, &ret_code));
  CHECK_TRUE(ret_code == kTVMModuleHandle);
  vm = ret.v_handle;
  init = get_function(vm, "vm_initialization");
  for (i = 0; i < 3; ++i) codes[i] = kTVMArgInt;
  args[0].v_int64 = kDLCPU;
  args[1].v_int64 = 0;
  args[2].v_int64 = 2;
  CHECK_CALL(TVMFuncCall(init, args, codes, 3, &ret, &ret_code));

  snprintf(path, sizeof(path), "%s/input_x.npy", argv[1]);
  input = read_npy_float32(path, &n_in);
  snprintf(path, sizeof(path), "%s/output_0.npy", argv[1]);
  expected = read_npy_float32(path, &n_out);
  CHECK_TRUE(n_in == 784 && n_out == 10);
  CHECK_CALL(TVMArrayAlloc(in_shape, 2, kDLFloat, 32, 1, kDLCPU, 0, &x));
  CHECK_CALL(TVMArrayCopyFromBytes(x, input, n_in * sizeof(float)));

  entry = get_function(vm, "main");
  args[0].v_handle = x;
  codes[0] = kTVMDLTensorHandle;
  CHECK_CALL(TVMFuncCall(entry, args, codes, 1, &ret, &ret_code));
  CHECK_TRUE(ret_code == kTVMNDArrayHandle);
  y = (TVMArrayHandle)ret.v_handle;
  CHECK_TRUE(y->ndim == 2 && y->shape[0] == 1 && y->shape[1] == 10);
  CHECK_CALL(TVMArrayCopyToBytes(y, got, sizeof(got)));
  CHECK_TRUE(memcmp(got, expected, sizeof(got)) == 0); /* bit-exact with TVM */

  free(input);
  free(expected);
  CHECK_CALL(TVMArrayFree(x));
  CHECK_CALL(TVMArrayFree(y));
  CHECK_CALL(TVMFuncFree(load));
  CHECK_CALL(TVMFuncFree(init));
  CHECK_CALL(TVMFuncFree(entry));
  CHECK_CALL(TVMModFree(vm));
  CHECK_CALL(TVMModFree(exe));
  printf("tvm_c_relax_deploy: output matches TVM's bit for bit\n");
  return 0;
}
