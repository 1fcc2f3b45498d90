// The named arrays of vm.builtin.tensor_cache.* (TVM's TensorCache, a process
// pool in TVM; here one per graphrt runtime): what `load` read from a folder
// and what callers put in with `update`, looked up by name by the
// param_*_from_cache functions. Arrays it makes come from its runtime's device
// APIs. Safe to use from several threads (VMs).
#pragma once

#include <dlpack/dlpack.h>

#include "graphrt/runtime.h"

#include <mutex>
#include <string>
#include <unordered_map>

#include "graphrt/ndarray.h"

namespace graphrt {
namespace relax {
namespace tensor_cache {

class TensorStore {
 public:
  // `runtime`: the one whose functions hold the store; it outlives them.
  explicit TensorStore(const Runtime& runtime) : runtime_(runtime) {}
  const Runtime& runtime() const { return runtime_; }
  // Reads the folder (loader.h) onto `device`, through the runtime's API of
  // it (resolved once per load), and adds its tensors, replacing those of the
  // same name; a failed load changes nothing.
  void load(const std::string& folder, DLDevice device);
  // The array named `name`; false when there is none.
  bool get(const std::string& name, NDArray* out) const;
  // Adds `array` as `name`; an existing name is replaced when `replace`,
  // else refused (kFailedPrecondition), as TVM does.
  void update(const std::string& name, NDArray array, bool replace);
  void remove(const std::string& name);
  void clear();
  size_t size() const;

 private:
  const Runtime& runtime_;
  mutable std::mutex mutex_;
  std::unordered_map<std::string, NDArray> arrays_;
};

}  // namespace tensor_cache
}  // namespace relax
}  // namespace graphrt
