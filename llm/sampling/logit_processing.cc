#include "llm/sampling/logit_processing.h"

namespace graphrt {

void apply_logit_bias(std::vector<float>& logits, const std::map<int32_t, float>& bias) {
  for (const auto& [token, value] : bias) {
    if (token >= 0 && static_cast<size_t>(token) < logits.size()) logits[token] += value;
  }
}

void apply_penalties(std::vector<float>& logits, const std::vector<int32_t>& sampled,
                     const std::vector<int32_t>& counts, double presence, double frequency,
                     double repetition) {
  if (presence == 0.0 && frequency == 0.0 && repetition == 1.0) return;
  for (int32_t token : sampled) {
    double logit = logits[token];
    logit -= presence + counts[token] * frequency;
    logit = logit < 0 ? logit * repetition : logit / repetition;
    logits[token] = static_cast<float>(logit);
  }
}

}  // namespace graphrt
