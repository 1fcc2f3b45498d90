// .npy (format v1.0/v2.0/v3.0 read, v1.0 write) for the command-line apps.
#pragma once

#include <dlpack/dlpack.h>

#include <cstdint>
#include <string>
#include <vector>

namespace graphrt_apps {

struct NpyArray {
  DLDataType dtype{};
  std::vector<int64_t> shape;
  std::vector<char> data;  // C-order, little-endian
  int64_t numel() const;
};

// Throws graphrt::Error naming the file and what is wrong with it.
NpyArray read_npy(const std::string& path);
// The same from the file's bytes; `path` only names the source in errors.
NpyArray parse_npy(const std::vector<char>& bytes, const std::string& path);
NpyArray parse_npy(const char* data, size_t size, const std::string& path);
// The bytes of a v1.0 file holding `data` (what write_npy writes, and an .npz member).
std::string encode_npy(DLDataType dtype, const std::vector<int64_t>& shape, const void* data, size_t nbytes);
// Writes a v1.0 file; `data` holds numel elements of `dtype` in C order.
void write_npy(const std::string& path, DLDataType dtype, const std::vector<int64_t>& shape, const void* data,
               size_t nbytes);
// numpy descr ("<f4") <-> DLDataType; throws on types .npy cannot hold.
// bfloat16 is stored as its uint16 bit patterns (TVM's numpy convention).
std::string npy_descr(DLDataType dtype);
DLDataType dtype_from_npy_descr(const std::string& descr, const std::string& file);
// Whether an .npy array of dtype `npy` holds a tensor of dtype `want` as its
// bytes are (the same dtype; bfloat16 as uint16 bits; int4/uint4/int1 as
// one-byte ints of the same signedness).
bool npy_dtype_fits(DLDataType npy, DLDataType want);

}  // namespace graphrt_apps
