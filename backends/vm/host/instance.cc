#include "backends/vm/host/instance.h"

namespace graphrt {
namespace vm {

std::shared_ptr<Instance> Instance::create(std::shared_ptr<Limits> limits) {
  return std::make_shared<Instance>(std::move(limits));
}

std::shared_ptr<Instance> Instance::shared() {
  static const std::shared_ptr<Instance> instance = create(default_limits());
  return instance;
}

void Instance::register_module_factory(const std::string& name, ModuleFactory factory) {
  std::lock_guard<std::mutex> lock(mutex_);
  factories_[name] = std::move(factory);
}

std::shared_ptr<VmModule> Instance::create_module(const std::string& name) const {
  std::lock_guard<std::mutex> lock(mutex_);
  auto it = factories_.find(name);
  return it == factories_.end() ? nullptr : it->second();
}

std::vector<std::string> Instance::module_factory_names() const {
  std::lock_guard<std::mutex> lock(mutex_);
  std::vector<std::string> names;
  for (const auto& entry : factories_) names.push_back(entry.first);
  return names;
}

}  // namespace vm
}  // namespace graphrt
