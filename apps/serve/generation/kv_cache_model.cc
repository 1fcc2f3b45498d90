#include "generation/kv_cache_model.h"

#include "generation/greedy.h"
#include "graphrt/error.h"

namespace graphrt_serve {

using graphrt::Error;

namespace {

graphrt::LanguageModelOptions options_of(const GenerationConfig& c) {
  graphrt::LanguageModelOptions o;
  o.create_cache = c.create_cache;
  o.prefill = c.prefill;
  o.decode = c.decode;
  o.max_batch_size = c.max_batch_size;
  o.max_total_seq_len = c.max_total_seq_len;
  o.prefill_chunk_size = c.prefill_chunk_size;
  o.page_size = c.page_size;
  return o;
}

// The library names its option ("option: decode"); config.json's user knows the field
// ("field: generation.decode"), or the section when no one option is at fault.
Error with_field(const Error& e) {
  Error out(e.kind(), e.message());
  for (const auto& pair : e.context())
    if (pair.first != "option") out.with(pair.first, pair.second);
  const std::string option = e.context_value("option");
  return out.with("field", option.empty() ? std::string("generation") : "generation." + option);
}

// The logits on the host, where greedy decoding reads them.
graphrt::NDArray on_host(const graphrt::NDArray& logits) {
  return logits.device().device_type == kDLCPU ? logits : logits.copy_to_device(graphrt::cpu());
}

}  // namespace

bool exports_kv_cache_functions(const graphrt::Model& model, const GenerationConfig& config) {
  bool create = false, prefill = false, decode = false;
  for (const graphrt::FunctionSpec& f : model.functions()) {
    create = create || f.name == config.create_cache;
    prefill = prefill || f.name == config.prefill;
    decode = decode || f.name == config.decode;
  }
  return create && prefill && decode;
}

KvCacheModel::KvCacheModel(const graphrt::Model& model, const GenerationConfig& config) : config_(config) {
  try {
    model_ = std::make_unique<graphrt::LanguageModel>(model, options_of(config));
  } catch (const Error& e) {
    throw with_field(e);
  }
}

int32_t KvCacheModel::prefill(int64_t seq_id, const std::vector<int32_t>& ids) {
  return greedy_token(on_host(model_->prefill(seq_id, ids)));
}

int32_t KvCacheModel::decode(int64_t seq_id, int32_t token) {
  return greedy_token(on_host(model_->decode(seq_id, token)));
}

}  // namespace graphrt_serve
