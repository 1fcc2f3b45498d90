#include "backends/opencl/opencl_device_api.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>

#include "graphrt/error.h"
#include "graphrt/ndarray.h"
#include "graphrt/runtime.h"
#include "backends/opencl/opencl_record.h"

namespace graphrt {
namespace opencl_backend {

namespace {

struct ThreadState {
  int device = 0;
  const OpenclDeviceAPI* streams_of = nullptr;  // whose queues `streams` holds
  std::array<cl_command_queue, kMaxOpenclDevices> streams{};
};
thread_local ThreadState tls;

std::string dev_name(int id) { return "opencl:" + std::to_string(id); }

std::string address_text(const void* p) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%p", p);
  return buf;
}

}  // namespace

std::shared_ptr<OpenclDeviceAPI> opencl_device_api() {
  auto* api = dynamic_cast<OpenclDeviceAPI*>(runtime().device_api_or_null(kDLOpenCL));
  if (!api) throw Error(ErrorKind::kNotFound, "the default runtime has no OpenCL device API of the opencl back end");
  return api->shared_from_this();
}

OpenclDeviceAPI::OpenclDeviceAPI(std::string library_path) : library_path_(std::move(library_path)) {}

OpenclDeviceAPI::~OpenclDeviceAPI() {
  forget_at_exit(this);
  shutdown();
}

void OpenclDeviceAPI::ensure_init() {
  std::call_once(init_once_, [this] {
    lib_ = OpenclLibrary::load(library_path_);
    if (!lib_.ok()) {
      init_error_ = lib_.error;
      return;
    }
    enumerate_devices();
    shut_down_at_exit(this);  // after the first call into the API (the driver loaded): before its exit work
  });
}

// GPUs of every platform first, then accelerators, then CPUs (PoCL's
// pthread device is one): a machine's GPU is opencl:0 when it has one.
void OpenclDeviceAPI::enumerate_devices() {
  cl_uint count = 0;
  cl_int r = lib_.clGetPlatformIDs(0, nullptr, &count);
  if (r == kClPlatformNotFoundKhr || (r == kClSuccess && count == 0)) return;  // no driver installed
  if (r != kClSuccess) {
    init_error_ = "clGetPlatformIDs failed: " + describe_status(r);
    return;
  }
  std::vector<cl_platform_id> platforms(count);
  if ((r = lib_.clGetPlatformIDs(count, platforms.data(), nullptr)) != kClSuccess) {
    init_error_ = "clGetPlatformIDs failed: " + describe_status(r);
    return;
  }
  for (cl_bitfield type : {kClDeviceTypeGpu, kClDeviceTypeAccelerator, kClDeviceTypeCpu}) {
    for (cl_platform_id platform : platforms) {
      cl_uint n = 0;
      if (lib_.clGetDeviceIDs(platform, type, 0, nullptr, &n) != kClSuccess || n == 0) continue;
      std::vector<cl_device_id> ids(n);
      if (lib_.clGetDeviceIDs(platform, type, n, ids.data(), nullptr) != kClSuccess) continue;
      for (cl_device_id id : ids) {
        if (devices_.size() >= static_cast<size_t>(kMaxOpenclDevices)) return;
        OpenclDevice d;
        d.platform = platform;
        d.id = id;
        char name[256] = {0};
        if (lib_.clGetDeviceInfo(id, kClDeviceName, sizeof name - 1, name, nullptr) == kClSuccess) d.name = name;
        cl_uint align_bits = 0;
        if (lib_.clGetDeviceInfo(id, kClDeviceMemBaseAddrAlign, sizeof align_bits, &align_bits, nullptr) ==
                kClSuccess &&
            align_bits >= 8)
          d.base_align_bytes = align_bits / 8;
        devices_.push_back(d);
      }
    }
  }
}

const OpenclLibrary& OpenclDeviceAPI::library() {
  ensure_init();
  return lib_;
}

std::string OpenclDeviceAPI::init_error() {
  ensure_init();
  return init_error_;
}

int OpenclDeviceAPI::device_count() {
  ensure_init();
  return init_error_.empty() ? static_cast<int>(devices_.size()) : 0;
}

void OpenclDeviceAPI::check_available(DLDevice dev) {
  ensure_init();
  if (!init_error_.empty()) throw Error(ErrorKind::kDevice, init_error_);
  if (devices_.empty())
    throw Error(ErrorKind::kDevice, "no OpenCL device: " + lib_.path +
                                        " found no platform with a device (install a driver, e.g. Debian's "
                                        "pocl-opencl-icd for the CPU, or a GPU vendor's ICD)");
  if (dev.device_id < 0 || dev.device_id >= static_cast<int>(devices_.size()))
    throw Error(ErrorKind::kOutOfRange, "no OpenCL device " + std::to_string(dev.device_id) + " (" +
                                            std::to_string(devices_.size()) + " devices)");
  if (shut_down_.load()) throw Error(ErrorKind::kFailedPrecondition, "the OpenCL device API is shut down");
}

void OpenclDeviceAPI::check_device_id(int device_id) const {
  if (device_id < 0 || device_id >= kMaxOpenclDevices)
    throw Error(ErrorKind::kOutOfRange, "bad OpenCL device id " + std::to_string(device_id));
}

void OpenclDeviceAPI::check(cl_int status, const std::string& what) const {
  if (status != kClSuccess) throw Error(ErrorKind::kDevice, what + " failed: " + describe_status(status));
}

const OpenclDevice& OpenclDeviceAPI::device(int device_id) {
  try {
    check_available(DLDevice{kDLOpenCL, device_id});
  } catch (const Error& e) {
    throw Error(e.kind(), "device " + dev_name(device_id) + " is unavailable: " + e.message());
  }
  std::lock_guard<std::mutex> lock(mutex_);
  OpenclDevice& d = devices_[device_id];
  if (!d.queue) {
    const cl_context_properties props[] = {kClContextPlatform, reinterpret_cast<cl_context_properties>(d.platform), 0};
    cl_int r = kClSuccess;
    if (!d.context) d.context = lib_.clCreateContext(props, 1, &d.id, nullptr, nullptr, &r);
    check(r, "clCreateContext for " + dev_name(device_id) + " (" + d.name + ")");
    d.queue = lib_.clCreateCommandQueue(d.context, d.id, 0, &r);
    if (r != kClSuccess) d.queue = nullptr;
    check(r, "clCreateCommandQueue for " + dev_name(device_id));
    queues_[device_id].store(d.queue, std::memory_order_release);
  }
  return d;
}

int OpenclDeviceAPI::current_device() const { return tls.device; }

cl_command_queue OpenclDeviceAPI::current_queue(int device_id) {
  if (device_id >= 0 && device_id < kMaxOpenclDevices && !shut_down_.load(std::memory_order_relaxed)) {
    if (tls.streams_of == this && tls.streams[device_id]) return tls.streams[device_id];
    if (cl_command_queue q = queues_[device_id].load(std::memory_order_acquire)) return q;
  }
  const OpenclDevice& d = device(device_id);
  if (tls.streams_of == this && tls.streams[device_id]) return tls.streams[device_id];
  return d.queue;
}

// Called before every kernel's launch by TVM's host code (__tvm_set_device):
// a device already up costs no lock.
void OpenclDeviceAPI::set_device(DLDevice dev) {
  if (dev.device_id < 0 || dev.device_id >= kMaxOpenclDevices || !queues_[dev.device_id].load(std::memory_order_acquire))
    device(dev.device_id);
  tls.device = dev.device_id;
}

// --- Memory.

void* OpenclDeviceAPI::alloc(DLDevice dev, size_t nbytes, size_t alignment) {
  if (alignment > AddressSpace::kAlignment)
    throw Error(ErrorKind::kUnsupported, "OpenCL allocations are " + std::to_string(AddressSpace::kAlignment) +
                                             "-byte aligned; " + std::to_string(alignment) + " was requested")
        .with("device", dev_name(dev.device_id));
  const OpenclDevice& d = device(dev.device_id);
  cl_int r = kClSuccess;
  // A buffer of 0 bytes is refused by the API; an empty tensor still gets an address.
  cl_mem mem = lib_.clCreateBuffer(d.context, kClMemReadWrite, nbytes ? nbytes : 1, nullptr, &r);
  if (r != kClSuccess || !mem) {
    ErrorKind kind = (r == kClMemObjectAllocationFailure || r == kClOutOfResources || r == kClOutOfHostMemory)
                         ? ErrorKind::kResourceExhausted
                         : ErrorKind::kDevice;
    throw Error(kind, "clCreateBuffer of " + std::to_string(nbytes) + " bytes on " + dev_name(dev.device_id) +
                          " failed: " + describe_status(r));
  }
  DeviceBuffer buffer;
  buffer.mem = mem;
  buffer.size = nbytes;
  buffer.device = dev.device_id;
  try {
    return addresses_.insert(std::move(buffer));
  } catch (const Error&) {
    lib_.clReleaseMemObject(mem);
    throw;
  }
}

void OpenclDeviceAPI::release_buffer(const DeviceBuffer& buffer) {
  if (shut_down_.load() || !lib_.clReleaseMemObject) return;
  for (const auto& view : buffer.views) lib_.clReleaseMemObject(view.second);
  lib_.clReleaseMemObject(buffer.mem);
}

// The API keeps a buffer until the commands queued on it have run, so a
// buffer (a kernel's workspace) may be freed right after its last launch.
void OpenclDeviceAPI::free(DLDevice, void* ptr) {
  if (!ptr) return;
  DeviceBuffer buffer;
  if (addresses_.erase(ptr, &buffer)) release_buffer(buffer);
}

void* OpenclDeviceAPI::alloc_workspace(DLDevice dev, size_t nbytes) { return alloc(dev, nbytes, 0); }

void OpenclDeviceAPI::free_workspace(DLDevice dev, void* ptr) { free(dev, ptr); }

cl_mem OpenclDeviceAPI::kernel_buffer(int device_id, const void* address, const std::string& kernel,
                                      size_t arg_index) {
  if (!address) return nullptr;
  AddressSpace::Found buffer;
  auto arg_error = [&](ErrorKind kind, const std::string& why) {
    return Error(kind, "argument " + std::to_string(arg_index) + " of opencl kernel " + quoted(kernel) + " " + why)
        .with("module", "opencl")
        .with("function", quoted(kernel));
  };
  if (!addresses_.find(address, &buffer))
    throw arg_error(ErrorKind::kInvalidArgument,
                    "(address " + address_text(address) + ") is not an OpenCL buffer: a device tensor was expected");
  if (buffer.device != device_id)
    throw arg_error(ErrorKind::kInvalidArgument, "is a buffer of " + dev_name(buffer.device) +
                                                     ", the kernel runs on " + dev_name(device_id));
  const size_t offset = buffer.offset;
  if (offset == 0 || offset == buffer.size) return buffer.mem;
  const void* base = static_cast<const char*>(address) - offset;
  if (cl_mem view = addresses_.view(base, offset)) return view;
  const size_t align = device(device_id).base_align_bytes;
  if (offset % align != 0)
    throw arg_error(ErrorKind::kUnsupported, "starts " + std::to_string(offset) +
                                                 " bytes into its buffer, which OpenCL allows only at multiples of " +
                                                 std::to_string(align) + " bytes on " + dev_name(device_id));
  cl_buffer_region region{offset, buffer.size - offset};
  cl_int r = kClSuccess;
  cl_mem view = lib_.clCreateSubBuffer(buffer.mem, kClMemReadWrite, kClBufferCreateTypeRegion, &region, &r);
  if (r != kClSuccess || !view)
    throw arg_error(ErrorKind::kDevice, "at offset " + std::to_string(offset) + ": clCreateSubBuffer failed: " +
                                            describe_status(r));
  if (!addresses_.add_view(base, offset, view)) {
    lib_.clReleaseMemObject(view);
    if (cl_mem kept = addresses_.view(base, offset)) return kept;
    throw arg_error(ErrorKind::kInvalidArgument, "was freed while the kernel was being launched");
  }
  return view;
}

// --- Copies and streams.

AddressSpace::Found OpenclDeviceAPI::resolve(const void* address, size_t n, const char* what) const {
  AddressSpace::Found buffer;
  if (!addresses_.find(address, &buffer))
    throw Error(ErrorKind::kInvalidArgument,
                std::string("OpenCL copy ") + what + " address " + address_text(address) + ", which is no OpenCL buffer");
  if (n > buffer.size - buffer.offset)
    throw Error(ErrorKind::kOutOfRange, std::string("OpenCL copy of ") + std::to_string(n) + " bytes " + what + " " +
                                            std::to_string(buffer.offset) + " bytes into a buffer of " +
                                            std::to_string(buffer.size));
  return buffer;
}

void OpenclDeviceAPI::copy(const DLTensor* from, DLTensor* to, void* stream) {
  const size_t n = tensor_nbytes(from);
  if (n == 0) return;
  const char* src = static_cast<const char*>(from->data) + from->byte_offset;
  char* dst = static_cast<char*>(to->data) + to->byte_offset;
  const bool from_dev = from->device.device_type == kDLOpenCL;
  const bool to_dev = to->device.device_type == kDLOpenCL;
  auto queue_for = [&](int id) { return stream ? static_cast<cl_command_queue>(stream) : current_queue(id); };
  if (from_dev && to_dev) {
    copy_device_to_device(resolve(src, n, "from"), resolve(dst, n, "to"), n, stream);
  } else if (to_dev) {
    const AddressSpace::Found d = resolve(dst, n, "to");
    check(lib_.clEnqueueWriteBuffer(queue_for(d.device), d.mem, kClTrue, d.offset, n, src, 0, nullptr, nullptr),
          "clEnqueueWriteBuffer of " + std::to_string(n) + " bytes to " + dev_name(d.device));
  } else if (from_dev) {
    const AddressSpace::Found s = resolve(src, n, "from");
    check(lib_.clEnqueueReadBuffer(queue_for(s.device), s.mem, kClTrue, s.offset, n, dst, 0, nullptr, nullptr),
          "clEnqueueReadBuffer of " + std::to_string(n) + " bytes from " + dev_name(s.device));
  } else {
    throw Error(ErrorKind::kUnsupported,
                "OpenCL copy between " + device_to_string(from->device) + " and " + device_to_string(to->device));
  }
}

// Each device has a context of its own: between two devices the bytes go
// through the host.
void OpenclDeviceAPI::copy_device_to_device(const AddressSpace::Found& src, const AddressSpace::Found& dst, size_t n,
                                            void* stream) {
  if (src.device == dst.device) {
    cl_command_queue q = stream ? static_cast<cl_command_queue>(stream) : current_queue(src.device);
    check(lib_.clEnqueueCopyBuffer(q, src.mem, dst.mem, src.offset, dst.offset, n, 0, nullptr, nullptr),
          "clEnqueueCopyBuffer of " + std::to_string(n) + " bytes on " + dev_name(src.device));
    return;
  }
  std::vector<char> staging(n);
  check(lib_.clEnqueueReadBuffer(current_queue(src.device), src.mem, kClTrue, src.offset, n, staging.data(), 0,
                                 nullptr, nullptr),
        "clEnqueueReadBuffer of " + std::to_string(n) + " bytes from " + dev_name(src.device));
  check(lib_.clEnqueueWriteBuffer(current_queue(dst.device), dst.mem, kClTrue, dst.offset, n, staging.data(), 0,
                                  nullptr, nullptr),
        "clEnqueueWriteBuffer of " + std::to_string(n) + " bytes to " + dev_name(dst.device));
}

void OpenclDeviceAPI::synchronize(DLDevice dev, void* stream) {
  cl_command_queue q = stream ? static_cast<cl_command_queue>(stream) : current_queue(dev.device_id);
  check(lib_.clFinish(q), "clFinish on " + dev_name(dev.device_id));
}

void OpenclDeviceAPI::set_stream(DLDevice dev, void* stream) {
  check_device_id(dev.device_id);
  if (tls.streams_of != this) {
    tls.streams = {};
    tls.streams_of = this;
  }
  tls.streams[dev.device_id] = static_cast<cl_command_queue>(stream);
}

void* OpenclDeviceAPI::create_stream(DLDevice dev) {
  const OpenclDevice& d = device(dev.device_id);
  cl_int r = kClSuccess;
  cl_command_queue q = lib_.clCreateCommandQueue(d.context, d.id, 0, &r);
  check(r, "clCreateCommandQueue for " + dev_name(dev.device_id));
  return q;
}

void OpenclDeviceAPI::free_stream(DLDevice dev, void* stream) {
  if (!stream || shut_down_.load()) return;
  check_device_id(dev.device_id);
  if (tls.streams_of == this && tls.streams[dev.device_id] == stream) tls.streams[dev.device_id] = nullptr;
  auto q = static_cast<cl_command_queue>(stream);
  lib_.clFinish(q);
  check(lib_.clReleaseCommandQueue(q), "clReleaseCommandQueue on " + dev_name(dev.device_id));
}

// --- Teardown.

void OpenclDeviceAPI::add_owner(DriverObjectOwner* owner) {
  std::lock_guard<std::mutex> lock(mutex_);
  owners_.push_back(owner);
}

void OpenclDeviceAPI::remove_owner(DriverObjectOwner* owner) {
  std::lock_guard<std::mutex> lock(mutex_);
  owners_.erase(std::remove(owners_.begin(), owners_.end(), owner), owners_.end());
}

// In the order the API wants: the work in flight, then kernels and
// programs, buffers, queues and contexts. Objects released later (an array
// or a module destroyed by a static destructor) make no driver call.
void OpenclDeviceAPI::shutdown() {
  if (shut_down_.load() || !lib_.ok()) return;
  std::vector<DriverObjectOwner*> owners;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    for (OpenclDevice& d : devices_) {
      if (d.queue) lib_.clFinish(d.queue);
    }
    owners.swap(owners_);
  }
  for (DriverObjectOwner* owner : owners) owner->release_driver_objects();
  for (const DeviceBuffer& buffer : addresses_.take_all()) release_buffer(buffer);
  std::lock_guard<std::mutex> lock(mutex_);
  for (OpenclDevice& d : devices_) {
    if (d.queue) lib_.clReleaseCommandQueue(d.queue);
    if (d.context) lib_.clReleaseContext(d.context);
    d.queue = nullptr;
    d.context = nullptr;
  }
  for (auto& q : queues_) q.store(nullptr);
  shut_down_.store(true);
}

}  // namespace opencl_backend
}  // namespace graphrt
