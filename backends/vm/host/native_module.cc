#include "backends/vm/host/native_module.h"

#include "graphrt/error.h"
#include "backends/vm/host/context.h"

namespace graphrt {
namespace vm {

std::vector<Value> NativeCall::call_import(size_t index, const std::vector<Value>& args) {
  GRAPHRT_CHECK_KIND(index < state_.imports.size(), ErrorKind::kOutOfRange, "native module import index out of range");
  std::vector<Value> results;
  invoke_function(stack_, state_.imports[index], args, &results);
  return results;
}

NativeModule::NativeModule(std::string name, uint32_t version) : name_(std::move(name)), version_(version) {
  GRAPHRT_CHECK(!name_.empty() && name_.find('.') == std::string::npos, "invalid native module name '" + name_ + "'");
}

NativeModule& NativeModule::add_dependency(const std::string& name, uint32_t min_version, bool optional) {
  dependencies_.push_back(Dependency{name, min_version, optional, ""});
  return *this;
}

NativeModule& NativeModule::add_import(const std::string& full_name, const std::string& signature, bool optional) {
  split_full_name(full_name);
  parse_signature(signature);
  imports_.push_back(ImportDecl{full_name, signature, optional});
  return *this;
}

NativeModule& NativeModule::add_function(const std::string& name, const std::string& signature, NativeFunction fn) {
  GRAPHRT_CHECK(lookup_export(name) < 0, "duplicate native function '" + name_ + "." + name + "'");
  signatures_.push_back(parse_signature(signature));
  exports_.push_back(ExportDecl{name, signature});
  functions_.push_back(std::move(fn));
  return *this;
}

void NativeModule::call(Stack& stack, ModuleState& state, uint32_t ordinal, const std::vector<Value>& args,
                        std::vector<Value>* results) {
  FrameScope frame(stack, FrameType::kNative, this, ordinal);
  const size_t first_result = results->size();
  try {
    NativeCall call(stack, state, args, results);
    functions_.at(ordinal)(call);
    check_values(signatures_[ordinal].results, results->data() + first_result, results->size() - first_result,
                 "results");
  } catch (Error& e) {
    if (e.context_value("native_function").empty()) e.with("native_function", name_ + "." + exports_[ordinal].name);
    throw;
  }
}

}  // namespace vm
}  // namespace graphrt
