// libFuzzer target: the blob of a TVM v0.22+ library (`__tvm_ffi__library_bin`,
// its size prefix included) through the tvm-ffi library-format reader: the
// import tree, each module's kind and bytes, and the loaders of the kinds the
// runtime has (the Relax executable's reader and verifier among them). The
// `_lib` module is a stand-in with no functions: fuzzed bytes never run code.
#include <cstddef>
#include <cstdint>
#include <string>

#include "graphrt/error.h"
#include "graphrt/runtime.h"
#include "src/module/library_blob_ffi.h"

namespace {

class StandInLibrary : public graphrt::ModuleNode {
 public:
  std::string type_key() const override { return "library"; }
  graphrt::PackedFunc find_function(const std::string&, const graphrt::Module&) override { return {}; }
};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  graphrt::runtime();  // the loaders of every back end registered
  const graphrt::Module lib(graphrt::make_ref<StandInLibrary>());
  try {
    graphrt::Module ctx;
    graphrt::parse_ffi_module_blob(data, size, "fuzz", lib, &ctx);
  } catch (const graphrt::Error&) {
    // Expected for malformed input; anything else escapes and is a finding.
  }
  return 0;
}
