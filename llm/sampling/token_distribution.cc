#include "llm/sampling/token_distribution.h"

#include <algorithm>
#include <functional>
#include <cmath>
#include <limits>
#include <numeric>
#include <utility>

namespace graphrt {
namespace {

void renormalise(std::vector<double>& probs) {
  double sum = std::accumulate(probs.begin(), probs.end(), 0.0);
  if (sum <= 0) return;
  for (double& p : probs) p /= sum;
}

std::vector<double> greedy_distribution(const std::vector<float>& logits, size_t active) {
  std::vector<double> probs(logits.size(), 0.0);
  float best = -std::numeric_limits<float>::infinity();
  for (size_t i = 0; i < active; ++i) best = std::max(best, logits[i]);
  size_t ties = 0;
  for (size_t i = 0; i < active; ++i) ties += logits[i] == best;
  for (size_t i = 0; i < active && ties > 0; ++i) {
    if (logits[i] == best) probs[i] = 1.0 / static_cast<double>(ties);
  }
  return probs;
}

bool more_probable(const std::pair<double, int32_t>& a, const std::pair<double, int32_t>& b) {
  return a.first != b.first ? a.first > b.first : a.second < b.second;
}

}  // namespace

std::vector<double> softmax_with_temperature(const std::vector<float>& logits, double temperature,
                                             size_t active) {
  active = std::min(active, logits.size());
  if (temperature < kGreedyTemperature) return greedy_distribution(logits, active);
  std::vector<double> probs(logits.size(), 0.0);
  float best = -std::numeric_limits<float>::infinity();
  for (size_t i = 0; i < active; ++i) best = std::max(best, logits[i]);
  if (!std::isfinite(best)) return greedy_distribution(logits, active);
  for (size_t i = 0; i < active; ++i) {
    probs[i] = std::exp((static_cast<double>(logits[i]) - best) / temperature);
  }
  renormalise(probs);
  return probs;
}

void keep_top_k(std::vector<double>& probs, int64_t k) {
  if (k <= 0) return;
  // The k-th largest probability by selection over the values alone (cheap to compare), then
  // every id above it and, of the ids equal to it, the lowest ones until k are kept.
  std::vector<double> values;
  values.reserve(probs.size());
  for (double p : probs) {
    if (p > 0) values.push_back(p);
  }
  if (static_cast<size_t>(k) >= values.size()) return;
  std::nth_element(values.begin(), values.begin() + (k - 1), values.end(), std::greater<double>());
  const double kth = values[k - 1];
  int64_t above = 0;
  for (double p : probs) above += p > kth;
  int64_t ties_kept = k - above;
  for (double& p : probs) {
    if (p > kth) continue;
    if (p == kth && ties_kept > 0) {
      --ties_kept;
      continue;
    }
    p = 0;
  }
  renormalise(probs);
}

void keep_top_p(std::vector<double>& probs, double top_p) {
  if (top_p == 1.0) return;
  const double target = top_p - 1e-5;
  const double largest = *std::max_element(probs.begin(), probs.end());
  if (largest <= 0) return;
  // The nucleus is a prefix of the descending order, so it lies among the ids at or above any
  // cutoff whose ids together reach the target: only those are sorted (a nucleus is usually a
  // small part of the vocabulary). The cutoff falls until they do, to 0 (all ids) at worst.
  std::vector<std::pair<double, int32_t>> order;
  for (double cutoff = largest * 1e-3;; cutoff *= 1e-3) {
    if (cutoff < 1e-300) cutoff = 0;
    order.clear();
    double mass = 0;
    for (size_t i = 0; i < probs.size(); ++i) {
      if (probs[i] > 0 && probs[i] >= cutoff) {
        order.emplace_back(probs[i], static_cast<int32_t>(i));
        mass += probs[i];
      }
    }
    if (mass >= target || cutoff == 0) break;
  }
  std::sort(order.begin(), order.end(), more_probable);
  double running = 0;
  double cut = order.back().first;
  for (const auto& entry : order) {
    running += entry.first;
    if (running >= target) {
      cut = entry.first;
      break;
    }
  }
  for (double& p : probs) {
    if (p < cut) p = 0;
  }
  renormalise(probs);
}

}  // namespace graphrt
