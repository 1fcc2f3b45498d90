#include "backends/relax/executable_module.h"

#include <cstdint>
#include <map>

#include "src/layer_api/params_cache.h"
#include "backends/relax/disassembler.h"
#include "backends/relax/executable_reader.h"
#include "backends/relax/verifier.h"
#include "backends/relax/vm_module.h"

namespace graphrt {
namespace relax {

namespace {

constexpr uintptr_t kConstantAlignment = 64;

std::string constant_name(size_t index) { return "c[" + std::to_string(index) + "]"; }

// The pool index that `name` ("c[<index>]") gives, or -1.
int64_t constant_index(const std::string& name, size_t pool_size) {
  if (name.size() < 4 || name.compare(0, 2, "c[") != 0 || name.back() != ']') return -1;
  const std::string digits = name.substr(2, name.size() - 3);
  if (digits.empty() || digits.size() > 18 || digits.find_first_not_of("0123456789") != std::string::npos) return -1;
  const int64_t i = std::stoll(digits);
  return i < static_cast<int64_t>(pool_size) && constant_name(static_cast<size_t>(i)) == name ? i : -1;
}

// Why `array` cannot replace the tensor constant `old`; empty when it can.
std::string replacement_problem(const NDArray& array, const NDArray& old) {
  const DLTensor* t = array.handle();
  if (!t) return "it is no array";
  if (t->device.device_type != kDLCPU) return "it is not on the CPU";
  if (!tensor_is_contiguous(t)) return "it is not contiguous";
  if (array.dtype() != old.dtype() || array.shape() != old.shape())
    return "it is " + dtype_to_string(array.dtype()) + " " + shape_to_string(array.shape()) + ", the constant " +
           dtype_to_string(old.dtype()) + " " + shape_to_string(old.shape());
  const uintptr_t address = reinterpret_cast<uintptr_t>(static_cast<const char*>(t->data) + t->byte_offset);
  if (address % kConstantAlignment != 0) return "its data is not 64-byte aligned";
  return "";
}

}  // namespace

std::shared_ptr<const Executable> ExecutableModuleNode::snapshot() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return exe_;
}

std::shared_ptr<const LinkedExecutable> ExecutableModuleNode::linked() {
  std::lock_guard<std::mutex> lock(mutex_);
  return link_locked();
}

std::shared_ptr<const LinkedExecutable> ExecutableModuleNode::link_locked() {
  if (!linked_) {
    linked_ = link_executable(exe_, [this](const std::string& name) {
      for (const Module& m : imports()) {
        if (PackedFunc f = m->get_function(name, true)) return f;
      }
      return runtime_->function(name);
    }, runtime_);
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
    return make_function([this, self](const TVMArgs&, RetValue* ret) { ret->set_string(executable_stats(*snapshot())); },
                         name);
  }
  if (name == "as_text") {
    return make_function([this, self](const TVMArgs&, RetValue* ret) { ret->set_string(executable_text(*snapshot())); },
                         name);
  }
  if (name == "has_function") {
    return make_function([this, self](const TVMArgs& args, RetValue* ret) {
      ret->set_bool(snapshot()->find_function(args.as_string(0)) >= 0);
    }, name);
  }
  if (name == "use_params_cache") {  // graphrt: (cache_path, model_path) -> "mapped" | "written" | "rebuilt"
    return make_function([this, self](const TVMArgs& args, RetValue* ret) {
      ret->set_string(params_cache_use_name(use_params_cache(args.as_string(0), args.as_string(1))));
    }, name);
  }
  return PackedFunc();
}

std::vector<std::string> ExecutableModuleNode::function_names() const {
  return {"vm_load_executable", "stats", "as_text", "has_function", "use_params_cache"};
}

ParamList ExecutableModuleNode::tensor_constants() const {
  const std::shared_ptr<const Executable> exe = snapshot();
  ParamList out;
  for (size_t i = 0; i < exe->constants.size(); ++i)
    if (const NDArray* t = std::get_if<NDArray>(&exe->constants[i])) out.emplace_back(constant_name(i), *t);
  return out;
}

void ExecutableModuleNode::replace_constants(const ParamList& arrays) {
  std::lock_guard<std::mutex> lock(mutex_);
  auto next = std::make_shared<Executable>(*exe_);
  for (const auto& named : arrays) {
    const int64_t i = constant_index(named.first, next->constants.size());
    const NDArray* old = i < 0 ? nullptr : std::get_if<NDArray>(&next->constants[static_cast<size_t>(i)]);
    if (!old)
      throw Error(ErrorKind::kNotFound, "the Relax executable has no tensor constant " + quote_untrusted(named.first))
          .with("constant", named.first);
    const std::string problem = replacement_problem(named.second, *old);
    if (!problem.empty())
      throw Error("cannot replace the Relax executable's constant " + quote_untrusted(named.first) + ": " + problem)
          .with("constant", named.first);
    next->constants[static_cast<size_t>(i)] = named.second;
  }
  exe_ = std::move(next);
  if (linked_) {  // linked at load: linked again over the new pool, and the old program's arrays go
    linked_.reset();
    link_locked();
  }
}

ParamsCacheUse ExecutableModuleNode::use_params_cache(const std::string& cache_path, const std::string& model_path) {
  ParamsCacheUse use;
  {
    const ParamList own = tensor_constants();
    const ParamList mapped = open_params_cache(cache_path, model_path, [&] { return own; }, &own, &use);
    replace_constants(mapped);
  }
  return use;
}

Module load_executable_module(BlobReader& reader, const std::string& type_key, bool module_bytes,
                              const Runtime& runtime) {
  auto exe = std::make_shared<Executable>(module_bytes ? read_executable_bytes(runtime, reader, type_key)
                                                       : read_executable_record(runtime, reader, type_key));
  try {
    verify_executable(*exe);
  } catch (Error& e) {
    throw e.with("tkey", type_key);
  }
  return Module(make_ref<ExecutableModuleNode>(std::move(exe), runtime));
}

}  // namespace relax
}  // namespace graphrt
