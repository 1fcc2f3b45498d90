/* A C program written against TVM's C API headers only: loads a Relax export
 * (deploy_relax.so of a relax_mlp case: TVM v0.20's packed ABI or v0.26's
 * tvm-ffi ABI), makes its VM through the module's packed functions as TVM's
 * C deploy code does (vm_load_executable, vm_initialization), calls main and
 * compares the output with TVM's own, bit for bit. With "opencl" the VM runs
 * on [opencl(0), cpu] (TVM's device list), the input and output live there,
 * and the output must be within the case's tolerance, 1e-5.
 *
 * usage: tvm_c_relax_deploy CASE_DIR [opencl]
 *        (exit 77: fixture absent, or no OpenCL device: skipped) */
#include <tvm/runtime/c_backend_api.h>
#include <tvm/runtime/c_runtime_api.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "c_test_support.h"



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
  TVMArrayHandle x, y, probe_array;
  int on_device = argc > 2 && strcmp(argv[2], "opencl") == 0;
  int dev_type = on_device ? kDLOpenCL : kDLCPU;
  int64_t in_shape[2] = {1, 784};
  size_t n_in, n_out;
  Npy in_npy, out_npy;
  float *input, *expected, got[10];
  FILE* probe;

  if (argc < 2) return fprintf(stderr, "usage: %s CASE_DIR\n", argv[0]), 2;
  snprintf(path, sizeof(path), "%s/deploy_relax.so", argv[1]);
  probe = fopen(path, "rb");
  if (!probe) return fprintf(stderr, "skipped: no fixture at %s\n", argv[1]), 77;
  fclose(probe);
  if (on_device && TVMArrayAlloc(in_shape, 2, kDLFloat, 32, 1, kDLOpenCL, 0, &probe_array) != 0)
    return fprintf(stderr, "skipped: no OpenCL device: %s\n", TVMGetLastError()), 77;
  if (on_device) CHECK_CALL(TVMArrayFree(probe_array));
  CHECK_CALL(TVMModLoadFromFile(path, "so", &exe));

  /* vm = exe["vm_load_executable"](); vm["vm_initialization"](cpu, 0, pooled)
   * (on a device: (opencl, 0, pooled, cpu, 0, pooled)) */
  load = get_function(exe, "vm_load_executable");
  CHECK_CALL(TVMFuncCall(load, args, codes, 0, &ret, &ret_code));
  CHECK_TRUE(ret_code == kTVMModuleHandle);
  vm = ret.v_handle;
  init = get_function(vm, "vm_initialization");
  for (i = 0; i < 6; ++i) codes[i] = kTVMArgInt;
  args[0].v_int64 = dev_type;
  args[1].v_int64 = 0;
  args[2].v_int64 = 2;
  args[3].v_int64 = kDLCPU;
  args[4].v_int64 = 0;
  args[5].v_int64 = 2;
  CHECK_CALL(TVMFuncCall(init, args, codes, on_device ? 6 : 3, &ret, &ret_code));

  in_npy = read_npy(argv[1], "input_x.npy");
  out_npy = read_npy(argv[1], "output_0.npy");
  input = in_npy.values;
  n_in = in_npy.count;
  expected = out_npy.values;
  n_out = out_npy.count;
  CHECK_TRUE(n_in == 784 && n_out == 10);
  CHECK_CALL(TVMArrayAlloc(in_shape, 2, kDLFloat, 32, 1, dev_type, 0, &x));
  CHECK_CALL(TVMArrayCopyFromBytes(x, input, n_in * sizeof(float)));

  entry = get_function(vm, "main");
  args[0].v_handle = x;
  codes[0] = kTVMDLTensorHandle;
  CHECK_CALL(TVMFuncCall(entry, args, codes, 1, &ret, &ret_code));
  CHECK_TRUE(ret_code == kTVMNDArrayHandle);
  y = (TVMArrayHandle)ret.v_handle;
  CHECK_TRUE(y->ndim == 2 && y->shape[0] == 1 && y->shape[1] == 10);
  CHECK_CALL(TVMArrayCopyToBytes(y, got, sizeof(got)));
  CHECK_TRUE((int)y->device.device_type == dev_type);
  if (on_device) {
    for (i = 0; i < 10; ++i) CHECK_TRUE(got[i] - expected[i] <= 1e-5f && expected[i] - got[i] <= 1e-5f);
  } else {
    CHECK_TRUE(memcmp(got, expected, sizeof(got)) == 0); /* bit-exact with TVM */
  }

  free(input);
  free(expected);
  CHECK_CALL(TVMArrayFree(x));
  CHECK_CALL(TVMArrayFree(y));
  CHECK_CALL(TVMFuncFree(load));
  CHECK_CALL(TVMFuncFree(init));
  CHECK_CALL(TVMFuncFree(entry));
  CHECK_CALL(TVMModFree(vm));
  CHECK_CALL(TVMModFree(exe));
  printf(on_device ? "tvm_c_relax_deploy: output on opencl matches TVM's within 1e-5\n"
                   : "tvm_c_relax_deploy: output matches TVM's bit for bit\n");
  return 0;
}
