#include "graphrt/blob_reader.h"

#include <sys/mman.h>

#include "host_pages.h"

static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__, "graphrt reads TVM's little-endian formats with memcpy");

namespace graphrt {

Error BlobReader::error(const std::string& message) const {
  Error e(message);
  if (!origin_.empty()) e.with("file", origin_);
  e.with("offset", std::to_string(pos_));
  return e;
}

void BlobReader::need(size_t n, const char* what) const {
  if (n > remaining())
    throw error("truncated data: expected " + std::to_string(n) + " bytes (" + what + ") at offset " +
                std::to_string(pos_) + ", only " + std::to_string(remaining()) + " left");
}

void BlobReader::read_bytes(void* out, size_t n, const char* what) {
  need(n, what);
  std::memcpy(out, data_ + pos_, n);
  pos_ += n;
}

const uint8_t* BlobReader::take(size_t n, const char* what) {
  need(n, what);
  const uint8_t* p = data_ + pos_;
  pos_ += n;
  return p;
}

void BlobReader::release_consumed() {
  if (!releasable_ || pos_ <= released_) return;
  released_ = release_range(released_, pos_);
}

size_t BlobReader::release_range(size_t begin, size_t end) {
  if (!releasable_ || end <= begin) return begin;
  // Only pages entirely inside [begin, end): partial pages may hold bytes of
  // something else.
  const uintptr_t page = host_page_size();
  uintptr_t first = (reinterpret_cast<uintptr_t>(data_ + begin) + page - 1) / page * page;
  uintptr_t last = reinterpret_cast<uintptr_t>(data_ + end) / page * page;
  if (last <= first) return begin;
  madvise(reinterpret_cast<void*>(first), last - first, MADV_DONTNEED);
  return static_cast<size_t>(last - reinterpret_cast<uintptr_t>(data_));
}

uint64_t BlobReader::read_count(const char* what, size_t element_size) {
  size_t at = pos_;
  uint64_t n = read_u64(what);
  size_t min_size = element_size == 0 ? 1 : element_size;
  if (n > remaining() / min_size) {
    pos_ = at;
    throw error(std::string("bad length for ") + what + ": " + std::to_string(n) + " elements of at least " +
                std::to_string(min_size) + " bytes at offset " + std::to_string(at) + ", only " +
                std::to_string(remaining() - 8) + " bytes left");
  }
  return n;
}

std::string BlobReader::read_string(const char* what) {
  uint64_t n = read_count(what, 1);
  const uint8_t* p = take(n, what);
  return std::string(reinterpret_cast<const char*>(p), n);
}

std::vector<std::string> BlobReader::read_string_vector(const char* what) {
  uint64_t n = read_count(what, 8);  // each string has at least its 8-byte length
  std::vector<std::string> out;
  out.reserve(n);
  for (uint64_t i = 0; i < n; ++i) out.push_back(read_string(what));
  return out;
}

std::vector<uint64_t> BlobReader::read_u64_vector(const char* what) {
  uint64_t n = read_count(what, 8);
  std::vector<uint64_t> out(n);
  if (n) read_bytes(out.data(), n * 8, what);
  return out;
}

}  // namespace graphrt
