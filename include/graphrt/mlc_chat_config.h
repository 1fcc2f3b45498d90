// What an MLC-LLM model folder says of its model: mlc-chat-config.json (MLC's
// python/mlc_llm/protocol/mlc_chat_config.py) and the model library's `_metadata` JSON
// (MLC's compile step attaches it). Only what an engine needs is typed here; the whole
// text is kept for what other parts read from it (conv_template, tokenizer_info, the
// sampling defaults' extras).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#pragma GCC visibility push(default)  // exported: see graphrt/export.h

namespace graphrt {

constexpr const char* kMlcChatConfigName = "mlc-chat-config.json";

// mlc-chat-config.json. Required (as MLC's engine requires them): model_type, vocab_size,
// prefill_chunk_size. The rest default as MLC's schema does; unknown keys are ignored.
struct MlcChatConfig {
  std::string model_type;
  int64_t vocab_size = 0;
  int64_t prefill_chunk_size = 0;
  int64_t context_window_size = -1;  // -1: none
  int64_t sliding_window_size = -1;  // -1: off
  int64_t attention_sink_size = -1;
  int64_t tensor_parallel_shards = 1;
  int64_t pipeline_parallel_stages = 1;
  // Request defaults.
  double temperature = 1.0;
  double top_p = 1.0;
  double presence_penalty = 0.0;
  double frequency_penalty = 0.0;
  double repetition_penalty = 1.0;
  std::string text;  // the file as read (JSON)
};

// Parses the text of mlc-chat-config.json; `file` names it in errors. A text that is not a
// JSON object, a required key absent, a key of the wrong type or out of range: an Error
// naming the file and the field ("file", "field").
MlcChatConfig parse_mlc_chat_config(const std::string& text, const std::string& file);
// `folder`/mlc-chat-config.json; a missing file is an Error naming it.
MlcChatConfig read_mlc_chat_config(const std::string& folder);

// One weight of the packed argument, in `_metadata`'s order.
struct MlcParam {
  std::string name;
  std::vector<int64_t> shape;  // -1 where symbolic
  std::string dtype;           // TVM's string: float32, float16, uint32, ...
};

// The library's `_metadata()`: the model as compiled.
struct MlcModelMetadata {
  std::string model_type;
  std::string kv_state_kind = "kv_cache";  // or rnn_state, hybrid, none
  int64_t context_window_size = -1;
  int64_t sliding_window_size = -1;
  int64_t prefill_chunk_size = 0;
  int64_t max_batch_size = 0;
  int64_t tensor_parallel_shards = 1;
  int64_t pipeline_parallel_stages = 1;
  int64_t seqlen_padding_factor = 1;
  // kv_cache: the cache's shape (0 where absent).
  int64_t num_hidden_layers = 0;
  int64_t num_attention_heads = 0;
  int64_t num_key_value_heads = 0;
  int64_t head_dim = 0;
  std::vector<MlcParam> params;
  std::string text;  // as the library returned it (JSON)
};

// Parses `_metadata`'s JSON; errors name the function ("function": _metadata) and the field.
MlcModelMetadata parse_mlc_model_metadata(const std::string& text);

}  // namespace graphrt

#pragma GCC visibility pop
