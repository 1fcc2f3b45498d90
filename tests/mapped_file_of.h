#pragma once
// Which file backs a piece of this process's memory: the params-cache tests check that arrays
// lie in the cache file's mapping.
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <string>

namespace graphrt_test {

// The file whose mapping holds `address` (/proc/self/maps), or "".
inline std::string mapped_file_of(const void* address) {
  std::ifstream maps("/proc/self/maps");
  const auto at = reinterpret_cast<uintptr_t>(address);
  std::string line;
  while (std::getline(maps, line)) {
    unsigned long begin = 0, end = 0;
    if (std::sscanf(line.c_str(), "%lx-%lx", &begin, &end) != 2 || at < begin || at >= end) continue;
    const size_t slash = line.find('/');
    return slash == std::string::npos ? "" : line.substr(slash);
  }
  return "";
}

}  // namespace graphrt_test
