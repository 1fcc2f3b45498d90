// An executable bound to the functions it calls: each function-table entry
// resolved once (a builtin, a kernel or other packed function, or a VM
// function), so that neither load nor call ever looks a name up again. An
// entry nobody provides is refused here, naming it.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "graphrt/runtime.h"
#include "backends/relax/builtin.h"
#include "backends/relax/executable.h"
#include "backends/relax/program.h"

namespace graphrt {
namespace relax {

struct Callee {
  enum Kind { kBuiltin, kPacked, kVMFunction } kind = kVMFunction;
  BuiltinFn builtin = nullptr;
  PackedFunc packed;
};

struct LinkedExecutable {
  std::shared_ptr<const Executable> exe;
  Program program;
  std::vector<Callee> callees;  // one per function-table entry
  // The byte ranges [begin, end) of the tensor constants, sorted: a constant may be read-only
  // memory (a params cache's mapping), so what the VM writes itself must lie outside them.
  std::vector<std::pair<uintptr_t, uintptr_t>> constant_bytes;
  // The runtime the executable was loaded through (it outlives what it loads), whose devices
  // and global functions its VMs use; null: the process's default runtime.
  const Runtime* runtime = nullptr;

  // `runtime`, or the default one.
  const Runtime& runtime_or_default() const { return runtime ? *runtime : graphrt::runtime(); }

  // True when [data, data + n) overlaps a tensor constant's bytes.
  bool overlaps_constant(const void* data, size_t n) const;
};

// Finds a packed function by name (the library's imports, then the registry); null when absent.
using FunctionFinder = std::function<PackedFunc(const std::string&)>;

// `exe` must have passed verify_executable(). Throws ErrorKind::kNotFound
// naming the first function that neither the builtins nor `find` provide.
// `runtime`: LinkedExecutable::runtime.
std::shared_ptr<const LinkedExecutable> link_executable(std::shared_ptr<const Executable> exe, const FunctionFinder& find,
                                                        const Runtime* runtime = nullptr);

}  // namespace relax
}  // namespace graphrt
