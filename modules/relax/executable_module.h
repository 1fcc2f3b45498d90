// The module a Relax executable record loads as (TVM's VMExecutable): the
// root of its library's tree, importing the kernels. It links the executable
// against its imports once the tree is built, so that a missing kernel or
// builtin fails the load; `vm_load_executable` then makes VM modules.
#pragma once

#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "graphrt/blob_reader.h"
#include "graphrt/module.h"
#include "modules/relax/executable.h"
#include "modules/relax/linked_executable.h"

namespace graphrt {
namespace relax {

class ExecutableModuleNode : public ModuleNode {
 public:
  explicit ExecutableModuleNode(std::shared_ptr<const Executable> exe) : exe_(std::move(exe)) {}
  std::string type_key() const override { return exe_->type_key; }
  PackedFunc find_function(const std::string& name, const Module& self) override;
  std::vector<std::string> function_names() const override;
  void attach_environment(ModuleNode* context) override;

  const Executable& executable() const { return *exe_; }
  // The executable linked against this module's imports and the registry (linked on first use).
  std::shared_ptr<const LinkedExecutable> linked();

 private:
  std::shared_ptr<const Executable> exe_;
  std::mutex mutex_;
  std::shared_ptr<const LinkedExecutable> linked_;
};

// Reads and verifies a record's executable (the loadbinary handler's work).
Module load_executable_module(BlobReader& reader, const std::string& type_key);

}  // namespace relax
}  // namespace graphrt
