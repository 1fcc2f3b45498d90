// A Prometheus histogram of durations (cumulative buckets in seconds, their
// sum and count), lock-free: observe() is called on the request path.
#pragma once

#include <array>
#include <atomic>
#include <cstdint>
#include <string>

namespace graphrt_serve {

class LatencyHistogram {
 public:
  static constexpr size_t kBuckets = 16;  // upper bounds from 25 us to 10 s, then +Inf
  void observe(int64_t ns);
  // The family's sample lines for one label set: NAME_bucket{LABELS,le="..."}, NAME_sum, NAME_count.
  std::string render(const std::string& name, const std::string& labels) const;

 private:
  std::array<std::atomic<uint64_t>, kBuckets + 1> counts_{};
  std::atomic<uint64_t> sum_ns_{0};
};

}  // namespace graphrt_serve
