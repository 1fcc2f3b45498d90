// tokenizer.json's `pre_tokenizer`: cuts each normalized stretch of text into the words the
// model encodes one by one (GPT-2's regex, Llama-3's Split, Metaspace's "▁" words).
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "llm/tokenizer/json_fields.h"

namespace graphrt::llm {

struct Piece {
  std::string text;
  // The piece starts the input text (Metaspace's prepend_scheme "first" looks at this).
  bool at_text_start = false;
};

class PreTokenizer {
 public:
  virtual ~PreTokenizer() = default;
  virtual void pre_tokenize(std::vector<Piece>& pieces) const = 0;
  // The words are raw bytes to be read as GPT-2 byte-level characters (a ByteLevel step).
  virtual bool byte_level() const { return false; }
};

std::unique_ptr<PreTokenizer> read_pre_tokenizer(const JsonAt& at);
// GPT-2's: ByteLevel with its regex (vocab.json + merges.txt folders).
std::unique_ptr<PreTokenizer> gpt2_byte_level_pre_tokenizer(bool add_prefix_space);

}  // namespace graphrt::llm
