#include "backends/vm/host/buffer.h"

#include <cstring>

#include "graphrt/error.h"

namespace graphrt {
namespace vm {

std::shared_ptr<Buffer> Buffer::clone_of(const Buffer& other) {
  auto copy = std::make_shared<Buffer>(other.bytes_.size());
  if (!other.bytes_.empty()) std::memcpy(copy->bytes_.data(), other.bytes_.data(), other.bytes_.size());
  return copy;
}

uint8_t* Buffer::range(int64_t offset, int64_t length) {
  const int64_t size = static_cast<int64_t>(bytes_.size());
  if (offset < 0 || length < 0 || offset > size || length > size - offset) {
    throw Error(ErrorKind::kOutOfRange, "buffer access out of range: offset " + std::to_string(offset) + " length " +
                std::to_string(length) + " in a buffer of " + std::to_string(size) + " bytes");
  }
  return bytes_.data() + offset;
}

uint8_t* Buffer::writable_range(int64_t offset, int64_t length) {
  GRAPHRT_CHECK_KIND(!read_only_, ErrorKind::kFailedPrecondition, "write to a read-only (rodata) buffer");
  return range(offset, length);
}

}  // namespace vm
}  // namespace graphrt
