// TVM's params format: byte-identical round trip of every fixture's params,
// where decoded params lie in memory, and a blob's pages handed back once its
// params are decoded.
#include <dlfcn.h>
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <fstream>

#include "fixture_cases.h"

using namespace graphrt;
using namespace graphrt_test;

TEST(Params, RoundTripIsByteIdentical) {
  GRAPHRT_REQUIRE_FIXTURES();
  for (const std::string& name : all_tvm_cases()) {
    std::string bytes = read_text(fixture_path(name + "/deploy_params.params"));
    ParamList params = load_param_dict(bytes, name);
    EXPECT_EQ(save_param_dict(params), bytes) << name;
  }
}

TEST(Params, ScalarsAndEmptyArraysRoundTrip) {
  ParamList params;
  NDArray scalar = NDArray::empty({}, DLDataType{kDLInt, 64, 1}, cpu());
  *static_cast<int64_t*>(scalar->data) = -5;
  params.emplace_back("s", scalar);
  params.emplace_back("empty", NDArray::empty({0, 3}, DLDataType{kDLFloat, 16, 1}, cpu()));
  std::string bytes = save_param_dict(params);
  ParamList back = load_param_dict(bytes);
  ASSERT_EQ(back.size(), 2u);
  EXPECT_EQ(back[0].first, "s");
  EXPECT_EQ(*static_cast<int64_t*>(back[0].second->data), -5);
  EXPECT_EQ(back[1].second.shape(), (std::vector<int64_t>{0, 3}));
  EXPECT_EQ(save_param_dict(back), bytes);
}

namespace {
// The /proc/self/smaps flags ("VmFlags:" line) of the mapping holding `address`.
std::string mapping_flags(const void* address) {
  std::ifstream smaps("/proc/self/smaps");
  auto at = reinterpret_cast<uintptr_t>(address);
  std::string line;
  bool inside = false;
  while (std::getline(smaps, line)) {
    unsigned long begin = 0, end = 0;
    if (std::sscanf(line.c_str(), "%lx-%lx ", &begin, &end) == 2 && line.find(':') > line.find(' ')) {
      inside = at >= begin && at < end;
    } else if (inside && line.rfind("VmFlags:", 0) == 0) {
      return line;
    }
  }
  return "";
}
}  // namespace

TEST(Params, DecodedArraysAreAlignedAndDisjointAndTheLargeOnesAdvisedForHugePages) {
  GRAPHRT_REQUIRE_FIXTURES();
  std::string bytes = read_text(fixture_path("squeezenet1.1/deploy_params.params"));
  ParamList params = load_param_dict(bytes, "squeezenet1.1");
  ASSERT_GT(params.size(), 2u);
  std::vector<std::pair<uintptr_t, uintptr_t>> ranges;
  for (const auto& p : params) {
    auto begin = reinterpret_cast<uintptr_t>(p.second->data);
    EXPECT_EQ(begin % 64, 0u) << p.first;
    ranges.emplace_back(begin, begin + p.second.nbytes());
  }
  std::sort(ranges.begin(), ranges.end());
  for (size_t i = 1; i < ranges.size(); ++i) EXPECT_LE(ranges[i - 1].second, ranges[i].first);
  // Over 4 MB of params of 128 KiB and more: the whole 2 MiB blocks of the
  // mapping they share are advised for huge pages. The largest is 2 MB.
  const NDArray* largest = &params[0].second;
  for (const auto& p : params) {
    if (p.second.nbytes() > largest->nbytes()) largest = &p.second;
  }
  if (std::ifstream("/sys/kernel/mm/transparent_hugepage/enabled").good()) {
    std::string flags = mapping_flags((*largest)->data);
    EXPECT_NE(flags.find(" hg"), std::string::npos) << flags;
  }
}

TEST(Params, AnArrayOutlivesItsListAndItsSiblings) {
  GRAPHRT_REQUIRE_FIXTURES();
  std::string bytes = read_text(fixture_path("squeezenet1.1/deploy_params.params"));
  NDArray last;
  std::vector<uint8_t> expected;
  {
    ParamList params = load_param_dict(bytes, "squeezenet1.1");
    last = params.back().second;
    expected.assign(static_cast<uint8_t*>(last->data), static_cast<uint8_t*>(last->data) + last.nbytes());
  }
  ASSERT_EQ(std::memcmp(last->data, expected.data(), expected.size()), 0);
  // Its bytes are the file's: the record's data is the tail of the file.
  ASSERT_GE(bytes.size(), expected.size());
  EXPECT_EQ(std::memcmp(bytes.data() + bytes.size() - expected.size(), expected.data(), expected.size()), 0);
}

TEST(Params, ABadRecordNamesItsParamAndNoArrayIsReturned) {
  ParamList params;
  for (const char* name : {"first", "second"}) {
    NDArray a = NDArray::empty({4}, DLDataType{kDLFloat, 32, 1}, cpu());
    std::memset(a->data, 0, a.nbytes());
    params.emplace_back(name, a);
  }
  std::string bytes = save_param_dict(params);
  // The second record's magic: 8 (magic) + 8 (reserved) + 8 (count) + names + 8 (count) + first record.
  size_t second = bytes.rfind(std::string("\x3f\xa1\xb4\x96\xf0\x40\x5e\xdd", 8));
  ASSERT_NE(second, std::string::npos);
  bytes[second] ^= 0xff;
  try {
    load_param_dict(bytes, "crafted.params");
    FAIL() << "a bad magic was accepted";
  } catch (const Error& e) {
    std::string what = e.what();
    EXPECT_NE(what.find("bad NDArray magic"), std::string::npos) << what;
    EXPECT_NE(what.find("second"), std::string::npos) << what;
    EXPECT_NE(what.find("crafted.params"), std::string::npos) << what;
  }
}

namespace {
// Pages of [begin, end) mapped in this process now (bit 63 of /proc/self/pagemap).
int present_pages(const uint8_t* begin, const uint8_t* end) {
  const uintptr_t page = static_cast<uintptr_t>(sysconf(_SC_PAGESIZE));
  int fd = open("/proc/self/pagemap", O_RDONLY);
  if (fd < 0) return -1;
  int present = 0;
  for (uintptr_t p = reinterpret_cast<uintptr_t>(begin) / page; p < reinterpret_cast<uintptr_t>(end) / page; ++p) {
    uint64_t entry = 0;
    if (pread(fd, &entry, sizeof(entry), static_cast<off_t>(p * sizeof(entry))) != sizeof(entry)) {
      present = -1;
      break;
    }
    present += (entry >> 63) & 1;
  }
  close(fd);
  return present;
}
}  // namespace

// Once a one-file model is loaded, its blob's pages are back with the OS: the
// params were copied out record by record and nothing keeps a page mapped,
// not even one shared by two records.
TEST(Params, BlobPagesAreHandedBackOnceDecoded) {
  GRAPHRT_REQUIRE_FIXTURES();
  // A copy of its own: a library already loaded elsewhere in this process would share its tree.
  std::string copy = ::testing::TempDir() + "params_pages_squeezenet.so";
  {
    std::vector<uint8_t> bytes = read_file(fixture_path("squeezenet1.1/deploy_factory.so"));
    std::ofstream(copy, std::ios::binary).write(reinterpret_cast<const char*>(bytes.data()), bytes.size());
  }
  Module root = load_module(copy);
  void* handle = dlopen(copy.c_str(), RTLD_NOW | RTLD_NOLOAD);
  ASSERT_NE(handle, nullptr);
  auto* blob = static_cast<const uint8_t*>(dlsym(handle, "__tvm_dev_mblob"));
  ASSERT_NE(blob, nullptr);
  const uintptr_t page = static_cast<uintptr_t>(sysconf(_SC_PAGESIZE));
  // The size prefix's page is read now; look from the next page on.
  uint64_t nbytes = 0;
  std::memcpy(&nbytes, blob, sizeof(nbytes));
  const uint8_t* from = blob + page;
  const uint8_t* to = blob + 8 + nbytes;
  int present = present_pages(from, to);
  dlclose(handle);
  std::remove(copy.c_str());
  if (present < 0) GTEST_SKIP() << "/proc/self/pagemap is not readable here";
  // 4.9 MB of params in about 1200 pages. The kernel maps up to 16 pages
  // around a faulting one (fault-around), pages already handed back among
  // them: the last such window may stay mapped, nothing else.
  EXPECT_LE(present, 16) << present << " of " << (to - from) / page << " blob pages still mapped";
}
