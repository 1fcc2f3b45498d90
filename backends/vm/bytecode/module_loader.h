// Loads one VM module named the way users name them on command lines and in
// graphrt.vm.load:
//
//   FILE.vmbc               verified bytecode
//   FILE.vmasm              text, assembled and verified
//   LIB.so[@create][?k=v]   a dynamic native module (dynamic_module.h)
//
// Errors are graphrt::Error naming the file.
#pragma once

#include <memory>
#include <string>

#include "backends/vm/bytecode/bytecode_module.h"
#include "backends/vm/host/module.h"

namespace graphrt {
namespace vm {

std::shared_ptr<VmModule> load_module_file(const std::string& spec);
// The .vmbc / .vmasm forms only.
std::shared_ptr<BytecodeModule> load_bytecode_file(const std::string& path);

}  // namespace vm
}  // namespace graphrt
