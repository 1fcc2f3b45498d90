// libFuzzer target: a Relax VM executable (the bytes inside a relax.Executable
// / relax.VMExecutable record) through the reader, the verifier, the decoder,
// the linker (every packed function resolved to a stub that is never run) and
// the disassembler. A verified executable must write back to bytes that read
// back the same.
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include "backends/relax/disassembler.h"
#include "backends/relax/executable_reader.h"
#include "backends/relax/executable_writer.h"
#include "backends/relax/linked_executable.h"
#include "backends/relax/verifier.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace graphrt::relax;
  try {
    auto exe = std::make_shared<Executable>(read_executable(data, size, "relax.VMExecutable"));
    verify_executable(*exe);
    const graphrt::PackedFunc stub = graphrt::make_function([](const graphrt::TVMArgs&, graphrt::RetValue*) {}, "stub");
    link_executable(exe, [&](const std::string&) { return stub; });
    executable_stats(*exe);
    executable_text(*exe);
    const std::string written = write_executable(*exe);
    const Executable again = read_executable(reinterpret_cast<const uint8_t*>(written.data()), written.size(),
                                             "relax.VMExecutable");
    if (write_executable(again) != written) __builtin_trap();
  } catch (const graphrt::Error&) {
  }
  return 0;
}
