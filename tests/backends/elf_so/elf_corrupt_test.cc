// Corrupt and hostile ELF inputs: every one must end in graphrt::Error (or a
// successful relocate-only load), never a crash. Run under ASan+UBSan too.
#include <elf.h>
#include <gtest/gtest.h>

#include <random>
#include <string>

#include "src/elf/elf_image.h"
#include "elf_test_util.h"
#include "graphrt/error.h"
#include "test_support.h"

using graphrt::Error;
using graphrt::elf::ElfImage;
using graphrt::elf::LoadOptions;
using namespace elf_test;

namespace {

std::vector<uint8_t> iree_x86_64() {
  return graphrt_test::read_file(graphrt_test::fixture_path("iree/elementwise_mul_x86_64.so"));
}
std::vector<uint8_t> mlp_lib() { return graphrt_test::read_file(graphrt_test::fixture_path("mlp/deploy_lib.so")); }

// Loads relocate-only (corrupt code must never run); true when it loaded.
bool try_load(const std::vector<uint8_t>& bytes, bool execute = false) {
  try {
    LoadOptions o = allowlist_options(execute);
    auto image = ElfImage::load_memory(bytes.data(), bytes.size(), o, "corrupt");
    // Exercise lookups on whatever loaded.
    for (const std::string& name : image->symbol_names()) image->symbol(name);
    image->symbol("iree_hal_executable_library_query");
    return true;
  } catch (const Error&) {
    return false;
  }
}

// Loads and returns the error text; fails the test when it loads.
std::string load_error(const std::vector<uint8_t>& bytes, bool execute = false) {
  try {
    ElfImage::load_memory(bytes.data(), bytes.size(), allowlist_options(execute), "corrupt");
  } catch (const Error& e) {
    return e.what();
  }
  ADD_FAILURE() << "corrupt image loaded";
  return "";
}

Elf64_Phdr phdr(const std::vector<uint8_t>& b, int i) { return get<Elf64_Phdr>(b, phdr_offset(b, i)); }
void set_phdr(std::vector<uint8_t>& b, int i, const Elf64_Phdr& p) { put(b, phdr_offset(b, i), p); }

}  // namespace

TEST(ElfCorrupt, BaselinesLoad) {
  GRAPHRT_REQUIRE_FIXTURES();
  EXPECT_TRUE(try_load(iree_x86_64()));
  EXPECT_TRUE(try_load(mlp_lib()));
}

TEST(ElfCorrupt, EveryTruncationOfTheIreeLibrary) {
  GRAPHRT_REQUIRE_FIXTURES();
  const std::vector<uint8_t> full = iree_x86_64();
  // Bytes past the last PT_LOAD are section headers the loader does not need.
  uint64_t needed = 0;
  for (int i = 0; i < get<Elf64_Ehdr>(full, 0).e_phnum; ++i) {
    const Elf64_Phdr p = phdr(full, i);
    if (p.p_type == PT_LOAD) needed = std::max<uint64_t>(needed, p.p_offset + p.p_filesz);
  }
  for (size_t n = 0; n < full.size(); ++n) {
    std::vector<uint8_t> cut(full.begin(), full.begin() + n);
    const bool loaded = try_load(cut);
    if (n < needed) {
      EXPECT_FALSE(loaded) << "truncated at " << n;
    }
  }
}

TEST(ElfCorrupt, TruncationsOfATvmLibrary) {
  GRAPHRT_REQUIRE_FIXTURES();
  const std::vector<uint8_t> full = mlp_lib();
  for (size_t n = 0; n < full.size(); n += 331) {
    std::vector<uint8_t> cut(full.begin(), full.begin() + n);
    try_load(cut);
  }
  for (size_t n : {size_t(0), size_t(1), size_t(4), size_t(63), size_t(64), size_t(120)}) {
    std::vector<uint8_t> cut(full.begin(), full.begin() + n);
    EXPECT_FALSE(try_load(cut)) << n;
  }
}

TEST(ElfCorrupt, BadHeaderFields) {
  GRAPHRT_REQUIRE_FIXTURES();
  const std::vector<uint8_t> good = iree_x86_64();
  auto with = [&](auto mutate) {
    std::vector<uint8_t> b = good;
    Elf64_Ehdr eh = get<Elf64_Ehdr>(b, 0);
    mutate(eh);
    put(b, 0, eh);
    return b;
  };
  EXPECT_NE(load_error(with([](Elf64_Ehdr& e) { e.e_ident[0] = 0; })).find("magic"), std::string::npos);
  load_error(with([](Elf64_Ehdr& e) { e.e_ident[EI_CLASS] = ELFCLASS32; }));
  load_error(with([](Elf64_Ehdr& e) { e.e_ident[EI_DATA] = ELFDATA2MSB; }));
  load_error(with([](Elf64_Ehdr& e) { e.e_type = ET_EXEC; }));
  load_error(with([](Elf64_Ehdr& e) { e.e_machine = EM_386; }));
  load_error(with([](Elf64_Ehdr& e) { e.e_phoff = 0; }));
  load_error(with([](Elf64_Ehdr& e) { e.e_phoff = 1u << 20; }));
  load_error(with([](Elf64_Ehdr& e) { e.e_phoff = ~uint64_t(0) - 8; }));  // offset + size wraps
  load_error(with([](Elf64_Ehdr& e) { e.e_phnum = 0; }));
  load_error(with([](Elf64_Ehdr& e) { e.e_phnum = 0xffff; }));
  load_error(with([](Elf64_Ehdr& e) { e.e_phnum = 200; }));
  load_error(with([](Elf64_Ehdr& e) { e.e_phentsize = 32; }));
  load_error(with([](Elf64_Ehdr& e) { e.e_ehsize = 12; }));
}

TEST(ElfCorrupt, BadSegments) {
  GRAPHRT_REQUIRE_FIXTURES();
  const std::vector<uint8_t> good = iree_x86_64();
  const int first = find_phdr(good, PT_LOAD, 0), second = find_phdr(good, PT_LOAD, 1);
  const int rw = find_phdr(good, PT_LOAD, 2);
  auto with = [&](int index, auto mutate) {
    std::vector<uint8_t> b = good;
    Elf64_Phdr p = phdr(b, index);
    mutate(p);
    set_phdr(b, index, p);
    return b;
  };
  EXPECT_NE(load_error(with(second, [&](Elf64_Phdr& p) { p.p_vaddr = phdr(good, first).p_vaddr + 8; })).find("overlap"),
            std::string::npos);
  EXPECT_NE(load_error(with(rw, [](Elf64_Phdr& p) { p.p_memsz = uint64_t(1) << 40; })).find("exceeds"), std::string::npos);
  load_error(with(rw, [](Elf64_Phdr& p) { p.p_memsz = ~uint64_t(0) - 16; }));
  load_error(with(rw, [](Elf64_Phdr& p) { p.p_vaddr = ~uint64_t(0) - 0x100; }));
  load_error(with(rw, [](Elf64_Phdr& p) { p.p_filesz = p.p_memsz + 1; }));
  load_error(with(rw, [](Elf64_Phdr& p) { p.p_offset = 1u << 30; }));
  load_error(with(rw, [](Elf64_Phdr& p) { p.p_align = 3; }));
  EXPECT_NE(load_error(with(rw, [](Elf64_Phdr& p) { p.p_flags = PF_R | PF_W | PF_X; })).find("W^X"), std::string::npos);
  // PT_DYNAMIC missing, pointing outside the image, or TLS present.
  load_error(with(find_phdr(good, PT_DYNAMIC), [](Elf64_Phdr& p) { p.p_type = PT_NOTE; }));
  load_error(with(find_phdr(good, PT_DYNAMIC), [](Elf64_Phdr& p) { p.p_vaddr = 0x100000; }));
  load_error(with(find_phdr(good, PT_DYNAMIC), [](Elf64_Phdr& p) { p.p_type = PT_TLS; }));
}

TEST(ElfCorrupt, SharedPageThatWouldBeWritableAndExecutable) {
  GRAPHRT_REQUIRE_FIXTURES();
  std::vector<uint8_t> b = iree_x86_64();
  // Move the RW segment onto the last page of the RX one (no byte overlap).
  const int rx = find_phdr(b, PT_LOAD, 1), rw = find_phdr(b, PT_LOAD, 2);
  Elf64_Phdr code = phdr(b, rx), data = phdr(b, rw);
  const uint64_t delta = data.p_vaddr - (code.p_vaddr + code.p_filesz + 16);
  data.p_vaddr -= delta;
  set_phdr(b, rw, data);
  EXPECT_NE(load_error(b, true).find("W^X"), std::string::npos);
}

TEST(ElfCorrupt, MissingDynamicTables) {
  GRAPHRT_REQUIRE_FIXTURES();
  for (int64_t tag : {DT_SYMTAB, DT_STRTAB, DT_STRSZ, DT_HASH}) {
    std::vector<uint8_t> b = iree_x86_64();
    const size_t at = dyn_entry(b, tag);
    ASSERT_NE(at, SIZE_MAX) << tag;
    put<int64_t>(b, at, 0x6ffffd00);  // an unknown tag the loader ignores
    load_error(b);
  }
  std::vector<uint8_t> b = iree_x86_64();
  put<uint64_t>(b, dyn_entry(b, DT_SYMENT) + 8, 16);
  EXPECT_NE(load_error(b).find("DT_SYMENT"), std::string::npos);
  b = iree_x86_64();
  put<uint64_t>(b, dyn_entry(b, DT_STRTAB) + 8, 0x7fffffff);
  load_error(b);
  b = iree_x86_64();
  put<uint64_t>(b, dyn_entry(b, DT_STRSZ) + 8, ~uint64_t(0));
  load_error(b);
  b = iree_x86_64();
  put<uint64_t>(b, dyn_entry(b, DT_RELASZ) + 8, 1u << 24);
  load_error(b);
  b = iree_x86_64();
  put<uint64_t>(b, dyn_entry(b, DT_RELASZ) + 8, 25);  // not a multiple of 24
  load_error(b);
}

TEST(ElfCorrupt, BadRelocations) {
  GRAPHRT_REQUIRE_FIXTURES();
  const std::vector<uint8_t> good = mlp_lib();
  const size_t rela = file_offset(good, dyn_value(good, DT_RELA));
  const uint64_t count = dyn_value(good, DT_RELASZ) / sizeof(Elf64_Rela);
  auto with_entry = [&](uint64_t i, auto mutate) {
    std::vector<uint8_t> b = good;
    Elf64_Rela r = get<Elf64_Rela>(b, rela + i * sizeof(Elf64_Rela));
    mutate(r);
    put(b, rela + i * sizeof(Elf64_Rela), r);
    return b;
  };
  // Find a symbol-based entry (GLOB_DAT) to corrupt its symbol index.
  uint64_t glob = count;
  for (uint64_t i = 0; i < count; ++i) {
    if (ELF64_R_TYPE(get<Elf64_Rela>(good, rela + i * 24).r_info) == R_X86_64_GLOB_DAT) glob = i;
  }
  ASSERT_LT(glob, count);
  auto set_sym = [](uint32_t sym) {
    return [sym](Elf64_Rela& r) { r.r_info = ELF64_R_INFO(sym, ELF64_R_TYPE(r.r_info)); };
  };
  EXPECT_NE(load_error(with_entry(glob, set_sym(0xffffff))).find("symbol index"), std::string::npos);
  EXPECT_NE(load_error(with_entry(0, [](Elf64_Rela& r) { r.r_offset = 0x7fff0000; })).find("outside"), std::string::npos);
  load_error(with_entry(0, [](Elf64_Rela& r) { r.r_offset = ~uint64_t(0) - 3; }));
  for (uint32_t type : std::vector<uint32_t>{R_X86_64_IRELATIVE, R_X86_64_TPOFF64, R_X86_64_DTPMOD64, R_X86_64_GOTPCREL, 200}) {
    const std::string msg = load_error(with_entry(0, [type](Elf64_Rela& r) { r.r_info = ELF64_R_INFO(0, type); }));
    EXPECT_NE(msg.find(std::to_string(type)), std::string::npos) << msg;
  }
  // A 32-bit absolute relocation of a 64-bit host address cannot fit.
  load_error(with_entry(0, [](Elf64_Rela& r) { r.r_info = ELF64_R_INFO(0, R_X86_64_32); r.r_addend = int64_t(1) << 40; }));
}

TEST(ElfCorrupt, BadSymbolAndHashTables) {
  GRAPHRT_REQUIRE_FIXTURES();
  // GNU hash (TVM) and SysV hash (IREE) with garbage headers.
  std::vector<uint8_t> b = mlp_lib();
  const size_t gnu = file_offset(b, dyn_value(b, DT_GNU_HASH));
  put<uint32_t>(b, gnu, 0);  // nbuckets = 0
  load_error(b);
  b = mlp_lib();
  put<uint32_t>(b, gnu + 12, 77);  // bloom shift out of range
  load_error(b);
  b = mlp_lib();
  put<uint32_t>(b, gnu + 8, 0x10000000);  // bloom table far outside
  load_error(b);
  b = iree_x86_64();
  put<uint32_t>(b, file_offset(b, dyn_value(b, DT_HASH)) + 4, 0x40000000);  // nchain huge
  load_error(b);
  // Symbol name offset past DT_STRSZ.
  b = iree_x86_64();
  const size_t sym1 = file_offset(b, dyn_value(b, DT_SYMTAB)) + sizeof(Elf64_Sym);
  put<uint32_t>(b, sym1, 0x100000);
  try_load(b);  // may load; lookups must still not crash
}

TEST(ElfCorrupt, TablesInUnreadablePages) {
  GRAPHRT_REQUIRE_FIXTURES();
  // A segment without permissions ends up PROT_NONE; the dynamic symbol
  // table living there must be refused at load, not fault at lookup time
  // (found by the fuzzer).
  std::vector<uint8_t> b = mlp_lib();
  const int first = find_phdr(b, PT_LOAD, 0);
  Elf64_Phdr p = phdr(b, first);
  p.p_flags = 0;
  set_phdr(b, first, p);
  EXPECT_NE(load_error(b).find("outside the loaded segments"), std::string::npos);
}

TEST(ElfCorrupt, InitArrayMustPointIntoCode) {
  GRAPHRT_REQUIRE_FIXTURES();
  std::vector<uint8_t> b = mlp_lib();
  // DT_INIT -> a data address; must be refused before anything runs.
  put<uint64_t>(b, dyn_entry(b, DT_INIT) + 8, dyn_value(b, DT_STRTAB));
  EXPECT_NE(load_error(b, true).find("DT_INIT"), std::string::npos);
  b = mlp_lib();
  put<uint64_t>(b, dyn_entry(b, DT_INIT_ARRAYSZ) + 8, 4096);
  load_error(b, true);
}

TEST(ElfCorrupt, RandomByteFlips) {
  GRAPHRT_REQUIRE_FIXTURES();
  std::mt19937 rng(12345);
  for (const auto& source : {iree_x86_64(), mlp_lib()}) {
    const int rounds = source.size() < 10000 ? 3000 : 400;
    for (int round = 0; round < rounds; ++round) {
      std::vector<uint8_t> b = source;
      const int flips = 1 + static_cast<int>(rng() % 8);
      // Headers and dynamic data are where the loader looks: bias flips there.
      const size_t window = (round % 2) ? b.size() : std::min<size_t>(b.size(), 4096);
      for (int f = 0; f < flips; ++f) b[rng() % window] ^= static_cast<uint8_t>(1u << (rng() % 8));
      try_load(b);
    }
  }
}
