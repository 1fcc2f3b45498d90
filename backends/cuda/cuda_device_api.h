// The CUDA DeviceAPI: driver bring-up, primary contexts, a caching memory
// pool, copies, per-thread current streams and CUDA-graph capture.
#pragma once

#include <array>
#include <atomic>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include "graphrt/device_api.h"
#include "src/layer_api/exit_shutdown.h"
#include "backends/cuda/cuda_driver.h"
#include "backends/cuda/cuda_module.h"

namespace graphrt {
namespace cuda_backend {

// Pool bucket for a request: at least 256 bytes; powers of two up to 1 MiB,
// then multiples of 1 MiB (so large graph buffers waste at most 1 MiB).
size_t pool_bucket_size(size_t nbytes);

class CudaDeviceAPI : public DeviceAPI, public ExitShutdown, public std::enable_shared_from_this<CudaDeviceAPI> {
 public:
  // The driver library is opened on first use, not here.
  explicit CudaDeviceAPI(std::string driver_path = default_driver_path());
  ~CudaDeviceAPI() override;

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
  // An event recorded on `src` (null: the thread's stream) that `dst` (null:
  // the legacy stream) waits for: DLPack's hand-over to a consumer's stream.
  void sync_stream_from_to(DLDevice dev, void* src, void* dst) override;
  void capture_begin(DLDevice dev) override;
  void* capture_end(DLDevice dev) override;
  void capture_launch(DLDevice dev, void* graph) override;
  void capture_free(DLDevice dev, void* graph) override;
  void capture_step(DLDevice dev, uint32_t step) override;
  // Updates the kernel nodes that use the old address
  // (cuGraphExecKernelNodeSetParams); throws kUnsupported when the graph
  // holds work it cannot follow, kDevice when the driver refuses an update.
  void capture_rebind(DLDevice dev, void* graph, const void* old_data, size_t nbytes, void* new_data,
                      const uint32_t* steps, size_t num_steps) override;
  // Called after every successful kernel launch: while this thread captures
  // on the device, records the kernel's node and arguments for
  // capture_rebind. `params` is what cuLaunchKernel got.
  void note_captured_launch(int device_id, CUfunction f, const KernelPlan& plan, const LaunchDims& dims,
                            void* const* params);
  // Other work issued on the thread's stream (see CapturedKernels::add_other).
  void note_captured_work(int device_id, const std::string& what, bool may_hold_tensor_address);

  // The driver (loaded on first call) and whether cuInit worked: "" or why not.
  const CudaDriver& driver();
  std::string init_error();
  int device_count();  // 0 when the driver is unusable

  // This thread's device (the last set_device; 0 before any).
  int current_device() const;
  // Makes `device_id`'s primary context current on this thread; throws.
  void activate(int device_id);
  // The device's primary context (retained on first use); throws.
  CUcontext context(int device_id);
  // Makes `ctx` current unless the driver says it already is: another
  // library on this thread (PyTorch, CuPy) may have switched contexts, so
  // no cache of ours can know.
  void make_current(CUcontext ctx, int device_id);
  // This thread's stream for the device (null = the legacy default stream).
  CUstream current_stream(int device_id) const;
  // Throws an Error "<what>: CUDA_ERROR_... (n): text" unless r is success.
  void check(CUresult r, const std::string& what);

  struct PoolStats {
    size_t cached_bytes = 0;  // in free lists
    size_t in_use_bytes = 0;  // handed out
    size_t driver_allocs = 0; // cuMemAlloc calls
  };
  PoolStats pool_stats(int device_id);
  // Returns every cached block to the driver.
  void release_cached();
  // At exit (registered after cuInit): release_cached(), then stop caching.
  void shutdown() override;

 private:
  struct Pool {
    std::map<size_t, std::vector<CUdeviceptr>> free_lists;  // bucket size -> blocks
    std::unordered_map<CUdeviceptr, size_t> sizes;           // block -> bucket size (in use)
    PoolStats stats;
  };
  void ensure_init();
  void* pool_alloc(int device_id, size_t nbytes);
  void pool_free(int device_id, void* ptr);
  void release_cached_locked(int device_id);
  CUstream stream_for(int device_id, void* stream) const;
  CUstream new_stream(int device_id, int flags);
  // An event recorded on `stream` of the device; wait_event makes another
  // stream wait for it and destroys it.
  CUevent record_event(int device_id, CUstream stream);
  void wait_event(int device_id, CUstream stream, CUevent e);
  void copy_between_devices(CUdeviceptr src, int src_id, CUdeviceptr dst, int dst_id, size_t n, void* stream);
  // Ends the capture on `stream`: the captured graph (kept for its node
  // handles) in *graph and the executable one in *exec. Throws kDevice.
  void end_and_instantiate(CUstream stream, CUgraph* graph, CUgraphExec* exec);

  std::string driver_path_;
  std::once_flag init_once_;
  CudaDriver driver_;
  std::string init_error_;
  int device_count_ = 0;

  std::mutex mutex_;  // contexts, pools
  std::array<std::atomic<CUcontext>, kMaxCudaDevices> contexts_{};
  std::array<Pool, kMaxCudaDevices> pools_;
  std::atomic<bool> shut_down_{false};
};

// Each runtime owns its own instance through its device table
// (register_backend); an instance's cached blocks are freed when it dies, or
// at exit. This is the default runtime's (white-box tests and benches reach
// the driver through it); throws kNotFound when that runtime's kDLCUDA device
// is not this back end's.
std::shared_ptr<CudaDeviceAPI> cuda_device_api();

}  // namespace cuda_backend
}  // namespace graphrt
