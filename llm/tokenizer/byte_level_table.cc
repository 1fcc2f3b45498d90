#include "llm/tokenizer/byte_level_table.h"

#include "llm/tokenizer/utf8.h"

namespace graphrt::llm {
namespace {

bool keeps_own_code_point(int byte) {
  return (byte >= 33 && byte <= 126) || (byte >= 161 && byte <= 172) || (byte >= 174 && byte <= 255);
}

struct ByteLevelTable {
  std::array<std::string, 256> char_of_byte;
  std::array<int, 324> byte_of_code_point;  // code points 0..323 cover the table; -1 elsewhere

  ByteLevelTable() {
    byte_of_code_point.fill(-1);
    char32_t next_shifted = 256;
    for (int byte = 0; byte < 256; ++byte) {
      const char32_t c = keeps_own_code_point(byte) ? static_cast<char32_t>(byte) : next_shifted++;
      append_utf8(char_of_byte[byte], c);
      byte_of_code_point[c] = byte;
    }
  }
};

const ByteLevelTable& table() {
  static const ByteLevelTable instance;
  return instance;
}

}  // namespace

const std::string& byte_level_char(unsigned char byte) { return table().char_of_byte[byte]; }

std::string byte_level_encode(std::string_view bytes) {
  std::string out;
  out.reserve(bytes.size() * 2);
  for (char b : bytes) out += table().char_of_byte[static_cast<unsigned char>(b)];
  return out;
}

bool byte_level_decode(std::string_view text, std::string& bytes) {
  bool all_mapped = true;
  size_t pos = 0;
  while (pos < text.size()) {
    const size_t n = utf8_sequence_length(text, pos);
    if (n == 0) {
      bytes += text[pos++];
      all_mapped = false;
      continue;
    }
    const char32_t c = utf8_code_point(text, pos, n);
    const int byte = c < table().byte_of_code_point.size() ? table().byte_of_code_point[c] : -1;
    if (byte >= 0) {
      bytes += static_cast<char>(byte);
    } else {
      bytes.append(text.data() + pos, n);
      all_mapped = false;
    }
    pos += n;
  }
  return all_mapped;
}

}  // namespace graphrt::llm
