// graphrt's cost per Vulkan kernel launch against the driver's floor, on the
// first Vulkan device (lavapipe here): an empty compute shader binding two
// storage buffers, launched N times, then one synchronisation
//   floor:   the back end's own recording (bind, push descriptors, dispatch,
//            barrier) called directly: what any Vulkan runtime pays the driver
//            to record a dispatch
//   graphrt: the kernel as generated host code calls it (a packed call:
//            launch values checked, buffers resolved, the same recording)
// Usage: vulkan_launch_bench [launches]   (default 4000, under one batch). Not a test.
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include "backends/vulkan/vulkan_device_api.h"
#include "backends/vulkan/vulkan_module.h"
#include "graphrt/error.h"

namespace {

namespace vk = graphrt::vulkan_backend;

// spirv-as of: GLCompute "empty_kernel", LocalSize 1 1 1, two StorageBuffer
// float[] blocks at set 0, bindings 0 and 1, a body that only returns.
const std::vector<uint32_t> kEmptyShader = {
    0x07230203u, 0x00010300u, 0x00070000u, 0x0000000bu, 0x00000000u, 0x00020011u, 0x00000001u, 0x0003000eu,
    0x00000000u, 0x00000001u, 0x0007000fu, 0x00000005u, 0x00000001u, 0x74706d65u, 0x656b5f79u, 0x6c656e72u,
    0x00000000u, 0x00060010u, 0x00000001u, 0x00000011u, 0x00000001u, 0x00000001u, 0x00000001u, 0x00040047u,
    0x00000002u, 0x00000006u, 0x00000004u, 0x00050048u, 0x00000003u, 0x00000000u, 0x00000023u, 0x00000000u,
    0x00030047u, 0x00000003u, 0x00000002u, 0x00040047u, 0x00000004u, 0x00000022u, 0x00000000u, 0x00040047u,
    0x00000004u, 0x00000021u, 0x00000000u, 0x00040047u, 0x00000005u, 0x00000022u, 0x00000000u, 0x00040047u,
    0x00000005u, 0x00000021u, 0x00000001u, 0x00020013u, 0x00000006u, 0x00030021u, 0x00000007u, 0x00000006u,
    0x00030016u, 0x00000008u, 0x00000020u, 0x0003001du, 0x00000002u, 0x00000008u, 0x0003001eu, 0x00000003u,
    0x00000002u, 0x00040020u, 0x00000009u, 0x0000000cu, 0x00000003u, 0x0004003bu, 0x00000009u, 0x00000004u,
    0x0000000cu, 0x0004003bu, 0x00000009u, 0x00000005u, 0x0000000cu, 0x00050036u, 0x00000006u, 0x00000001u,
    0x00000000u, 0x00000007u, 0x000200f8u, 0x0000000au, 0x000100fdu, 0x00010038u};

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

}  // namespace

int main(int argc, char** argv) {
  const int n = argc > 1 ? std::atoi(argv[1]) : 4000;
  try {
    auto api = vk::vulkan_device_api();
    if (api->device_count() == 0) {
      std::printf("no Vulkan device: %s\n", api->init_error().c_str());
      return 0;
    }
    vk::VulkanModuleImage image;
    image.fmt = "vulkan";
    vk::VulkanFunctionInfo info;
    info.name = "empty_kernel";
    info.arg_types = {DLDataType{kDLOpaqueHandle, 64, 1}, DLDataType{kDLOpaqueHandle, 64, 1}};
    info.launch_param_tags = {"blockIdx.x", "threadIdx.x"};
    image.fmap[info.name] = info;
    image.smap[info.name] = vk::SpirvShader{0, kEmptyShader};
    const std::string bytes = vk::encode_vulkan_payload(image);
    graphrt::BlobReader reader(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size(), "bench");
    graphrt::Module module = vk::load_vulkan_module(reader, api);
    const DLDevice dev{kDLVulkan, 0};
    api->set_device(dev);
    void* a = api->alloc(dev, 4096, 64);
    void* b = api->alloc(dev, 4096, 64);
    graphrt::PackedFunc f = module->get_function("empty_kernel");
    TVMValue values[4];
    int codes[4] = {kTVMOpaqueHandle, kTVMOpaqueHandle, kDLInt, kDLInt};
    values[0].v_handle = a;
    values[1].v_handle = b;
    values[2].v_int64 = 1;
    values[3].v_int64 = 1;
    graphrt::RetValue rv;
    const graphrt::TVMArgs args(values, codes, 4);
    f->call(args, &rv);  // the pipeline is made here
    api->synchronize(dev, nullptr);

    vk::VulkanDevice& device = api->device(0);
    vk::CheckedVulkanModule checked = vk::check_vulkan_module(image);
    std::unique_ptr<vk::VulkanPipeline> pipeline = device.create_pipeline(checked.plans[0], kEmptyShader);
    vk::BufferRef ra = api->resolve(a, "a"), rb = api->resolve(b, "b");
    vk::BoundBuffer bound[2] = {{ra.buffer->buffer, 0, ra.buffer->size}, {rb.buffer->buffer, 0, rb.buffer->size}};
    vk::VulkanLaunch launch;

    // Host cost: the launches alone, fewer than one batch holds (the submission and the
    // driver's execution of the batch come after, untimed). End to end: launches + the wait.
    double floor_host = 1e9, graphrt_host = 1e9, floor_all = 1e9, graphrt_all = 1e9;
    auto time_floor = [&] {
      auto t0 = std::chrono::steady_clock::now();
      for (int i = 0; i < n; ++i) device.dispatch(checked.plans[0], *pipeline, bound, nullptr, launch);
      floor_host = std::min(floor_host, seconds_since(t0));
      device.synchronize();
      floor_all = std::min(floor_all, seconds_since(t0));
    };
    auto time_graphrt = [&] {
      auto t0 = std::chrono::steady_clock::now();
      for (int i = 0; i < n; ++i) f->call(args, &rv);
      graphrt_host = std::min(graphrt_host, seconds_since(t0));
      api->synchronize(dev, nullptr);
      graphrt_all = std::min(graphrt_all, seconds_since(t0));
    };
    for (int round = 0; round < 8; ++round) {  // alternating which goes first
      if (round % 2) {
        time_floor();
        time_graphrt();
      } else {
        time_graphrt();
        time_floor();
      }
    }
    device.destroy_pipeline(*pipeline);
    api->free(dev, a);
    api->free(dev, b);
    std::printf("device: %s, %d launches of an empty dispatch (best of 8)\n", api->device_description(0).c_str(), n);
    std::printf("host, per launch:       floor %.3f us, graphrt %.3f us (+%.3f us)\n", floor_host / n * 1e6,
                graphrt_host / n * 1e6, (graphrt_host - floor_host) / n * 1e6);
    std::printf("with the driver's run:  floor %.3f us, graphrt %.3f us\n", floor_all / n * 1e6, graphrt_all / n * 1e6);
  } catch (const graphrt::Error& e) {
    std::fprintf(stderr, "vulkan_launch_bench: %s\n", e.what());
    return 1;
  }
  return 0;
}
