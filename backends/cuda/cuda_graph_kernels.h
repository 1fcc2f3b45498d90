// The kernel nodes of a captured CUDA graph, recorded while it is captured,
// so that a zero-copy tensor that moves is followed by updating the nodes
// that use its address (cuGraphExecKernelNodeSetParams) instead of a plain
// run and a new capture.
//
// Addresses alone cannot say which tensor an argument belongs to: the memory
// plan gives one buffer to tensors whose lives do not overlap (an output
// often reuses an early intermediate's storage). So every kernel is recorded
// with its step (the graph executor's op index), and an update names the
// steps whose arguments may move.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "backends/cuda/cuda_driver.h"
#include "backends/cuda/cuda_module.h"

namespace graphrt {
namespace cuda_backend {

struct CapturedKernel {
  CUgraphNode node = nullptr;  // in the captured CUgraph, which outlives the exec
  uint32_t step = 0;
  std::string name;
  CUfunction func = nullptr;
  LaunchDims dims;
  std::vector<uint64_t> values;  // per argument, its 4 or 8 bytes in a zeroed slot
  std::vector<bool> handles;     // per argument: a device address

  // The launch as cuGraphExecKernelNodeSetParams takes it; `params` gets
  // one pointer per argument (into `values`) and must outlive the call.
  CudaKernelNodeParams node_params(std::vector<void*>* params);
};

class CapturedKernels {
 public:
  // A kernel as it was captured: `params` is what cuLaunchKernel got.
  void add(CUgraphNode node, uint32_t step, CUfunction func, const KernelPlan& plan, const LaunchDims& dims,
           void* const* params);
  // Captured work that is not a recorded kernel (a memset of a module's
  // global). `may_hold_tensor_address`: work whose addresses an update could
  // not follow (a copy), which makes the graph impossible to update.
  void add_other(const std::string& what, bool may_hold_tensor_address);
  // The graph cannot be updated, for this reason (the first one is kept).
  void refuse(const std::string& why);
  // After the capture ended: the graph must hold exactly the recorded work,
  // else something unrecorded may hold an address.
  void check_node_count(size_t graph_nodes);
  // "" when the graph's kernels can be updated, else why not.
  const std::string& refusal() const { return refusal_; }
  size_t size() const { return kernels_.size(); }

  // Points every handle argument of the kernels of `steps` (sorted) that
  // lies in [old_data, old_data + nbytes) at the same offset from new_data,
  // and calls `update` for each kernel that changed (which applies it to the
  // executable graph and may throw). Returns the number of kernels changed.
  size_t rebind(uintptr_t old_data, size_t nbytes, uintptr_t new_data, const uint32_t* steps, size_t num_steps,
                const std::function<void(CapturedKernel&)>& update);

 private:
  std::vector<CapturedKernel> kernels_;
  size_t other_nodes_ = 0;
  std::string refusal_;
};

}  // namespace cuda_backend
}  // namespace graphrt
