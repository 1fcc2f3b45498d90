// A language model compiled by TVM on its paged KV cache, driven as MLC's
// engine drives it: one VM, one cache (the config's create function), and per
// step vm.builtin.kv_state_begin_forward / prefill or decode / end_forward
// over one sequence. Used by one thread at a time (its engine's).
#pragma once

#include <cstdint>
#include <vector>

#include "generation/generation_config.h"
#include "graphrt/module.h"
#include "graphrt/packed_func.h"

namespace graphrt_serve {

// True when the executable `root` exports the config's three VM functions.
bool exports_kv_cache_functions(const graphrt::Module& root, const GenerationConfig& config);

class KvCacheModel {
 public:
  // Makes the VM and the cache, then learns the vocabulary from one probe step.
  // Throws graphrt::Error naming the "generation" field at fault.
  KvCacheModel(const graphrt::Module& root, const GenerationConfig& config);

  void add_sequence(int64_t seq_id);
  void remove_sequence(int64_t seq_id);
  // Appends the prompt (in chunks of the cache's prefill_chunk_size); returns the greedy next token.
  int32_t prefill(int64_t seq_id, const std::vector<int32_t>& ids);
  // Appends one token; returns the greedy next token.
  int32_t decode(int64_t seq_id, int32_t token);

  int64_t vocab_size() const { return vocab_; }
  const GenerationConfig& config() const { return config_; }

 private:
  graphrt::NDArray forward(const graphrt::PackedFunc& fn, int64_t seq_id, const int32_t* ids, int64_t n);
  graphrt::RetValue shape(int64_t v) const;

  GenerationConfig config_;
  graphrt::Module vm_;
  graphrt::PackedFunc prefill_, decode_, begin_, end_, add_, remove_, shape_tuple_;
  graphrt::RetValue cache_;
  DLDataType ids_dtype_{kDLInt, 32, 1};
  int64_t vocab_ = 0;
};

}  // namespace graphrt_serve
