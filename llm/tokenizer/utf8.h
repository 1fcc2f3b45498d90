// UTF-8 as the tokenizers need it: walking code points, writing them, and making text valid
// the way Hugging Face's decoders do (Rust's from_utf8_lossy: one U+FFFD per maximal invalid
// subpart).
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace graphrt::llm {

constexpr std::string_view kReplacementCharacter = "\xEF\xBF\xBD";  // U+FFFD

// The length of the well-formed UTF-8 sequence starting at text[pos], or 0 when the bytes there
// do not start one (a stray continuation byte, an overlong form, a surrogate, a truncated tail).
size_t utf8_sequence_length(std::string_view text, size_t pos);
// The code point of the well-formed sequence of `length` bytes at text[pos].
char32_t utf8_code_point(std::string_view text, size_t pos, size_t length);
void append_utf8(std::string& out, char32_t code_point);
// `bytes` with each maximal invalid subpart replaced by U+FFFD.
std::string utf8_lossy(std::string_view bytes);
bool is_valid_utf8(std::string_view bytes);

}  // namespace graphrt::llm
