// The steps of sampling that change logits, in MLC's order: logit bias, then the penalties.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <vector>

namespace graphrt {

// logits[t] += bias for each (t, bias); ids past the row are refused by validation earlier.
void apply_logit_bias(std::vector<float>& logits, const std::map<int32_t, float>& bias);

// For each token t in `sampled` (distinct ids) with count c = counts[t]:
// logit -= presence + c * frequency; then logit *= repetition when negative, else /= it.
// Does nothing when presence = frequency = 0 and repetition = 1 (as MLC).
void apply_penalties(std::vector<float>& logits, const std::vector<int32_t>& sampled,
                     const std::vector<int32_t>& counts, double presence, double frequency,
                     double repetition);

}  // namespace graphrt
