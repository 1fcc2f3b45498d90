// tvmc packages: what `tvmc compile` writes, an uncompressed tar holding the kernels library
// (mod.so, or mod.tar, a .tar export), the graph JSON (mod.json) and the params (mod.params).
// Loaded as a Library whose blob is a GraphExecutorFactory over those three, so
// load_module("module.tar") gives the same module tree as a one-file export_library .so:
// lib["default"](dev) makes an executor.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include "graphrt/library.h"

namespace graphrt {
namespace elf {

// True when `data` is a tar archive with a member named mod.json (a tvmc package, not a
// .tar export of objects).
bool is_tvmc_package(const uint8_t* data, size_t size);

// The package as a Library: the kernels library loaded from memory (mod.so with the "elf"
// loader, mod.tar with "elf-object"), its symbols as they are, and a `__tvm_dev_mblob` holding
// a GraphExecutorFactory record (mod.json, mod.params) that imports the kernels. `bytes` is the
// whole archive; `origin` names it in errors.
std::shared_ptr<Library> load_tvmc_package(std::string bytes, const std::string& origin);

}  // namespace elf
}  // namespace graphrt
