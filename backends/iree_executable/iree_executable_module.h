// An IREE executable library as a graphrt module, so graph nodes can
// dispatch to its entry points.
//
// Functions: each export by name (when the library names it) and as
// "dispatch_<ordinal>". A call takes the node's tensors (inputs, then
// outputs) as the export's bindings in order, with byte lengths from the
// tensors, no push constants, and one workgroup: the calling convention of
// IREE's own elf_module_test for elementwise kernels.
//
// Blob record: tkey "iree_executable", payload STR = the embedded-ELF bytes.
#pragma once

#include <memory>

#include "graphrt/module.h"
#include "graphrt/runtime.h"
#include "iree_executable_library.h"

namespace graphrt {
namespace elf {

Module make_iree_executable_module(std::shared_ptr<IreeExecutableLibrary> library);
// Registers the "iree_executable" blob record handler.
void register_iree_executable_loader(Runtime& runtime);

}  // namespace elf
}  // namespace graphrt
