// libFuzzer target: GPT-2's vocab.json + merges.txt reader (llm/tokenizer/vocab_merges.cc).
// The input is the vocab.json text, a NUL byte, then the merges.txt text (no NUL: the input
// is both files' text, the merges empty). Any input either makes a tokenizer that encodes a
// fixed text and decodes it to valid UTF-8, or ends in one graphrt::Error.
#include <cstddef>
#include <cstdint>
#include <string>

#include "graphrt/error.h"
#include "graphrt/tokenizer.h"
#include "llm/tokenizer/tokenizer_model.h"
#include "llm/tokenizer/utf8.h"
#include "llm/tokenizer/vocab_merges.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string input(reinterpret_cast<const char*>(data), size);
  const size_t nul = input.find('\0');
  graphrt::llm::VocabMergesTexts texts;
  texts.vocab_json = input.substr(0, nul);
  texts.vocab_origin = "fuzz/vocab.json";
  texts.merges_txt = nul == std::string::npos ? "" : input.substr(nul + 1);
  texts.merges_origin = "fuzz/merges.txt";
  try {
    std::shared_ptr<graphrt::detail::TokenizerModel> model = graphrt::llm::read_vocab_merges(texts);
    model->complete();
    const graphrt::Tokenizer tok(model);
    const std::vector<int32_t> ids = tok.encode("Hello, world! \xC3\xA9 it's 2024\n");
    for (int32_t id : ids) {
      if (id < 0 || static_cast<size_t>(id) >= tok.vocab_size()) __builtin_trap();
    }
    if (!graphrt::llm::is_valid_utf8(tok.decode(ids))) __builtin_trap();
  } catch (const graphrt::Error&) {
  }
  return 0;
}
