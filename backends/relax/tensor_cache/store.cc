#include "backends/relax/tensor_cache/store.h"

#include "graphrt/error.h"
#include "backends/relax/tensor_cache/loader.h"

namespace graphrt {
namespace relax {
namespace tensor_cache {

void TensorStore::load(const std::string& folder, DLDevice device) {
  NamedArrays arrays = load_folder(folder, DeviceApis(runtime_, {device}), device);
  std::lock_guard<std::mutex> lock(mutex_);
  for (auto& named : arrays) arrays_[named.first] = std::move(named.second);
}

bool TensorStore::get(const std::string& name, NDArray* out) const {
  std::lock_guard<std::mutex> lock(mutex_);
  auto it = arrays_.find(name);
  if (it == arrays_.end()) return false;
  *out = it->second;
  return true;
}

void TensorStore::update(const std::string& name, NDArray array, bool replace) {
  std::lock_guard<std::mutex> lock(mutex_);
  auto inserted = arrays_.emplace(name, array);
  if (inserted.second) return;
  if (!replace)
    throw Error(ErrorKind::kFailedPrecondition,
                "the tensor cache already holds " + quote_untrusted(name) + " (pass override=True to replace it)")
        .with("name", name);
  inserted.first->second = std::move(array);
}

void TensorStore::remove(const std::string& name) {
  std::lock_guard<std::mutex> lock(mutex_);
  arrays_.erase(name);
}

void TensorStore::clear() {
  std::lock_guard<std::mutex> lock(mutex_);
  arrays_.clear();
}

size_t TensorStore::size() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return arrays_.size();
}

}  // namespace tensor_cache
}  // namespace relax
}  // namespace graphrt
