// Bounds-checked reader for TVM's dmlc::Stream encoding (little-endian).
//
// Every read names what it expected and where, so a truncated or corrupt blob
// fails with "truncated blob: expected 8 bytes (count of names) at offset 96,
// 3 left" instead of reading past the end.
#pragma once

#include "graphrt/export.h"

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "graphrt/error.h"

#pragma GCC visibility push(default)  // exported: see graphrt/export.h
namespace graphrt {

class BlobReader {
 public:
  BlobReader(const uint8_t* data, size_t size, std::string origin = "")
      : data_(data), size_(size), origin_(std::move(origin)) {}

  size_t offset() const { return pos_; }
  size_t remaining() const { return size_ - pos_; }
  const std::string& origin() const { return origin_; }
  bool at_end() const { return pos_ == size_; }

  uint64_t read_u64(const char* what) { return read_scalar<uint64_t>(what); }
  int64_t read_i64(const char* what) { return read_scalar<int64_t>(what); }
  uint32_t read_u32(const char* what) { return read_scalar<uint32_t>(what); }
  int32_t read_i32(const char* what) { return read_scalar<int32_t>(what); }
  uint16_t read_u16(const char* what) { return read_scalar<uint16_t>(what); }
  uint8_t read_u8(const char* what) { return read_scalar<uint8_t>(what); }
  std::string read_string(const char* what);
  std::vector<std::string> read_string_vector(const char* what);
  std::vector<uint64_t> read_u64_vector(const char* what);
  // A count of elements of `element_size` bytes each that must fit in what is left.
  uint64_t read_count(const char* what, size_t element_size);
  void read_bytes(void* out, size_t n, const char* what);
  const uint8_t* take(size_t n, const char* what);  // pointer into the blob
  // For a blob in a read-only file mapping (a dlopen'ed library): lets
  // release_consumed() hand the pages already read back to the OS. They hold
  // nothing but blob bytes and read back from the file if touched again.
  void set_pages_releasable(bool releasable) { releasable_ = releasable; }
  bool pages_releasable() const { return releasable_; }
  // Drops the whole pages between the last release and the read position
  // from this process's memory (no-op unless releasable).
  void release_consumed();
  // Drops the whole pages inside [begin, end) (offsets), read before and read
  // again since (no-op unless releasable). Returns where the next range to
  // release starts: the page holding `end` goes with it, once read past.
  size_t release_range(size_t begin, size_t end);
  // The offset of a pointer into this blob (from take()).
  size_t offset_of(const uint8_t* p) const { return static_cast<size_t>(p - data_); }

  // An Error with this reader's origin and current offset as context.
  Error error(const std::string& message) const;

 private:
  // Little-endian scalar (the host is little-endian; checked in blob_reader.cc).
  template <typename T>
  T read_scalar(const char* what) {
    T v;
    read_bytes(&v, sizeof(T), what);
    return v;
  }
  void need(size_t n, const char* what) const;
  const uint8_t* data_;
  size_t size_;
  size_t pos_ = 0;
  std::string origin_;
  bool releasable_ = false;
  size_t released_ = 0;  // offset up to which pages were released
};

// Little-endian writer for the same encoding.
class BlobWriter {
 public:
  void write_u64(uint64_t v) { write_raw(&v, 8); }
  void write_u32(uint32_t v) { write_raw(&v, 4); }
  void write_u16(uint16_t v) { write_raw(&v, 2); }
  void write_u8(uint8_t v) { write_raw(&v, 1); }
  void write_string(const std::string& s) {
    write_u64(s.size());
    write_raw(s.data(), s.size());
  }
  void write_raw(const void* p, size_t n) { out_.append(static_cast<const char*>(p), n); }
  const std::string& bytes() const { return out_; }
  std::string take() { return std::move(out_); }

 private:
  std::string out_;  // host is little-endian (x86_64/aarch64); checked in blob_reader.cc
};

}  // namespace graphrt
#pragma GCC visibility pop
