#include "modules/vm/register.h"

namespace graphrt {
namespace vm {

void register_module() {
  // TODO(lead): register the `runtime.module.loadbinary_graphrt_vm` handler
  // with the core registry. It reads the payload with
  // Program::load_payload(data, size, &consumed, {kernels}) where `kernels`
  // wraps the root module's get_function(name, /*query_imports=*/true), and
  // wraps the Program in a core Module whose get_function(name) returns a
  // PackedFunc that collects the DLTensor* arguments and calls
  // Program::invoke(name, tensors). See modules/vm/README.md, "Integration".
}

}  // namespace vm
}  // namespace graphrt
