// tokenizer.json's `decoder`: turns the tokens' strings back into text (ByteLevel's table
// inverted; Llama-2's Replace("▁" -> " "), ByteFallback, Fuse, Strip; Metaspace). Each step
// maps the list of token strings to a new list; the text is their concatenation.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "llm/tokenizer/json_fields.h"

namespace graphrt::llm {

class Decoder {
 public:
  virtual ~Decoder() = default;
  virtual void decode_chain(std::vector<std::string>& tokens) const = 0;
};

std::unique_ptr<Decoder> read_decoder(const JsonAt& at);
// GPT-2's ByteLevel decoder (vocab.json + merges.txt folders).
std::unique_ptr<Decoder> byte_level_decoder();

}  // namespace graphrt::llm
