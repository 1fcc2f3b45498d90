// A language model compiled by TVM on its paged KV cache, as the generate
// endpoint drives it: graphrt::LanguageModel (graphrt/language_model.h, the
// session layer's typed face: one VM, one cache, a forward pass per step) with
// the config.json "generation" section's names and sizes, and greedy decoding
// on top. Used by one thread at a time (its engine's).
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "generation/generation_config.h"
#include "graphrt/language_model.h"
#include "graphrt/module.h"
#include "graphrt/session.h"

namespace graphrt_serve {

// True when the Relax model exports the config's three VM functions.
bool exports_kv_cache_functions(const graphrt::Model& model, const GenerationConfig& config);

class KvCacheModel {
 public:
  // Makes the VM and the cache, then learns the vocabulary from one probe step.
  // Throws graphrt::Error naming the "generation" field at fault.
  KvCacheModel(const graphrt::Model& model, const GenerationConfig& config);

  void add_sequence(int64_t seq_id) { model_->add_sequence(seq_id); }
  void remove_sequence(int64_t seq_id) { model_->remove_sequence(seq_id); }
  // Appends the prompt (in chunks of the cache's prefill_chunk_size); returns the greedy next token.
  int32_t prefill(int64_t seq_id, const std::vector<int32_t>& ids);
  // Appends one token; returns the greedy next token.
  int32_t decode(int64_t seq_id, int32_t token);

  int64_t vocab_size() const { return model_->vocab_size(); }
  const GenerationConfig& config() const { return config_; }

 private:
  GenerationConfig config_;
  std::unique_ptr<graphrt::LanguageModel> model_;
};

}  // namespace graphrt_serve
