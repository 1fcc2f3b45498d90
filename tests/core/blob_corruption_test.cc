// Truncated and corrupted module blobs and params must end in an Error,
// never a crash or an out-of-bounds read (run this suite under ASan+UBSan).
#include <random>

#include "fixture_cases.h"
#include "graphrt/blob_reader.h"
#include "graphrt/registry.h"
#include "module/library_module.h"

using namespace graphrt;
using namespace graphrt_test;

namespace {

struct BlobFixture {
  std::shared_ptr<Library> library;
  Module lib_module;
  std::vector<uint8_t> blob;  // size prefix + payload, copied into an exactly sized buffer
};

BlobFixture extract_blob(const std::string& name) {
  BlobFixture f;
  f.library = load_library("dlopen", LibrarySource{fixture_path(name + "/deploy_factory.so"), nullptr, 0});
  f.lib_module = Module(make_ref<LibraryModuleNode>(f.library));
  auto* blob = static_cast<const uint8_t*>(f.library->symbol("__tvm_dev_mblob"));
  if (!blob) throw std::runtime_error("no blob in " + name);
  uint64_t n;
  std::memcpy(&n, blob, 8);
  f.blob.assign(blob, blob + 8 + n);
  return f;
}

// Parses a copy of `bytes` exactly sized on the heap (ASan sees over-reads).
bool parses(const BlobFixture& f, const std::vector<uint8_t>& bytes, std::string* error) {
  std::unique_ptr<uint8_t[]> copy(new uint8_t[bytes.size() ? bytes.size() : 1]);
  if (!bytes.empty()) std::memcpy(copy.get(), bytes.data(), bytes.size());
  try {
    Module ctx;
    Module root = parse_module_blob(copy.get(), bytes.size(), "test", f.lib_module, &ctx);
    return true;
  } catch (const Error& e) {
    *error = e.what();
    return false;
  }
}

std::vector<std::string> corruption_cases() {
  std::vector<std::string> cases = cpu_cases();
  if (registry_get("runtime.module.loadbinary_cuda")) cases.push_back("mlp_cuda");
  return cases;
}

}  // namespace

class BlobCorruption : public ::testing::TestWithParam<std::string> {};

TEST_P(BlobCorruption, IntactBlobParses) {
  GRAPHRT_REQUIRE_FIXTURES();
  BlobFixture f = extract_blob(GetParam());
  std::string error;
  EXPECT_TRUE(parses(f, f.blob, &error)) << error;
}

TEST_P(BlobCorruption, EveryTruncationIsAnError) {
  GRAPHRT_REQUIRE_FIXTURES();
  BlobFixture f = extract_blob(GetParam());
  size_t size = f.blob.size();
  // Every offset in the structural head, then offsets spread over the rest. Past the head a
  // large blob is mostly weight bytes, where every cut meets the same length check; each cut
  // parses (and copies) the whole prefix, so a 5 MB blob gets ~100 cuts and a smaller one
  // ~600 to keep the sanitizer run short. The fuzz targets cover the rest.
  std::vector<size_t> cuts;
  for (size_t i = 0; i < std::min<size_t>(size, 600); ++i) cuts.push_back(i);
  size_t spread = size > (size_t(1) << 20) ? 100 : 600;
  size_t step = std::max<size_t>(1, size / spread);
  for (size_t i = 600; i < size; i += step) cuts.push_back(i);
  cuts.push_back(size - 1);
  int failures = 0;
  for (size_t cut : cuts) {
    std::vector<uint8_t> truncated(f.blob.begin(), f.blob.begin() + cut);
    // Keep the size prefix consistent with the new length when it fits, so the
    // parser meets the truncation inside the records, not only at the prefix.
    if (cut >= 8 && cut % 2 == 0) {
      uint64_t n = cut - 8;
      std::memcpy(truncated.data(), &n, 8);
    }
    std::string error;
    if (parses(f, truncated, &error)) {
      ADD_FAILURE() << GetParam() << ": truncation at " << cut << " of " << size << " parsed";
      if (++failures > 5) break;
    } else if (cut == 100) {
      EXPECT_FALSE(error.empty());
    }
  }
}

TEST_P(BlobCorruption, HeaderByteFlipsAreErrorsAndRandomFlipsNeverCrash) {
  GRAPHRT_REQUIRE_FIXTURES();
  BlobFixture f = extract_blob(GetParam());
  // The size prefix, record count, first tkey length and first tkey: any change is detectable.
  size_t first_key_len = 0;
  std::memcpy(&first_key_len, f.blob.data() + 16, 8);
  size_t header_end = 24 + first_key_len;
  for (size_t pos = 0; pos < header_end; ++pos) {
    for (uint8_t mask : {0x01, 0x80, 0xFF}) {
      std::vector<uint8_t> bad = f.blob;
      bad[pos] ^= mask;
      std::string error;
      EXPECT_FALSE(parses(f, bad, &error)) << GetParam() << ": flip at " << pos;
    }
  }
  std::mt19937 rng(42);
  // Each flip parses the whole blob: fewer flips on a large one (mostly weight bytes) keep the
  // sanitizer run short.
  int flips = f.blob.size() > (size_t(1) << 20) ? 20 : 150;
  for (int i = 0; i < flips; ++i) {
    std::vector<uint8_t> bad = f.blob;
    size_t pos = rng() % bad.size();
    bad[pos] ^= static_cast<uint8_t>(1 + rng() % 255);
    std::string error;
    parses(f, bad, &error);  // an Error or a valid tree (flips inside weight data are legal bytes)
  }
}

INSTANTIATE_TEST_SUITE_P(Fixtures, BlobCorruption, ::testing::ValuesIn(corruption_cases()), [](const auto& info) {
  std::string n = info.param;
  for (char& c : n) if (!isalnum(static_cast<unsigned char>(c))) c = '_';
  return n;
});

TEST(BlobErrors, TruncationMessageNamesOffsetAndExpectation) {
  std::vector<uint8_t> bytes = {16, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 40, 0, 0, 0, 0, 0, 0, 0};
  Module lib;
  Module ctx;
  try {
    parse_module_blob(bytes.data(), bytes.size(), "blob.so", lib, &ctx);
    FAIL();
  } catch (const Error& e) {
    std::string msg = e.what();
    EXPECT_NE(msg.find("module type key"), std::string::npos) << msg;
    EXPECT_NE(msg.find("at offset 8"), std::string::npos) << msg;
  }
}

TEST(BlobErrors, UnknownTkeyIsNamed) {
  BlobWriter w;
  w.write_u64(1);
  w.write_string("mystery_module");
  w.write_u64(0);
  std::string payload = w.take();
  BlobWriter outer;
  outer.write_u64(payload.size());
  outer.write_raw(payload.data(), payload.size());
  std::string blob = outer.take();
  Module lib, ctx;
  try {
    parse_module_blob(reinterpret_cast<const uint8_t*>(blob.data()), blob.size(), "x.so", lib, &ctx);
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.context_value("tkey"), "mystery_module") << e.what();
    EXPECT_NE(std::string(e.what()).find("GraphExecutorFactory"), std::string::npos) << "lists available loaders";
  }
}

TEST(BlobErrors, ImportTreeCycleIsRefused) {
  BlobWriter w;
  w.write_u64(3);
  w.write_string("_lib");
  w.write_string("_lib");
  w.write_string("_import_tree");
  std::string payload = w.take();
  BlobWriter outer;
  outer.write_u64(payload.size());
  outer.write_raw(payload.data(), payload.size());
  std::string blob = outer.take();
  Module lib, ctx;
  EXPECT_THROW(parse_module_blob(reinterpret_cast<const uint8_t*>(blob.data()), blob.size(), "x", lib, &ctx), Error);
}

TEST(ParamsCorruption, TruncatedParamsAreErrors) {
  GRAPHRT_REQUIRE_FIXTURES();
  std::string bytes = read_text(fixture_path("mlp/deploy_params.params"));
  for (size_t cut = 0; cut < bytes.size(); cut += std::max<size_t>(1, bytes.size() / 800)) {
    EXPECT_THROW(load_param_dict(bytes.substr(0, cut)), Error) << "cut at " << cut;
  }
  std::string bad = bytes;
  bad[0] ^= 1;
  EXPECT_THROW(load_param_dict(bad), Error);
}
