// The kDLOpenCL DeviceAPI: the API's bring-up (platforms and devices, GPUs
// first), a context and an in-order queue per device, buffers behind device
// addresses (opencl_address_space.h), copies, per-thread streams (queues),
// and an orderly teardown at exit before the driver's own.
#pragma once

#include <array>
#include <atomic>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "graphrt/device_api.h"
#include "src/layer_api/exit_shutdown.h"
#include "backends/opencl/opencl_address_space.h"
#include "backends/opencl/opencl_library.h"

namespace graphrt {
namespace opencl_backend {

constexpr int kMaxOpenclDevices = 32;

// What a module that holds driver objects gives back at teardown.
class DriverObjectOwner {
 public:
  virtual ~DriverObjectOwner() = default;
  virtual void release_driver_objects() = 0;
};

struct OpenclDevice {
  cl_platform_id platform = nullptr;
  cl_device_id id = nullptr;
  std::string name;
  size_t base_align_bytes = 128;  // CL_DEVICE_MEM_BASE_ADDR_ALIGN: where sub-buffers may start
  cl_context context = nullptr;   // made on first use, with the queue
  cl_command_queue queue = nullptr;
};

class OpenclDeviceAPI : public DeviceAPI, public ExitShutdown, public std::enable_shared_from_this<OpenclDeviceAPI> {
 public:
  // The library is opened on first use, not here.
  explicit OpenclDeviceAPI(std::string library_path = default_library_path());
  ~OpenclDeviceAPI() override;

  void check_available(DLDevice dev) override;
  void* alloc(DLDevice dev, size_t nbytes, size_t alignment) override;
  void free(DLDevice dev, void* ptr) override;
  void copy(const DLTensor* from, DLTensor* to, void* stream) override;
  void* alloc_workspace(DLDevice dev, size_t nbytes) override;
  void free_workspace(DLDevice dev, void* ptr) override;
  void synchronize(DLDevice dev, void* stream) override;
  void set_stream(DLDevice dev, void* stream) override;
  void* create_stream(DLDevice dev) override;
  void free_stream(DLDevice dev, void* stream) override;
  void set_device(DLDevice dev) override;

  // The API (opened on first call), and why it cannot be used ("" when it can).
  const OpenclLibrary& library();
  std::string init_error();
  int device_count();  // 0 when the API is unusable or has no device
  // The device with its context and queue made; throws when unavailable.
  const OpenclDevice& device(int device_id);
  int current_device() const;
  // The queue work for `device_id` goes to on this thread (its stream, else the device's).
  cl_command_queue current_queue(int device_id);
  // The cl_mem to pass for a kernel argument at `address` (a sub-buffer when
  // it is inside a buffer). Throws naming `kernel` and the argument when the
  // address is no buffer of the device, or its offset is misaligned.
  cl_mem kernel_buffer(int device_id, const void* address, const std::string& kernel, size_t arg_index);
  // Throws an Error "<what>: CL_... (n)" of kind kDevice unless status is success.
  void check(cl_int status, const std::string& what) const;

  // Modules holding programs and kernels register, so that the teardown at
  // exit releases those before the buffers, queues and contexts.
  void add_owner(DriverObjectOwner* owner);
  void remove_owner(DriverObjectOwner* owner);
  // Once true, no driver call is made any more (the process is exiting).
  bool shut_down() const { return shut_down_.load(); }
  // Releases kernels and programs (the owners'), buffers, queues, contexts.
  void shutdown() override;
  size_t live_buffers() const { return addresses_.size(); }

 private:
  void ensure_init();
  void enumerate_devices();
  void release_buffer(const DeviceBuffer& buffer);
  void check_device_id(int device_id) const;
  void copy_device_to_device(const AddressSpace::Found& src, const AddressSpace::Found& dst, size_t n, void* stream);
  AddressSpace::Found resolve(const void* address, size_t n, const char* what) const;

  std::string library_path_;
  std::once_flag init_once_;
  OpenclLibrary lib_;
  std::string init_error_;
  std::vector<OpenclDevice> devices_;
  // Each device's queue once made: launches and copies read it without the lock.
  std::array<std::atomic<cl_command_queue>, kMaxOpenclDevices> queues_{};
  mutable std::mutex mutex_;  // devices_' contexts and queues, owners_
  std::vector<DriverObjectOwner*> owners_;
  AddressSpace addresses_;
  std::atomic<bool> shut_down_{false};
};

// The default runtime's instance (white-box tests and benches); throws
// kNotFound when its kDLOpenCL device is not this back end's.
std::shared_ptr<OpenclDeviceAPI> opencl_device_api();

}  // namespace opencl_backend
}  // namespace graphrt
