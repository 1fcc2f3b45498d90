// A language model compiled by TVM on its paged KV cache (a tvm.relax.frontend.nn model, as
// MLC-LLM builds them), driven as MLC's engine drives it: the session layer's typed face of it.
//
//   graphrt::ModelSource source;
//   source.path = "deploy_relax.so";
//   graphrt::LanguageModel lm(*graphrt::Session(graphrt::runtime(), graphrt::cpu()).load(source));
//   lm.add_sequence(0);
//   graphrt::NDArray logits = lm.prefill(0, {24, 3, 56, 72, 0});  // [1, 1, vocab]
//   logits = lm.decode(0, next_token);
//
// One Relax VM on the model's device and one cache made by the model's own create function;
// every step is one forward pass of one sequence (the KV cache's begin_forward, the model's
// prefill or decode function, end_forward). The builtins and VM functions it calls by name
// stay behind this class. Used by one thread at a time; make one per thread.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "graphrt/session.h"

#pragma GCC visibility push(default)  // exported: see graphrt/export.h

namespace graphrt {

struct LanguageModelOptions {
  // The model's Relax functions (MLC's names): the cache's create function, and the two
  // forward functions (token ids [1, n], the cache) -> (logits, the cache).
  std::string create_cache = "create_tir_paged_kv_cache";
  std::string prefill = "prefill";
  std::string decode = "decode";
  // The create function's arguments. max_total_seq_len bounds each sequence; the cache's pages
  // (max_total_seq_len / page_size, rounded up, plus one) are shared by all its sequences.
  int64_t max_batch_size = 1;
  int64_t max_total_seq_len = 64;
  int64_t prefill_chunk_size = 16;
  int64_t page_size = 16;
};

class LanguageModel {
 public:
  // Makes the VM and the cache, then learns the vocabulary from one probe step (one token of
  // a sequence added and removed again). Errors name the function ("function") and the
  // option ("option": prefill, decode, create_cache, a size) at fault.
  explicit LanguageModel(const Model& model, LanguageModelOptions options = {});
  ~LanguageModel();
  LanguageModel(const LanguageModel&) = delete;
  LanguageModel& operator=(const LanguageModel&) = delete;

  // Sequence ids are the caller's (not negative); an id already in the cache, or not in it,
  // is an error naming it ("sequence").
  void add_sequence(int64_t id);
  void remove_sequence(int64_t id);
  // Appends the tokens to the sequence, in forward passes of at most prefill_chunk_size
  // tokens; returns the last pass's logits (the prefill function's, [1, 1, vocab] for MLC's
  // models), on the model's device. Refused before any pass runs: no token, a token outside
  // the vocabulary, a sequence that would pass max_total_seq_len.
  NDArray prefill(int64_t id, const std::vector<int32_t>& tokens);
  // Appends one token with the decode function; its logits, as for prefill.
  NDArray decode(int64_t id, int32_t token);
  // The tokens all sequences hold in the cache (the cache's own count).
  int64_t total_sequence_length() const;

  int64_t vocab_size() const { return vocab_; }
  const LanguageModelOptions& options() const { return options_; }

 private:
  struct __attribute__((visibility("hidden"))) Impl;  // internal, unlike the class around it
  LanguageModelOptions options_;
  int64_t vocab_ = 0;
  std::unique_ptr<Impl> impl_;
};

}  // namespace graphrt

#pragma GCC visibility pop
