// tokenizer.json's `normalizer`: rewrites each stretch of text between added tokens before it
// is split (Llama-2's Prepend("▁") + Replace(" " -> "▁"), Qwen's NFC). Unicode normalization
// and case mapping come from ICU.
#pragma once

#include <memory>
#include <string>

#include "llm/tokenizer/json_fields.h"

namespace graphrt::llm {

class Normalizer {
 public:
  virtual ~Normalizer() = default;
  virtual void normalize(std::string& text) const = 0;
};

// The normalizer `at` describes; null for JSON null. An unknown type is an unsupported error
// naming the field.
std::unique_ptr<Normalizer> read_normalizer(const JsonAt& at);

}  // namespace graphrt::llm
