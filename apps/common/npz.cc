#include "npz.h"

#include <cstdint>
#include <cstring>

#include "graphrt/error.h"
#include "graphrt/regular_file.h"
#include "output_file.h"

namespace graphrt_apps {

using graphrt::Error;

namespace {

constexpr uint32_t kLocalHeader = 0x04034b50;
constexpr uint32_t kCentralHeader = 0x02014b50;
constexpr uint32_t kEndOfCentral = 0x06054b50;

// The zip format's CRC-32 table, built at compile time: nothing to initialise, nothing shared
// that a second thread could see half-written.
struct Crc32Table {
  uint32_t entry[256];
  constexpr Crc32Table() : entry() {
    for (uint32_t i = 0; i < 256; ++i) {
      uint32_t c = i;
      for (int k = 0; k < 8; ++k) c = (c & 1) ? 0xEDB88320u ^ (c >> 1) : c >> 1;
      entry[i] = c;
    }
  }
};
constexpr Crc32Table kCrc32Table;

uint32_t crc32(const std::string& bytes) {
  uint32_t c = 0xFFFFFFFFu;
  for (unsigned char b : bytes) c = kCrc32Table.entry[(c ^ b) & 0xFF] ^ (c >> 8);
  return c ^ 0xFFFFFFFFu;
}

uint32_t le32(const std::string& s, size_t at) {
  uint32_t v = 0;
  for (int i = 3; i >= 0; --i) v = (v << 8) | static_cast<unsigned char>(s[at + i]);
  return v;
}
uint16_t le16(const std::string& s, size_t at) {
  return static_cast<uint16_t>(static_cast<unsigned char>(s[at]) | (static_cast<unsigned char>(s[at + 1]) << 8));
}
void put32(std::string& s, uint32_t v) {
  for (int i = 0; i < 4; ++i) s += static_cast<char>((v >> (8 * i)) & 0xFF);
}
void put16(std::string& s, uint16_t v) {
  s += static_cast<char>(v & 0xFF);
  s += static_cast<char>(v >> 8);
}

}  // namespace

std::vector<std::pair<std::string, NpyArray>> read_npz(const std::string& path) {
  return parse_npz(graphrt::read_regular_file(path, ".npz file"), path);
}

std::vector<std::pair<std::string, NpyArray>> parse_npz(const std::string& zip, const std::string& path) {
  auto bad = [&](const std::string& why) { return Error("not a readable .npz archive: " + why).with("file", path); };
  // The end-of-central-directory record: within the last 64 KiB + 22 bytes (its comment).
  if (zip.size() < 22) throw bad("too short for a zip archive");
  size_t eocd = std::string::npos;
  for (size_t i = zip.size() - 22 + 1; i-- > 0 && zip.size() - i <= 65535 + 22;) {
    if (le32(zip, i) == kEndOfCentral) {
      eocd = i;
      break;
    }
  }
  if (eocd == std::string::npos) throw bad("no zip end-of-central-directory record (is it an .npz written by np.savez?)");
  const size_t count = le16(zip, eocd + 10);
  size_t at = le32(zip, eocd + 16);
  std::vector<std::pair<std::string, NpyArray>> out;
  for (size_t k = 0; k < count; ++k) {
    if (at > zip.size() || zip.size() - at < 46 || le32(zip, at) != kCentralHeader) throw bad("corrupt central directory");
    const uint16_t method = le16(zip, at + 10);
    const uint32_t compressed = le32(zip, at + 20), size = le32(zip, at + 24);
    const size_t name_len = le16(zip, at + 28), extra_len = le16(zip, at + 30), comment_len = le16(zip, at + 32);
    const size_t local = le32(zip, at + 42);
    if (zip.size() - at - 46 < name_len) throw bad("corrupt central directory");
    const std::string name = zip.substr(at + 46, name_len);
    at += 46 + name_len + extra_len + comment_len;
    if (compressed == 0xFFFFFFFFu || size == 0xFFFFFFFFu || local == 0xFFFFFFFFu)
      throw Error("member '" + name + "' is over 4 GiB (zip64), which graphrt does not read").with("file", path);
    if (method != 0)
      throw Error("member '" + name + "' is compressed (np.savez_compressed); save the arrays with np.savez")
          .with("file", path);
    if (local > zip.size() || zip.size() - local < 30 || le32(zip, local) != kLocalHeader)
      throw bad("member '" + name + "' has no local header");
    const size_t data = local + 30 + le16(zip, local + 26) + le16(zip, local + 28);
    if (data > zip.size() || zip.size() - data < size) throw bad("member '" + name + "' is truncated");
    std::string array_name = name;
    if (array_name.size() > 4 && array_name.compare(array_name.size() - 4, 4, ".npy") == 0)
      array_name.resize(array_name.size() - 4);
    out.emplace_back(array_name, parse_npy(zip.data() + data, size, path + ":" + name));
  }
  if (out.empty()) throw Error("the .npz archive holds no arrays").with("file", path);
  return out;
}

void write_npz(const std::string& path, const std::vector<NpzEntry>& entries) {
  std::string zip, central;
  for (const NpzEntry& e : entries) {
    const std::string name = e.name + ".npy";
    if (e.npy.size() >= 0xFFFFFFFFu || zip.size() >= 0xFFFFFFFFu)
      throw Error("array '" + e.name + "' is too large for an .npz archive (4 GiB)").with("file", path);
    const uint32_t crc = crc32(e.npy), size = static_cast<uint32_t>(e.npy.size());
    const uint32_t offset = static_cast<uint32_t>(zip.size());
    // Local header: version 20, no flags, stored, no time, crc, sizes, name.
    put32(zip, kLocalHeader);
    put16(zip, 20), put16(zip, 0), put16(zip, 0), put16(zip, 0), put16(zip, 0x21);
    put32(zip, crc), put32(zip, size), put32(zip, size);
    put16(zip, static_cast<uint16_t>(name.size())), put16(zip, 0);
    zip += name;
    zip += e.npy;
    put32(central, kCentralHeader);
    put16(central, 20), put16(central, 20), put16(central, 0), put16(central, 0), put16(central, 0),
        put16(central, 0x21);
    put32(central, crc), put32(central, size), put32(central, size);
    put16(central, static_cast<uint16_t>(name.size())), put16(central, 0), put16(central, 0);
    put16(central, 0), put16(central, 0), put32(central, 0), put32(central, offset);
    central += name;
  }
  const uint32_t central_offset = static_cast<uint32_t>(zip.size());
  zip += central;
  put32(zip, kEndOfCentral);
  put16(zip, 0), put16(zip, 0);
  put16(zip, static_cast<uint16_t>(entries.size())), put16(zip, static_cast<uint16_t>(entries.size()));
  put32(zip, static_cast<uint32_t>(central.size())), put32(zip, central_offset), put16(zip, 0);
  write_output_file(path, zip, ".npz file");
}

}  // namespace graphrt_apps
