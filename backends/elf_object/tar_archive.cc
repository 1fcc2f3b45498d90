#include "tar_archive.h"

#include <algorithm>
#include <cstring>

#include "graphrt/error.h"

namespace graphrt {
namespace elf {

namespace {

constexpr size_t kBlock = 512;
constexpr size_t kMaxMembers = 4096;
constexpr size_t kMaxPaxHeader = 64 * 1024;

// Field offsets and widths of the ustar header (POSIX.1-1988).
struct Field {
  size_t offset, width;
};
constexpr Field kName{0, 100}, kSize{124, 12}, kChecksum{148, 8}, kType{156, 1}, kMagic{257, 6}, kPrefix{345, 155};

std::string field_string(const uint8_t* header, Field f) {
  const char* p = reinterpret_cast<const char*>(header + f.offset);
  return std::string(p, strnlen(p, f.width));
}

Error tar_error(const std::string& what, const std::string& member, size_t offset) {
  Error e("invalid tar archive: " + what);
  if (!member.empty()) e.with("member", member);
  return e.with("offset", std::to_string(offset));
}

// Octal number, space/NUL padded. Base-256 (GNU, for sizes >= 8 GiB) is refused.
bool parse_octal(const uint8_t* header, Field f, uint64_t* out) {
  const uint8_t* p = header + f.offset;
  const uint8_t* end = p + f.width;
  while (p < end && *p == ' ') ++p;
  if (p == end || *p < '0' || *p > '7') return false;
  uint64_t value = 0;
  for (; p < end && *p >= '0' && *p <= '7'; ++p) {
    if (value >> 60) return false;
    value = value * 8 + (*p - '0');
  }
  for (; p < end; ++p) {
    if (*p != ' ' && *p != 0) return false;
  }
  *out = value;
  return true;
}

bool checksum_ok(const uint8_t* header) {
  uint64_t stored = 0;
  if (!parse_octal(header, kChecksum, &stored)) return false;
  uint64_t sum = 0;
  for (size_t i = 0; i < kBlock; ++i) {
    const bool in_field = i >= kChecksum.offset && i < kChecksum.offset + kChecksum.width;
    sum += in_field ? ' ' : header[i];
  }
  return sum == stored;
}

bool all_zero(const uint8_t* p, size_t n) {
  return std::all_of(p, p + n, [](uint8_t b) { return b == 0; });
}

// "path=..." from a pax extended header ("LEN key=value\n" records).
std::string pax_path(const uint8_t* data, size_t size, size_t offset) {
  std::string path;
  size_t pos = 0;
  while (pos < size) {
    size_t len = 0, i = pos;
    while (i < size && data[i] >= '0' && data[i] <= '9') {
      len = len * 10 + (data[i++] - '0');
      if (len > size) throw tar_error("malformed pax extended header", "", offset);
    }
    if (i >= size || data[i] != ' ' || len > size - pos || i + 1 - pos >= len)
      throw tar_error("malformed pax extended header", "", offset);
    const std::string record(reinterpret_cast<const char*>(data + i + 1), len - (i + 1 - pos));
    if (record.empty() || record.back() != '\n') throw tar_error("malformed pax record", "", offset);
    if (record.compare(0, 5, "path=") == 0) path = record.substr(5, record.size() - 6);
    pos += len;
  }
  return path;
}

}  // namespace

bool is_tar(const uint8_t* data, size_t size) {
  return size >= kBlock && std::memcmp(data + kMagic.offset, "ustar", 5) == 0;
}

std::vector<TarMember> read_tar(const uint8_t* data, size_t size, const std::string& origin) {
  std::vector<TarMember> members;
  std::string long_name;  // from a GNU 'L' entry or a pax 'x' entry, for the next member
  size_t pos = 0;
  try {
    while (true) {
      if (size - pos < kBlock) throw tar_error("truncated (no end-of-archive marker)", "", pos);
      const uint8_t* header = data + pos;
      if (all_zero(header, kBlock)) break;  // end of archive (the second zero block is optional in practice)
      std::string name = field_string(header, kName);
      const std::string prefix = field_string(header, kPrefix);
      if (std::memcmp(header + kMagic.offset, "ustar\0", 6) == 0 && !prefix.empty()) name = prefix + "/" + name;
      if (!long_name.empty()) name = long_name;
      if (std::memcmp(header + kMagic.offset, "ustar", 5) != 0) throw tar_error("bad header magic", name, pos);
      if (!checksum_ok(header)) throw tar_error("header checksum mismatch", name, pos);
      uint64_t member_size = 0;
      if (!parse_octal(header, kSize, &member_size)) throw tar_error("bad size field", name, pos);
      const size_t body = pos + kBlock;
      if (member_size > size - body) throw tar_error("member runs past the end of the archive", name, pos);
      const uint64_t padded = (member_size + kBlock - 1) / kBlock * kBlock;
      const char type = static_cast<char>(header[kType.offset]);
      long_name.clear();
      if (type == 'L') {  // GNU long name for the next entry
        long_name.assign(reinterpret_cast<const char*>(data + body), strnlen(reinterpret_cast<const char*>(data + body), member_size));
        if (long_name.empty()) throw tar_error("empty GNU long name", name, pos);
      } else if (type == 'x') {
        if (member_size > kMaxPaxHeader) throw tar_error("pax header too large", name, pos);
        long_name = pax_path(data + body, member_size, pos);
      } else if (type == 'g' || type == '5') {
        // global pax header, directory: nothing to load
      } else if (type == '0' || type == '\0' || type == '7') {
        if (members.size() >= kMaxMembers) throw tar_error("more than " + std::to_string(kMaxMembers) + " members", name, pos).with_kind(ErrorKind::kResourceExhausted);
        if (name.empty()) throw tar_error("member without a name", name, pos);
        members.push_back(TarMember{name, data + body, static_cast<size_t>(member_size)});
      } else {
        throw tar_error(std::string("unsupported entry type '") + (type >= 32 && type < 127 ? std::string(1, type) : std::to_string(int(type))) +
                            "' (only regular files and directories)",
                        name, pos).with_kind(ErrorKind::kUnsupported);
      }
      if (padded > size - body) throw tar_error("member padding runs past the end of the archive", name, pos);
      pos = body + padded;
    }
  } catch (Error& e) {
    throw e.with("file", origin);
  }
  return members;
}

}  // namespace elf
}  // namespace graphrt
