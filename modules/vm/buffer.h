// graphrt::vm::Buffer — a byte buffer ref (rodata strings, scratch memory).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "modules/vm/ref.h"

namespace graphrt {
namespace vm {

class Buffer : public VmObject {
 public:
  static constexpr ObjectKind kKind = ObjectKind::kBuffer;
  explicit Buffer(std::vector<uint8_t> bytes, bool read_only = false)
      : bytes_(std::move(bytes)), read_only_(read_only) {}
  ObjectKind kind() const override { return kKind; }

  std::vector<uint8_t>& bytes() { return bytes_; }
  const std::vector<uint8_t>& bytes() const { return bytes_; }
  std::string as_string() const { return std::string(bytes_.begin(), bytes_.end()); }

  // Pointer to [offset, offset+length) or throws "buffer access out of range";
  // the check is overflow-safe because offsets come from untrusted programs.
  uint8_t* range(int64_t offset, int64_t length);
  // As range(), but traps on read-only buffers (rodata is shared by every
  // const.ref.rodata of a module, so writes would leak between calls).
  uint8_t* writable_range(int64_t offset, int64_t length);
  bool read_only() const { return read_only_; }

 private:
  std::vector<uint8_t> bytes_;
  bool read_only_ = false;
};

}  // namespace vm
}  // namespace graphrt
