// libFuzzer target: GPT-2's vocab.json + merges.txt reader (llm/tokenizer/vocab_merges.cc).
// The input is the vocab.json text, a NUL byte, then the merges.txt text (no NUL: the input
// is both files' text, the merges empty); a second and a third NUL begin added_tokens.json's
// and tokenizer_config.json's text (the files are absent without them). Any input either
// makes a tokenizer that encodes a fixed text and decodes it to valid UTF-8, or ends in one
// graphrt::Error.
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "graphrt/error.h"
#include "graphrt/tokenizer.h"
#include "llm/tokenizer/tokenizer_model.h"
#include "llm/tokenizer/utf8.h"
#include "llm/tokenizer/vocab_merges.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string input(reinterpret_cast<const char*>(data), size);
  // The parts between NUL bytes: vocab.json, merges.txt, added_tokens.json, tokenizer_config.json.
  std::vector<std::string> parts;
  for (size_t begin = 0;;) {
    const size_t nul = input.find('\0', begin);
    parts.push_back(input.substr(begin, nul == std::string::npos ? std::string::npos : nul - begin));
    if (nul == std::string::npos || parts.size() == 4) break;
    begin = nul + 1;
  }
  parts.resize(4);
  graphrt::llm::VocabMergesTexts texts;
  texts.vocab_json = parts[0];
  texts.vocab_origin = "fuzz/vocab.json";
  texts.merges_txt = parts[1];
  texts.merges_origin = "fuzz/merges.txt";
  texts.added_tokens_json = parts[2];
  texts.added_tokens_origin = "fuzz/added_tokens.json";
  texts.tokenizer_config_json = parts[3];
  texts.tokenizer_config_origin = "fuzz/tokenizer_config.json";
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
