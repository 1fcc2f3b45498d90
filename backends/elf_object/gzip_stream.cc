#include "gzip_stream.h"

#include <zlib.h>

#include <algorithm>
#include <limits>

#include "graphrt/error.h"

namespace graphrt {
namespace elf {

bool is_gzip(const uint8_t* data, size_t size) { return size >= 2 && data[0] == 0x1f && data[1] == 0x8b; }

namespace {

// One z_stream with inflateEnd on every exit path.
class Inflater {
 public:
  Inflater() {
    // 16 + MAX_WBITS: gzip framing only (no raw or zlib streams).
    if (inflateInit2(&stream_, 16 + MAX_WBITS) != Z_OK) throw Error("cannot initialise gzip decompression");
  }
  ~Inflater() { inflateEnd(&stream_); }
  Inflater(const Inflater&) = delete;
  Inflater& operator=(const Inflater&) = delete;
  z_stream& stream() { return stream_; }
  void reset() {
    if (inflateReset(&stream_) != Z_OK) throw Error("cannot restart gzip decompression");
  }

 private:
  z_stream stream_{};
};

Error gzip_error(const std::string& what, const std::string& origin) {
  return Error("invalid gzip stream: " + what).with("file", origin);
}

}  // namespace

std::vector<uint8_t> gunzip(const uint8_t* data, size_t size, size_t max_output, const std::string& origin) {
  if (!is_gzip(data, size)) throw gzip_error("bad magic", origin);
  // A member's trailer declares its size (mod 2^32): the last member alone
  // declaring more than the bound is refused before anything is inflated.
  // (A zero there may be padding, not a size: only the bound applies then.)
  const uint32_t declared = size >= 18 ? static_cast<uint32_t>(data[size - 4]) | static_cast<uint32_t>(data[size - 3]) << 8 |
                                             static_cast<uint32_t>(data[size - 2]) << 16 |
                                             static_cast<uint32_t>(data[size - 1]) << 24
                                       : 0;
  if (declared > max_output)
    throw gzip_error("declares " + std::to_string(declared) + " bytes uncompressed, more than the " +
                         std::to_string(max_output) + " graphrt inflates",
                     origin);
  Inflater inflater;
  z_stream& zs = inflater.stream();
  std::vector<uint8_t> out;
  size_t in_pos = 0;
  const size_t chunk = size_t(1) << 20;
  while (in_pos < size) {
    zs.next_in = const_cast<Bytef*>(data + in_pos);  // zlib's API is not const-correct
    zs.avail_in = static_cast<uInt>(std::min<size_t>(size - in_pos, std::numeric_limits<uInt>::max()));
    const size_t offered = zs.avail_in;
    int rc = Z_OK;
    while (rc != Z_STREAM_END) {
      if (out.size() >= max_output) throw gzip_error("expands beyond " + std::to_string(max_output) + " bytes", origin).with_kind(ErrorKind::kResourceExhausted);
      const size_t before = out.size();
      out.resize(std::min(max_output, before + chunk));
      zs.next_out = out.data() + before;
      zs.avail_out = static_cast<uInt>(out.size() - before);
      rc = inflate(&zs, Z_NO_FLUSH);
      out.resize(out.size() - zs.avail_out);
      if (rc == Z_BUF_ERROR && zs.avail_in == 0) throw gzip_error("truncated", origin);
      if (rc != Z_OK && rc != Z_STREAM_END && rc != Z_BUF_ERROR)
        throw gzip_error(zs.msg ? zs.msg : "corrupt data", origin);
    }
    in_pos += offered - zs.avail_in;
    // Trailing zero padding after the last member is what some writers add.
    if (std::all_of(data + in_pos, data + size, [](uint8_t b) { return b == 0; })) break;
    if (!is_gzip(data + in_pos, size - in_pos)) throw gzip_error("garbage after the compressed data", origin);
    inflater.reset();
  }
  return out;
}

}  // namespace elf
}  // namespace graphrt
