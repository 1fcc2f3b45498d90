#include "backends/cuda/cuda_graph_kernels.h"

#include <algorithm>
#include <cstring>

namespace graphrt {
namespace cuda_backend {

CudaKernelNodeParams CapturedKernel::node_params(std::vector<void*>* params) {
  params->resize(values.size());
  for (size_t i = 0; i < values.size(); ++i) (*params)[i] = &values[i];
  return CudaKernelNodeParams{func,        dims.grid[0],   dims.grid[1],   dims.grid[2], dims.block[0],
                              dims.block[1], dims.block[2], dims.dyn_smem_bytes, params->data(), nullptr};
}

void CapturedKernels::add(CUgraphNode node, uint32_t step, CUfunction func, const KernelPlan& plan,
                          const LaunchDims& dims, void* const* params) {
  CapturedKernel k;
  k.node = node;
  k.step = step;
  k.name = plan.name;
  k.func = func;
  k.dims = dims;
  k.values.assign(plan.args.size(), 0);
  k.handles = plan.handle_args;
  k.handles.resize(plan.args.size(), false);
  for (size_t i = 0; i < plan.args.size(); ++i) {
    size_t bytes = plan.args[i] == ArgKind::kValuePointer ? 8 : 4;
    std::memcpy(&k.values[i], params[i], bytes);  // little-endian: a 4-byte value is the slot's low half
  }
  kernels_.push_back(std::move(k));
}

void CapturedKernels::add_other(const std::string& what, bool may_hold_tensor_address) {
  ++other_nodes_;
  if (may_hold_tensor_address) refuse("it holds " + what + ", whose addresses are not followed");
}

void CapturedKernels::refuse(const std::string& why) {
  if (refusal_.empty()) refusal_ = why;
}

void CapturedKernels::check_node_count(size_t graph_nodes) {
  size_t recorded = kernels_.size() + other_nodes_;
  if (graph_nodes != recorded)
    refuse("the graph has " + std::to_string(graph_nodes) + " nodes, " + std::to_string(recorded) +
           " of them recorded by graphrt");
}

size_t CapturedKernels::rebind(uintptr_t old_data, size_t nbytes, uintptr_t new_data, const uint32_t* steps,
                               size_t num_steps, const std::function<void(CapturedKernel&)>& update) {
  size_t changed = 0;
  for (CapturedKernel& k : kernels_) {
    if (!std::binary_search(steps, steps + num_steps, k.step)) continue;
    bool moved = false;
    for (size_t i = 0; i < k.values.size(); ++i) {
      uint64_t v = k.values[i];
      if (!k.handles[i] || v < old_data || v - old_data >= nbytes) continue;
      k.values[i] = new_data + (v - old_data);
      moved = true;
    }
    if (!moved) continue;
    update(k);
    ++changed;
  }
  return changed;
}

}  // namespace cuda_backend
}  // namespace graphrt
