// graphrt-vm-asm: assembles VM text (.vmasm) into verified bytecode (.vmbc)
// and dumps bytecode back to text.
//
//   graphrt-vm-asm IN.vmasm -o OUT.vmbc
//   graphrt-vm-asm --dump IN.vmbc
#include <cstdio>
#include <iostream>
#include <string>
#include <vector>

#include "common/packed_args.h"
#include "common/output_file.h"
#include "graphrt/regular_file.h"
#include "graphrt/error.h"

namespace {

// Program texts and bytecode images are small; this bounds what one costs to read.
constexpr size_t kMaxInputBytes = size_t(256) << 20;

std::string read_all(const std::string& path) { return graphrt::read_regular_file(path, "input", kMaxInputBytes); }

const char kUsage[] =
    "usage: graphrt-vm-asm IN.vmasm -o OUT.vmbc   assemble and verify\n"
    "       graphrt-vm-asm --dump IN.vmbc         verify and disassemble\n"
    "The text format is described in modules/vm/README.md.\n";

int usage() {
  std::cerr << kUsage;
  return 2;
}

// The runtime's VM functions (the VM back end's public API), errors naming `file`.
graphrt::RetValue call_vm(const char* function, const std::string& argument, const std::string& file) {
  try {
    return graphrt_apps::call_packed(graphrt_apps::global_function(function), {graphrt_apps::bytes_arg(argument)});
  } catch (graphrt::Error& e) {
    throw e.with("file", file);
  }
}

int assemble_file(const std::string& in, const std::string& out) {
  // graphrt.vm.assemble verifies: no bytecode that the runtime would reject at load is written.
  graphrt_apps::write_output_file(out, call_vm("graphrt.vm.assemble", read_all(in), in).as_string(), "output");
  return 0;
}

int dump_file(const std::string& in) {
  std::cout << call_vm("graphrt.vm.disassemble", read_all(in), in).as_string();
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  const std::vector<std::string> args(argv + 1, argv + argc);
  try {
    if (args.size() == 1 && (args[0] == "--help" || args[0] == "-h")) {
      std::cout << kUsage;
      return 0;
    }
    if (args.size() == 2 && args[0] == "--dump") return dump_file(args[1]);
    if (args.size() == 3 && args[1] == "-o") return assemble_file(args[0], args[2]);
    return usage();
  } catch (const std::exception& e) {
    std::cerr << "graphrt-vm-asm: " << e.what() << "\n";
    return 1;
  }
}
