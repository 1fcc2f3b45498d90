// The built-in `tvm` native module (version 1): calls TVM kernels by name.
//
//   tvm.call  0rCrD  (name buffer, tensors...) -> ()
//
// The name is a buffer ref (usually `const.ref.rodata %r0, "fused_add"`). The
// module does not know the core's module tree: a KernelResolver supplied by
// the host maps a name to a callable (register.cc's graphrt_vm record wraps
// graphrt::Module::get_function(name, /*query_imports=*/true), see README.md).
// Resolved kernels are cached per module instance.
#pragma once

#include <dlpack/dlpack.h>

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "backends/vm/host/native_module.h"

namespace graphrt {
namespace vm {

using Kernel = std::function<void(const std::vector<DLTensor*>& args)>;
// Returns an empty Kernel when the name is unknown.
using KernelResolver = std::function<Kernel(const std::string& name)>;

std::shared_ptr<NativeModule> create_tvm_module(KernelResolver resolver);

}  // namespace vm
}  // namespace graphrt
