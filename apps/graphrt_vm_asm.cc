// graphrt-vm-asm: assembles VM text (.vmasm) into verified bytecode (.vmbc)
// and dumps bytecode back to text.
//
//   graphrt-vm-asm IN.vmasm -o OUT.vmbc
//   graphrt-vm-asm IN.vmbc --dump        (options in any order)
#include <cstdio>
#include <iostream>
#include <string>
#include <vector>

#include "common/args.h"
#include "graphrt/vm.h"
#include "common/output_file.h"
#include "graphrt/regular_file.h"
#include "graphrt/error.h"

namespace {

// Program texts and bytecode images are small; this bounds what one costs to read.
constexpr size_t kMaxInputBytes = size_t(256) << 20;

std::string read_all(const std::string& path) { return graphrt::read_regular_file(path, "input", kMaxInputBytes); }

const graphrt_apps::AppHelp kHelp = {
    "graphrt-vm-asm", "IN [options]",
    "Assembles VM text (.vmasm) into verified bytecode (.vmbc), or verifies bytecode and prints it as\n"
    "text (--dump). The text format is described in backends/vm/README.md.",
    "  graphrt-vm-asm prog.vmasm -o prog.vmbc\n"
    "  graphrt-vm-asm prog.vmbc --dump\n"};

const std::vector<graphrt_apps::FlagSpec> kFlags = {
    {"-o", true, false, "OUT.vmbc", "assembles IN and writes the verified bytecode to OUT.vmbc (required unless --dump)"},
    {"--dump", false, false, "", "verifies the bytecode IN and prints it as text (default: off; one of -o or --dump is needed)"},
};

// The VM back end's typed API (graphrt/vm.h), errors naming `file`.
template <typename F>
std::string with_file(const std::string& file, F&& body) {
  try {
    return body();
  } catch (graphrt::Error& e) {
    throw e.with("file", file);
  }
}

int assemble_file(const std::string& in, const std::string& out) {
  // assemble verifies: no bytecode that the runtime would reject at load is written.
  const std::string text = read_all(in);
  graphrt_apps::write_output_file(out, with_file(in, [&] { return graphrt::VmApi().assemble(text); }), "output");
  return 0;
}

int dump_file(const std::string& in) {
  const std::string bytecode = read_all(in);
  std::cout << with_file(in, [&] { return graphrt::VmApi().disassemble(bytecode); });
  return 0;
}

int run(int argc, char** argv) {
  graphrt_apps::Args args(kHelp, kFlags);
  if (!args.parse(argc, argv)) return 0;
  if (args.positional().size() != 1)
    throw graphrt_apps::UsageError(args.positional().empty() ? "no input file given" : "expected one input file");
  if (args.has("--dump") == args.has("-o")) throw graphrt_apps::UsageError("give either -o OUT.vmbc or --dump");
  const std::string& in = args.positional()[0];
  return args.has("--dump") ? dump_file(in) : assemble_file(in, args.get("-o"));
}

}  // namespace

int main(int argc, char** argv) { return graphrt_apps::run_app("graphrt-vm-asm", run, argc, argv); }
