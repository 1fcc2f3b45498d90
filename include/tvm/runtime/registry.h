// tvm::runtime::Registry: TVM's global function table, over graphrt's
// registry (graphrt/registry.h). Registry::Get("runtime.SystemLib") and the
// other built-in functions are there once graphrt has initialised, which
// Get does.
#ifndef TVM_RUNTIME_REGISTRY_H_
#define TVM_RUNTIME_REGISTRY_H_

#include <tvm/runtime/packed_func.h>

#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "graphrt/registry.h"
#include "graphrt/runtime.h"

namespace tvm {
namespace runtime {

class Registry {
 public:
  // The function registered as `name`, or null. The pointer stays valid for
  // the life of the program.
  static const PackedFunc* Get(const std::string& name) {
    ::graphrt::PackedFunc f = ::graphrt::registry_get(name);
    if (!f) return nullptr;
    Table& table = table_of_gets();
    std::lock_guard<std::mutex> lock(table.mutex);
    std::unique_ptr<PackedFunc>& slot = table.functions[name];
    if (!slot) slot.reset(new PackedFunc(f));
    else if (slot->graphrt_function() != f) *slot = PackedFunc(f);
    return slot.get();
  }
  // Starts a registration: Register("name").set_body(...). Without
  // can_override, set_body throws when the name is taken.
  static Registry& Register(const std::string& name, bool can_override = false) {
    Table& table = table_of_registrations();
    std::lock_guard<std::mutex> lock(table.mutex);
    std::unique_ptr<Registry>& slot = table.registries[name];
    if (!slot) slot.reset(new Registry(name));
    slot->can_override_ = can_override;
    return *slot;
  }
  static bool Remove(const std::string& name) { return ::graphrt::registry_remove(name); }
  static std::vector<std::string> ListNames() {
    return ::graphrt::registry_names();
  }

  Registry& set_body(PackedFunc f) {
    ::graphrt::registry_set(name_, f.graphrt_function(), can_override_);
    return *this;
  }
  template <typename Body, typename = std::enable_if_t<std::is_convertible<Body, PackedFunc::FType>::value>>
  Registry& set_body(Body body) {
    return set_body(PackedFunc(std::move(body)));
  }
  // Registers a C++ function or lambda with typed arguments and result.
  template <typename Body>
  Registry& set_body_typed(Body body) {
    using Signature = typename detail::FunctionSignature<std::decay_t<Body>>::type;
    return set_body(TypedPackedFunc<Signature>(std::move(body), name_).packed());
  }

 private:
  explicit Registry(std::string name) : name_(std::move(name)) {}
  struct Table {
    std::mutex mutex;
    std::map<std::string, std::unique_ptr<PackedFunc>> functions;
    std::map<std::string, std::unique_ptr<Registry>> registries;
  };
  // Never destroyed: pointers handed out stay valid through static destruction.
  static Table& table_of_gets() {
    static Table* table = new Table();
    return *table;
  }
  static Table& table_of_registrations() {
    static Table* table = new Table();
    return *table;
  }
  std::string name_;
  bool can_override_ = false;
};

}  // namespace runtime
}  // namespace tvm

#define TVM_STR_CONCAT_(a, b) a##b
#define TVM_STR_CONCAT(a, b) TVM_STR_CONCAT_(a, b)
// TVM_REGISTER_GLOBAL("name").set_body(...): registers at static-init time.
#define TVM_REGISTER_GLOBAL(OpName)                                                          \
  static TVM_ATTRIBUTE_UNUSED ::tvm::runtime::Registry& TVM_STR_CONCAT(tvm_registry_entry_, \
                                                                       __COUNTER__) =       \
      ::tvm::runtime::Registry::Register(OpName)

#endif  // TVM_RUNTIME_REGISTRY_H_
