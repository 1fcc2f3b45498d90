// TVM .tar exports and bare relocatable objects, linked in-process by the ELF
// back end: outputs bit-exact with TVM's and with the .so of the same build,
// every rejection named, corrupt input refused without a crash.
#include <elf.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <functional>
#include <cstring>
#include <fstream>
#include <random>

#include "fixture_cases.h"
#include "graphrt/c_api.h"
#include "src/elf/elf_imports.h"
#include "backends/elf_so/elf_library.h"
#include "backends/elf_object/gzip_stream.h"
#include "backends/elf_object/object_library.h"
#include "src/elf/reloc_x86_64.h"
#include "backends/elf_object/tar_archive.h"

using namespace graphrt;
using namespace graphrt_test;

namespace {

const std::vector<std::string> kTarCases = {"mlp_tar", "chain1000_tar"};

using Bytes = std::vector<uint8_t>;
using Members = std::vector<std::pair<std::string, Bytes>>;

// A ustar writer written for the tests (independent of the reader under test).
Bytes make_tar(const Members& members) {
  Bytes out;
  for (const auto& m : members) {
    uint8_t h[512] = {};
    std::memcpy(h, m.first.data(), std::min<size_t>(m.first.size(), 99));
    std::snprintf(reinterpret_cast<char*>(h) + 100, 8, "%07o", 0644);
    std::snprintf(reinterpret_cast<char*>(h) + 108, 8, "%07o", 0);
    std::snprintf(reinterpret_cast<char*>(h) + 116, 8, "%07o", 0);
    std::snprintf(reinterpret_cast<char*>(h) + 124, 12, "%011llo", static_cast<unsigned long long>(m.second.size()));
    std::snprintf(reinterpret_cast<char*>(h) + 136, 12, "%011o", 0);
    h[156] = m.first.back() == '/' ? '5' : '0';  // a trailing slash makes a directory entry
    std::memcpy(h + 257, "ustar\0" "00", 8);
    std::memset(h + 148, ' ', 8);
    unsigned sum = 0;
    for (uint8_t b : h) sum += b;
    std::snprintf(reinterpret_cast<char*>(h) + 148, 8, "%06o", sum);
    out.insert(out.end(), h, h + 512);
    out.insert(out.end(), m.second.begin(), m.second.end());
    out.resize((out.size() + 511) / 512 * 512, 0);
  }
  out.resize(out.size() + 1024, 0);
  return out;
}

// The members of a fixture's deploy.tar, as files.
Members fixture_members(const std::string& name) {
  const Bytes gz = read_file(fixture_path(name + "/deploy.tar"));
  const Bytes tar = elf::gunzip(gz.data(), gz.size(), size_t(1) << 30, name);
  Members out;
  for (const elf::TarMember& m : elf::read_tar(tar.data(), tar.size(), name))
    out.emplace_back(m.name, Bytes(m.data, m.data + m.size));
  return out;
}

Bytes member(const Members& members, const std::string& name) {
  for (const auto& m : members) {
    if (m.first == name) return m.second;
  }
  ADD_FAILURE() << "no member " << name;
  return {};
}

std::string error_loading(const Bytes& bytes) {
  return error_of([&] { load_module_from_memory(bytes.data(), bytes.size()); });
}

std::vector<NDArray> run_factory(const Module& root, const std::string& name) {
  auto ex = graph_executor_of(call_function(root->get_function("default"), ArgList().add_device(cpu())).as_module());
  set_case_inputs(*ex, name);
  ex->run();
  std::vector<NDArray> outputs;
  for (int i = 0; i < ex->num_outputs(); ++i) outputs.push_back(ex->get_output(i).copy_to_device(cpu()));
  return outputs;
}

void expect_same_as_tvm_and_so(const std::vector<NDArray>& got, const std::string& name) {
  const std::vector<NDArray> so = run_factory(load_module(fixture_path(name + "/deploy_factory.so")), name);
  ASSERT_EQ(got.size(), so.size());
  for (size_t i = 0; i < got.size(); ++i) {
    ASSERT_EQ(got[i].nbytes(), so[i].nbytes());
    EXPECT_EQ(0, std::memcmp(got[i]->data, so[i]->data, so[i].nbytes())) << name << " output " << i;
    EXPECT_EQ("", compare_output(got[i], fixture_path(name + "/output_" + std::to_string(i) + ".npy"), 0));
  }
}

std::string temp_file(const std::string& leaf, const Bytes& bytes) {
  const std::string path = ::testing::TempDir() + "graphrt_" + std::to_string(getpid()) + "_" + leaf;
  std::ofstream(path, std::ios::binary).write(reinterpret_cast<const char*>(bytes.data()), bytes.size());
  return path;
}

// Renames an undefined symbol in an object's string table (same length).
Bytes rename_symbol(Bytes object, const std::string& from, const std::string& to) {
  const std::string needle = std::string(1, '\0') + from + std::string(1, '\0');
  auto it = std::search(object.begin(), object.end(), needle.begin(), needle.end());
  EXPECT_NE(it, object.end()) << from;
  if (it != object.end()) std::copy(to.begin(), to.end(), it + 1);
  return object;
}

elf::LoadOptions relocate_only() {
  elf::LoadOptions options;
  options.execute = false;  // corrupt input: nothing of it may run
  options.imports = &elf::libc_allowlist_symbol;
  options.max_image_size = uint64_t(64) << 20;
  return options;
}

}  // namespace

// ---- the fixtures: bit-exact through the C++ API, 1 and 2 threads ----

class TarExport : public ::testing::TestWithParam<std::string> {};

TEST_P(TarExport, RunsBitExactLikeItsSharedLibrary) {
  GRAPHRT_REQUIRE_FIXTURES();
  const std::string name = GetParam();
  for (int threads : {1, 2}) {
    ASSERT_EQ(0, graphrt_set_num_threads(threads));
    Module root = load_module(fixture_path(name + "/deploy.tar"));  // default loader: claimed by content
    EXPECT_EQ("GraphExecutorFactory", root->type_key());
    expect_same_as_tvm_and_so(run_factory(root, name), name);
  }
  ASSERT_EQ(0, graphrt_set_num_threads(0));
}

TEST_P(TarExport, LoadsFromMemoryAndUnderEitherLoaderName) {
  GRAPHRT_REQUIRE_FIXTURES();
  const std::string name = GetParam();
  const Bytes bytes = read_file(fixture_path(name + "/deploy.tar"));
  expect_same_as_tvm_and_so(run_factory(load_module_from_memory(bytes.data(), bytes.size()), name), name);
  LoadOptions elf_loader;
  elf_loader.loader = "elf";
  expect_same_as_tvm_and_so(run_factory(load_module(fixture_path(name + "/deploy.tar"), elf_loader), name), name);
}

TEST_P(TarExport, BareKernelObjectRunsWithTheGraphOfTheFactory) {
  GRAPHRT_REQUIRE_FIXTURES();
  const std::string name = GetParam();
  Module factory = load_module(fixture_path(name + "/deploy_factory.so"));
  const std::string graph = call_function(factory->require_function("get_graph_json"), {}).as_string();
  const std::string params = call_function(factory->require_function("get_params_bytes"), {}).as_string();
  const std::string path = temp_file(name + "_lib0.o", member(fixture_members(name), "lib0.o"));
  Module lib = load_module(path);
  std::remove(path.c_str());
  EXPECT_EQ("library", lib->type_key());
  auto ex = create_graph_executor(graph, lib, params, {cpu()});
  set_case_inputs(*ex, name);
  ex->run();
  EXPECT_EQ("", compare_output(ex->get_output(0), fixture_path(name + "/output_0.npy"), 0));
}

TEST_P(TarExport, CodeIsExecutableAndTheBlobIsNot) {
  GRAPHRT_REQUIRE_FIXTURES();
  const Bytes bytes = read_file(fixture_path(GetParam() + "/deploy.tar"));
  elf::LoadOptions options;
  options.imports = elf::tvm_import_resolver(&graphrt::runtime_symbol);
  auto linked = elf::link_object_export(bytes.data(), bytes.size(), options, "deploy.tar");
  void* blob = linked->symbol("__tvm_dev_mblob");
  ASSERT_NE(nullptr, blob);
  EXPECT_FALSE(linked->is_code(blob));
  size_t kernels = 0;
  for (const std::string& fn : linked->symbol_names(true)) {
    EXPECT_TRUE(linked->is_code(linked->symbol(fn))) << fn;
    kernels += fn.rfind("tvmgen_", 0) == 0;
  }
  EXPECT_GT(kernels, 0u);
  EXPECT_EQ(1u, std::count(linked->imports().begin(), linked->imports().end(), "expf"));
}

INSTANTIATE_TEST_SUITE_P(Fixtures, TarExport, ::testing::ValuesIn(kTarCases));

// ---- rejections: one line naming the member and symbol ----

TEST(TarExportErrors, UnknownMemberIsNamed) {
  GRAPHRT_REQUIRE_FIXTURES();
  Members m = fixture_members("mlp_tar");
  m.emplace_back("notes.txt", Bytes{'h', 'i', '\n'});
  const std::string err = error_loading(make_tar(m));
  EXPECT_NE(std::string::npos, err.find("unknown member 'notes.txt'")) << err;
  EXPECT_EQ(std::string::npos, err.find('\n')) << err;
}

TEST(TarExportErrors, SourceMemberNeedsACompiler) {
  GRAPHRT_REQUIRE_FIXTURES();
  Members m = {{"devc.o", member(fixture_members("mlp_tar"), "devc.o")}, {"lib1.cc", Bytes{'i', 'n', 't', ';'}}};
  const std::string err = error_loading(make_tar(m));
  EXPECT_NE(std::string::npos, err.find("member 'lib1.cc' is source code")) << err;
}

TEST(TarExportErrors, UnresolvableSymbolNamesMemberAndSymbol) {
  GRAPHRT_REQUIRE_FIXTURES();
  Members m = fixture_members("mlp_tar");
  for (auto& kv : m) {
    if (kv.first == "lib0.o") kv.second = rename_symbol(kv.second, "memcpy", "system");
  }
  const std::string err = error_loading(make_tar(m));
  EXPECT_NE(std::string::npos, err.find("unresolved symbol 'system'")) << err;
  EXPECT_NE(std::string::npos, err.find("member: lib0.o")) << err;
}

TEST(TarExportErrors, DuplicateDefinitionIsNamed) {
  GRAPHRT_REQUIRE_FIXTURES();
  Members m = fixture_members("mlp_tar");
  m.emplace_back("lib1.o", member(m, "lib0.o"));
  const std::string err = error_loading(make_tar(m));
  EXPECT_NE(std::string::npos, err.find("is defined twice")) << err;
}

TEST(TarExportErrors, ArchiveWithoutObjectsAndSharedObjectMembers) {
  GRAPHRT_REQUIRE_FIXTURES();
  const std::string empty = error_loading(make_tar({{"objects/", {}}}));
  EXPECT_NE(std::string::npos, empty.find("no object files")) << empty;
  const Bytes so = read_file(fixture_path("mlp/deploy_lib.so"));
  const std::string err = error_loading(make_tar({{"lib0.so", so}}));
  EXPECT_NE(std::string::npos, err.find("unknown member 'lib0.so'")) << err;
}

TEST(TarExportErrors, UnsupportedRelocationIsNamed) {
  GRAPHRT_REQUIRE_FIXTURES();
  Bytes lib0 = member(fixture_members("mlp_tar"), "lib0.o");
  // Turn the first R_X86_64_PLT32 of .rela.text into R_X86_64_IRELATIVE.
  Elf64_Ehdr eh;
  std::memcpy(&eh, lib0.data(), sizeof(eh));
  bool patched = false;
  for (unsigned i = 0; i < eh.e_shnum && !patched; ++i) {
    Elf64_Shdr sh;
    std::memcpy(&sh, lib0.data() + eh.e_shoff + i * sizeof(sh), sizeof(sh));
    if (sh.sh_type != SHT_RELA) continue;
    for (uint64_t at = sh.sh_offset; at < sh.sh_offset + sh.sh_size && !patched; at += sizeof(Elf64_Rela)) {
      Elf64_Rela r;
      std::memcpy(&r, lib0.data() + at, sizeof(r));
      if (ELF64_R_TYPE(r.r_info) != R_X86_64_PLT32) continue;
      r.r_info = ELF64_R_INFO(ELF64_R_SYM(r.r_info), R_X86_64_IRELATIVE);
      std::memcpy(lib0.data() + at, &r, sizeof(r));
      patched = true;
    }
  }
  ASSERT_TRUE(patched);
  const std::string err = error_of([&] { elf::link_object_export(lib0.data(), lib0.size(), relocate_only(), "lib0.o"); });
  EXPECT_NE(std::string::npos, err.find("R_X86_64_IRELATIVE")) << err;
  EXPECT_NE(std::string::npos, err.find("member: lib0.o")) << err;
}

// ---- corrupt input: an Error, never a crash (also run under ASan/UBSan) ----

TEST(TarExportCorrupt, EveryTruncationIsRefused) {
  GRAPHRT_REQUIRE_FIXTURES();
  const Bytes gz = read_file(fixture_path("chain1000_tar/deploy.tar"));
  for (size_t cut = 0; cut < gz.size(); cut += 97) {
    EXPECT_NE("", error_of([&] { elf::link_object_export(gz.data(), cut, relocate_only(), "cut"); })) << cut;
  }
  const Bytes tar = make_tar(fixture_members("chain1000_tar"));
  for (size_t cut = 0; cut < tar.size() - 1024; cut += 509) {
    EXPECT_NE("", error_of([&] { elf::link_object_export(tar.data(), cut, relocate_only(), "cut"); })) << cut;
  }
  const Bytes lib0 = member(fixture_members("chain1000_tar"), "lib0.o");
  for (size_t cut = 0; cut < lib0.size(); cut += 61) {
    // A cut object may still parse when only trailing non-loaded bytes go; it must never crash.
    error_of([&] { elf::link_object_export(lib0.data(), cut, relocate_only(), "cut"); });
  }
}

TEST(TarExportCorrupt, BitFlipsGiveErrorsNotCrashes) {
  GRAPHRT_REQUIRE_FIXTURES();
  const Bytes tar = make_tar(fixture_members("chain1000_tar"));
  const Bytes lib0 = member(fixture_members("chain1000_tar"), "lib0.o");
  std::mt19937 rng(15);
  size_t refused = 0;
  for (int round = 0; round < 1500; ++round) {
    const Bytes& base = round % 2 ? tar : lib0;
    Bytes b = base;
    // Headers and tables are where flips matter; aim half of them at the first and last 4 KiB.
    for (int k = 0; k < 1 + round % 4; ++k) {
      size_t at = rng() % b.size();
      if (round % 3 == 0) at = rng() % std::min<size_t>(4096, b.size());
      if (round % 3 == 1) at = b.size() - 1 - rng() % std::min<size_t>(4096, b.size());
      b[at] ^= static_cast<uint8_t>(1u << (rng() % 8));
    }
    refused += !error_of([&] { elf::link_object_export(b.data(), b.size(), relocate_only(), "flip"); }).empty();
  }
  EXPECT_GT(refused, 0u);
}

// ---- the linker on a small object: init/fini arrays, COMMON, GOT, far calls ----

namespace {

int g_sample_fini_runs = 0;

// An executable page far (> 2 GiB) from where the kernel puts new mappings
// (and so the image), holding `movabs $expf, %rax; jmp *%rax`: a PLT32 call
// to it must go through the loader's stub.
class FarTrampoline {
 public:
  FarTrampoline() {
    const size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
    void* probe = mmap(nullptr, page, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (probe == MAP_FAILED) return;
    const uintptr_t near = reinterpret_cast<uintptr_t>(probe);
    munmap(probe, page);
    for (uintptr_t gap = uintptr_t(16) << 30; gap <= (uintptr_t(1) << 40) && !page_ && gap < near; gap <<= 1) {
      void* want = reinterpret_cast<void*>(near - gap);
      void* p = mmap(want, page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
      if (p == want) page_ = static_cast<uint8_t*>(p);
      else if (p != MAP_FAILED) munmap(p, page);  // kernels before 4.17 treat the flag as a hint
    }
    if (!page_) return;
    const uint64_t target = reinterpret_cast<uint64_t>(elf::libc_allowlist_symbol("expf"));
    page_[0] = 0x48, page_[1] = 0xb8;  // movabs imm64, %rax
    std::memcpy(page_ + 2, &target, 8);
    page_[10] = 0xff, page_[11] = 0xe0;  // jmp *%rax
    mprotect(page_, page, PROT_READ | PROT_EXEC);
  }
  ~FarTrampoline() {
    if (page_) munmap(page_, static_cast<size_t>(sysconf(_SC_PAGESIZE)));
  }
  void* address() const { return page_; }

 private:
  uint8_t* page_ = nullptr;
};

Bytes sample_object() { return read_file(std::string(GRAPHRT_ELF_TEST_DATA) + "/linker_sample.o"); }

}  // namespace

TEST(ObjectLinker, RunsInitArrayFillsCommonAndRunsFiniArray) {
  const Bytes obj = sample_object();
  elf::LoadOptions options;
  options.imports = [](const std::string& name) -> void* {
    if (name == "sample_fini_runs") return &g_sample_fini_runs;
    return elf::libc_allowlist_symbol(name);
  };
  g_sample_fini_runs = 0;
  {
    auto linked = elf::link_object_export(obj.data(), obj.size(), options, "linker_sample.o");
    auto read_state = reinterpret_cast<int (*)()>(linked->symbol("sample_read_state"));
    ASSERT_NE(nullptr, read_state);
    EXPECT_EQ(42 * 1000 + 7, read_state());  // the constructor ran and wrote the COMMON symbol
    auto exp_of_table = reinterpret_cast<float (*)(int)>(linked->symbol("sample_exp_of_table"));
    EXPECT_EQ(expf(2.5f), exp_of_table(2));
    ASSERT_NE(nullptr, linked->symbol("sample_common_counter"));
    EXPECT_EQ(7, *static_cast<int*>(linked->symbol("sample_common_counter")));
    EXPECT_EQ(nullptr, linked->symbol("sample_init"));  // local: not exported
    EXPECT_EQ(0, g_sample_fini_runs);
  }
  EXPECT_EQ(1, g_sample_fini_runs);
}

TEST(ObjectLinker, FarImportsAreCalledThroughStubs) {
  FarTrampoline far;
  if (!far.address()) GTEST_SKIP() << "could not map a page far from the image";
  const Bytes obj = sample_object();
  elf::LoadOptions options;
  options.imports = [&](const std::string& name) -> void* {
    if (name == "sample_fini_runs") return &g_sample_fini_runs;
    if (name == "expf") return far.address();
    return nullptr;
  };
  auto linked = elf::link_object_export(obj.data(), obj.size(), options, "linker_sample.o");
  auto exp_of_table = reinterpret_cast<float (*)(int)>(linked->symbol("sample_exp_of_table"));
  ASSERT_NE(nullptr, exp_of_table);
  const int64_t distance = reinterpret_cast<int64_t>(far.address()) - reinterpret_cast<int64_t>(exp_of_table);
  EXPECT_TRUE(distance > INT32_MAX || distance < INT32_MIN) << "trampoline not far enough to need a stub";
  EXPECT_EQ(expf(1.5f), exp_of_table(1));
}

TEST(ObjectLinker, UnresolvedImportOfABareObjectIsNamed) {
  const Bytes obj = sample_object();
  elf::LoadOptions options;
  options.imports = &elf::libc_allowlist_symbol;  // no sample_fini_runs
  const std::string err = error_of([&] { elf::link_object_export(obj.data(), obj.size(), options, "linker_sample.o"); });
  EXPECT_NE(std::string::npos, err.find("unresolved symbol 'sample_fini_runs'")) << err;
  EXPECT_NE(std::string::npos, err.find("member: linker_sample.o")) << err;
}

// One engine, two sets: a shared object's dynamic tables never hold GOT or PLT
// forms (nothing built their GOT), an object file never holds the dynamic-only
// types; each is refused by name, and the shared formulas agree.
TEST(ObjectRelocX86_64, OneEngineTwoSets) {
  uint8_t place[8] = {};
  elf::X86_64RelocValues v;
  v.P = 0x1000;
  v.S = 0x2000;
  v.A = 8;
  v.B = 0x500000;
  for (uint32_t type : {uint32_t(R_X86_64_PLT32), uint32_t(R_X86_64_GOTPCRELX), uint32_t(R_X86_64_SIZE64)}) {
    const std::string err =
        error_of([&] { elf::apply_x86_64_reloc(elf::X86_64RelocSet::kDynamic, type, v, place, sizeof(place)); });
    EXPECT_NE(std::string::npos, err.find("unsupported relocation type")) << type << ": " << err;
  }
  for (uint32_t type : {uint32_t(R_X86_64_GLOB_DAT), uint32_t(R_X86_64_JUMP_SLOT), uint32_t(R_X86_64_RELATIVE)}) {
    const std::string err =
        error_of([&] { elf::apply_x86_64_reloc(elf::X86_64RelocSet::kObject, type, v, place, sizeof(place)); });
    EXPECT_NE(std::string::npos, err.find("unsupported relocation type")) << type << ": " << err;
  }
  uint64_t value = 0;
  elf::apply_x86_64_reloc(elf::X86_64RelocSet::kDynamic, R_X86_64_RELATIVE, v, place, sizeof(place));
  std::memcpy(&value, place, 8);
  EXPECT_EQ(0x500008u, value);
  elf::apply_x86_64_reloc(elf::X86_64RelocSet::kDynamic, R_X86_64_GLOB_DAT, v, place, sizeof(place));
  std::memcpy(&value, place, 8);
  EXPECT_EQ(0x2000u, value);  // the slot gets S, no addend
  for (auto set : {elf::X86_64RelocSet::kDynamic, elf::X86_64RelocSet::kObject}) {
    elf::apply_x86_64_reloc(set, R_X86_64_64, v, place, sizeof(place));
    std::memcpy(&value, place, 8);
    EXPECT_EQ(0x2008u, value);
  }
  EXPECT_EQ(8u, elf::x86_64_reloc_field_bytes(R_X86_64_JUMP_SLOT));
  EXPECT_EQ(4u, elf::x86_64_reloc_field_bytes(R_X86_64_32S));
  EXPECT_EQ(0u, elf::x86_64_reloc_field_bytes(R_X86_64_TPOFF64));
}

TEST(ObjectRelocX86_64, Pc32OutOfRangeIsRefusedAndPlt32UsesTheStub) {
  uint8_t place[4] = {};
  elf::X86_64RelocValues v;
  v.P = 0x7f0000000000;
  v.S = 0x1000;  // far below
  v.A = -4;
  EXPECT_THROW(elf::apply_x86_64_reloc(elf::X86_64RelocSet::kObject, R_X86_64_PC32, v, place, sizeof(place)), Error);
  v.stub = v.P + 0x100;
  elf::apply_x86_64_reloc(elf::X86_64RelocSet::kObject, R_X86_64_PLT32, v, place, sizeof(place));
  int32_t disp;
  std::memcpy(&disp, place, 4);
  EXPECT_EQ(0x100 - 4, disp);
  v.got_slot = v.P - 0x40;
  elf::apply_x86_64_reloc(elf::X86_64RelocSet::kObject, R_X86_64_REX_GOTPCRELX, v, place, sizeof(place));
  std::memcpy(&disp, place, 4);
  EXPECT_EQ(-0x40 - 4, disp);
  EXPECT_THROW(elf::apply_x86_64_reloc(elf::X86_64RelocSet::kObject, R_X86_64_64, v, place, sizeof(place)), Error);  // 8 bytes, 4 of room
  uint8_t stub[elf::kStubSize];
  elf::write_stub_x86_64(stub, 0x1122334455667788ull);
  EXPECT_EQ(0xff, stub[0]);
  EXPECT_EQ(0x25, stub[1]);
  uint64_t target;
  std::memcpy(&target, stub + 6, 8);
  EXPECT_EQ(0x1122334455667788ull, target);
}

TEST(TarReader, ReadsWhatTheTestWriterWrote) {
  const Bytes tar = make_tar({{"a.o", Bytes{1, 2, 3}}, {"dir/b.o", Bytes(700, 9)}});
  const std::vector<elf::TarMember> members = elf::read_tar(tar.data(), tar.size(), "t.tar");
  ASSERT_EQ(2u, members.size());
  EXPECT_EQ("a.o", members[0].name);
  EXPECT_EQ(3u, members[0].size);
  EXPECT_EQ("dir/b.o", members[1].name);
  EXPECT_EQ(700u, members[1].size);
  EXPECT_EQ(9, members[1].data[699]);
  Bytes bad = tar;
  bad[0] ^= 1;  // the checksum no longer matches
  const std::string err = error_of([&] { elf::read_tar(bad.data(), bad.size(), "t.tar"); });
  EXPECT_NE(std::string::npos, err.find("checksum")) << err;
}

TEST(TarExportCApi, LoadFromFileAcceptsTarAndObject) {
  GRAPHRT_REQUIRE_FIXTURES();
  for (const char* format : {static_cast<const char*>(nullptr), "tar"}) {
    TVMModuleHandle mod = nullptr;
    ASSERT_EQ(0, TVMModLoadFromFile(fixture_path("mlp_tar/deploy.tar").c_str(), format, &mod)) << TVMGetLastError();
    TVMFunctionHandle fn = nullptr;
    ASSERT_EQ(0, TVMModGetFunction(mod, "default", 0, &fn));
    EXPECT_NE(nullptr, fn);
    TVMFuncFree(fn);
    TVMModFree(mod);
  }
  const std::string path = temp_file("capi_lib0.o", member(fixture_members("mlp_tar"), "lib0.o"));
  TVMModuleHandle mod = nullptr;
  const int rc = graphrt_module_load(path.c_str(), "dlopen", &mod);
  std::remove(path.c_str());
  ASSERT_EQ(0, rc) << TVMGetLastError();
  TVMFunctionHandle fn = nullptr;
  ASSERT_EQ(0, TVMModGetFunction(mod, "tvmgen_default_fused_nn_softmax", 0, &fn));
  EXPECT_NE(nullptr, fn);
  TVMFuncFree(fn);
  TVMModFree(mod);
}

// Inputs the fuzz target once crashed on (fuzz/elf_object_fuzz.cc), kept as regressions.
TEST(TarExportCorrupt, FuzzFindingsAreRefused) {
  for (const char* leaf : {"fuzz_null_section_alloc.o"}) {
    const Bytes input = read_file(std::string(GRAPHRT_ELF_TEST_DATA) + "/" + leaf);
    EXPECT_NE("", error_of([&] { elf::link_object_export(input.data(), input.size(), relocate_only(), leaf); })) << leaf;
  }
}
