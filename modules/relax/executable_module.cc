#include "modules/relax/executable_module.h"

#include "graphrt/registry.h"
#include "modules/relax/disassembler.h"
#include "modules/relax/executable_reader.h"
#include "modules/relax/verifier.h"
#include "modules/relax/vm_module.h"

namespace graphrt {
namespace relax {

std::shared_ptr<const LinkedExecutable> ExecutableModuleNode::linked() {
  std::lock_guard<std::mutex> lock(mutex_);
  if (!linked_) {
    linked_ = link_executable(exe_, [this](const std::string& name) {
      for (const Module& m : imports()) {
        if (PackedFunc f = m->get_function(name, true)) return f;
      }
      return registry_get(name);
    });
  }
  return linked_;
}

void ExecutableModuleNode::attach_environment(ModuleNode*) {
  try {
    linked();
  } catch (Error& e) {
    throw e.with("tkey", type_key());
  }
}

PackedFunc ExecutableModuleNode::find_function(const std::string& name, const Module& self) {
  if (name == "vm_load_executable") {
    return make_function([this, self](const TVMArgs&, RetValue* ret) { ret->set_module(make_vm_module(linked())); },
                         name);
  }
  if (name == "stats") {
    return make_function([this, self](const TVMArgs&, RetValue* ret) { ret->set_string(executable_stats(*exe_)); }, name);
  }
  if (name == "as_text") {
    return make_function([this, self](const TVMArgs&, RetValue* ret) { ret->set_string(executable_text(*exe_)); }, name);
  }
  if (name == "has_function") {
    return make_function([this, self](const TVMArgs& args, RetValue* ret) {
      ret->set_bool(exe_->find_function(args.as_string(0)) >= 0);
    }, name);
  }
  return PackedFunc();
}

std::vector<std::string> ExecutableModuleNode::function_names() const {
  return {"vm_load_executable", "stats", "as_text", "has_function"};
}

Module load_executable_module(BlobReader& reader, const std::string& type_key) {
  auto exe = std::make_shared<Executable>(read_executable_record(reader, type_key));
  try {
    verify_executable(*exe);
  } catch (Error& e) {
    throw e.with("tkey", type_key);
  }
  return Module(make_ref<ExecutableModuleNode>(std::move(exe)));
}

}  // namespace relax
}  // namespace graphrt
