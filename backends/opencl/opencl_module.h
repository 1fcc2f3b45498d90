// The "opencl" module: the record's kernels, built on a device at the first
// call there of any of them (the module's whole source as one program, else
// each kernel from its own source section), and launched as TVM's host code
// calls it.
#pragma once

#include <atomic>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "graphrt/blob_reader.h"
#include "graphrt/module.h"
#include "backends/opencl/opencl_device_api.h"
#include "backends/opencl/opencl_launch.h"
#include "backends/opencl/opencl_record.h"

namespace graphrt {
namespace opencl_backend {

// One kernel on one device: its program and kernel object, made at first use.
struct BuiltKernel {
  std::mutex mutex;  // clSetKernelArg and the launch that follows are one step
  cl_program program = nullptr;  // its own section's; null when made from the module's whole program
  cl_kernel kernel = nullptr;
};

class OpenclModuleNode : public ModuleNode, public DriverObjectOwner {
 public:
  // Plans every kernel (argument types, launch tags): a bad table fails the
  // load. Holds `api`: the module may outlive the runtime whose loader made it.
  OpenclModuleNode(OpenclModuleImage image, std::shared_ptr<OpenclDeviceAPI> api);
  ~OpenclModuleNode() override;

  std::string type_key() const override { return "opencl"; }
  PackedFunc find_function(const std::string& name, const Module& self) override;
  std::vector<std::string> function_names() const override;
  const OpenclModuleImage& image() const { return image_; }
  OpenclDeviceAPI* api() const { return api_.get(); }

  // The kernel `name` built on `device_id` (built there on the first call).
  // Throws an Error with the build log, naming the module, function and field.
  BuiltKernel& kernel(int device_id, const std::string& name);
  // Sets the arguments and enqueues the kernel on the thread's queue;
  // `built` caches the kernel per device (the function's own table).
  void launch(const KernelPlan& plan, std::atomic<BuiltKernel*>* built, const TVMArgs& args);

  void release_driver_objects() override;

 private:
  void build(int device_id, const std::string& name, BuiltKernel* out);
  cl_program build_program(int device_id, const std::string& source, const std::string& name);
  cl_kernel kernel_from_whole_program(int device_id, const std::string& name);

  OpenclModuleImage image_;
  std::map<std::string, KernelPlan> plans_;
  std::shared_ptr<OpenclDeviceAPI> api_;
  std::mutex mutex_;  // kernels_
  // Per device, per kernel name (nodes keep their addresses as the map grows).
  std::map<std::pair<int, std::string>, std::unique_ptr<BuiltKernel>> kernels_;
  // Per device, the whole source built once (null: it did not build). Locked after the others.
  std::mutex whole_mutex_;
  std::map<int, cl_program> whole_programs_;
};

// The "opencl" record loaders' body.
Module load_opencl_module(BlobReader& reader, std::shared_ptr<OpenclDeviceAPI> api, OpenclPayloadFormat format);

}  // namespace opencl_backend
}  // namespace graphrt
