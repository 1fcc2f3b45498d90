// IREE embedded-ELF executable library: the elementwise_mul fixture (fixtures/iree) run
// through our loader, plus argument checking of the dispatch API.
#include <gtest/gtest.h>

#include <array>
#include <memory>

#include "graphrt/error.h"
#include "backends/iree_executable/iree_executable_library.h"
#include "test_support.h"

using graphrt::Error;
using graphrt::elf::IreeDispatch;
using graphrt::elf::IreeExecutableLibrary;

namespace {

std::string x86_64_path() { return graphrt_test::fixture_path("iree/elementwise_mul_x86_64.so"); }

struct Buffers {
  std::array<float, 4> arg0{{1, 2, 3, 4}};
  std::array<float, 4> arg1{{100, 200, 300, 400}};
  std::array<float, 4> ret0{{0, 0, 0, 0}};
  IreeDispatch call() {
    IreeDispatch d;
    d.bindings = {arg0.data(), arg1.data(), ret0.data()};
    d.binding_lengths = {16, 16, 16};
    return d;
  }
};

const std::array<float, 4> kExpected{{100, 400, 900, 1600}};

}  // namespace

TEST(IreeExecutableLibrary, RunsTheSpecTestVector) {
  GRAPHRT_REQUIRE_FIXTURES();
  auto lib = IreeExecutableLibrary::load_file(x86_64_path());
  EXPECT_EQ(lib->version(), 6u);
  EXPECT_EQ(lib->name(), "ex");
  ASSERT_EQ(lib->export_count(), 1u);
  EXPECT_EQ(lib->export_info(0).binding_count, 3);
  EXPECT_EQ(lib->export_info(0).constant_count, 0);
  EXPECT_EQ(lib->export_info(0).name, "");  // this older artifact carries no export names
  Buffers b;
  lib->dispatch(0, b.call());
  EXPECT_EQ(b.ret0, kExpected);  // exact compare, as the reference test does
}

TEST(IreeExecutableLibrary, SplitsWorkAcrossWorkgroups) {
  GRAPHRT_REQUIRE_FIXTURES();
  auto lib = IreeExecutableLibrary::load_file(x86_64_path());
  Buffers b;
  IreeDispatch call = b.call();
  call.workgroup_count = {4, 1, 1};  // one element per workgroup
  lib->dispatch(0, call);
  EXPECT_EQ(b.ret0, kExpected);
}

TEST(IreeExecutableLibrary, LoadsFromMemoryAndSideBySide) {
  GRAPHRT_REQUIRE_FIXTURES();
  std::vector<uint8_t> bytes = graphrt_test::read_file(x86_64_path());
  auto a = IreeExecutableLibrary::load_memory(bytes.data(), bytes.size(), "copy-a");
  auto b = IreeExecutableLibrary::load_memory(bytes.data(), bytes.size(), "copy-b");
  EXPECT_NE(a->image().base(), b->image().base());
  a.reset();
  Buffers buf;
  b->dispatch(0, buf.call());
  EXPECT_EQ(buf.ret0, kExpected);
}

TEST(IreeExecutableLibrary, RejectsBadDispatchArguments) {
  GRAPHRT_REQUIRE_FIXTURES();
  auto lib = IreeExecutableLibrary::load_file(x86_64_path());
  Buffers b;
  EXPECT_THROW(lib->dispatch(1, b.call()), Error);  // no such ordinal
  IreeDispatch two = b.call();
  two.bindings.pop_back();
  two.binding_lengths.pop_back();
  EXPECT_THROW(lib->dispatch(0, two), Error);
  IreeDispatch null_binding = b.call();
  null_binding.bindings[1] = nullptr;
  EXPECT_THROW(lib->dispatch(0, null_binding), Error);
  IreeDispatch constants = b.call();
  constants.constants = {1};
  EXPECT_THROW(lib->dispatch(0, constants), Error);
  EXPECT_EQ(b.ret0, (std::array<float, 4>{{0, 0, 0, 0}}));  // nothing ran
}

TEST(IreeExecutableLibrary, RefusesRelocateOnlyImage) {
  GRAPHRT_REQUIRE_FIXTURES();
  graphrt::elf::LoadOptions o;
  o.execute = false;
  std::shared_ptr<graphrt::elf::ElfImage> image = graphrt::elf::ElfImage::load_file(x86_64_path(), o);
  EXPECT_THROW(IreeExecutableLibrary{image}, Error);
}
