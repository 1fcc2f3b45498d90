// Shared helpers of the CUDA back-end tests.
#pragma once

#include <string>

#include "graphrt/module.h"
#include "graphrt/runtime.h"
#include "modules/cuda/cuda_module.h"
#include "modules/cuda/cuda_registration.h"

namespace cuda_test {

// runtime_init() plus the CUDA registration (idempotent; the lead wires
// register_module() into register_all.cc, tests do not rely on it).
inline void init() {
  graphrt::runtime_init();
  graphrt::cuda_backend::register_module();
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
