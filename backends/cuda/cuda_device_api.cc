#include "backends/cuda/cuda_device_api.h"

#include <algorithm>
#include <cstdlib>
#include <memory>

#include "backends/cuda/cuda_graph_kernels.h"

#include "graphrt/error.h"
#include "graphrt/ndarray.h"
#include "graphrt/runtime.h"

namespace graphrt {
namespace cuda_backend {

size_t pool_bucket_size(size_t nbytes) {
  constexpr size_t kMin = 256;
  constexpr size_t kMiB = size_t(1) << 20;
  if (nbytes <= kMin) return kMin;
  if (nbytes <= kMiB) {
    size_t b = kMin;
    while (b < nbytes) b <<= 1;
    return b;
  }
  return (nbytes + kMiB - 1) / kMiB * kMiB;
}

namespace {

// A capture in progress on this thread.
struct CaptureRecord {
  int device = 0;
  CUstream stream = nullptr;           // the capture's own stream, current while capturing
  CUstream thread_stream = nullptr;    // the thread's stream before, put back at the end
  std::vector<void*> workspaces;       // allocated while capturing: reserved for the graph
  uint32_t step = 0;                   // capture_step: whose work is issued now
  CapturedKernels kernels;
};

// What capture_end hands to the graph executor. It owns its stream and
// events; the thread's stream (possibly a user stream freed later) is only
// used at replay time.
struct CapturedGraph {
  int device = 0;
  CUgraph graph = nullptr;    // kept: capture_rebind names its kernel nodes
  CUgraphExec exec = nullptr;
  CUstream stream = nullptr;  // replays run here
  CUevent ready = nullptr;    // recorded on the thread's stream before a replay
  CUevent done = nullptr;     // recorded on `stream` after it
  std::vector<void*> workspaces;
  CapturedKernels kernels;
};

struct ThreadState {
  int device = 0;
  std::array<CUstream, kMaxCudaDevices> streams{};
  CaptureRecord* capture = nullptr;
};
thread_local ThreadState tls;

// The per-thread state above is per thread, not per instance: streams live in the driver's
// primary contexts, which every instance shares. An instance whose driver is up is shut down
// at exit before the driver's own teardown (src/layer_api/exit_shutdown.h), which the driver
// registers with the process's exit handlers at cuInit.

std::string dev_name(int id) { return "cuda:" + std::to_string(id); }

}  // namespace

std::shared_ptr<CudaDeviceAPI> cuda_device_api() {
  auto* api = dynamic_cast<CudaDeviceAPI*>(runtime().device_api_or_null(kDLCUDA));
  if (!api) throw Error(ErrorKind::kNotFound, "the default runtime has no CUDA device API of the cuda back end");
  return api->shared_from_this();
}

CudaDeviceAPI::CudaDeviceAPI(std::string driver_path) : driver_path_(std::move(driver_path)) {
  for (auto& c : contexts_) c.store(nullptr);
}

CudaDeviceAPI::~CudaDeviceAPI() {
  forget_at_exit(this);
  release_cached();
}

void CudaDeviceAPI::ensure_init() {
  std::call_once(init_once_, [this] {
    driver_ = CudaDriver::load(driver_path_);
    if (!driver_.ok()) {
      init_error_ = driver_.error;
      return;
    }
    CUresult r = driver_.cuInit(0);
    if (r == CUDA_ERROR_NO_DEVICE) {
      device_count_ = 0;
      return;
    }
    if (r != CUDA_SUCCESS) {
      init_error_ = "cuInit failed: " + driver_.describe(r);
      return;
    }
    r = driver_.cuDeviceGetCount(&device_count_);
    if (r != CUDA_SUCCESS) {
      init_error_ = "cuDeviceGetCount failed: " + driver_.describe(r);
      device_count_ = 0;
      return;
    }
    if (device_count_ > kMaxCudaDevices) device_count_ = kMaxCudaDevices;
    shut_down_at_exit(this);  // after cuInit, so before the driver's teardown
  });
}

const CudaDriver& CudaDeviceAPI::driver() {
  ensure_init();
  return driver_;
}

std::string CudaDeviceAPI::init_error() {
  ensure_init();
  return init_error_;
}

int CudaDeviceAPI::device_count() {
  ensure_init();
  return init_error_.empty() ? device_count_ : 0;
}

void CudaDeviceAPI::check_available(DLDevice dev) {
  ensure_init();
  if (!init_error_.empty()) throw Error(ErrorKind::kDevice, init_error_);
  if (dev.device_id < 0 || dev.device_id >= device_count_)
    throw Error(ErrorKind::kOutOfRange,
                "no CUDA device " + std::to_string(dev.device_id) + " (" + std::to_string(device_count_) + " devices)");
}

void CudaDeviceAPI::check(CUresult r, const std::string& what) {
  if (r != CUDA_SUCCESS) throw Error(ErrorKind::kDevice, what + ": " + driver_.describe(r));
}

int CudaDeviceAPI::current_device() const { return tls.device; }

CUstream CudaDeviceAPI::current_stream(int device_id) const {
  if (device_id < 0 || device_id >= kMaxCudaDevices) return nullptr;
  return tls.streams[device_id];
}

CUstream CudaDeviceAPI::stream_for(int device_id, void* stream) const {
  return stream ? static_cast<CUstream>(stream) : current_stream(device_id);
}

CUcontext CudaDeviceAPI::context(int device_id) {
  CUcontext ctx = (device_id >= 0 && device_id < kMaxCudaDevices) ? contexts_[device_id].load(std::memory_order_acquire)
                                                                  : nullptr;
  if (ctx) return ctx;
  try {
    check_available(DLDevice{kDLCUDA, device_id});
  } catch (const Error& e) {
    throw Error(e.kind(), "device " + dev_name(device_id) + " is unavailable: " + e.message());
  }
  std::lock_guard<std::mutex> lock(mutex_);
  ctx = contexts_[device_id].load();
  if (!ctx) {
    CUdevice device = 0;
    check(driver_.cuDeviceGet(&device, device_id), "cuDeviceGet(" + std::to_string(device_id) + ")");
    check(driver_.cuDevicePrimaryCtxRetain(&ctx, device), "cuDevicePrimaryCtxRetain for " + dev_name(device_id));
    contexts_[device_id].store(ctx, std::memory_order_release);
  }
  return ctx;
}

void CudaDeviceAPI::make_current(CUcontext ctx, int device_id) {
  CUcontext current = nullptr;
  if (driver_.cuCtxGetCurrent(&current) == CUDA_SUCCESS && current == ctx) return;
  check(driver_.cuCtxSetCurrent(ctx), "cuCtxSetCurrent for " + dev_name(device_id));
}

void CudaDeviceAPI::activate(int device_id) { make_current(context(device_id), device_id); }

void CudaDeviceAPI::set_device(DLDevice dev) {
  activate(dev.device_id);
  tls.device = dev.device_id;
}

// --- Memory pool.

void* CudaDeviceAPI::pool_alloc(int device_id, size_t nbytes) {
  size_t bucket = pool_bucket_size(nbytes);
  std::lock_guard<std::mutex> lock(mutex_);
  Pool& pool = pools_[device_id];
  auto it = pool.free_lists.find(bucket);
  CUdeviceptr p = 0;
  if (it != pool.free_lists.end() && !it->second.empty()) {
    p = it->second.back();
    it->second.pop_back();
    pool.stats.cached_bytes -= bucket;
  } else {
    CUresult r = driver_.cuMemAlloc(&p, bucket);
    if (r == CUDA_ERROR_OUT_OF_MEMORY) {  // give the cache back and try once more
      release_cached_locked(device_id);
      r = driver_.cuMemAlloc(&p, bucket);
    }
    check(r, "cuMemAlloc of " + std::to_string(nbytes) + " bytes on " + dev_name(device_id));
    ++pool.stats.driver_allocs;
  }
  pool.sizes[p] = bucket;
  pool.stats.in_use_bytes += bucket;
  return reinterpret_cast<void*>(static_cast<uintptr_t>(p));
}

void CudaDeviceAPI::pool_free(int device_id, void* ptr) {
  if (!ptr) return;
  CUdeviceptr p = static_cast<CUdeviceptr>(reinterpret_cast<uintptr_t>(ptr));
  std::lock_guard<std::mutex> lock(mutex_);
  Pool& pool = pools_[device_id];
  auto it = pool.sizes.find(p);
  if (it == pool.sizes.end() || shut_down_.load()) {
    // Not ours, or the process is exiting: hand it straight back (errors at
    // exit, e.g. CUDA_ERROR_DEINITIALIZED, are of no use to anyone).
    if (it != pool.sizes.end()) pool.sizes.erase(it);
    if (driver_.cuMemFree) driver_.cuMemFree(p);
    return;
  }
  size_t bucket = it->second;
  pool.sizes.erase(it);
  pool.stats.in_use_bytes -= bucket;
  pool.stats.cached_bytes += bucket;
  pool.free_lists[bucket].push_back(p);
}

void CudaDeviceAPI::release_cached_locked(int device_id) {
  Pool& pool = pools_[device_id];
  CUcontext ctx = contexts_[device_id].load();
  CUcontext current = nullptr;
  if (ctx && (driver_.cuCtxGetCurrent(&current) != CUDA_SUCCESS || current != ctx)) driver_.cuCtxSetCurrent(ctx);
  for (auto& entry : pool.free_lists) {
    for (CUdeviceptr p : entry.second) driver_.cuMemFree(p);
  }
  pool.free_lists.clear();
  pool.stats.cached_bytes = 0;
}

void CudaDeviceAPI::release_cached() {
  if (!driver_.ok() || !driver_.cuMemFree) return;
  std::lock_guard<std::mutex> lock(mutex_);
  for (int d = 0; d < kMaxCudaDevices; ++d) {
    if (!pools_[d].free_lists.empty()) release_cached_locked(d);
  }
}

void CudaDeviceAPI::shutdown() {
  release_cached();
  shut_down_.store(true);  // later frees (static arrays) go straight to the driver
}

CudaDeviceAPI::PoolStats CudaDeviceAPI::pool_stats(int device_id) {
  std::lock_guard<std::mutex> lock(mutex_);
  return pools_.at(device_id).stats;
}

void* CudaDeviceAPI::alloc(DLDevice dev, size_t nbytes, size_t alignment) {
  if (alignment > 256)
    throw Error(ErrorKind::kUnsupported,
                "CUDA allocations are 256-byte aligned; " + std::to_string(alignment) + " was requested")
        .with("device", dev_name(dev.device_id));
  activate(dev.device_id);
  return pool_alloc(dev.device_id, nbytes);
}

void CudaDeviceAPI::free(DLDevice dev, void* ptr) {
  if (dev.device_id < 0 || dev.device_id >= kMaxCudaDevices) return;
  pool_free(dev.device_id, ptr);
}

void* CudaDeviceAPI::alloc_workspace(DLDevice dev, size_t nbytes) {
  activate(dev.device_id);
  void* p = pool_alloc(dev.device_id, nbytes);
  if (tls.capture && tls.capture->device == dev.device_id) tls.capture->workspaces.push_back(p);
  return p;
}

void CudaDeviceAPI::free_workspace(DLDevice dev, void* ptr) {
  if (CaptureRecord* cap = tls.capture) {
    // A workspace used inside a captured graph belongs to the graph until
    // capture_free: its address is baked into the recorded kernels.
    for (void* w : cap->workspaces) {
      if (w == ptr) return;
    }
  }
  free(dev, ptr);
}

// --- Copies and streams.

void CudaDeviceAPI::copy(const DLTensor* from, DLTensor* to, void* stream) {
  size_t n = tensor_nbytes(from);
  if (n == 0) return;
  const char* src = static_cast<const char*>(from->data) + from->byte_offset;
  char* dst = static_cast<char*>(to->data) + to->byte_offset;
  auto dptr = [](const void* p) { return static_cast<CUdeviceptr>(reinterpret_cast<uintptr_t>(p)); };
  bool from_gpu = from->device.device_type == kDLCUDA;
  bool to_gpu = to->device.device_type == kDLCUDA;
  if (from_gpu && to_gpu && from->device.device_id != to->device.device_id) {
    copy_between_devices(dptr(src), from->device.device_id, dptr(dst), to->device.device_id, n, stream);
  } else if (from_gpu && to_gpu) {
    int id = from->device.device_id;
    activate(id);
    check(driver_.cuMemcpyDtoDAsync(dptr(dst), dptr(src), n, stream_for(id, stream)),
          "cuMemcpyDtoDAsync of " + std::to_string(n) + " bytes " + device_to_string(from->device) + " -> " +
              device_to_string(to->device));
    if (stream_for(id, stream) == current_stream(id)) note_captured_work(id, "a device-to-device copy", true);
  } else if (to_gpu) {
    int id = to->device.device_id;
    activate(id);
    CUstream s = stream_for(id, stream);
    check(driver_.cuMemcpyHtoDAsync(dptr(dst), src, n, s), "cuMemcpyHtoDAsync of " + std::to_string(n) + " bytes to " + dev_name(id));
    check(driver_.cuStreamSynchronize(s), "cuStreamSynchronize after a host-to-device copy");
  } else if (from_gpu) {
    int id = from->device.device_id;
    activate(id);
    CUstream s = stream_for(id, stream);
    check(driver_.cuMemcpyDtoHAsync(dst, dptr(src), n, s), "cuMemcpyDtoHAsync of " + std::to_string(n) + " bytes from " + dev_name(id));
    check(driver_.cuStreamSynchronize(s), "cuStreamSynchronize after a device-to-host copy");
  } else {
    throw Error(ErrorKind::kUnsupported,
                "CUDA copy between " + device_to_string(from->device) + " and " + device_to_string(to->device));
  }
}

CUevent CudaDeviceAPI::record_event(int device_id, CUstream stream) {
  activate(device_id);
  CUevent e = nullptr;
  check(driver_.cuEventCreate(&e, CU_EVENT_DISABLE_TIMING), "cuEventCreate on " + dev_name(device_id));
  CUresult r = driver_.cuEventRecord(e, stream);
  if (r != CUDA_SUCCESS) driver_.cuEventDestroy(e);
  check(r, "cuEventRecord on " + dev_name(device_id));
  return e;
}

void CudaDeviceAPI::wait_event(int device_id, CUstream stream, CUevent e) {
  activate(device_id);
  CUresult r = driver_.cuStreamWaitEvent(stream, e, 0);
  driver_.cuEventDestroy(e);  // released by the driver once the wait is satisfied
  check(r, "cuStreamWaitEvent on " + dev_name(device_id));
}

// The copy runs on the source device's stream, which first waits for the
// work queued on the destination's stream (it may still read the old
// contents); the destination's stream then waits for the copy, so the next
// kernel there sees the data.
void CudaDeviceAPI::copy_between_devices(CUdeviceptr src, int src_id, CUdeviceptr dst, int dst_id, size_t n,
                                         void* stream) {
  CUstream src_stream = stream_for(src_id, stream);
  CUstream dst_stream = current_stream(dst_id);
  wait_event(src_id, src_stream, record_event(dst_id, dst_stream));
  check(driver_.cuMemcpyDtoDAsync(dst, src, n, src_stream),
        "cuMemcpyDtoDAsync of " + std::to_string(n) + " bytes " + dev_name(src_id) + " -> " + dev_name(dst_id));
  wait_event(dst_id, dst_stream, record_event(src_id, src_stream));
}

void CudaDeviceAPI::sync_stream_from_to(DLDevice dev, void* src, void* dst) {
  int id = dev.device_id;
  CUstream from = stream_for(id, src);
  CUstream to = static_cast<CUstream>(dst);
  if (from == to) return;
  wait_event(id, to, record_event(id, from));
}

void CudaDeviceAPI::synchronize(DLDevice dev, void* stream) {
  activate(dev.device_id);
  check(driver_.cuStreamSynchronize(stream_for(dev.device_id, stream)), "cuStreamSynchronize on " + dev_name(dev.device_id));
}

void CudaDeviceAPI::set_stream(DLDevice dev, void* stream) {
  if (dev.device_id < 0 || dev.device_id >= kMaxCudaDevices) throw Error(ErrorKind::kOutOfRange,
                                                                         "bad CUDA device id " + std::to_string(dev.device_id));
  tls.streams[dev.device_id] = static_cast<CUstream>(stream);
}

void* CudaDeviceAPI::create_stream(DLDevice dev) {
  activate(dev.device_id);
  CUstream s = nullptr;
  check(driver_.cuStreamCreate(&s, 1 /* CU_STREAM_NON_BLOCKING */), "cuStreamCreate on " + dev_name(dev.device_id));
  return s;
}

void CudaDeviceAPI::free_stream(DLDevice dev, void* stream) {
  if (!stream) return;
  activate(dev.device_id);
  if (tls.streams[dev.device_id] == stream) tls.streams[dev.device_id] = nullptr;
  check(driver_.cuStreamDestroy(static_cast<CUstream>(stream)), "cuStreamDestroy on " + dev_name(dev.device_id));
}

// --- CUDA-graph capture.
//
// Each capture gets its own non-blocking stream. A blocking one would be
// implicitly synchronised with the legacy stream, and any legacy-stream use
// anywhere in the process (another executor's run, a copy, a synchronise)
// during the capture would then fail with CUDA_ERROR_STREAM_CAPTURE_IMPLICIT
// and invalidate it; one shared stream would also let only one executor
// capture at a time. Replays stay on that stream and are ordered with the
// thread's stream (the legacy one when none is set) through two events, so
// copies issued before and after a replay see its inputs and outputs.

CUstream CudaDeviceAPI::new_stream(int device_id, int flags) {
  CUstream s = nullptr;
  check(driver_.cuStreamCreate(&s, flags), "cuStreamCreate on " + dev_name(device_id));
  return s;
}

void CudaDeviceAPI::capture_begin(DLDevice dev) {
  int id = dev.device_id;
  activate(id);
  if (tls.capture) throw Error(ErrorKind::kFailedPrecondition,
                               "a CUDA graph capture is already in progress on this thread");
  auto rec = std::make_unique<CaptureRecord>();
  rec->device = id;
  rec->stream = new_stream(id, CU_STREAM_NON_BLOCKING);
  rec->thread_stream = tls.streams[id];
  CUresult r = driver_.cuStreamBeginCapture(rec->stream, CU_STREAM_CAPTURE_MODE_RELAXED);
  if (r != CUDA_SUCCESS) {
    driver_.cuStreamDestroy(rec->stream);
    throw Error(ErrorKind::kDevice, "cuStreamBeginCapture: " + driver_.describe(r));
  }
  tls.streams[id] = rec->stream;
  tls.capture = rec.release();
}

void CudaDeviceAPI::end_and_instantiate(CUstream stream, CUgraph* graph, CUgraphExec* exec) {
  CUresult r = driver_.cuStreamEndCapture(stream, graph);
  if (r != CUDA_SUCCESS || !*graph) throw Error(ErrorKind::kDevice, "cuStreamEndCapture: " + driver_.describe(r));
  r = driver_.cuGraphInstantiateWithFlags(exec, *graph, 0);
  if (r != CUDA_SUCCESS) throw Error(ErrorKind::kDevice, "cuGraphInstantiateWithFlags: " + driver_.describe(r));
}

// A capture that fails here still owns its stream and the workspaces it
// reserved: capture_free gives them back before the error leaves.
void* CudaDeviceAPI::capture_end(DLDevice dev) {
  if (!tls.capture || tls.capture->device != dev.device_id)
    throw Error(ErrorKind::kFailedPrecondition,
                "no CUDA graph capture in progress on this thread for " + dev_name(dev.device_id));
  std::unique_ptr<CaptureRecord> rec(tls.capture);
  tls.capture = nullptr;
  tls.streams[rec->device] = rec->thread_stream;
  auto captured = std::make_unique<CapturedGraph>();
  captured->device = rec->device;
  captured->stream = rec->stream;
  captured->workspaces = std::move(rec->workspaces);
  captured->kernels = std::move(rec->kernels);
  try {
    end_and_instantiate(rec->stream, &captured->graph, &captured->exec);
    size_t nodes = 0;
    if (driver_.cuGraphGetNodes(captured->graph, nullptr, &nodes) == CUDA_SUCCESS) {
      captured->kernels.check_node_count(nodes);
    } else {
      captured->kernels.refuse("cuGraphGetNodes failed");
    }
    CUresult r = driver_.cuEventCreate(&captured->ready, CU_EVENT_DISABLE_TIMING);
    if (r == CUDA_SUCCESS) r = driver_.cuEventCreate(&captured->done, CU_EVENT_DISABLE_TIMING);
    if (r != CUDA_SUCCESS) throw Error(ErrorKind::kDevice, "cuEventCreate: " + driver_.describe(r));
  } catch (const Error&) {
    capture_free(dev, captured.release());
    throw;
  }
  return captured.release();
}

void CudaDeviceAPI::capture_launch(DLDevice dev, void* graph) {
  auto* g = static_cast<CapturedGraph*>(graph);
  int id = dev.device_id;
  activate(id);
  CUstream caller = tls.streams[id];
  check(driver_.cuEventRecord(g->ready, caller), "cuEventRecord before a CUDA graph replay");
  check(driver_.cuStreamWaitEvent(g->stream, g->ready, 0), "cuStreamWaitEvent before a CUDA graph replay");
  check(driver_.cuGraphLaunch(g->exec, g->stream), "cuGraphLaunch on " + dev_name(id));
  check(driver_.cuEventRecord(g->done, g->stream), "cuEventRecord after a CUDA graph replay");
  check(driver_.cuStreamWaitEvent(caller, g->done, 0), "cuStreamWaitEvent after a CUDA graph replay");
}

// Only the graph's own stream is synchronised: the stream a replay was
// ordered with may be a user stream that no longer exists.
void CudaDeviceAPI::capture_free(DLDevice dev, void* graph) {
  auto* g = static_cast<CapturedGraph*>(graph);
  if (!g) return;
  try {
    activate(dev.device_id);
    driver_.cuStreamSynchronize(g->stream);  // a replay may still be running
    if (g->exec) driver_.cuGraphExecDestroy(g->exec);
    if (g->graph) driver_.cuGraphDestroy(g->graph);
    if (g->ready) driver_.cuEventDestroy(g->ready);
    if (g->done) driver_.cuEventDestroy(g->done);
    driver_.cuStreamDestroy(g->stream);
  } catch (const Error&) {
    // Called from destructors (possibly at exit): nothing useful to report.
  }
  for (void* w : g->workspaces) pool_free(g->device, w);
  delete g;
}

// --- Following a zero-copy tensor that moved.
//
// While capturing, every kernel launch is recorded with the graph node the
// capture made for it (cuStreamGetCaptureInfo right after the launch names
// it as the stream's one dependency) and its argument bytes; any other work
// is counted, and the graph's node count must match. A moved tensor then
// costs one cuGraphExecKernelNodeSetParams per kernel node that uses it,
// which only affects later launches of the graph, so a replay in flight is
// not disturbed.

void CudaDeviceAPI::capture_step(DLDevice dev, uint32_t step) {
  if (tls.capture && tls.capture->device == dev.device_id) tls.capture->step = step;
}

void CudaDeviceAPI::note_captured_launch(int device_id, CUfunction f, const KernelPlan& plan, const LaunchDims& dims,
                                         void* const* params) {
  CaptureRecord* cap = tls.capture;
  if (!cap || cap->device != device_id || tls.streams[device_id] != cap->stream) return;
  int status = 0;
  unsigned long long id = 0;
  CUgraph graph = nullptr;
  const CUgraphNode* deps = nullptr;
  size_t num_deps = 0;
  CUresult r = driver_.cuStreamGetCaptureInfo(cap->stream, &status, &id, &graph, &deps, &num_deps);
  if (r != CUDA_SUCCESS || status != CU_STREAM_CAPTURE_STATUS_ACTIVE || num_deps != 1 || !deps || !deps[0]) {
    cap->kernels.refuse("the capture did not name the node of kernel '" + plan.name + "'" +
                        (r == CUDA_SUCCESS ? "" : ": cuStreamGetCaptureInfo: " + driver_.describe(r)));
    return;
  }
  cap->kernels.add(deps[0], cap->step, f, plan, dims, params);
}

void CudaDeviceAPI::note_captured_work(int device_id, const std::string& what, bool may_hold_tensor_address) {
  CaptureRecord* cap = tls.capture;
  if (!cap || cap->device != device_id || tls.streams[device_id] != cap->stream) return;
  cap->kernels.add_other(what, may_hold_tensor_address);
}

void CudaDeviceAPI::capture_rebind(DLDevice dev, void* graph, const void* old_data, size_t nbytes, void* new_data,
                                   const uint32_t* steps, size_t num_steps) {
  auto* g = static_cast<CapturedGraph*>(graph);
  if (!g) throw Error(ErrorKind::kInvalidArgument, "capture_rebind: no graph");
  if (!g->kernels.refusal().empty())
    throw Error(ErrorKind::kUnsupported, "the captured graph cannot be updated: " + g->kernels.refusal());
  activate(dev.device_id);
  std::vector<void*> params;
  g->kernels.rebind(reinterpret_cast<uintptr_t>(old_data), nbytes, reinterpret_cast<uintptr_t>(new_data), steps,
                    num_steps, [&](CapturedKernel& k) {
                      CudaKernelNodeParams p = k.node_params(&params);
                      CUresult r = driver_.cuGraphExecKernelNodeSetParams(g->exec, k.node, &p);
                      if (r != CUDA_SUCCESS)
                        throw Error(ErrorKind::kDevice, "cuGraphExecKernelNodeSetParams for kernel '" + k.name +
                                                            "': " + driver_.describe(r))
                            .with("kernel", k.name);
                    });
}

}  // namespace cuda_backend
}  // namespace graphrt
