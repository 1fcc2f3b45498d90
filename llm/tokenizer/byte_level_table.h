// GPT-2's byte<->character table (byte-level BPE): every byte is one visible character, so a
// vocabulary of strings covers all bytes. Bytes 33-126, 161-172 and 174-255 stand for their
// own code point; the other 68, in increasing order, for U+0100, U+0101, ... (space is "Ġ"
// U+0120, newline "Ċ" U+010A).
#pragma once

#include <array>
#include <string>
#include <string_view>

namespace graphrt::llm {

// The UTF-8 text of the character that stands for `byte`.
const std::string& byte_level_char(unsigned char byte);
// `bytes` written as byte-level characters.
std::string byte_level_encode(std::string_view bytes);
// The bytes byte-level `text` stands for; a character outside the table is kept as its own
// UTF-8 bytes. Returns false (and still decodes) when such a character was met.
bool byte_level_decode(std::string_view text, std::string& bytes);

}  // namespace graphrt::llm
