// graphrt::vm::Buffer — a byte buffer ref (rodata strings, scratch memory).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "backends/vm/host/memory_charge.h"
#include "backends/vm/host/ref.h"

namespace graphrt {
namespace vm {

class Buffer : public VmObject {
 public:
  static constexpr ObjectKind kKind = ObjectKind::kBuffer;
  explicit Buffer(std::vector<uint8_t> bytes, bool read_only = false)
      : charge_(static_cast<int64_t>(bytes.size()), "buffer"), bytes_(std::move(bytes)), read_only_(read_only) {}
  // `length` zero bytes, charged before they are allocated.
  explicit Buffer(size_t length) : charge_(static_cast<int64_t>(length), "buffer"), bytes_(length) {}
  // A writable copy of `other`, charged before it is allocated.
  static std::shared_ptr<Buffer> clone_of(const Buffer& other);
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
  MemoryCharge charge_;  // first: charged before bytes_ allocates
  std::vector<uint8_t> bytes_;
  bool read_only_ = false;
};

}  // namespace vm
}  // namespace graphrt
