// libFuzzer target: the tokenizer.json reader (llm/tokenizer/tokenizer_json.cc and the
// normalizers, pre-tokenizers and decoders it builds). Any input either makes a tokenizer
// that encodes a fixed text and decodes the ids to valid UTF-8, or ends in one
// graphrt::Error; anything else (another exception, a crash, a hang) is a finding.
#include <cstddef>
#include <cstdint>
#include <string>

#include "graphrt/error.h"
#include "graphrt/tokenizer.h"
#include "llm/tokenizer/utf8.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  try {
    const graphrt::Tokenizer tok = graphrt::Tokenizer::from_tokenizer_json_text(
        std::string(reinterpret_cast<const char*>(data), size), "fuzz/tokenizer.json");
    const std::vector<int32_t> ids = tok.encode("Hello, world! \xC3\xA9\xF0\x9F\x98\x80  <s>x</s>\n\t12345");
    for (int32_t id : ids) {
      if (id < 0 || static_cast<size_t>(id) >= tok.vocab_size()) __builtin_trap();
    }
    if (!graphrt::llm::is_valid_utf8(tok.decode(ids))) __builtin_trap();
    graphrt::StreamDecoder stream(tok);
    for (int32_t id : ids) stream.push(id);
    stream.finish();
  } catch (const graphrt::Error&) {
  }
  return 0;
}
