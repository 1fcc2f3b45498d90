/* A C program written against TVM's C API headers only: loads a fixture's
 * deploy_factory.so, builds the graph executor through its packed functions,
 * runs it and compares the output with TVM's own, bit for bit. It also takes
 * the address of every function both headers declare, so it does not link
 * unless libgraphrt defines them all.
 *
 * usage: tvm_c_deploy FIXTURE_DIR   (exit 77: fixture absent, skipped) */
#include <tvm/runtime/c_backend_api.h>
#include <tvm/runtime/c_runtime_api.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "c_test_support.h"



/* Every function of c_runtime_api.h and c_backend_api.h (TVM v0.18). */
static void* const kAllFunctions[] = {
    (void*)TVMAPISetLastError, (void*)TVMAPISetLastPythonError, (void*)TVMGetLastPythonError,
    (void*)TVMGetLastError, (void*)TVMGetLastBacktrace, (void*)TVMDropLastPythonError,
    (void*)TVMThrowLastError, (void*)TVMModLoadFromFile, (void*)TVMModImport, (void*)TVMModGetFunction,
    (void*)TVMModFree, (void*)TVMFuncFree, (void*)TVMFuncCall, (void*)TVMCFuncSetReturn,
    (void*)TVMCbArgToReturn, (void*)TVMFuncCreateFromCFunc, (void*)TVMFuncRegisterGlobal,
    (void*)TVMFuncGetGlobal, (void*)TVMFuncListGlobalNames, (void*)TVMFuncRemoveGlobal, (void*)TVMArrayAlloc,
    (void*)TVMArrayFree, (void*)TVMArrayCopyFromBytes, (void*)TVMArrayCopyToBytes, (void*)TVMArrayCopyFromTo,
    (void*)TVMArrayFromDLPack, (void*)TVMArrayToDLPack, (void*)TVMDLManagedTensorCallDeleter,
    (void*)TVMStreamCreate, (void*)TVMStreamFree, (void*)TVMSetStream, (void*)TVMSynchronize,
    (void*)TVMStreamStreamSynchronize, (void*)TVMObjectGetTypeIndex, (void*)TVMObjectTypeKey2Index,
    (void*)TVMObjectTypeIndex2Key, (void*)TVMObjectRetain, (void*)TVMObjectFree, (void*)TVMByteArrayFree,
    (void*)TVMDeviceAllocDataSpace, (void*)TVMDeviceAllocDataSpaceWithScope, (void*)TVMDeviceFreeDataSpace,
    (void*)TVMDeviceCopyDataFromTo, (void*)TVMObjectDerivedFrom,
    /* c_backend_api.h */
    (void*)TVMBackendGetFuncFromEnv, (void*)TVMBackendRegisterSystemLibSymbol, (void*)TVMBackendAllocWorkspace,
    (void*)TVMBackendFreeWorkspace, (void*)TVMBackendRegisterEnvCAPI, (void*)TVMBackendParallelLaunch,
    (void*)TVMBackendParallelBarrier, (void*)TVMBackendRunOnce};

static TVMFunctionHandle get_function(TVMModuleHandle mod, const char* name) {
  TVMFunctionHandle f = NULL;
  CHECK_CALL(TVMModGetFunction(mod, name, 0, &f));
  CHECK_TRUE(f != NULL);
  return f;
}

/* Marks its slot; slot 63 records how many tasks the launch made. */
static int mark_task(int task_id, TVMParallelGroupEnv* penv, void* cdata) {
  if (task_id >= 63 || penv->num_task > 63) return -1;
  ((int*)cdata)[task_id] = 1;
  ((int*)cdata)[63] = penv->num_task;
  return 0;
}

int main(int argc, char** argv) {
  char path[4096];
  TVMModuleHandle factory, gmod;
  TVMFunctionHandle create, set_input, run, get_output;
  TVMValue args[2], ret;
  int codes[2], ret_code;
  TVMArrayHandle x, y;
  int64_t in_shape[4] = {1, 1, 28, 28}, out_shape[2] = {1, 10};
  size_t n_in, n_out;
  Npy in_npy, out_npy;
  float *input, *expected, got[10];
  unsigned tindex;
  char* type_key;
  int task_out[64] = {0};
  int i, marked = 0;
  void* workspace;
  FILE* probe;

  CHECK_TRUE(sizeof(kAllFunctions) / sizeof(kAllFunctions[0]) == 52);
  for (i = 0; i < 52; ++i) CHECK_TRUE(kAllFunctions[i] != NULL); /* each resolved by the linker */
  if (argc < 2) return fprintf(stderr, "usage: %s FIXTURE_DIR\n", argv[0]), 2;
  snprintf(path, sizeof(path), "%s/deploy_factory.so", argv[1]);
  probe = fopen(path, "rb");
  if (!probe) return fprintf(stderr, "skipped: no fixture at %s\n", argv[1]), 77;
  fclose(probe);

  CHECK_CALL(TVMModLoadFromFile(path, "so", &factory));
  CHECK_CALL(TVMObjectGetTypeIndex(factory, &tindex));
  CHECK_CALL(TVMObjectTypeIndex2Key(tindex, &type_key));
  CHECK_TRUE(strcmp(type_key, "runtime.Module") == 0);

  /* gmod = factory["default"](cpu(0)) */
  create = get_function(factory, "default");
  args[0].v_device.device_type = kDLCPU;
  args[0].v_device.device_id = 0;
  codes[0] = kDLDevice;
  CHECK_CALL(TVMFuncCall(create, args, codes, 1, &ret, &ret_code));
  CHECK_TRUE(ret_code == kTVMModuleHandle);
  gmod = ret.v_handle;
  set_input = get_function(gmod, "set_input");
  run = get_function(gmod, "run");
  get_output = get_function(gmod, "get_output");

  in_npy = read_npy(argv[1], "input_data.npy");
  out_npy = read_npy(argv[1], "output_0.npy");
  input = in_npy.values;
  n_in = in_npy.count;
  expected = out_npy.values;
  n_out = out_npy.count;
  CHECK_TRUE(n_in == 28 * 28 && n_out == 10);
  CHECK_CALL(TVMArrayAlloc(in_shape, 4, kDLFloat, 32, 1, kDLCPU, 0, &x));
  CHECK_CALL(TVMArrayAlloc(out_shape, 2, kDLFloat, 32, 1, kDLCPU, 0, &y));
  CHECK_CALL(TVMArrayCopyFromBytes(x, input, n_in * sizeof(float)));

  args[0].v_str = "data";
  codes[0] = kTVMStr;
  args[1].v_handle = x;
  codes[1] = kTVMDLTensorHandle;
  CHECK_CALL(TVMFuncCall(set_input, args, codes, 2, &ret, &ret_code));
  CHECK_CALL(TVMFuncCall(run, args, codes, 0, &ret, &ret_code));
  args[0].v_int64 = 0;
  codes[0] = kTVMArgInt;
  args[1].v_handle = y;
  codes[1] = kTVMDLTensorHandle;
  CHECK_CALL(TVMFuncCall(get_output, args, codes, 2, &ret, &ret_code));
  CHECK_CALL(TVMArrayCopyToBytes(y, got, sizeof(got)));
  CHECK_TRUE(memcmp(got, expected, sizeof(got)) == 0); /* bit-exact with TVM */

  /* The backend API from C: a workspace and a parallel launch. */
  workspace = TVMBackendAllocWorkspace(kDLCPU, 0, 256, kDLFloat, 32);
  CHECK_TRUE(workspace != NULL);
  memset(workspace, 0, 256);
  CHECK_CALL(TVMBackendFreeWorkspace(kDLCPU, 0, workspace));
  CHECK_CALL(TVMBackendParallelLaunch(mark_task, task_out, 2));
  for (i = 0; i < 63; ++i) marked += task_out[i];
  CHECK_TRUE(task_out[63] >= 1 && marked == task_out[63]);

  free(input);
  free(expected);
  CHECK_CALL(TVMArrayFree(x));
  CHECK_CALL(TVMArrayFree(y));
  CHECK_CALL(TVMFuncFree(create));
  CHECK_CALL(TVMFuncFree(set_input));
  CHECK_CALL(TVMFuncFree(run));
  CHECK_CALL(TVMFuncFree(get_output));
  CHECK_CALL(TVMModFree(gmod));
  CHECK_CALL(TVMModFree(factory));
  printf("tvm_c_deploy: output matches TVM's bit for bit\n");
  return 0;
}
