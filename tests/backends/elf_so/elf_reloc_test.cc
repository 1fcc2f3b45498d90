// Relocation types the fixtures do not exercise on their own, checked by
// rewriting one RELA entry of a real library and reading the result back
// (relocate-only, so the edited image never runs).
#include <elf.h>
#include <gtest/gtest.h>

#include <cstring>
#include <string>

#include "src/elf/elf_image.h"
#include "elf_test_util.h"
#include "graphrt/error.h"
#include "test_support.h"

using graphrt::Error;
using graphrt::elf::ElfImage;
using namespace elf_test;

namespace {

struct Edited {
  std::unique_ptr<ElfImage> image;
  uint64_t place_vaddr = 0;
  uint64_t read_u64() const {
    uint64_t v;
    std::memcpy(&v, image->base() + place_vaddr, 8);  // vaddr_min is 0 in these files
    return v;
  }
  uint32_t read_u32() const {
    uint32_t v;
    std::memcpy(&v, image->base() + place_vaddr, 4);
    return v;
  }
};

// Rewrites RELA entry 0 of `fixture` to (type, symbol 1, addend) and loads it.
Edited load_with_reloc(const char* fixture, uint32_t type, int64_t addend) {
  std::vector<uint8_t> b = graphrt_test::read_file(graphrt_test::fixture_path(fixture));
  const size_t rela = file_offset(b, dyn_value(b, DT_RELA));
  Elf64_Rela r = get<Elf64_Rela>(b, rela);
  r.r_info = ELF64_R_INFO(1, type);  // dynsym[1] = iree_hal_executable_library_query
  r.r_addend = addend;
  put(b, rela, r);
  graphrt::elf::LoadOptions o;
  o.execute = false;
  Edited e;
  e.image = ElfImage::load_memory(b.data(), b.size(), o, fixture);
  e.place_vaddr = r.r_offset;
  return e;
}

uint64_t query_address(const Edited& e) {
  return reinterpret_cast<uint64_t>(e.image->symbol("iree_hal_executable_library_query"));
}

const char kX86[] = "iree/elementwise_mul_x86_64.so";
const char kArm[] = "iree/elementwise_mul_arm_64.so";

}  // namespace

TEST(ElfReloc, X86_64SymbolTypes) {
  GRAPHRT_REQUIRE_FIXTURES();
  Edited abs = load_with_reloc(kX86, R_X86_64_64, 24);
  EXPECT_EQ(abs.read_u64(), query_address(abs) + 24);
  Edited glob = load_with_reloc(kX86, R_X86_64_GLOB_DAT, 24);  // addend ignored (psABI)
  EXPECT_EQ(glob.read_u64(), query_address(glob));
  Edited slot = load_with_reloc(kX86, R_X86_64_JUMP_SLOT, 0);
  EXPECT_EQ(slot.read_u64(), query_address(slot));
  Edited pc = load_with_reloc(kX86, R_X86_64_PC32, -4);
  const uint64_t place = reinterpret_cast<uint64_t>(pc.image->base()) + pc.place_vaddr;
  EXPECT_EQ(static_cast<int32_t>(pc.read_u32()), static_cast<int64_t>(query_address(pc) - 4 - place));
  // Absolute 32-bit forms cannot hold a 64-bit host address.
  EXPECT_THROW(load_with_reloc(kX86, R_X86_64_32, 0), Error);
  EXPECT_THROW(load_with_reloc(kX86, R_X86_64_32S, 0), Error);
}

TEST(ElfReloc, Aarch64SymbolTypes) {
  GRAPHRT_REQUIRE_FIXTURES();
  Edited abs = load_with_reloc(kArm, R_AARCH64_ABS64, 16);
  EXPECT_EQ(abs.read_u64(), query_address(abs) + 16);  // assigned, not added to the place
  Edited glob = load_with_reloc(kArm, R_AARCH64_GLOB_DAT, 0);
  EXPECT_EQ(glob.read_u64(), query_address(glob));
  Edited slot = load_with_reloc(kArm, R_AARCH64_JUMP_SLOT, 0);
  EXPECT_EQ(slot.read_u64(), query_address(slot));
  try {
    load_with_reloc(kArm, R_AARCH64_TLSDESC, 0);
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("R_AARCH64_TLSDESC (1031)"), std::string::npos) << e.what();
    EXPECT_EQ(e.context_value("reloc_type"), "1031");
  }
}

TEST(ElfReloc, TvmPltSlotsPointAtAllowListedFunctions) {
  GRAPHRT_REQUIRE_FIXTURES();
  const std::string path = graphrt_test::fixture_path("mlp/deploy_lib.so");
  const std::vector<uint8_t> b = graphrt_test::read_file(path);
  auto image = ElfImage::load_file(path, allowlist_options());
  const size_t jmprel = file_offset(b, dyn_value(b, DT_JMPREL));
  const size_t symtab = file_offset(b, dyn_value(b, DT_SYMTAB));
  const size_t strtab = file_offset(b, dyn_value(b, DT_STRTAB));
  const uint64_t count = dyn_value(b, DT_PLTRELSZ) / sizeof(Elf64_Rela);
  ASSERT_GT(count, 0u);
  for (uint64_t i = 0; i < count; ++i) {
    const Elf64_Rela r = get<Elf64_Rela>(b, jmprel + i * sizeof(Elf64_Rela));
    ASSERT_EQ(ELF64_R_TYPE(r.r_info), unsigned(R_X86_64_JUMP_SLOT));
    const Elf64_Sym sym = get<Elf64_Sym>(b, symtab + ELF64_R_SYM(r.r_info) * sizeof(Elf64_Sym));
    const std::string name(reinterpret_cast<const char*>(b.data() + strtab + sym.st_name));
    uint64_t slot;
    std::memcpy(&slot, image->base() + r.r_offset, 8);
    EXPECT_EQ(slot, reinterpret_cast<uint64_t>(graphrt::elf::libc_allowlist_symbol(name))) << name;
  }
}
