// A language model compiled by TVM on its paged KV cache (a tvm.relax.frontend.nn model, as
// MLC-LLM builds them), driven as MLC's engine drives it: the session layer's typed face of it.
//
// Two kinds of model, one class:
// - an MLC-LLM model folder (mlc-chat-config.json, tensor-cache.json + params_shard_*.bin, the
//   model library): `embed` turns token ids into embeddings, the forward functions take them
//   and the weights as a packed last argument (in `_metadata`'s order), and several sequences
//   go through one `batch_prefill` / `batch_decode` call when the library has them;
//
//     graphrt::Session session(graphrt::runtime(), graphrt::cpu());
//     graphrt::LanguageModel lm(session, "dist/tiny_gpt2_chat");   // tiny_gpt2_chat-cpu.so beside
//     lm.add_sequence(0);
//     lm.add_sequence(1);
//     graphrt::StepLogits l = lm.step({{0, {464, 3139, 286}}, {1, {7454, 2402}}});  // one batch_prefill
//     const float* row0 = l.row(0);                                               // vocab floats, host
//     l = lm.step({{0, {next0}}, {1, {next1}}});                                  // one batch_decode
//
// - a library whose forward functions take token ids themselves and hold their weights (the
//   relax_tiny_llm_* fixtures): made from a loaded Model and LanguageModelOptions, stepped one
//   sequence per call.
//
//     graphrt::LanguageModel lm(*session.load(source), options);
//     lm.add_sequence(0);
//     graphrt::NDArray logits = lm.prefill(0, {24, 3, 56, 72, 0});  // [1, 1, vocab], on the device
//     logits = lm.decode(0, next_token);
//
// One Relax VM on the model's device and one cache made by the model's own create function;
// every forward pass is the KV cache's begin_forward (all the pass's sequences and their new
// lengths), the model's function, end_forward. The builtins and VM functions it calls by name
// stay behind this class. Used by one thread at a time; make one per thread.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "graphrt/error.h"
#include "graphrt/export.h"
#include "graphrt/mlc_chat_config.h"
#include "graphrt/ndarray.h"
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

// How an MLC folder is opened. The KV cache's sizes are create_tir_paged_kv_cache's
// arguments; 0 takes the value below.
struct MlcFolderOptions {
  // The model library (MLC's --model-lib). "": <folder>/<name>-<device>.so for the session's
  // device (cpu, cuda, opencl, vulkan, metal, rocm), <name> the folder's own name, else the one
  // library in the folder ending in -<device>.so.
  std::string model_lib;
  int64_t max_num_sequence = 0;    // 0: the library's max_batch_size (1 if it has none)
  int64_t max_total_seq_len = 0;   // 0: the context window (the config's, capped by the library's), 8192 if none
  int64_t prefill_chunk_size = 0;  // 0: the config's, capped by the library's
  int64_t page_size = 16;
  // false: one sequence per forward pass even where the library has batch functions (the
  // logits of each sequence then do not depend on what else is in the step); a library with
  // only batch functions (no prefill/decode) uses them anyway.
  bool use_batch_functions = true;
};

// New tokens of one sequence in a step: one token is a decode, several a prefill.
struct SequenceStep {
  int64_t id = 0;
  std::vector<int32_t> tokens;
};

// The logits of a step: one row of vocab_size() float32 values per sequence of the step, in
// the step's order, the logits of each sequence's last new token, on the host (what a CPU
// sampler reads). On the CPU the rows are the model's own output (no copy, no view: its array
// may be [rows, 1, vocab] or [1, rows, vocab], every dimension but the last counting rows).
class StepLogits {
 public:
  StepLogits() = default;
  // `rows`: float32 [..., vocab] on the host, row-major.
  GRAPHRT_HEADER_ONLY explicit StepLogits(NDArray rows) : array_(std::move(rows)) {
    if (!array_.defined() || array_.shape().size() < 2 || array_.dtype() != DLDataType{kDLFloat, 32, 1} ||
        array_.device().device_type != kDLCPU)
      throw Error(ErrorKind::kInvalidArgument, "StepLogits holds float32 [rows, vocab] on the host");
    vocab_ = array_.shape().back();
    rows_ = 1;
    for (size_t d = 0; d + 1 < array_.shape().size(); ++d) rows_ *= static_cast<size_t>(array_.shape()[d]);
  }
  size_t rows() const { return rows_; }
  int64_t vocab_size() const { return vocab_; }
  // Row i's vocab_size() floats; an index past rows() is an Error.
  GRAPHRT_HEADER_ONLY const float* row(size_t i) const {
    if (i >= rows())
      throw Error(ErrorKind::kOutOfRange, "row " + std::to_string(i) + " of logits with " + std::to_string(rows()) +
                                              " rows");
    return reinterpret_cast<const float*>(static_cast<const char*>(array_->data) + array_->byte_offset) +
           i * static_cast<size_t>(vocab_size());
  }
  // The rows as the model gave them (see above for the shape).
  const NDArray& array() const { return array_; }

 private:
  NDArray array_;
  size_t rows_ = 0;
  int64_t vocab_ = 0;
};

class LanguageModel {
 public:
  // Opens an MLC-LLM model folder on the session's device (the session's runtime and device):
  // reads mlc-chat-config.json, the library's _metadata, the weights of the tensor cache
  // (raw and f32-to-bf16, widened to float32) in _metadata's params order, makes the cache
  // with the library's create_tir_paged_kv_cache. Refused, naming what is at fault ("file",
  // "field", "function", "tensor"): a missing file, field or weight, a library without embed
  // or prefill/decode (or batch_prefill/batch_decode), create_tir_paged_kv_cache or _metadata,
  // shards that disagree with the manifest, config and library that disagree on the vocabulary
  // or the parallelism.
  LanguageModel(const Session& session, const std::string& folder, MlcFolderOptions options = {});
  // The library an MLC folder opens for `device` when no model_lib is given (as above); an
  // Error naming the file looked for when there is none.
  static std::string find_model_library(const std::string& folder, DLDevice device);

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
  // A new sequence `child` sharing the first `fork_pos` tokens of `parent` (-1: all of them),
  // as the KV cache's fork_sequence does (whole pages shared, not copied).
  void fork_sequence(int64_t parent, int64_t child, int64_t fork_pos = -1);
  // Drops the last `n` tokens of the sequence (0 <= n <= its length), as the KV cache's popn
  // does (MLC's prefix cache trimming a reused sequence): the next step continues after what
  // is left, pages shared with a fork copied where they are cut.
  void popn(int64_t id, int64_t n);
  bool has_sequence(int64_t id) const;
  int64_t sequence_length(int64_t id) const;  // the tokens it holds; an Error if absent

  // Appends each sequence's tokens (at least one each; a sequence at most once per step) and
  // returns the logits of each one's last token. MLC folders with batch functions: the step's
  // sequences go through one batch_decode when each has one token, else one batch_prefill,
  // split into several passes where the tokens pass prefill_chunk_size or the sequences
  // max_num_sequence (a sequence's tokens then continue in the next pass); a step of one
  // sequence uses prefill/decode, as MLC's engine does. Without batch functions (and for
  // token-id libraries) each sequence is its own forward pass(es). Refused before any pass
  // runs: an empty step or token list, a sequence twice or not in the cache, a token outside
  // the vocabulary, a sequence that would pass its limit (max_sequence_length()).
  StepLogits step(const std::vector<SequenceStep>& steps);
  // The same over `count` steps at `steps` (a caller's buffer, reused from step to step). A
  // steady decode (one token per sequence, the same number of sequences as the step before)
  // allocates nothing on the CPU: its buffers, shape tuples and views are kept and refilled.
  StepLogits step(const SequenceStep* steps, size_t count);
  // Appends the tokens to the sequence, in forward passes of at most prefill_chunk_size
  // tokens; returns the last pass's logits (the prefill function's, [1, 1, vocab] for MLC's
  // models), on the model's device. Refused before any pass runs: no token, a token outside
  // the vocabulary, a sequence that would pass max_total_seq_len.
  NDArray prefill(int64_t id, const std::vector<int32_t>& tokens);
  // Appends one token with the decode function; its logits, as for prefill.
  NDArray decode(int64_t id, int32_t token);
  // The tokens all sequences hold in the cache (the cache's own count).
  int64_t total_sequence_length() const;

  // The library's softmax_with_temperature (MLC's two-stage kernel; temperature 0 gives each
  // maximal logit 1/k): one temperature per row, probabilities [rows, vocab] on the host. An
  // Error naming the function when the library has none.
  StepLogits softmax_with_temperature(const StepLogits& logits, const std::vector<float>& temperatures);

  int64_t vocab_size() const { return vocab_; }
  // The tokens one sequence may hold: max_total_seq_len, and the context window for a folder.
  int64_t max_sequence_length() const;
  // The functions and sizes in use (for a folder: those it resolved from MlcFolderOptions).
  const LanguageModelOptions& options() const { return options_; }
  // An MLC folder's: its path, its config and the library's _metadata (empty otherwise).
  bool is_mlc_folder() const { return !folder_.empty(); }
  const std::string& folder() const { return folder_; }
  const std::string& model_library() const { return library_; }
  const MlcChatConfig& chat_config() const { return config_; }
  const MlcModelMetadata& metadata() const { return metadata_; }
  // True when steps of several sequences run as one forward pass (batch_prefill and batch_decode).
  bool batches_sequences() const;

 private:
  struct __attribute__((visibility("hidden"))) Impl;  // internal, unlike the class around it
  LanguageModelOptions options_;
  int64_t vocab_ = 0;
  std::string folder_, library_;
  MlcChatConfig config_;
  MlcModelMetadata metadata_;
  std::unique_ptr<Impl> impl_;
};

}  // namespace graphrt

#pragma GCC visibility pop
