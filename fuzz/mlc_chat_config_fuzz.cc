// libFuzzer target: an MLC-LLM folder's two JSON readers (session/mlc_chat_config.cc):
// mlc-chat-config.json and the model library's _metadata text (the first byte chooses: even
// the config, odd the metadata). Any input either parses into values within the ranges the
// reader promises, or ends in one graphrt::Error; anything else (another exception, a crash)
// is a finding.
#include <cstddef>
#include <cstdint>
#include <string>

#include "graphrt/error.h"
#include "graphrt/mlc_chat_config.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const std::string text(reinterpret_cast<const char*>(data) + 1, size - 1);
  try {
    if (data[0] % 2 == 0) {
      const graphrt::MlcChatConfig c = graphrt::parse_mlc_chat_config(text, "fuzz/mlc-chat-config.json");
      if (c.vocab_size < 1 || c.prefill_chunk_size < 1 || c.text.size() != text.size()) __builtin_trap();
      if (c.context_window_size == 0 || c.context_window_size < -1) __builtin_trap();
    } else {
      const graphrt::MlcModelMetadata m = graphrt::parse_mlc_model_metadata(text);
      if (m.seqlen_padding_factor < 1 || m.max_batch_size < 0) __builtin_trap();
      for (const graphrt::MlcParam& p : m.params)
        if (p.name.empty() && p.shape.size() > text.size()) __builtin_trap();
    }
  } catch (const graphrt::Error&) {
  }
  return 0;
}
