// A SentencePiece tokenizer.model read into a tokenizer (through Debian's libsentencepiece).
#pragma once

#include <memory>
#include <string>

#include "llm/tokenizer/tokenizer_model.h"

namespace graphrt::llm {

std::shared_ptr<detail::TokenizerModel> read_sentencepiece_model(const std::string& model_bytes,
                                                                 const std::string& origin);

}  // namespace graphrt::llm
