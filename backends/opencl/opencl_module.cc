#include "backends/opencl/opencl_module.h"

#include <array>

#include "graphrt/error.h"

namespace graphrt {
namespace opencl_backend {

namespace {

constexpr size_t kMaxBuildLogBytes = 4000;

Error kernel_error(ErrorKind kind, const std::string& name, const std::string& message, const char* field) {
  Error e(kind, message);
  e.with("module", "opencl").with("function", quoted(name));
  if (field) e.with("field", field);
  return e;
}

std::string dev_name(int id) { return "opencl:" + std::to_string(id); }

}  // namespace

OpenclModuleNode::OpenclModuleNode(OpenclModuleImage image, std::shared_ptr<OpenclDeviceAPI> api)
    : image_(std::move(image)), api_(std::move(api)) {
  for (const auto& entry : image_.fmap) plans_.emplace(entry.first, plan_kernel(entry.second));
  api_->add_owner(this);
}

OpenclModuleNode::~OpenclModuleNode() {
  api_->remove_owner(this);
  release_driver_objects();
}

// The records stay (the functions' caches point at them); their objects go.
void OpenclModuleNode::release_driver_objects() {
  std::lock_guard<std::mutex> lock(mutex_);
  const bool live = !kernels_.empty() && !api_->shut_down();
  for (auto& entry : kernels_) {
    std::lock_guard<std::mutex> kernel_lock(entry.second->mutex);
    if (live && entry.second->kernel) api_->library().clReleaseKernel(entry.second->kernel);
    if (live && entry.second->program) api_->library().clReleaseProgram(entry.second->program);
    entry.second->kernel = nullptr;
    entry.second->program = nullptr;
  }
  // The whole programs after every kernel made from them.
  std::lock_guard<std::mutex> whole_lock(whole_mutex_);
  for (auto& entry : whole_programs_)
    if (live && entry.second) api_->library().clReleaseProgram(entry.second);
  whole_programs_.clear();
}

std::vector<std::string> OpenclModuleNode::function_names() const {
  std::vector<std::string> names;
  for (const auto& entry : image_.fmap) names.push_back(entry.first);
  return names;
}

// `source` built on `device_id`; a failure names kernel `name`, with the driver's build log.
cl_program OpenclModuleNode::build_program(int device_id, const std::string& source, const std::string& name) {
  const OpenclDevice& d = api_->device(device_id);
  const OpenclLibrary& lib = api_->library();
  const char* text = source.c_str();
  const size_t length = source.size();
  cl_int r = kClSuccess;
  cl_program program = lib.clCreateProgramWithSource(d.context, 1, &text, &length, &r);
  if (r != kClSuccess || !program)
    throw kernel_error(ErrorKind::kDevice, name,
                       "clCreateProgramWithSource of opencl kernel " + quoted(name) + " on " + dev_name(device_id) +
                           " failed: " + describe_status(r),
                       "code");
  r = lib.clBuildProgram(program, 1, &d.id, "", nullptr, nullptr);
  if (r != kClSuccess) {
    size_t size = 0;
    std::string log;
    if (lib.clGetProgramBuildInfo(program, d.id, kClProgramBuildLog, 0, nullptr, &size) == kClSuccess && size > 0) {
      log.resize(size);
      if (lib.clGetProgramBuildInfo(program, d.id, kClProgramBuildLog, size, &log[0], nullptr) != kClSuccess)
        log.clear();
      while (!log.empty() && (log.back() == '\0' || log.back() == '\n')) log.pop_back();
    }
    lib.clReleaseProgram(program);
    if (log.size() > kMaxBuildLogBytes) log = log.substr(0, kMaxBuildLogBytes) + "\n... (build log cut)";
    throw kernel_error(r == kClBuildProgramFailure ? ErrorKind::kInvalidArgument : ErrorKind::kDevice, name,
                       "clBuildProgram of opencl kernel " + quoted(name) + " on " + dev_name(device_id) + " (" +
                           d.name + ") failed: " + describe_status(r) +
                           (log.empty() ? std::string() : "; build log:\n" + log),
                       "code");
  }
  return program;
}

// Kernel `name` from the module's whole source, built on the device's first call of any kernel:
// one build instead of one per kernel (a driver that caches builds, as PoCL does on disk, still
// preprocesses and hashes each source it is given: 27 sections of MLC's OpenCL model took 2 s
// from PoCL's cache, the whole source 0.13 s). Null when the whole source does not build or
// does not give this kernel as the table lists it; the kernel's own section then says why.
cl_kernel OpenclModuleNode::kernel_from_whole_program(int device_id, const std::string& name) {
  cl_program program = nullptr;
  {
    std::lock_guard<std::mutex> lock(whole_mutex_);
    auto it = whole_programs_.find(device_id);
    if (it == whole_programs_.end()) {
      try {
        program = build_program(device_id, image_.code, name);
      } catch (const Error&) {
        program = nullptr;  // each kernel builds from its section, whose error names it
      }
      it = whole_programs_.emplace(device_id, program).first;
    }
    program = it->second;
  }
  if (!program) return nullptr;
  const OpenclLibrary& lib = api_->library();
  cl_int r = kClSuccess;
  cl_kernel kernel = lib.clCreateKernel(program, name.c_str(), &r);
  if (r != kClSuccess || !kernel) return nullptr;
  cl_uint num_args = 0;
  if (lib.clGetKernelInfo(kernel, kClKernelNumArgs, sizeof num_args, &num_args, nullptr) != kClSuccess ||
      num_args != plans_.at(name).args.size()) {
    lib.clReleaseKernel(kernel);
    return nullptr;
  }
  return kernel;
}

void OpenclModuleNode::build(int device_id, const std::string& name, BuiltKernel* out) {
  if (cl_kernel whole = kernel_from_whole_program(device_id, name)) {
    out->kernel = whole;
    return;
  }
  const OpenclLibrary& lib = api_->library();
  cl_program program = build_program(device_id, image_.kernel_sources.at(name), name);
  cl_int r = kClSuccess;
  cl_kernel kernel = lib.clCreateKernel(program, name.c_str(), &r);
  if (r != kClSuccess || !kernel) {
    lib.clReleaseProgram(program);
    throw kernel_error(ErrorKind::kInvalidArgument, name,
                       "clCreateKernel(" + quoted(name) + ") on " + dev_name(device_id) + " failed: " +
                           describe_status(r) + " (the kernel's source section does not define it)",
                       "code");
  }
  cl_uint num_args = 0;
  r = lib.clGetKernelInfo(kernel, kClKernelNumArgs, sizeof num_args, &num_args, nullptr);
  const size_t want = plans_.at(name).args.size();
  if (r == kClSuccess && num_args != want) {
    lib.clReleaseKernel(kernel);
    lib.clReleaseProgram(program);
    throw kernel_error(ErrorKind::kInvalidArgument, name,
                       "opencl kernel " + quoted(name) + " takes " + std::to_string(num_args) +
                           " parameters in its source, the function table lists " + std::to_string(want) +
                           " arguments",
                       "arg_types");
  }
  out->program = program;
  out->kernel = kernel;
}

BuiltKernel& OpenclModuleNode::kernel(int device_id, const std::string& name) {
  BuiltKernel* k = nullptr;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    std::unique_ptr<BuiltKernel>& slot = kernels_[{device_id, name}];
    if (!slot) slot = std::make_unique<BuiltKernel>();
    k = slot.get();
  }
  std::lock_guard<std::mutex> lock(k->mutex);
  if (!k->kernel) build(device_id, name, k);
  return *k;
}

void OpenclModuleNode::launch(const KernelPlan& plan, std::atomic<BuiltKernel*>* built, const TVMArgs& args) {
  const LaunchDims dims = compute_launch_dims(plan, args.values(), args.size());
  const int dev = api_->current_device();
  cl_command_queue queue = api_->current_queue(dev);
  BuiltKernel* cached = built[dev].load(std::memory_order_acquire);
  if (!cached) {
    cached = &kernel(dev, plan.name);
    built[dev].store(cached, std::memory_order_release);
  }
  BuiltKernel& k = *cached;
  const OpenclLibrary& lib = api_->library();
  std::lock_guard<std::mutex> lock(k.mutex);
  for (size_t i = 0; i < plan.args.size(); ++i) {
    const int index = static_cast<int>(i);
    cl_int r;
    if (plan.args[i] == ArgKind::kBuffer) {
      const int code = args.code(index);
      const void* address = nullptr;
      if (code == kTVMDLTensorHandle || code == kTVMNDArrayHandle) {
        const DLTensor* t = args.as_tensor(index);
        address = static_cast<const char*>(t->data) + t->byte_offset;
      } else if (code != kTVMNullptr) {
        address = args.as_handle(index);
      }
      cl_mem mem = api_->kernel_buffer(dev, address, plan.name, i);
      r = lib.clSetKernelArg(k.kernel, static_cast<cl_uint>(i), sizeof(cl_mem), &mem);
    } else {
      TVMValue v;
      if (plan.args[i] == ArgKind::kFloat32 || plan.args[i] == ArgKind::kFloat64) {
        v.v_float64 = args.as_float(index);
      } else {
        v.v_int64 = args.as_int(index);
      }
      const ScalarBytes bytes = scalar_value(plan.args[i], v);
      r = lib.clSetKernelArg(k.kernel, static_cast<cl_uint>(i), scalar_bytes(plan.args[i]), &bytes);
    }
    if (r != kClSuccess)
      throw kernel_error(ErrorKind::kDevice, plan.name,
                         "clSetKernelArg(" + std::to_string(i) + ") of opencl kernel " + quoted(plan.name) +
                             " failed: " + describe_status(r),
                         "arg_types");
  }
  const cl_int r =
      lib.clEnqueueNDRangeKernel(queue, k.kernel, plan.work_dim, nullptr, dims.global, dims.local, 0, nullptr, nullptr);
  if (r != kClSuccess) {
    auto dim3 = [](const size_t* v) {
      return "(" + std::to_string(v[0]) + "," + std::to_string(v[1]) + "," + std::to_string(v[2]) + ")";
    };
    throw kernel_error(ErrorKind::kDevice, plan.name,
                       "clEnqueueNDRangeKernel of opencl kernel " + quoted(plan.name) + " global " + dim3(dims.global) +
                           " local " + dim3(dims.local) + " on " + dev_name(dev) + " failed: " + describe_status(r),
                       "launch_param_tags");
  }
}

PackedFunc OpenclModuleNode::find_function(const std::string& name, const Module& self) {
  auto it = plans_.find(name);
  if (it == plans_.end()) return PackedFunc();
  struct FunctionState {
    Module owner;  // keeps the module, its plans and kernels alive
    const KernelPlan* plan = nullptr;
    std::array<std::atomic<BuiltKernel*>, kMaxOpenclDevices> built{};
  };
  auto state = std::make_shared<FunctionState>();
  state->owner = self;
  state->plan = &it->second;
  for (auto& b : state->built) b.store(nullptr);
  return make_function(
      [state, this](const TVMArgs& args, RetValue*) { launch(*state->plan, state->built.data(), args); }, name);
}

Module load_opencl_module(BlobReader& reader, std::shared_ptr<OpenclDeviceAPI> api, OpenclPayloadFormat format) {
  return Module(new OpenclModuleNode(decode_opencl_payload(reader, format), std::move(api)));
}

}  // namespace opencl_backend
}  // namespace graphrt
