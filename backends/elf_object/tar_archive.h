// A reader for the tar archives TVM's export_library writes (ustar and GNU
// tar; pax headers are understood for long names). Works on an untrusted
// buffer: every header is checksummed and every size bounded; errors name the
// member at fault. No external tar program is involved.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace graphrt {
namespace elf {

struct TarMember {
  std::string name;
  const uint8_t* data = nullptr;  // points into the archive buffer
  size_t size = 0;
};

// True when `data` starts with a ustar/GNU tar header.
bool is_tar(const uint8_t* data, size_t size);

// The regular-file members of the archive in order; directories are skipped,
// links, devices and other entry types are refused by member name.
std::vector<TarMember> read_tar(const uint8_t* data, size_t size, const std::string& origin);

}  // namespace elf
}  // namespace graphrt
