// Shared helpers of the CUDA back-end tests.
#pragma once

#include <string>

#include "graphrt/module.h"
#include "graphrt/runtime.h"
#include "backends/cuda/cuda_device_api.h"
#include "backends/cuda/cuda_module.h"
#include "backends/cuda/register.h"

namespace cuda_test {

// The runtime, with the CUDA back end registered by backends/register_all.cc.
inline void init() { graphrt::runtime_init(); }

// Why cuda:`device_id` cannot be used, or "" when it can: for skipping tests.
inline std::string unavailable_reason(int device_id) {
  try {
    graphrt::cuda_backend::cuda_device_api()->check_available(DLDevice{kDLCUDA, device_id});
  } catch (const graphrt::Error& e) {
    return e.what();
  }
  return "";
}

// The first module of type "cuda" in the import tree under `root`.
inline graphrt::cuda_backend::CudaModuleNode* find_cuda_module(const graphrt::Module& root) {
  if (!root) return nullptr;
  if (root->type_key() == "cuda") return static_cast<graphrt::cuda_backend::CudaModuleNode*>(root.get());
  for (const graphrt::Module& m : root->imports()) {
    if (auto* found = find_cuda_module(m)) return found;
  }
  return nullptr;
}

}  // namespace cuda_test
