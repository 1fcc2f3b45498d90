#include "llm/tokenizer/tokenizer_model.h"

#include "llm/tokenizer/byte_level_table.h"
#include "llm/tokenizer/string_pattern.h"

namespace graphrt::detail {
namespace {

// "<0xXX>" (uppercase or lowercase hex) as its byte, else -1.
int byte_piece(const std::string& token) {
  if (token.size() != 6 || token.compare(0, 3, "<0x") != 0 || token[5] != '>') return -1;
  int value = 0;
  for (int i = 3; i < 5; ++i) {
    const char c = token[i];
    const int digit = c >= '0' && c <= '9' ? c - '0' : c >= 'A' && c <= 'F' ? c - 'A' + 10 : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
    if (digit < 0) return -1;
    value = value * 16 + digit;
  }
  return value;
}

std::string postprocess(const std::string& token, TokenizerInfo::TokenPostproc method) {
  if (method == TokenizerInfo::TokenPostproc::kByteLevel) {
    std::string bytes;
    return llm::byte_level_decode(token, bytes) ? bytes : token;
  }
  const int byte = byte_piece(token);
  if (byte >= 0) return std::string(1, static_cast<char>(byte));
  return llm::StringPattern::literal("\xE2\x96\x81").replace_all(token, " ");
}

}  // namespace

void TokenizerModel::complete() {
  const size_t n = vocab_size();
  token_bytes.assign(n, std::string());
  special.assign(n, false);
  for (size_t id = 0; id < n; ++id) {
    const std::string* token = token_of(static_cast<int32_t>(id));
    if (token) token_bytes[id] = postprocess(*token, info.token_postproc_method);
    special[id] = special_piece(static_cast<int32_t>(id));
  }
  for (const AddedToken& t : added_tokens) {
    if (t.special && static_cast<size_t>(t.id) < n) special[t.id] = true;
  }
}

}  // namespace graphrt::detail
