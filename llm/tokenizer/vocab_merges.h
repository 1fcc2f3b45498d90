// GPT-2's vocab.json + merges.txt (+ added_tokens.json, tokenizer_config.json) read into a
// byte-level BPE tokenizer.
#pragma once

#include <memory>
#include <string>

#include "llm/tokenizer/tokenizer_model.h"

namespace graphrt::llm {

struct VocabMergesTexts {
  std::string vocab_json, vocab_origin;
  std::string merges_txt, merges_origin;
  std::string added_tokens_json, added_tokens_origin;          // "" when absent
  std::string tokenizer_config_json, tokenizer_config_origin;  // "" when absent
};

std::shared_ptr<detail::TokenizerModel> read_vocab_merges(const VocabMergesTexts& texts);

}  // namespace graphrt::llm
