// Hostile inputs that used to crash or be accepted: blob bounds that do not
// depend on the loader, and size arithmetic that must not wrap.
#include <elf.h>

#include <cstring>

#include "fixture_cases.h"
#include "graphrt/c_api.h"
#include "graphrt/library.h"
#include "graphrt/module.h"
#include "graphrt/ndarray.h"

using namespace graphrt;
using namespace graphrt_test;

namespace {

std::string load_error(const std::string& path, const std::string& loader) {
  LoadOptions options;
  options.loader = loader;
  try {
    load_module(path, options);
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

std::string load_memory_error(const std::vector<uint8_t>& bytes) {
  LoadOptions options;
  options.loader = "elf";
  try {
    load_module_from_memory(bytes.data(), bytes.size(), options);
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

// Sets st_size of the dynamic symbol `name` in an ELF64 image in memory.
bool set_symbol_size(std::vector<uint8_t>& image, const std::string& name, uint64_t size) {
  Elf64_Ehdr eh;
  std::memcpy(&eh, image.data(), sizeof eh);
  for (int i = 0; i < eh.e_shnum; ++i) {
    Elf64_Shdr sh;
    std::memcpy(&sh, image.data() + eh.e_shoff + i * sizeof(Elf64_Shdr), sizeof sh);
    if (sh.sh_type != SHT_DYNSYM) continue;
    Elf64_Shdr strtab;
    std::memcpy(&strtab, image.data() + eh.e_shoff + sh.sh_link * sizeof(Elf64_Shdr), sizeof strtab);
    for (uint64_t off = sh.sh_offset; off + sizeof(Elf64_Sym) <= sh.sh_offset + sh.sh_size; off += sizeof(Elf64_Sym)) {
      Elf64_Sym sym;
      std::memcpy(&sym, image.data() + off, sizeof sym);
      if (name == reinterpret_cast<const char*>(image.data() + strtab.sh_offset + sym.st_name)) {
        sym.st_size = size;
        std::memcpy(image.data() + off, &sym, sizeof sym);
        return true;
      }
    }
  }
  return false;
}

}  // namespace

// The blob's size prefix and first string length point ~2^48 bytes past the
// image. With the ELF loader this was read unbounded (SIGSEGV).
TEST(HostileInput, HugeBlobPrefixRefusedByEveryLoader) {
  for (const char* loader : {"elf", "dlopen"}) {
    std::string error = load_error(GRAPHRT_CRAFTED_BLOB_SO, loader);
    EXPECT_NE(error.find("blob size prefix"), std::string::npos) << loader << ": " << error;
    EXPECT_NE(error.find(GRAPHRT_CRAFTED_BLOB_SO), std::string::npos) << loader << ": " << error;
  }
}

// A symbol table that lies about the blob's size is still bounded by the end
// of the segment that holds it.
TEST(HostileInput, LyingSymbolSizeBoundedBySegment) {
  std::vector<uint8_t> image = read_file(GRAPHRT_CRAFTED_BLOB_SO);
  ASSERT_TRUE(set_symbol_size(image, "__tvm_dev_mblob", uint64_t(1) << 50));
  std::string error = load_memory_error(image);
  EXPECT_NE(error.find("blob size prefix"), std::string::npos) << error;
  ASSERT_TRUE(set_symbol_size(image, "__tvm_dev_mblob", 0));  // unknown size: the segment alone bounds it
  error = load_memory_error(image);
  EXPECT_NE(error.find("blob size prefix"), std::string::npos) << error;
}

// A real model whose symbol table gives no blob size still loads: the segment
// bound is not tighter than the data.
TEST(HostileInput, ModelLoadsWithUnknownBlobSize) {
  GRAPHRT_REQUIRE_FIXTURES();
  std::vector<uint8_t> image = read_file(fixture_path("multi_io/deploy_factory.so"));
  ASSERT_TRUE(set_symbol_size(image, "__tvm_dev_mblob", 0));
  LoadOptions options;
  options.loader = "elf";
  EXPECT_NO_THROW(load_module_from_memory(image.data(), image.size(), options));
}

TEST(HostileInput, SizeArithmeticOverflowThrows) {
  std::vector<int64_t> wide = {int64_t(1) << 62, 1, 28, 28};
  EXPECT_THROW(shape_numel(wide.data(), 4), Error);
  std::vector<int64_t> huge = {int64_t(1) << 32, int64_t(1) << 32, 16};
  EXPECT_THROW(shape_numel(huge.data(), 3), Error);
  std::vector<int64_t> negative = {4, -1};
  EXPECT_THROW(shape_numel(negative.data(), 2), Error);
  EXPECT_THROW(dtype_bytes(DLDataType{kDLFloat, 32, 1}, int64_t(1) << 62), Error);
  EXPECT_EQ(dtype_bytes(DLDataType{kDLFloat, 32, 1}, int64_t(1) << 60), size_t(1) << 62);
  EXPECT_THROW(NDArray::empty(huge, DLDataType{kDLFloat, 32, 1}, cpu()), Error);
}

TEST(HostileInput, CApiArrayAllocOverflowIsAnError) {
  const tvm_index_t shape[] = {int64_t(1) << 32, int64_t(1) << 32, 16};
  TVMArrayHandle out = nullptr;
  EXPECT_NE(0, TVMArrayAlloc(shape, 3, kDLFloat, 32, 1, kDLCPU, 0, &out));
  EXPECT_EQ(out, nullptr);
  EXPECT_NE(std::string(TVMGetLastError()).find("64 bits"), std::string::npos) << TVMGetLastError();
}
