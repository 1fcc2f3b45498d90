// What the tests of a Session over a runtime of its own share: the runtime
// composed as libgraphrt composes its default, a default-runtime factory that
// says when the default is built, and a CPU device API that counts what it
// hands out. Each such test is its own process: the default runtime must not
// exist when it starts, so that building it can be seen.
#pragma once

#include <atomic>
#include <cstddef>
#include <memory>
#include <mutex>
#include <utility>
#include <vector>

#include "graph/register_graph_executor.h"
#include "graphrt/runtime.h"
#include "memory/cpu_device_api.h"
#include "backends/relax/register.h"
#include "src/layer_api/layer_composition.h"

namespace graphrt_test {

// The layers these exports need, composed as libgraphrt composes its default.
inline std::unique_ptr<graphrt::Runtime> compose_own_runtime() {
  auto composed = std::make_unique<graphrt::Runtime>();
  graphrt::register_core(*composed);
  graphrt::register_graph_executor(*composed);
  graphrt::relax::register_backend(*composed);
  return composed;
}

inline std::atomic<bool>& default_runtime_built() {
  static std::atomic<bool> built{false};
  return built;
}

// The default runtime's factory while such a test runs: it says when it is built.
inline std::unique_ptr<graphrt::Runtime> flagging_default_runtime_factory() {
  default_runtime_built() = true;
  return compose_own_runtime();
}

// The CPU's device API, counting what it hands out and remembering where.
class CountingCpu : public graphrt::DeviceAPI {
 public:
  void* alloc(DLDevice dev, size_t nbytes, size_t alignment) override {
    void* p = cpu_.alloc(dev, nbytes, alignment);
    std::lock_guard<std::mutex> lock(mutex_);
    live_.emplace_back(static_cast<char*>(p), nbytes);
    sizes_.push_back(nbytes);
    return p;
  }
  void free(DLDevice dev, void* ptr) override {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      for (size_t i = 0; i < live_.size(); ++i)
        if (live_[i].first == ptr) live_.erase(live_.begin() + static_cast<std::ptrdiff_t>(i));
    }
    cpu_.free(dev, ptr);
  }
  void copy(const DLTensor* from, DLTensor* to, void* stream) override { cpu_.copy(from, to, stream); }
  void* alloc_workspace(DLDevice dev, size_t nbytes) override { return cpu_.alloc_workspace(dev, nbytes); }
  void free_workspace(DLDevice dev, void* ptr) override { cpu_.free_workspace(dev, ptr); }

  int allocs() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return static_cast<int>(sizes_.size());
  }
  // How many of the allocations so far took exactly `nbytes`.
  int allocs_of(size_t nbytes) const {
    std::lock_guard<std::mutex> lock(mutex_);
    int n = 0;
    for (size_t s : sizes_) n += s == nbytes ? 1 : 0;
    return n;
  }
  // True when [data, data + n) lies in memory this API handed out and nobody freed yet.
  bool holds(const void* data, size_t n) const {
    const char* p = static_cast<const char*>(data);
    std::lock_guard<std::mutex> lock(mutex_);
    for (const auto& block : live_)
      if (p >= block.first && p + n <= block.first + block.second) return true;
    return false;
  }

 private:
  graphrt::CpuDeviceAPI cpu_;
  mutable std::mutex mutex_;
  std::vector<std::pair<char*, size_t>> live_;
  std::vector<size_t> sizes_;
};

}  // namespace graphrt_test
