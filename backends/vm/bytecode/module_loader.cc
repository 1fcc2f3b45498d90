#include "backends/vm/bytecode/module_loader.h"

#include <vector>

#include "graphrt/error.h"
#include "graphrt/regular_file.h"
#include "backends/vm/bytecode/assembler.h"
#include "backends/vm/host/dynamic_module.h"
#include "backends/vm/host/module_address.h"

namespace graphrt {
namespace vm {
namespace {

bool ends_with(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

// Bytecode images and program texts are small; this bounds what one costs to read.
constexpr size_t kMaxModuleFileBytes = size_t(256) << 20;

}  // namespace

std::shared_ptr<BytecodeModule> load_bytecode_file(const std::string& path) {
  try {
    const bool text = ends_with(path, ".vmasm");
    if (!text && !ends_with(path, ".vmbc")) throw Error("not a VM module file (expected .vmbc or .vmasm)");
    const std::string bytes = read_regular_file(path, "VM module file", kMaxModuleFileBytes);
    if (text) return BytecodeModule::create(assemble(bytes));
    return BytecodeModule::load(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size());
  } catch (Error& e) {
    if (e.context_value("file").empty()) e.with("file", path);
    throw;
  }
}

std::shared_ptr<VmModule> load_module_file(const std::string& spec) {
  if (is_shared_library_path(parse_module_address(spec).path)) return load_dynamic_module(spec);
  return load_bytecode_file(spec);
}

}  // namespace vm
}  // namespace graphrt
