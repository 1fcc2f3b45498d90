#include "module/system_lib.h"

#include "graphrt/log.h"

#include <cstdio>
#include <map>
#include <mutex>

#include "graphrt/module.h"

namespace graphrt {

namespace {
struct SymbolTable {
  std::mutex mutex;
  std::map<std::string, void*> symbols;
};
// Process-wide, not the Runtime's: TVM's C ABI forces it (TVMBackendRegisterSystemLibSymbol
// is called by linked model code's static constructors, with no context).
SymbolTable& table() {
  static SymbolTable* t = new SymbolTable();  // static constructors of linked code may run before ours
  return *t;
}

class SystemLibrary : public Library {
 public:
  // Filled by TVMBackendRegisterSystemLibSymbol from TVM-generated code
  // only; the code and data are the program's (or its libraries'), which the
  // dynamic linker mapped.
  explicit SystemLibrary(std::string prefix) : prefix_(std::move(prefix)) {
    facts_.registered_tvm_code = true;
    facts_.mapping = LibraryFacts::Mapping::kDynamicLinker;
  }
  void* symbol(const std::string& name) const override {
    std::lock_guard<std::mutex> lock(table().mutex);
    auto it = table().symbols.find(prefix_ + name);
    if (it == table().symbols.end()) it = table().symbols.find(name);
    return it == table().symbols.end() ? nullptr : it->second;
  }
  std::string origin() const override { return "<system-lib " + prefix_ + ">"; }
  std::vector<std::string> symbol_names() const override {
    std::lock_guard<std::mutex> lock(table().mutex);
    std::vector<std::string> names;
    for (const auto& kv : table().symbols) {
      if (kv.first.compare(0, 2, "__") != 0) names.push_back(kv.first);
    }
    return names;
  }

 private:
  std::string prefix_;
};
}  // namespace

void system_lib_register_symbol(const std::string& name, void* ptr) {
  std::lock_guard<std::mutex> lock(table().mutex);
  auto it = table().symbols.find(name);
  if (it != table().symbols.end() && it->second != ptr)
    log_warning("system-lib symbol " + name + " registered twice; keeping the newer address");
  table().symbols[name] = ptr;
}

Module system_lib(const std::string& prefix) {
  return load_module_from_library(std::make_shared<SystemLibrary>(prefix));
}

}  // namespace graphrt
