// graphrt-vm-asm: assembles VM text (.vmasm) into verified bytecode (.vmbc)
// and dumps bytecode back to text.
//
//   graphrt-vm-asm IN.vmasm -o OUT.vmbc
//   graphrt-vm-asm --dump IN.vmbc
#include <cstdio>
#include <fstream>
#include <iostream>
#include <iterator>
#include <string>
#include <vector>

#include "graphrt/error.h"
#include "modules/vm/assembler.h"
#include "modules/vm/binary_format.h"
#include "modules/vm/disassembler.h"
#include "modules/vm/verifier.h"

namespace {

std::vector<uint8_t> read_all(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw graphrt::Error("cannot open input").with("file", path);
  return std::vector<uint8_t>(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

void write_all(const std::string& path, const std::vector<uint8_t>& bytes) {
  std::ofstream out(path, std::ios::binary);
  out.write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
  if (!out) throw graphrt::Error("cannot write output").with("file", path);
}

const char kUsage[] =
    "usage: graphrt-vm-asm IN.vmasm -o OUT.vmbc   assemble and verify\n"
    "       graphrt-vm-asm --dump IN.vmbc         verify and disassemble\n"
    "The text format is described in modules/vm/README.md.\n";

int usage() {
  std::cerr << kUsage;
  return 2;
}

int assemble_file(const std::string& in, const std::string& out) {
  const std::vector<uint8_t> text = read_all(in);
  graphrt::vm::ModuleDef def = graphrt::vm::assemble(std::string(text.begin(), text.end()));
  // Refuse to write bytecode that the runtime would reject at load.
  graphrt::vm::verify_module(def);
  write_all(out, graphrt::vm::write_module_def(def));
  return 0;
}

int dump_file(const std::string& in) {
  const std::vector<uint8_t> bytes = read_all(in);
  const graphrt::vm::ModuleDef def = graphrt::vm::read_module_def(bytes.data(), bytes.size());
  graphrt::vm::verify_module(def);
  std::cout << graphrt::vm::disassemble(def);
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
