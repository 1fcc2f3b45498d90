#include "llm/tokenizer/utf8.h"

namespace graphrt::llm {
namespace {

// The bounds of the second byte after a lead byte (Unicode's table 3-7 of well-formed
// sequences); the later continuation bytes are always 80..BF.
bool second_byte_fits(unsigned char lead, unsigned char second) {
  if (lead == 0xE0) return second >= 0xA0 && second <= 0xBF;
  if (lead == 0xED) return second >= 0x80 && second <= 0x9F;
  if (lead == 0xF0) return second >= 0x90 && second <= 0xBF;
  if (lead == 0xF4) return second >= 0x80 && second <= 0x8F;
  return second >= 0x80 && second <= 0xBF;
}

size_t expected_length(unsigned char lead) {
  if (lead < 0x80) return 1;
  if (lead >= 0xC2 && lead <= 0xDF) return 2;
  if (lead >= 0xE0 && lead <= 0xEF) return 3;
  if (lead >= 0xF0 && lead <= 0xF4) return 4;
  return 0;
}

// How many bytes from `pos` form the longest prefix of a well-formed sequence (at least 1):
// the maximal subpart that one U+FFFD replaces when the sequence is cut short.
size_t maximal_subpart(std::string_view text, size_t pos) {
  const auto lead = static_cast<unsigned char>(text[pos]);
  const size_t want = expected_length(lead);
  if (want <= 1) return 1;
  size_t got = 1;
  while (got < want && pos + got < text.size()) {
    const auto c = static_cast<unsigned char>(text[pos + got]);
    const bool fits = got == 1 ? second_byte_fits(lead, c) : (c >= 0x80 && c <= 0xBF);
    if (!fits) break;
    ++got;
  }
  return got;
}

}  // namespace

size_t utf8_sequence_length(std::string_view text, size_t pos) {
  const auto lead = static_cast<unsigned char>(text[pos]);
  const size_t want = expected_length(lead);
  if (want <= 1) return want;
  return maximal_subpart(text, pos) == want ? want : 0;
}

char32_t utf8_code_point(std::string_view text, size_t pos, size_t length) {
  const auto byte = [&](size_t i) { return static_cast<char32_t>(static_cast<unsigned char>(text[pos + i])); };
  switch (length) {
    case 1: return byte(0);
    case 2: return ((byte(0) & 0x1F) << 6) | (byte(1) & 0x3F);
    case 3: return ((byte(0) & 0x0F) << 12) | ((byte(1) & 0x3F) << 6) | (byte(2) & 0x3F);
    default: return ((byte(0) & 0x07) << 18) | ((byte(1) & 0x3F) << 12) | ((byte(2) & 0x3F) << 6) | (byte(3) & 0x3F);
  }
}

void append_utf8(std::string& out, char32_t c) {
  if (c < 0x80) {
    out += static_cast<char>(c);
  } else if (c < 0x800) {
    out += static_cast<char>(0xC0 | (c >> 6));
    out += static_cast<char>(0x80 | (c & 0x3F));
  } else if (c < 0x10000) {
    out += static_cast<char>(0xE0 | (c >> 12));
    out += static_cast<char>(0x80 | ((c >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (c & 0x3F));
  } else {
    out += static_cast<char>(0xF0 | (c >> 18));
    out += static_cast<char>(0x80 | ((c >> 12) & 0x3F));
    out += static_cast<char>(0x80 | ((c >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (c & 0x3F));
  }
}

std::string utf8_lossy(std::string_view bytes) {
  std::string out;
  out.reserve(bytes.size());
  size_t pos = 0;
  while (pos < bytes.size()) {
    const size_t n = utf8_sequence_length(bytes, pos);
    if (n > 0) {
      out.append(bytes.data() + pos, n);
      pos += n;
    } else {
      out += kReplacementCharacter;
      pos += maximal_subpart(bytes, pos);
    }
  }
  return out;
}

bool is_valid_utf8(std::string_view bytes) {
  for (size_t pos = 0; pos < bytes.size();) {
    const size_t n = utf8_sequence_length(bytes, pos);
    if (n == 0) return false;
    pos += n;
  }
  return true;
}

}  // namespace graphrt::llm
