// gzip decompression for TVM's .tar exports (TVM writes them with `tar -czf`).
// Bounded: the output may not exceed `max_output` bytes, so a small
// compressed file cannot expand into an unbounded allocation.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace graphrt {
namespace elf {

bool is_gzip(const uint8_t* data, size_t size);

// Decompresses every gzip member of `data` (concatenated members are one
// stream, as gunzip treats them). Throws graphrt::Error naming `origin`.
std::vector<uint8_t> gunzip(const uint8_t* data, size_t size, size_t max_output, const std::string& origin);

}  // namespace elf
}  // namespace graphrt
