#include "backends/vm/host/tvm_module.h"

#include <map>
#include <mutex>

#include "graphrt/error.h"
#include "backends/vm/host/buffer.h"
#include "backends/vm/host/tensor.h"

namespace graphrt {
namespace vm {
namespace {

class KernelCache {
 public:
  explicit KernelCache(KernelResolver resolver) : resolver_(std::move(resolver)) {}

  Kernel get(const std::string& name) {
    std::lock_guard<std::mutex> lock(mutex_);
    auto it = cache_.find(name);
    if (it != cache_.end()) return it->second;
    GRAPHRT_CHECK_KIND(resolver_ != nullptr, ErrorKind::kFailedPrecondition, "tvm.call: no TVM module tree is attached to this VM");
    Kernel kernel = resolver_(name);
    if (!kernel) throw Error(ErrorKind::kNotFound, "tvm.call: kernel not found").with("kernel", name);
    cache_[name] = kernel;
    return kernel;
  }

 private:
  KernelResolver resolver_;
  std::mutex mutex_;
  std::map<std::string, Kernel> cache_;
};

void call_kernel(KernelCache& cache, NativeCall& c) {
  const Buffer* name = ref_as<Buffer>(c.ref(0));
  GRAPHRT_CHECK_KIND(name != nullptr, ErrorKind::kTypeMismatch, "tvm.call: the kernel name must be a buffer");
  const int32_t count = c.i32(1);
  std::vector<DLTensor*> tensors;
  for (int32_t k = 0; k < count; ++k) {
    Tensor* t = ref_as<Tensor>(c.ref(2 + static_cast<size_t>(k)));
    if (!t) throw Error(ErrorKind::kTypeMismatch, "tvm.call: argument " + std::to_string(k) + " is not a tensor");
    tensors.push_back(t->dl());
  }
  cache.get(name->as_string())(tensors);
}

}  // namespace

std::shared_ptr<NativeModule> create_tvm_module(KernelResolver resolver) {
  auto cache = std::make_shared<KernelCache>(std::move(resolver));
  auto m = std::make_shared<NativeModule>("tvm", 1);
  m->add_function("call", "0rCrD", [cache](NativeCall& c) { call_kernel(*cache, c); });
  return m;
}

}  // namespace vm
}  // namespace graphrt
