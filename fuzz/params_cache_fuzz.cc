// libFuzzer target: a params cache file (src/params_cache.cc) through its
// reader, with no key to match (every check after the key's is reached). What
// was read writes back to bytes that read back to the same params.
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>

#include "graphrt/error.h"
#include "src/layer_api/params_cache.h"

namespace {
std::string cache_bytes(const graphrt::ParamList& params) {
  std::string bytes;
  graphrt::write_params_cache(graphrt::ParamsCacheKey{}, params,
                              [&](const void* p, size_t n) { bytes.append(static_cast<const char*>(p), n); });
  return bytes;
}

graphrt::ParamList read(const std::string& bytes, const char* origin) {
  return graphrt::read_params_cache(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size(), nullptr, origin,
                                    nullptr);
}
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  // Byte 0 on: the cache as it is. The hash rarely matches bytes the fuzzer
  // made, so the input is read a second time with its trailer made to match.
  std::string bytes(reinterpret_cast<const char*>(data), size);
  for (int pass = 0; pass < 2; ++pass) {
    if (pass == 1) {
      if (bytes.size() < 8) break;
      const uint64_t h = graphrt::params_cache_hash(bytes.data(), bytes.size() - 8);
      std::memcpy(&bytes[bytes.size() - 8], &h, 8);
    }
    try {
      graphrt::ParamList params = read(bytes, "fuzz");
      std::string saved = cache_bytes(params);
      if (cache_bytes(read(saved, "fuzz-resaved")) != saved) __builtin_trap();
    } catch (const graphrt::Error&) {
    }
  }
  return 0;
}
