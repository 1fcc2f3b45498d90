// Binary container, assembler/disassembler round trips, the asm app.
#include <gtest/gtest.h>

#include "graphrt/error.h"

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iterator>

#include "backends/vm/bytecode/assembler.h"
#include "backends/vm/bytecode/binary_format.h"
#include "backends/vm/bytecode/bytecode_module.h"
#include "backends/vm/bytecode/bytecode_disassembler.h"
#include "backends/vm/host/module_address.h"
#include "backends/vm/bytecode/bytecode_program.h"

namespace {

using namespace graphrt::vm;

const char* kSource = R"(
module sample version 7
dependency tensor 1
import tensor.alloc "0iiCID_r"
import tensor.rank "0r_i" optional
rodata "unused\x01\n"
func main "0iIfF_i" export
entry:
  const.f64 %F1, 0.1
  const.f32 %f1, -1e-30
  const.i64 %I1, -9223372036854775808
  call.variadic @tensor.alloc(%i0, %i0, [%I0, %I1]) -> (%r0)
  br_table %i0, done, [entry2, done]
entry2:
  call @helper(%i0, %r0) -> (%i1)
  fail %i1, "quote \" and tab\t"
done:
  ret %i0
end
func helper "0ir_i" regs i=4 I=0 f=1 F=0 r=3
  const.f32 %f0, nan
  ret %i0
end
)";

bool same(const ModuleDef& a, const ModuleDef& b) {
  return write_module_def(a) == write_module_def(b);
}

TEST(VmFormat, BinaryRoundTrip) {
  const ModuleDef def = assemble(kSource);
  const std::vector<uint8_t> bytes = write_module_def(def);
  ASSERT_TRUE(has_bytecode_magic(bytes.data(), bytes.size()));
  const ModuleDef back = read_module_def(bytes.data(), bytes.size());
  EXPECT_TRUE(same(def, back));
  EXPECT_EQ(back.name, "sample");
  EXPECT_EQ(back.version, 7u);
  ASSERT_EQ(back.imports.size(), 2u);
  EXPECT_TRUE(back.imports[1].optional);
  EXPECT_EQ(back.functions[1].registers[4], 3);
}

TEST(VmFormat, TextRoundTrip) {
  const ModuleDef def = assemble(kSource);
  ASSERT_NO_THROW(BytecodeModule::create(def));
  const std::string text = disassemble(def);
  const ModuleDef again = assemble(text);
  EXPECT_TRUE(same(def, again)) << text;
  EXPECT_EQ(disassemble(again), text);
}

TEST(VmFormat, RejectsBadContainers) {
  std::vector<uint8_t> bytes = write_module_def(assemble(kSource));
  std::vector<uint8_t> bad_magic = bytes;
  bad_magic[0] = 'X';
  EXPECT_THROW(read_module_def(bad_magic.data(), bad_magic.size()), graphrt::Error);
  std::vector<uint8_t> bad_version = bytes;
  bad_version[4] = 99;
  EXPECT_THROW(read_module_def(bad_version.data(), bad_version.size()), graphrt::Error);
  for (size_t cut : {size_t{3}, size_t{10}, bytes.size() / 2, bytes.size() - 1}) {
    EXPECT_THROW(read_module_def(bytes.data(), cut), graphrt::Error) << cut;
  }
  std::vector<uint8_t> trailing = bytes;
  trailing.push_back(0);
  EXPECT_THROW(read_module_def(trailing.data(), trailing.size()), graphrt::Error);
}

TEST(VmFormat, AssemblerReportsLine) {
  try {
    assemble("module m\nfunc f \"0_v\" export\n  add.i32 %i0, %f1, %i2\n  ret\nend\n");
    FAIL();
  } catch (const graphrt::Error& e) {
    EXPECT_EQ(e.context_value("line"), "3");
  }
  EXPECT_THROW(assemble("module m\nfunc f \"0_v\"\n  br nowhere\nend\n"), graphrt::Error);
  EXPECT_THROW(assemble("module m\nfunc f \"0_v\"\n  frobnicate\nend\n"), graphrt::Error);
}

TEST(VmFormat, LoadbinaryPayload) {
  const std::vector<uint8_t> bytes = write_module_def(assemble(R"(
module payload version 1
func answer "0_i" export
  const.i32 %i0, 42
  ret %i0
end
)"));
  std::vector<uint8_t> payload = Program::make_payload(bytes);
  payload.push_back(0xAA);  // whatever follows in the blob is not ours
  size_t consumed = 0;
  auto program = Program::load_payload(payload.data(), payload.size(), &consumed);
  EXPECT_EQ(consumed, payload.size() - 1);
  EXPECT_EQ(program->call("answer", {})[0].i32, 42);
  EXPECT_THROW(Program::load_payload(payload.data(), 7, nullptr), graphrt::Error);
}

TEST(VmFormat, ModuleAddressParsing) {
  ModuleAddress a = parse_module_address("lib.so@create_custom?k0=v0& k1 = v1 &flag&");
  EXPECT_EQ(a.path, "lib.so");
  EXPECT_EQ(a.create_fn, "create_custom");
  ASSERT_EQ(a.params.size(), 3u);
  EXPECT_EQ(a.params[1], (std::pair<std::string, std::string>{"k1", "v1"}));
  EXPECT_EQ(a.params[2].second, "");
  ModuleAddress b = parse_module_address("lib.so@?k=v");
  EXPECT_EQ(b.create_fn, "");
  EXPECT_EQ(b.params.size(), 1u);
  EXPECT_EQ(parse_module_address("plain.vmbc").path, "plain.vmbc");
  EXPECT_TRUE(is_shared_library_path("x/lib.so"));
  EXPECT_FALSE(is_shared_library_path("x/mod.vmbc"));
}

std::string slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

TEST(VmFormat, AsmApp) {
  const std::string dir = ::testing::TempDir();
  const std::string src = dir + "/vm_app_test.vmasm", out = dir + "/vm_app_test.vmbc", dump = dir + "/vm_app_test.txt";
  std::ofstream(src) << kSource;
  ASSERT_EQ(std::system((std::string(VM_ASM_APP_PATH) + " " + src + " -o " + out).c_str()), 0);
  const std::string bytes = slurp(out);
  const ModuleDef def = read_module_def(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size());
  EXPECT_TRUE(same(def, assemble(kSource)));
  ASSERT_EQ(std::system((std::string(VM_ASM_APP_PATH) + " --dump " + out + " > " + dump).c_str()), 0);
  EXPECT_EQ(slurp(dump), disassemble(def));
  std::ofstream(src) << "module m\nfunc f \"0_i\"\n  ret\nend\n";  // fails verification
  EXPECT_NE(std::system((std::string(VM_ASM_APP_PATH) + " " + src + " -o " + out + " 2>/dev/null").c_str()), 0);
}

}  // namespace
