// TVM's .tar exports (and bare relocatable objects) as a graphrt::Library,
// linked in-process by LinkedObjects: no compiler on the deployment machine.
// Registered as the "elf-object" loader with a content probe, so that
// load_module("deploy.tar") works whatever loader the caller named.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "graphrt/library.h"
#include "object_export.h"

namespace graphrt {
namespace elf {

class ObjectLibrary : public graphrt::Library {
 public:
  // Fills the facts from the linked image: its pages and symbol sizes.
  explicit ObjectLibrary(std::unique_ptr<LinkedObjects> linked);
  void* symbol(const std::string& name) const override { return linked_->symbol(name); }
  std::string origin() const override { return linked_->origin(); }
  std::vector<std::string> symbol_names() const override { return linked_->symbol_names(true); }
  const LinkedObjects& linked() const { return *linked_; }

 private:
  std::unique_ptr<LinkedObjects> linked_;
};

// The "elf-object" loader: a path or memory source through link_object_export
// with the default import resolver.
std::shared_ptr<Library> load_object_library(const LibrarySource& source);

}  // namespace elf
}  // namespace graphrt
