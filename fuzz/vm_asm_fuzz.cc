// libFuzzer target for the VM assembler and the tools built on it: text goes
// through the steps of graphrt.vm.assemble / verify / disassemble.
//
// Any text may be refused with a graphrt::Error naming the line at fault. Text that assembles is also
// disassembled unverified (the disassembler throws on what it cannot decode).
// Text that assembles and verifies must then keep every promise of the public
// API: its image loads and verifies again, disassembles, and the listing
// assembles back to the same image and the same listing. A broken promise
// aborts with both sides printed; crashes and sanitizer reports are bugs too.
// See README_vm.md.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "graphrt/error.h"
#include "backends/vm/bytecode/assembler.h"
#include "backends/vm/bytecode/binary_format.h"
#include "backends/vm/bytecode/bytecode_disassembler.h"
#include "backends/vm/bytecode/bytecode_verifier.h"

namespace {

using namespace graphrt::vm;

[[noreturn]] void broken(const char* promise, const std::string& detail, const std::string& text) {
  std::fprintf(stderr, "vm_asm_fuzz: %s\n%s\n--- input\n%s\n", promise, detail.c_str(), text.c_str());
  std::abort();
}

// `step` on text that verified must not throw.
template <typename Step>
auto must(const char* promise, const std::string& text, Step step) -> decltype(step()) {
  try {
    return step();
  } catch (const graphrt::Error& e) {
    broken(promise, e.what(), text);
  }
}

void fuzz_one(const std::string& text) {
  ModuleDef def;
  try {
    def = assemble(text);
  } catch (const graphrt::Error& e) {
    // Refused, the expected outcome for most inputs; but always at a line of the text.
    const std::string line = e.context_value("line");
    const long lines = 1 + std::count(text.begin(), text.end(), '\n');
    if (line.empty() || std::atol(line.c_str()) < 1 || std::atol(line.c_str()) > lines) {
      broken("assembler errors must name a line of the text", e.what(), text);
    }
    return;
  }
  try {
    (void)disassemble(def);
  } catch (const graphrt::Error&) {
  }
  try {
    verify_module(def);
  } catch (const graphrt::Error&) {
    return;  // graphrt.vm.assemble refuses it
  }
  const std::vector<uint8_t> image = write_module_def(def);
  const ModuleDef loaded = must("an assembled image must load", text,
                                [&] { return read_module_def(image.data(), image.size()); });
  must("a loaded image must verify again", text, [&] { verify_module(loaded); });
  const std::string listing = must("a verified image must disassemble", text, [&] { return disassemble(loaded); });
  const ModuleDef again = must("the listing must assemble", listing, [&] { return assemble(listing); });
  must("the listing must verify", listing, [&] { verify_module(again); });
  if (write_module_def(again) != image) broken("the listing must assemble to the same image", listing, text);
  const std::string relisted = disassemble(again);
  if (relisted != listing) broken("the listing must disassemble to itself", relisted, listing);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  fuzz_one(std::string(reinterpret_cast<const char*>(data), size));
  return 0;
}
