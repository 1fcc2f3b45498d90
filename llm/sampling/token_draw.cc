#include "llm/sampling/token_draw.h"

#include <algorithm>
#include <cmath>

namespace graphrt {

double uniform_draw(std::mt19937_64& generator) {
  return static_cast<double>(generator() >> 11) * 0x1.0p-53;
}

int32_t draw_token(const std::vector<double>& probs, double u) {
  double running = 0;
  int32_t last = 0;
  for (size_t i = 0; i < probs.size(); ++i) {
    if (probs[i] <= 0) continue;
    running += probs[i];
    last = static_cast<int32_t>(i);
    if (running >= u) return last;
  }
  return last;
}

float token_logprob(double p) { return static_cast<float>(std::log(std::max(p, 1e-10))); }

std::vector<TokenLogprob> top_logprobs(const std::vector<double>& probs, int64_t count) {
  std::vector<int32_t> ids(probs.size());
  for (size_t i = 0; i < ids.size(); ++i) ids[i] = static_cast<int32_t>(i);
  const size_t n = std::min(static_cast<size_t>(std::max<int64_t>(count, 0)), ids.size());
  std::partial_sort(ids.begin(), ids.begin() + n, ids.end(), [&](int32_t a, int32_t b) {
    return probs[a] != probs[b] ? probs[a] > probs[b] : a < b;
  });
  std::vector<TokenLogprob> top;
  for (size_t i = 0; i < n; ++i) top.push_back({ids[i], token_logprob(probs[ids[i]])});
  return top;
}

}  // namespace graphrt
