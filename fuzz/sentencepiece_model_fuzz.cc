// libFuzzer target: a tokenizer.model's bytes through graphrt's SentencePiece reader
// (llm/tokenizer/sentencepiece_model.cc over Debian's libsentencepiece). Any input either
// makes a tokenizer that encodes a fixed text and decodes it to valid UTF-8, or ends in one
// graphrt::Error.
#include <cstddef>
#include <cstdint>
#include <string>

#include "graphrt/error.h"
#include "graphrt/tokenizer.h"
#include "llm/tokenizer/sentencepiece_model.h"
#include "llm/tokenizer/tokenizer_model.h"
#include "llm/tokenizer/utf8.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  try {
    std::shared_ptr<graphrt::detail::TokenizerModel> model = graphrt::llm::read_sentencepiece_model(
        std::string(reinterpret_cast<const char*>(data), size), "fuzz/tokenizer.model");
    model->complete();
    const graphrt::Tokenizer tok(model);
    const std::vector<int32_t> ids = tok.encode("Hello, world! \xC3\xA9\xF0\x9F\x98\x80 end");
    for (int32_t id : ids) {
      if (id < 0 || static_cast<size_t>(id) >= tok.vocab_size()) __builtin_trap();
    }
    if (!graphrt::llm::is_valid_utf8(tok.decode(ids))) __builtin_trap();
  } catch (const graphrt::Error&) {
  }
  return 0;
}
