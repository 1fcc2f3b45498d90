// OpenCL back-end benchmark: the cost of one kernel launch through graphrt
// (the module's packed function, as TVM's host code calls it: the argument
// table, the buffer look-up, clSetKernelArg, clEnqueueNDRangeKernel) against
// the floor, the same empty kernel dispatched straight through the driver
// (clSetKernelArg + clEnqueueNDRangeKernel) on the same queue.
//
//   opencl_bench [--launches N]
//
// Prints why and exits 0 when no OpenCL device is usable.
#include <chrono>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "graphrt/blob_reader.h"
#include "graphrt/ndarray.h"
#include "backends/opencl/opencl_device_api.h"
#include "backends/opencl/opencl_module.h"

using namespace graphrt;
using namespace graphrt::opencl_backend;
using Clock = std::chrono::steady_clock;

namespace {

const char* kEmpty = "// Function: empty\n__kernel void empty(__global float* a, long n) { }\n";

Module empty_module(std::shared_ptr<OpenclDeviceAPI> api) {
  OpenclModuleImage image;
  image.fmt = "cl";
  OpenclFunctionInfo f;
  f.name = "empty";
  f.arg_types = {DLDataType{kDLOpaqueHandle, 64, 1}, DLDataType{kDLInt, 64, 1}};
  f.launch_param_tags = {"blockIdx.x", "threadIdx.x"};
  image.fmap["empty"] = f;
  image.code = kEmpty;
  const std::string bytes = encode_opencl_payload(image, OpenclPayloadFormat::kRecord);
  BlobReader reader(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size(), "bench");
  return load_opencl_module(reader, std::move(api), OpenclPayloadFormat::kRecord);
}

// Microseconds per launch of `launch`, over `n` launches and a clFinish.
template <typename F>
double per_launch_us(int n, cl_command_queue queue, const OpenclLibrary& lib, F launch) {
  for (int i = 0; i < 100; ++i) launch();
  lib.clFinish(queue);
  const auto t0 = Clock::now();
  for (int i = 0; i < n; ++i) launch();
  lib.clFinish(queue);
  return std::chrono::duration<double, std::micro>(Clock::now() - t0).count() / n;
}

}  // namespace

int main(int argc, char** argv) {
  int launches = 20000;
  for (int i = 1; i + 1 < argc; ++i) {
    if (std::strcmp(argv[i], "--launches") == 0) launches = std::atoi(argv[i + 1]);
  }
  std::shared_ptr<OpenclDeviceAPI> api = opencl_device_api();
  try {
    api->check_available(DLDevice{kDLOpenCL, 0});
  } catch (const Error& e) {
    std::printf("opencl_bench: no usable OpenCL device: %s\n", e.what());
    return 0;
  }
  const DLDevice dev{kDLOpenCL, 0};
  api->set_device(dev);
  const OpenclLibrary& lib = api->library();
  cl_command_queue queue = api->current_queue(0);
  NDArray buffer = NDArray::empty({256}, DLDataType{kDLFloat, 32, 1}, dev);
  Module m = empty_module(api);
  PackedFunc f = m->get_function("empty");
  TVMValue values[4];
  int codes[4] = {kTVMOpaqueHandle, kDLInt, kDLInt, kDLInt};
  values[0].v_handle = buffer->data;
  values[1].v_int64 = 256;
  values[2].v_int64 = 1;   // blockIdx.x
  values[3].v_int64 = 64;  // threadIdx.x
  RetValue ret;
  const TVMArgs args(values, codes, 4);
  f->call(args, &ret);  // builds the kernel
  auto* node = static_cast<OpenclModuleNode*>(m.get());
  cl_kernel kernel = node->kernel(0, "empty").kernel;
  cl_mem mem = api->kernel_buffer(0, buffer->data, "empty", 0);
  const size_t global = 64, local = 64;
  const int64_t n = 256;
  const double floor_us = per_launch_us(launches, queue, lib, [&] {
    lib.clSetKernelArg(kernel, 0, sizeof(cl_mem), &mem);
    lib.clSetKernelArg(kernel, 1, sizeof(n), &n);
    lib.clEnqueueNDRangeKernel(queue, kernel, 1, nullptr, &global, &local, 0, nullptr, nullptr);
  });
  const double graphrt_us = per_launch_us(launches, queue, lib, [&] { f->call(args, &ret); });
  std::printf("opencl_bench on opencl:0 (%s), %d launches of an empty kernel:\n", api->device(0).name.c_str(),
              launches);
  std::printf("  driver floor (clSetKernelArg x2 + clEnqueueNDRangeKernel): %.2f us per launch\n", floor_us);
  std::printf("  graphrt (the module's packed function):                   %.2f us per launch (+%.2f us)\n",
              graphrt_us, graphrt_us - floor_us);
  return 0;
}
