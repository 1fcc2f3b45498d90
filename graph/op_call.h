// One prepared node call: arguments packed once at creation, so run() does no
// allocation, string handling or lookup.
#pragma once

#include <string>
#include <vector>

#include "graphrt/device_api.h"
#include "graphrt/packed_func.h"

namespace graphrt {

class OpCall {
 public:
  // `apis`: what a `__copy` node copies through (the executor's; it outlives the call).
  static OpCall make(uint32_t node_id, std::string node_name, std::string function_name, PackedFunc fn,
                     std::vector<DLTensor*> args, const DeviceApis* apis);
  void invoke();
  uint32_t node_id() const { return node_id_; }
  // The generated kernel behind this call and its packed arguments, for a
  // run loop that calls kernels directly (null fn: use invoke()).
  struct Direct {
    TVMBackendPackedCFunc fn;
    TVMValue* values;
    int* codes;
    int num_args;
  };
  Direct direct() { return Direct{cfunc_, values_.data(), codes_.data(), static_cast<int>(values_.size())}; }
  [[noreturn]] void fail(const std::string& message) const;
  [[noreturn]] void fail(const Error& inner) const;
  const std::string& node_name() const { return node_name_; }
  const std::string& function_name() const { return function_name_; }

 private:
  uint32_t node_id_ = 0;
  std::string node_name_;
  std::string function_name_;
  PackedFunc fn_;
  TVMBackendPackedCFunc cfunc_ = nullptr;  // fast path for generated kernels
  bool is_copy_ = false;
  const DeviceApis* apis_ = nullptr;
  std::vector<TVMValue> values_;
  std::vector<int> codes_;
};

}  // namespace graphrt
