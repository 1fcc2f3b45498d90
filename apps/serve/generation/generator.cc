#include "generation/generator.h"

#include "graphrt/error.h"

namespace graphrt_serve {

using graphrt::Error;
using graphrt::ErrorKind;

namespace {

void check_ids(const std::vector<int32_t>& ids, int64_t vocab, const char* field) {
  for (size_t i = 0; i < ids.size(); ++i)
    if (ids[i] >= vocab)
      throw Error(ErrorKind::kOutOfRange, std::string(field) + " element " + std::to_string(i) + " is " + std::to_string(ids[i]) +
                                              ", outside the model's vocabulary [0, " + std::to_string(vocab) + ")")
          .with("field", field);
}

}  // namespace

Generator::Generator(const graphrt::Model& language_model, const GenerationConfig& config, int instances,
                     int64_t max_queue_size, std::shared_ptr<ModelMetrics> metrics)
    : config_(config), metrics_(metrics) {
  metrics->language_model.store(true, std::memory_order_relaxed);
  for (int i = 0; i < instances; ++i) {
    auto model = std::make_unique<KvCacheModel>(language_model, config);
    vocab_ = model->vocab_size();
    engines_.push_back(std::make_unique<GenerationEngine>(std::move(model), max_queue_size, metrics));
  }
}

Generator::~Generator() = default;

void Generator::check(GenerateRequest& r) const {
  check_ids(r.input_ids, vocab_, "input_ids");
  check_ids(r.stop_token_ids, vocab_, "stop_token_ids");
  if (r.max_tokens == 0) r.max_tokens = config_.default_max_tokens;
  const int64_t prompt = static_cast<int64_t>(r.input_ids.size());
  const int64_t capacity = config_.model.max_total_seq_len;
  if (prompt >= capacity)
    throw Error(ErrorKind::kOutOfRange, "input_ids has " + std::to_string(prompt) + " tokens; the model's KV cache holds " +
                                            std::to_string(capacity) + " per sequence, generated tokens included (config.json's "
                                            "generation.max_total_seq_len raises it)")
        .with("field", "input_ids")
        .with("setting", "generation.max_total_seq_len");
  if (prompt + r.max_tokens > capacity)
    throw Error(ErrorKind::kOutOfRange, "max_tokens is " + std::to_string(r.max_tokens) + "; with the prompt's " +
                                            std::to_string(prompt) + " tokens it passes the KV cache's " +
                                            std::to_string(capacity) + " per sequence (at most " +
                                            std::to_string(capacity - prompt) + "; config.json's generation.max_total_seq_len raises the "
                                            "limit)")
        .with("field", "max_tokens")
        .with("setting", "generation.max_total_seq_len");
}

std::shared_ptr<TokenStream> Generator::submit(GenerateRequest request) {
  try {
    check(request);
  } catch (const Error&) {
    metrics_->generate_failure.fetch_add(1, std::memory_order_relaxed);
    throw;
  }
  GenerationEngine* best = engines_.front().get();
  for (const auto& e : engines_)
    if (e->load() < best->load()) best = e.get();
  return best->submit(std::move(request));
}

}  // namespace graphrt_serve
