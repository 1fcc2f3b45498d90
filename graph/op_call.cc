#include "op_call.h"

#include "src/layer_api/kernel_failure.h"

namespace graphrt {

OpCall OpCall::make(uint32_t node_id, std::string node_name, std::string function_name, PackedFunc fn,
                    std::vector<DLTensor*> args, const DeviceApis* apis) {
  OpCall op;
  op.apis_ = apis;
  op.node_id_ = node_id;
  op.node_name_ = std::move(node_name);
  op.function_name_ = std::move(function_name);
  op.is_copy_ = op.function_name_ == "__copy";
  op.cfunc_ = fn ? fn->backend_c_func() : nullptr;
  op.fn_ = std::move(fn);
  for (DLTensor* t : args) {
    TVMValue v;
    v.v_handle = t;
    op.values_.push_back(v);
    op.codes_.push_back(kTVMDLTensorHandle);
  }
  return op;
}

void OpCall::fail(const std::string& message) const { fail(Error(message)); }

void OpCall::fail(const Error& inner) const {
  // The inner error's context pairs travel on (not flattened into the text).
  Error outer(inner.kind(), "node " + std::to_string(node_id_) + " " + quote_untrusted(node_name_) + " (" + function_name_ + ") failed: " +
              inner.message());
  for (const auto& kv : inner.context()) outer.with(kv.first, kv.second);
  throw outer.with("node", node_name_).with("symbol", function_name_);
}

void OpCall::invoke() {
  int n = static_cast<int>(values_.size());
  if (cfunc_) {
    TVMValue ret;
    int ret_code = kTVMNullptr;
    const uint64_t generation = last_error_generation();
    if (cfunc_(values_.data(), codes_.data(), n, &ret, &ret_code, nullptr) != 0)
      fail(kernel_failure(function_name_, generation));
    return;
  }
  try {
    if (is_copy_) {
      apis_->copy(static_cast<DLTensor*>(values_[0].v_handle), static_cast<DLTensor*>(values_[1].v_handle));
      return;
    }
    RetValue ret;
    fn_->call(TVMArgs(values_.data(), codes_.data(), n), &ret);
  } catch (const Error& e) {
    fail(e);
  }
}

}  // namespace graphrt
