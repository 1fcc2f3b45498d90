#include "metrics/latency_histogram.h"

#include <cstdio>

namespace graphrt_serve {

namespace {

const double kUpperSeconds[LatencyHistogram::kBuckets] = {25e-6, 50e-6, 100e-6, 250e-6, 500e-6, 1e-3, 2.5e-3, 5e-3,
                                                          10e-3, 25e-3, 50e-3, 100e-3, 250e-3, 1.0, 2.5, 10.0};

}  // namespace

void LatencyHistogram::observe(int64_t ns) {
  const double s = static_cast<double>(ns) / 1e9;
  size_t b = 0;
  while (b < kBuckets && s > kUpperSeconds[b]) ++b;
  counts_[b].fetch_add(1, std::memory_order_relaxed);
  sum_ns_.fetch_add(static_cast<uint64_t>(ns < 0 ? 0 : ns), std::memory_order_relaxed);
}

std::string LatencyHistogram::render(const std::string& name, const std::string& labels) const {
  std::string out;
  char line[96];
  uint64_t cumulative = 0;
  for (size_t b = 0; b <= kBuckets; ++b) {
    cumulative += counts_[b].load(std::memory_order_relaxed);
    if (b < kBuckets) std::snprintf(line, sizeof line, "%g", kUpperSeconds[b]);
    out += name + "_bucket{" + labels + ",le=\"" + (b < kBuckets ? std::string(line) : "+Inf") + "\"} " +
           std::to_string(cumulative) + "\n";
  }
  std::snprintf(line, sizeof line, "%.9f", static_cast<double>(sum_ns_.load(std::memory_order_relaxed)) / 1e9);
  out += name + "_sum{" + labels + "} " + line + "\n";
  out += name + "_count{" + labels + "} " + std::to_string(cumulative) + "\n";
  return out;
}

}  // namespace graphrt_serve
