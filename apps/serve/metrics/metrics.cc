#include "metrics/metrics.h"

#include <cstdio>
#include <string>

namespace graphrt_serve {

void record_request(ModelMetrics& m, bool ok, const InferTimings& timings, int64_t request_ns) {
  const auto relaxed = std::memory_order_relaxed;
  (ok ? m.request_success : m.request_failure).fetch_add(1, relaxed);
  m.request_ns.fetch_add(static_cast<uint64_t>(request_ns), relaxed);
  if (!ok) return;
  m.inference_count.fetch_add(static_cast<uint64_t>(timings.inferences), relaxed);
  m.exec_count.fetch_add(static_cast<uint64_t>(timings.executions), relaxed);
  m.queue_ns.fetch_add(static_cast<uint64_t>(timings.queue_ns), relaxed);
  m.compute_input_ns.fetch_add(static_cast<uint64_t>(timings.input_ns), relaxed);
  m.compute_infer_ns.fetch_add(static_cast<uint64_t>(timings.infer_ns), relaxed);
  m.compute_output_ns.fetch_add(static_cast<uint64_t>(timings.output_ns), relaxed);
}

std::shared_ptr<ModelMetrics> Metrics::for_model(const std::string& model, const std::string& version) {
  std::lock_guard<std::mutex> lock(mutex_);
  auto& slot = models_[{model, version}];
  if (!slot) slot = std::make_shared<ModelMetrics>();
  return slot;
}

namespace {

// Label values are model names and versions: escape what the text format requires.
std::string escape_label(const std::string& v) {
  std::string out;
  for (char c : v) {
    if (c == '\\' || c == '"') out += '\\';
    if (c == '\n') {
      out += "\\n";
      continue;
    }
    out += c;
  }
  return out;
}

struct Family {
  const char* name;
  const char* type;
  const char* help;
  bool seconds;  // the value is a nanosecond counter shown in seconds
  double (*value)(const ModelMetrics&);
};

// graphrt_generate_* series are a language model's only.
bool generates(const char* family) { return std::string(family).rfind("graphrt_generate_", 0) == 0; }

template <typename T>
double load(const std::atomic<T>& a) {
  return static_cast<double>(a.load(std::memory_order_relaxed));
}

const Family kFamilies[] = {
    {"graphrt_inference_request_success_total", "counter",
     "Successful inference requests (a request counts once, whatever its batch size)", false,
     [](const ModelMetrics& m) { return load(m.request_success); }},
    {"graphrt_inference_request_failure_total", "counter",
     "Failed inference requests (a request counts once, whatever its batch size)", false,
     [](const ModelMetrics& m) { return load(m.request_failure); }},
    {"graphrt_inference_count_total", "counter", "Inferences performed (a batch of n counts n)", false,
     [](const ModelMetrics& m) { return load(m.inference_count); }},
    {"graphrt_inference_exec_count_total", "counter", "Model executions (batches run)", false,
     [](const ModelMetrics& m) { return load(m.exec_count); }},
    {"graphrt_inference_request_duration_seconds_total", "counter",
     "Cumulative end-to-end inference request handling time", true,
     [](const ModelMetrics& m) { return load(m.request_ns); }},
    {"graphrt_inference_queue_duration_seconds_total", "counter",
     "Cumulative time requests waited for a model instance", true,
     [](const ModelMetrics& m) { return load(m.queue_ns); }},
    {"graphrt_inference_compute_input_duration_seconds_total", "counter",
     "Cumulative time spent copying inputs into the model", true,
     [](const ModelMetrics& m) { return load(m.compute_input_ns); }},
    {"graphrt_inference_compute_infer_duration_seconds_total", "counter",
     "Cumulative time spent executing the model", true,
     [](const ModelMetrics& m) { return load(m.compute_infer_ns); }},
    {"graphrt_inference_compute_output_duration_seconds_total", "counter",
     "Cumulative time spent copying outputs out of the model", true,
     [](const ModelMetrics& m) { return load(m.compute_output_ns); }},
    {"graphrt_inference_pending_requests", "gauge", "Requests waiting for a model instance now", false,
     [](const ModelMetrics& m) { return load(m.pending); }},
    {"graphrt_generate_request_success_total", "counter", "Generate requests that finished (stop token or max_tokens)",
     false, [](const ModelMetrics& m) { return load(m.generate_success); }},
    {"graphrt_generate_request_failure_total", "counter", "Generate requests that failed", false,
     [](const ModelMetrics& m) { return load(m.generate_failure); }},
    {"graphrt_generate_request_cancelled_total", "counter",
     "Generate requests cancelled because their client went away (their sequence removed)", false,
     [](const ModelMetrics& m) { return load(m.generate_cancelled); }},
    {"graphrt_generate_tokens_total", "counter", "Tokens generated", false,
     [](const ModelMetrics& m) { return load(m.generated_tokens); }},
    {"graphrt_generate_running_sequences", "gauge", "Sequences in the KV cache now (continuous batching)", false,
     [](const ModelMetrics& m) { return load(m.running_sequences); }},
    {"graphrt_generate_waiting_sequences", "gauge", "Requests waiting for room in the KV cache now", false,
     [](const ModelMetrics& m) { return load(m.waiting_sequences); }},
    {"graphrt_generate_kv_cache_pages_in_use", "gauge", "KV cache pages the running sequences' tokens fill", false,
     [](const ModelMetrics& m) { return load(m.kv_pages_in_use); }},
    {"graphrt_generate_kv_cache_pages", "gauge", "KV cache pages in all (max_total_seq_len / page size)", false,
     [](const ModelMetrics& m) { return load(m.kv_pages_capacity); }},
    {"graphrt_generate_kv_cache_tokens_in_use", "gauge", "Tokens the running sequences hold in the KV cache", false,
     [](const ModelMetrics& m) { return load(m.kv_tokens_in_use); }},
    {"graphrt_generate_decode_passes_total", "counter", "Decode forward passes (one per engine step)", false,
     [](const ModelMetrics& m) { return load(m.decode_passes); }},
    {"graphrt_generate_decode_pass_sequences_total", "counter",
     "Sequences decoded in those passes (divided by the passes: the mean decode batch)", false,
     [](const ModelMetrics& m) { return load(m.decode_pass_rows); }},
    {"graphrt_generate_decode_pass_duration_seconds_total", "counter",
     "Cumulative time of the model's decode passes (batch_decode), sampling excluded", true,
     [](const ModelMetrics& m) { return load(m.decode_pass_ns); }},
    {"graphrt_generate_prefill_tokens_total", "counter", "Prompt tokens prefilled", false,
     [](const ModelMetrics& m) { return load(m.prefill_tokens); }},
    {"graphrt_generate_prefill_duration_seconds_total", "counter",
     "Cumulative time of the model's prefill passes (batch_prefill)", true,
     [](const ModelMetrics& m) { return load(m.prefill_pass_ns); }},
};

struct HistogramFamily {
  const char* name;
  const char* help;
  const LatencyHistogram& (*histogram)(const ModelMetrics&);
};

const HistogramFamily kHistograms[] = {
    {"graphrt_generate_time_to_first_token_seconds",
     "Time from a generate request's arrival to its first token (queue wait and prefill included)",
     [](const ModelMetrics& m) -> const LatencyHistogram& { return m.first_token_latency; }},
    {"graphrt_generate_token_latency_seconds",
     "Time between consecutive tokens of a sequence (per-token latency, other sequences' steps included)",
     [](const ModelMetrics& m) -> const LatencyHistogram& { return m.token_latency; }},
};

}  // namespace

std::string Metrics::render() const {
  std::lock_guard<std::mutex> lock(mutex_);
  std::string out;
  char number[64];
  bool any_language_model = false;
  for (const auto& kv : models_) any_language_model = any_language_model || kv.second->language_model.load();
  for (const Family& f : kFamilies) {
    const bool generate = generates(f.name);
    if (generate && !any_language_model) continue;
    out += std::string("# HELP ") + f.name + " " + f.help + ".\n";
    out += std::string("# TYPE ") + f.name + " " + f.type + "\n";
    for (const auto& kv : models_) {
      if (generate && !kv.second->language_model.load()) continue;
      const double v = f.value(*kv.second);
      if (f.seconds) std::snprintf(number, sizeof number, "%.9f", v / 1e9);
      else std::snprintf(number, sizeof number, "%.0f", v);
      out += std::string(f.name) + "{model=\"" + escape_label(kv.first.first) + "\",version=\"" +
             escape_label(kv.first.second) + "\"} " + number + "\n";
    }
  }
  for (const HistogramFamily& h : kHistograms) {
    if (!any_language_model) continue;
    out += std::string("# HELP ") + h.name + " " + h.help + ".\n";
    out += std::string("# TYPE ") + h.name + " histogram\n";
    for (const auto& kv : models_)
      if (kv.second->language_model.load())
        out += h.histogram(*kv.second).render(h.name, "model=\"" + escape_label(kv.first.first) + "\",version=\"" +
                                                        escape_label(kv.first.second) + "\"");
  }
  return out;
}

}  // namespace graphrt_serve
