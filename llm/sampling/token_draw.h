// Drawing one token from a distribution, and the log-probabilities reported with it.
#pragma once

#include <cstdint>
#include <random>
#include <vector>

#include "graphrt/sampler.h"

namespace graphrt {

// A uniform double in [0, 1) from the top 53 bits of one 64-bit draw: the same value for the
// same generator state on every platform (std::uniform_real_distribution's is the library's).
double uniform_draw(std::mt19937_64& generator);

// The first id (in index order) with a non-zero probability at which the running sum reaches
// u; the last such id when rounding leaves the sum below u.
int32_t draw_token(const std::vector<double>& probs, double u);

// ln(max(p, 1e-10)), as MLC reports it.
float token_logprob(double p);

// The `count` most probable ids of `probs`, most probable first (the lower id first on ties).
std::vector<TokenLogprob> top_logprobs(const std::vector<double>& probs, int64_t count);

}  // namespace graphrt
