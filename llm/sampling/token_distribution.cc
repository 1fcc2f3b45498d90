#include "llm/sampling/token_distribution.h"

#include <algorithm>
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

// Ids with a non-zero probability, most probable first, the lower id first on ties.
std::vector<std::pair<double, int32_t>> ranked(const std::vector<double>& probs) {
  std::vector<std::pair<double, int32_t>> order;
  for (size_t i = 0; i < probs.size(); ++i) {
    if (probs[i] > 0) order.emplace_back(probs[i], static_cast<int32_t>(i));
  }
  return order;
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
  auto order = ranked(probs);
  if (static_cast<size_t>(k) >= order.size()) return;
  std::nth_element(order.begin(), order.begin() + (k - 1), order.end(), more_probable);
  const auto last_kept = order[k - 1];
  for (size_t i = 0; i < probs.size(); ++i) {
    if (probs[i] > 0 && more_probable(last_kept, {probs[i], static_cast<int32_t>(i)})) probs[i] = 0;
  }
  renormalise(probs);
}

void keep_top_p(std::vector<double>& probs, double top_p) {
  if (top_p == 1.0) return;
  auto order = ranked(probs);
  // Sorting a prefix only: a nucleus is usually a small part of the vocabulary.
  size_t sorted = std::min<size_t>(64, order.size());
  double cut = 0;
  for (;;) {
    std::partial_sort(order.begin(), order.begin() + sorted, order.end(), more_probable);
    double running = 0;
    bool found = false;
    for (size_t i = 0; i < sorted && !found; ++i) {
      running += order[i].first;
      if (running >= top_p - 1e-5) {
        cut = order[i].first;
        found = true;
      }
    }
    if (found || sorted == order.size()) {
      if (!found && !order.empty()) cut = order.back().first;
      break;
    }
    sorted = std::min(sorted * 4, order.size());
  }
  for (double& p : probs) {
    if (p < cut) p = 0;
  }
  renormalise(probs);
}

}  // namespace graphrt
