// From logits to the distribution a token is drawn from: softmax with temperature (greedy at
// 0), then top_k and top_p, each renormalising what it keeps.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace graphrt {

// Below this temperature sampling is greedy (MLC's threshold).
constexpr double kGreedyTemperature = 1e-5;

// softmax(logits / temperature) over the first `active` ids (the rest get 0); greedy: each of
// the k ids holding the maximum logit gets 1/k.
std::vector<double> softmax_with_temperature(const std::vector<float>& logits, double temperature,
                                             size_t active);

// Keeps the k most probable ids (ties to the lower id) and renormalises; k <= 0 or k at least
// the count of non-zero probabilities changes nothing.
void keep_top_k(std::vector<double>& probs, int64_t k);

// Nucleus (MLC's rule): in descending order, the first probability at which the running sum
// reaches top_p - 1e-5 is the cut; every id at or above it is kept (ties kept), then
// renormalised. top_p exactly 1 changes nothing; 0 keeps the maximum (and its ties).
void keep_top_p(std::vector<double>& probs, double top_p);

}  // namespace graphrt
