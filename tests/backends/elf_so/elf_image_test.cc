// ElfImage against real artifacts: TVM exports (compared with what dlopen
// gives), the IREE aarch64 library (relocate-only) and import refusal.
#include <dlfcn.h>
#include <elf.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>

#include "src/elf/elf_image.h"
#include "src/elf/elf_imports.h"
#include "elf_test_util.h"
#include "graphrt/error.h"
#include "test_support.h"

using graphrt::Error;
using graphrt::elf::ElfImage;
using graphrt::elf::LoadOptions;
using namespace elf_test;

namespace {

// Cases whose only imports are allow-listed libc/libm functions.
const char* const kTvmCases[] = {"chain1000", "mlp", "mlp_cuda", "mlp_linked_params", "multi_io", "squeezenet1.1"};
const char* const kTvmFiles[] = {"deploy_lib.so", "deploy_factory.so"};

// dlopen handle closed on scope exit.
struct DlHandle {
  void* h;
  explicit DlHandle(const std::string& path) : h(dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL)) {}
  ~DlHandle() {
    if (h) dlclose(h);
  }
};

// Permissions of the /proc/self/maps line holding `p` ("r-xp"), or "".
std::string page_perms(const void* p) {
  std::ifstream maps("/proc/self/maps");
  std::string line;
  const uintptr_t a = reinterpret_cast<uintptr_t>(p);
  while (std::getline(maps, line)) {
    std::istringstream in(line);
    uintptr_t lo, hi;
    char dash;
    std::string perms;
    in >> std::hex >> lo >> dash >> hi >> perms;
    if (a >= lo && a < hi) return perms;
  }
  return "";
}

void expect_same_as_dlopen(const ElfImage& image, const std::string& path) {
  DlHandle dl(path);
  ASSERT_NE(dl.h, nullptr) << dlerror();
  const std::vector<std::string> names = image.symbol_names();
  ASSERT_FALSE(names.empty());
  for (const std::string& name : names) {
    const auto info = image.find_symbol(name);
    ASSERT_TRUE(info) << name;
    void* theirs = dlsym(dl.h, name.c_str());
    ASSERT_NE(theirs, nullptr) << name;
    EXPECT_NE(theirs, info->address) << "must be a private copy: " << name;
    if (info->size == 0 || (info->type != STT_FUNC && info->type != STT_OBJECT)) continue;
    ASSERT_TRUE(image.contains(info->address, info->size)) << name;
    EXPECT_EQ(std::memcmp(info->address, theirs, info->size), 0) << "content differs: " << name;
  }
}

}  // namespace

TEST(ElfImage, LoadsTvmFixturesLikeDlopen) {
  GRAPHRT_REQUIRE_FIXTURES();
  for (const char* c : kTvmCases) {
    for (const char* f : kTvmFiles) {
      const std::string path = graphrt_test::fixture_path(std::string(c) + "/" + f);
      SCOPED_TRACE(path);
      std::unique_ptr<ElfImage> image = ElfImage::load_file(path, allowlist_options());
      EXPECT_EQ(image->machine(), EM_X86_64);
      EXPECT_TRUE(image->executable());
      EXPECT_NE(image->symbol("__TVMAPISetLastError"), nullptr);
      if (std::string(f) == "deploy_factory.so") {
        const auto blob = image->find_symbol("__tvm_dev_mblob");
        ASSERT_TRUE(blob);
        uint64_t nbytes;
        std::memcpy(&nbytes, blob->address, 8);
        EXPECT_LE(nbytes + 8, blob->size);  // TVM blob: u64 length, then payload
      }
      expect_same_as_dlopen(*image, path);
    }
  }
}

TEST(ElfImage, FactoryBlobMatchesDlopenByteForByte) {
  GRAPHRT_REQUIRE_FIXTURES();
  const std::string path = graphrt_test::fixture_path("squeezenet1.1/deploy_factory.so");
  auto image = ElfImage::load_file(path, allowlist_options());
  DlHandle dl(path);
  ASSERT_NE(dl.h, nullptr);
  const uint8_t* ours = static_cast<const uint8_t*>(image->symbol("__tvm_dev_mblob"));
  const uint8_t* theirs = static_cast<const uint8_t*>(dlsym(dl.h, "__tvm_dev_mblob"));
  ASSERT_TRUE(ours && theirs);
  uint64_t nbytes;
  std::memcpy(&nbytes, theirs, 8);
  EXPECT_GT(nbytes, 1000000u);
  EXPECT_EQ(std::memcmp(ours, theirs, nbytes + 8), 0);
}

TEST(ElfImage, FinalProtectionsAreWxorX) {
  GRAPHRT_REQUIRE_FIXTURES();
  auto image = ElfImage::load_file(graphrt_test::fixture_path("mlp/deploy_factory.so"), allowlist_options());
  const auto fn = image->find_symbol("tvmgen_default_fused_nn_softmax");
  ASSERT_TRUE(fn);
  EXPECT_EQ(fn->type, unsigned(STT_FUNC));
  EXPECT_EQ(page_perms(fn->address), "r-xp");
  EXPECT_TRUE(image->is_code(fn->address));
  EXPECT_EQ(page_perms(image->symbol("__tvm_dev_mblob")), "r--p");
  EXPECT_EQ(page_perms(image->symbol("__TVMAPISetLastError")), "rw-p");  // .data, past RELRO
  // The header page holds only read-only data.
  EXPECT_EQ(page_perms(image->base()), "r--p");
}

TEST(ElfImage, RelocateOnlyModeMapsNothingExecutable) {
  GRAPHRT_REQUIRE_FIXTURES();
  auto image = ElfImage::load_file(graphrt_test::fixture_path("mlp/deploy_lib.so"), allowlist_options(false));
  EXPECT_FALSE(image->executable());
  void* fn = image->symbol("tvmgen_default_fused_nn_softmax");
  ASSERT_NE(fn, nullptr);
  EXPECT_FALSE(image->is_code(fn));
  EXPECT_EQ(page_perms(fn), "r--p");
}

TEST(ElfImage, TwoCopiesAreIndependent) {
  GRAPHRT_REQUIRE_FIXTURES();
  const std::string path = graphrt_test::fixture_path("mlp/deploy_factory.so");
  auto a = ElfImage::load_file(path, allowlist_options());
  auto b = ElfImage::load_file(path, allowlist_options());
  auto* slot_a = static_cast<void**>(a->symbol("__TVMAPISetLastError"));
  auto* slot_b = static_cast<void**>(b->symbol("__TVMAPISetLastError"));
  ASSERT_TRUE(slot_a && slot_b);
  ASSERT_NE(slot_a, slot_b);
  *slot_a = reinterpret_cast<void*>(0x1234);
  EXPECT_EQ(*slot_b, nullptr);  // globals are per copy
  const auto blob_b = b->find_symbol("__tvm_dev_mblob");
  std::vector<uint8_t> before(static_cast<uint8_t*>(blob_b->address),
                              static_cast<uint8_t*>(blob_b->address) + blob_b->size);
  a.reset();  // unloading one copy (runs its finalizers) leaves the other intact
  EXPECT_EQ(std::memcmp(before.data(), blob_b->address, before.size()), 0);
  EXPECT_EQ(*slot_b, nullptr);
}

TEST(ElfImage, LoadsFromMemory) {
  GRAPHRT_REQUIRE_FIXTURES();
  std::vector<uint8_t> bytes = graphrt_test::read_file(graphrt_test::fixture_path("multi_io/deploy_factory.so"));
  auto image = ElfImage::load_memory(bytes.data(), bytes.size(), allowlist_options(), "multi_io");
  bytes.assign(bytes.size(), 0);  // the image must not refer back to the buffer
  EXPECT_NE(image->symbol("__tvm_dev_mblob"), nullptr);
  EXPECT_EQ(image->origin(), "multi_io");
  EXPECT_EQ(image->symbol("no_such_symbol"), nullptr);
}

TEST(ElfImage, FileAndMemoryLoadsAgree) {
  GRAPHRT_REQUIRE_FIXTURES();
  // load_file maps segments from the file, load_memory copies them: the two
  // images must be identical apart from their base addresses.
  for (const char* c : {"mlp/deploy_factory.so", "squeezenet1.1/deploy_lib.so"}) {
    const std::string path = graphrt_test::fixture_path(c);
    const std::vector<uint8_t> bytes = graphrt_test::read_file(path);
    auto mapped = ElfImage::load_file(path, allowlist_options(false));
    auto copied = ElfImage::load_memory(bytes.data(), bytes.size(), allowlist_options(false));
    ASSERT_EQ(mapped->size(), copied->size());
    const uint64_t delta = reinterpret_cast<uint64_t>(copied->base()) - reinterpret_cast<uint64_t>(mapped->base());
    size_t pages_compared = 0;
    for (size_t off = 0; off < mapped->size(); off += 8) {
      if (!mapped->is_readable(mapped->base() + off, 8)) continue;
      pages_compared += off % 4096 == 0;
      uint64_t a, b;
      std::memcpy(&a, mapped->base() + off, 8);
      std::memcpy(&b, copied->base() + off, 8);
      // Relocated pointers differ by exactly the distance between the bases.
      if (a != b) {
        ASSERT_EQ(b - a, delta) << c << " offset " << off;
      }
    }
    EXPECT_GT(pages_compared, 10u);
  }
}

TEST(ElfImage, ReportsWhatTheFixtureImports) {
  GRAPHRT_REQUIRE_FIXTURES();
  auto image = ElfImage::load_file(graphrt_test::fixture_path("squeezenet1.1/deploy_lib.so"), allowlist_options(false));
  const auto& imports = image->imports();
  for (const char* name : {"expf", "memset", "__cxa_finalize", "__gmon_start__"})
    EXPECT_NE(std::find(imports.begin(), imports.end(), name), imports.end()) << name;
}

TEST(ElfImage, RefusesImportOutsideTheTable) {
  GRAPHRT_REQUIRE_FIXTURES();
  const std::string path = graphrt_test::fixture_path("mlp/deploy_lib.so");
  LoadOptions only_memcpy;
  only_memcpy.imports = [](const std::string& name) -> void* {
    return name == "memcpy" ? graphrt::elf::libc_allowlist_symbol(name) : nullptr;
  };
  try {
    ElfImage::load_file(path, only_memcpy);
    FAIL() << "expf is not in the table";
  } catch (const Error& e) {
    EXPECT_EQ(e.context_value("symbol"), "expf");
    EXPECT_EQ(e.context_value("file"), path);
    EXPECT_NE(std::string(e.what()).find("expf"), std::string::npos);
  }
  // No table at all: weak crtstuff imports are fine, the first strong one is named.
  try {
    ElfImage::load_file(path, LoadOptions{});
    FAIL() << "imports must be refused";
  } catch (const Error& e) {
    EXPECT_FALSE(e.context_value("symbol").empty());
  }
}

TEST(ElfImage, ByocFixtureNeedsTheTvmCxxRuntime) {
  GRAPHRT_REQUIRE_FIXTURES();
  // C++ codegen output imports libstdc++ and TVM's C++ runtime: the default
  // allow-list refuses it by name; a permissive table (this process's
  // symbols, which include libgraphrt's tvm::runtime ABI) can relocate it.
  LoadOptions strict;
  strict.imports = graphrt::elf::ImportResolver(&graphrt::elf::libc_allowlist_symbol);
  strict.execute = false;
  try {
    ElfImage::load_file(graphrt_test::fixture_path("byoc_ccompiler/deploy_lib.so"), strict);
    FAIL() << "byoc_ccompiler must not load with the allow-list";
  } catch (const Error& e) {
    EXPECT_FALSE(e.context_value("symbol").empty()) << e.what();
  }
  LoadOptions permissive;
  permissive.imports = graphrt::elf::ImportResolver(&permissive_import);
  permissive.execute = false;
  auto image = ElfImage::load_file(graphrt_test::fixture_path("byoc_ccompiler/deploy_lib.so"), permissive);
  EXPECT_NE(image->symbol("tvmgen_default_ccompiler_main_0"), nullptr);
}

TEST(ElfImage, RelocatesAarch64WithoutExecuting) {
  GRAPHRT_REQUIRE_FIXTURES();
  const std::string path = graphrt_test::fixture_path("iree/elementwise_mul_arm_64.so");
  const std::vector<uint8_t> file = graphrt_test::read_file(path);
  LoadOptions o;
  o.execute = false;
  auto image = ElfImage::load_file(path, o);
  EXPECT_EQ(image->machine(), EM_AARCH64);
  EXPECT_FALSE(image->executable());
  const auto query = image->find_symbol("iree_hal_executable_library_query");
  ASSERT_TRUE(query);
  EXPECT_EQ(query->type, unsigned(STT_FUNC));
  EXPECT_FALSE(image->is_code(query->address));
  EXPECT_EQ(reinterpret_cast<const uint8_t*>(query->address) - image->base(), 0x1044c);
  // Cross-check every RELA entry, read independently from the file bytes.
  const size_t rela = file_offset(file, dyn_value(file, DT_RELA));
  const uint64_t count = dyn_value(file, DT_RELASZ) / sizeof(Elf64_Rela);
  ASSERT_EQ(count, 5u);
  const uint64_t bias = reinterpret_cast<uint64_t>(image->base());  // vaddr_min is 0
  for (uint64_t i = 0; i < count; ++i) {
    const Elf64_Rela r = get<Elf64_Rela>(file, rela + i * sizeof(Elf64_Rela));
    EXPECT_EQ(ELF64_R_TYPE(r.r_info), unsigned(R_AARCH64_RELATIVE));
    uint64_t placed;
    std::memcpy(&placed, image->base() + r.r_offset, 8);
    EXPECT_EQ(placed, bias + r.r_addend) << "relocation " << i;
  }
  // The header's name pointer (library->header->name) now points at "ex".
  EXPECT_EQ(page_perms(image->base() + 0x20460), "r--p");  // RELRO
}

TEST(ElfImage, RefusesForeignArchitectureForExecution) {
  GRAPHRT_REQUIRE_FIXTURES();
  try {
    ElfImage::load_file(graphrt_test::fixture_path("iree/elementwise_mul_arm_64.so"));
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("183"), std::string::npos) << e.what();
  }
  LoadOptions relocate_only;
  relocate_only.execute = false;
  EXPECT_THROW(ElfImage::load_file(graphrt_test::fixture_path("iree/elementwise_mul_x86_32.so"), relocate_only), Error);
  EXPECT_THROW(ElfImage::load_file(graphrt_test::fixture_path("iree/elementwise_mul_riscv_64.so"), relocate_only), Error);
}

TEST(ElfImage, MissingFileIsAnErrorWithContext) {
  try {
    ElfImage::load_file("/nonexistent/lib.so");
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.context_value("file"), "/nonexistent/lib.so");
  }
}

TEST(ElfImports, AllowListHasTheMathTvmEmits) {
  for (const char* name : {"memcpy", "memset", "memmove", "expf", "logf", "powf", "tanhf", "sqrtf", "erff", "fmaxf",
                           "exp", "tanh", "sincosf", "fmaf", "exp2", "__powisf2"})
    EXPECT_NE(graphrt::elf::libc_allowlist_symbol(name), nullptr) << name;
  for (const char* name : {"system", "dlopen", "fopen", "execve", "printf"})
    EXPECT_EQ(graphrt::elf::libc_allowlist_symbol(name), nullptr) << name;
}

