// libFuzzer target: the .npy reader of the command-line apps.
#include <cstddef>
#include <cstdint>
#include <vector>

#include "common/npy.h"
#include "graphrt/error.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  try {
    graphrt_apps::NpyArray a = graphrt_apps::parse_npy(std::vector<char>(data, data + size), "fuzz");
    if (a.data.size() > size) __builtin_trap();
  } catch (const graphrt::Error&) {
  }
  return 0;
}
