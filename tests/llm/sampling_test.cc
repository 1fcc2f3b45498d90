// The host sampler against the distributions its spec defines (MLC-LLM's CPU sampler): the
// expectations are computed here from the formulas, on fixed logits, never by the sampler.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <numeric>
#include <vector>

#include "graphrt/error.h"
#include "graphrt/sampler.h"
#include "llm/sampling/logit_processing.h"
#include "llm/sampling/token_distribution.h"

namespace {

using graphrt::GenerationConfig;
using graphrt::Sampler;

const std::vector<float> kLogits = {2.0f, 1.0f, 0.5f, 0.0f, -0.5f, -1.0f, 1.5f, 0.25f};

std::vector<double> softmax(const std::vector<float>& logits, double temperature) {
  double top = *std::max_element(logits.begin(), logits.end());
  std::vector<double> p;
  for (float l : logits) p.push_back(std::exp((l - top) / temperature));
  double sum = std::accumulate(p.begin(), p.end(), 0.0);
  for (double& x : p) x /= sum;
  return p;
}

std::vector<int> draw_counts(GenerationConfig config, const std::vector<float>& logits, int draws) {
  Sampler sampler(config, static_cast<int64_t>(logits.size()));
  std::vector<int> counts(logits.size(), 0);
  for (int i = 0; i < draws; ++i) ++counts[sampler.sample(logits.data(), logits.size()).token];
  return counts;
}

// Pearson's statistic over the categories of non-zero expectation; counts where the
// expectation is zero must be zero.
double chi_square(const std::vector<int>& counts, const std::vector<double>& expected, int draws, int* dof) {
  double stat = 0;
  *dof = -1;
  for (size_t i = 0; i < counts.size(); ++i) {
    if (expected[i] == 0) {
      EXPECT_EQ(counts[i], 0) << "token " << i << " has probability 0";
      continue;
    }
    const double e = expected[i] * draws;
    stat += (counts[i] - e) * (counts[i] - e) / e;
    ++*dof;
  }
  return stat;
}

// Critical values of the chi-square distribution at significance 0.001.
double critical_0001(int dof) {
  static const double table[] = {0, 10.83, 13.82, 16.27, 18.47, 20.52, 22.46, 24.32, 26.12};
  return table[dof];
}

TEST(Sampler, FrequenciesFollowSoftmaxOverTemperature) {
  const int draws = 4000;
  for (double temperature : {0.7, 1.0, 1.5}) {
    GenerationConfig config;
    config.temperature = temperature;
    config.seed = 11;
    const auto counts = draw_counts(config, kLogits, draws);
    int dof = 0;
    const double stat = chi_square(counts, softmax(kLogits, temperature), draws, &dof);
    EXPECT_EQ(dof, 7);
    EXPECT_LT(stat, critical_0001(dof)) << "temperature " << temperature;
  }
}

TEST(Sampler, ChiSquareRejectsTheWrongTemperature) {
  // The test above can fail: draws at temperature 1.5 are far from softmax(logits / 0.7).
  GenerationConfig config;
  config.temperature = 1.5;
  config.seed = 11;
  int dof = 0;
  EXPECT_GT(chi_square(draw_counts(config, kLogits, 4000), softmax(kLogits, 0.7), 4000, &dof), critical_0001(7));
}

TEST(Sampler, TopKKeepsExactlyTheKMostProbable) {
  GenerationConfig config;
  config.top_k = 3;
  config.seed = 5;
  Sampler sampler(config, kLogits.size());
  const auto dist = sampler.distribution(kLogits.data(), kLogits.size());
  auto p = softmax(kLogits, 1.0);
  const double kept = p[0] + p[6] + p[1];  // logits 2.0, 1.5, 1.0
  for (size_t i = 0; i < p.size(); ++i) {
    const bool in = i == 0 || i == 6 || i == 1;
    EXPECT_NEAR(dist[i], in ? p[i] / kept : 0.0, 1e-12) << i;
  }
  int dof = 0;
  std::vector<double> expected(p.size(), 0.0);
  for (size_t i : {0, 6, 1}) expected[i] = p[i] / kept;
  EXPECT_LT(chi_square(draw_counts(config, kLogits, 3000), expected, 3000, &dof), critical_0001(2));
}

TEST(Sampler, TopKBreaksTiesToTheLowerId) {
  std::vector<double> probs = {0.1, 0.3, 0.2, 0.3, 0.1};
  graphrt::keep_top_k(probs, 1);
  EXPECT_EQ(probs, (std::vector<double>{0, 1, 0, 0, 0}));
}

TEST(Sampler, TopPKeepsTheSmallestPrefixReachingTheMass) {
  auto p = softmax(kLogits, 1.0);
  // Descending: ids 0, 6, 1, 2, 7, 3, 4, 5.
  const std::vector<int> order = {0, 6, 1, 2, 7, 3, 4, 5};
  for (double top_p : {0.3, 0.5, 0.8, 0.95}) {
    double running = 0;
    size_t kept = 0;
    while (running < top_p - 1e-5) running += p[order[kept++]];
    GenerationConfig config;
    config.top_p = top_p;
    Sampler sampler(config, kLogits.size());
    const auto dist = sampler.distribution(kLogits.data(), kLogits.size());
    double mass = 0;
    for (size_t i = 0; i < kept; ++i) mass += p[order[i]];
    for (size_t i = 0; i < order.size(); ++i) {
      EXPECT_NEAR(dist[order[i]], i < kept ? p[order[i]] / mass : 0.0, 1e-12) << "top_p " << top_p << " id " << order[i];
    }
  }
}

TEST(Sampler, TopPDrawsStayInTheNucleus) {
  GenerationConfig config;
  config.top_p = 0.65;
  config.seed = 9;
  auto p = softmax(kLogits, 1.0);
  std::vector<double> expected(p.size(), 0.0);
  const double mass = p[0] + p[6] + p[1];  // 0.38 + 0.23 < 0.65 <= + 0.14
  ASSERT_LT(p[0] + p[6], 0.65);
  ASSERT_GE(mass, 0.65);
  for (size_t i : {0, 6, 1}) expected[i] = p[i] / mass;
  int dof = 0;
  EXPECT_LT(chi_square(draw_counts(config, kLogits, 3000), expected, 3000, &dof), critical_0001(2));
}

TEST(Sampler, TopPKeepsTiesAndZeroKeepsTheMaximum) {
  std::vector<double> probs = {0.25, 0.25, 0.25, 0.125, 0.125};
  graphrt::keep_top_p(probs, 0.3);  // the cut is 0.25: all three tied tokens stay
  EXPECT_NEAR(probs[0], 1.0 / 3, 1e-12);
  EXPECT_NEAR(probs[2], 1.0 / 3, 1e-12);
  EXPECT_EQ(probs[3], 0.0);
  std::vector<double> single = {0.1, 0.6, 0.3};
  graphrt::keep_top_p(single, 0.0);
  EXPECT_EQ(single, (std::vector<double>{0, 1, 0}));
}

TEST(Sampler, TopPOverALargeVocabularySortsBeyondItsFirstGuess) {
  std::vector<float> flat(5000, 0.0f);
  flat[17] = 0.5f;
  GenerationConfig config;
  config.top_p = 0.9;
  Sampler sampler(config, flat.size());
  const auto dist = sampler.distribution(flat.data(), flat.size());
  const size_t kept = std::count_if(dist.begin(), dist.end(), [](double x) { return x > 0; });
  // One token of weight e^0.5 and 4999 of weight 1: the cut falls among the tied ones, and
  // ties at the cut are all kept, so every token stays.
  EXPECT_EQ(kept, flat.size());
  config.top_p = 0.0002;
  Sampler narrow(config, flat.size());
  const auto top = narrow.distribution(flat.data(), flat.size());
  EXPECT_EQ(top[17], 1.0);
}

TEST(Sampler, GreedyIsTheArgmaxAndSplitsTies) {
  GenerationConfig config;
  config.temperature = 0;
  config.seed = 1;
  EXPECT_EQ(draw_counts(config, kLogits, 50)[0], 50);
  std::vector<float> tied = {1.0f, 3.0f, 0.0f, 3.0f};
  const auto counts = draw_counts(config, tied, 2000);
  EXPECT_EQ(counts[0] + counts[2], 0);
  int dof = 0;
  EXPECT_LT(chi_square(counts, {0, 0.5, 0, 0.5}, 2000, &dof), critical_0001(1));
}

TEST(Sampler, LogitBiasIsAddedBeforeSoftmax) {
  GenerationConfig config;
  config.logit_bias = {{3, 2.5f}, {0, -1.0f}};
  Sampler sampler(config, kLogits.size());
  auto biased = kLogits;
  biased[3] += 2.5f;
  biased[0] -= 1.0f;
  const auto expected = softmax(biased, 1.0);
  const auto dist = sampler.distribution(kLogits.data(), kLogits.size());
  for (size_t i = 0; i < dist.size(); ++i) EXPECT_NEAR(dist[i], expected[i], 1e-9) << i;
}

TEST(Sampler, PenaltiesChangeTheLogitsOfSampledTokensAsSpecified) {
  GenerationConfig config;
  config.presence_penalty = 0.4;
  config.frequency_penalty = 0.3;
  config.repetition_penalty = 1.25;
  config.seed = 2;
  config.temperature = 0;  // greedy: the tokens sampled are known
  Sampler sampler(config, kLogits.size());
  // Sample token 4 twice and token 0 once, by logits that leave no choice.
  std::vector<float> force4(kLogits.size(), 0.0f), force0(kLogits.size(), 0.0f);
  force4[4] = 50;
  force0[0] = 50;
  ASSERT_EQ(sampler.sample(force4.data(), force4.size()).token, 4);
  ASSERT_EQ(sampler.sample(force4.data(), force4.size()).token, 4);
  ASSERT_EQ(sampler.sample(force0.data(), force0.size()).token, 0);
  EXPECT_EQ(sampler.sampled_counts()[4], 2);

  // The spec's formulas: logit -= presence + count * frequency; then * rep if < 0 else / rep.
  auto expected = kLogits;
  expected[4] = static_cast<float>((-0.5 - (0.4 + 2 * 0.3)) * 1.25);  // -1.875
  expected[0] = static_cast<float>((2.0 - (0.4 + 1 * 0.3)) / 1.25);   // 1.04
  std::vector<float> applied = kLogits;
  graphrt::apply_penalties(applied, {4, 0}, sampler.sampled_counts(), 0.4, 0.3, 1.25);
  for (size_t i = 0; i < applied.size(); ++i) EXPECT_NEAR(applied[i], expected[i], 1e-6) << i;

  // Through the sampler at temperature 1: the distribution is softmax of those logits.
  GenerationConfig warm = config;
  warm.temperature = 1.0;
  Sampler second(warm, kLogits.size());
  ASSERT_EQ(second.sample(force4.data(), force4.size()).token, 4);
  ASSERT_EQ(second.sample(force4.data(), force4.size()).token, 4);
  ASSERT_EQ(second.sample(force0.data(), force0.size()).token, 0);
  const auto dist = second.distribution(kLogits.data(), kLogits.size());
  const auto want = softmax(expected, 1.0);
  for (size_t i = 0; i < dist.size(); ++i) EXPECT_NEAR(dist[i], want[i], 1e-6) << i;
}

TEST(Sampler, NoPenaltyLeavesLogitsAlone) {
  std::vector<float> logits = kLogits;
  std::vector<int32_t> counts(logits.size(), 3);
  graphrt::apply_penalties(logits, {0, 1, 2}, counts, 0.0, 0.0, 1.0);
  EXPECT_EQ(logits, kLogits);
}

TEST(Sampler, InactiveIdsAreNeverSampled) {
  GenerationConfig config;
  config.seed = 4;
  Sampler sampler(config, kLogits.size(), 6);  // ids 6 and 7 are padding
  const auto dist = sampler.distribution(kLogits.data(), kLogits.size());
  EXPECT_EQ(dist[6], 0.0);
  EXPECT_EQ(dist[7], 0.0);
  for (int i = 0; i < 500; ++i) EXPECT_LT(sampler.sample(kLogits.data(), kLogits.size()).token, 6);
}

std::vector<int32_t> tokens_of(Sampler& sampler, int n) {
  std::vector<int32_t> out;
  for (int i = 0; i < n; ++i) out.push_back(sampler.sample(kLogits.data(), kLogits.size()).token);
  return out;
}

TEST(Sampler, SameSeedSameTokensWhateverRunsBeside) {
  GenerationConfig config;
  config.seed = 1234;
  config.temperature = 1.2;
  Sampler alone(config, kLogits.size());
  const auto reference = tokens_of(alone, 200);

  // The same request inside batches of other requests, stepped in different orders.
  for (int batch : {2, 4, 7}) {
    std::vector<Sampler> samplers;
    for (int b = 0; b < batch; ++b) {
      GenerationConfig other = config;
      other.seed = b == batch / 2 ? 1234 : 77 + b;
      other.top_k = b == batch / 2 ? 0 : b;
      samplers.emplace_back(other, kLogits.size());
    }
    std::vector<int32_t> mine;
    for (int step = 0; step < 200; ++step) {
      for (int b = 0; b < batch; ++b) {
        const int i = (step % 2) ? b : batch - 1 - b;
        const int32_t t = samplers[i].sample(kLogits.data(), kLogits.size()).token;
        if (i == batch / 2) mine.push_back(t);
      }
    }
    EXPECT_EQ(mine, reference) << "batch of " << batch;
  }
  GenerationConfig other_seed = config;
  other_seed.seed = 1235;
  Sampler different(other_seed, kLogits.size());
  EXPECT_NE(tokens_of(different, 200), reference);
}

TEST(Sampler, LogprobsAreOfTheFinalDistribution) {
  GenerationConfig config;
  config.temperature = 0.8;
  config.top_p = 0.9;
  config.logprobs = true;
  config.top_logprobs = 5;
  config.seed = 3;
  Sampler sampler(config, kLogits.size());
  const auto dist = sampler.distribution(kLogits.data(), kLogits.size());
  const auto sampled = sampler.sample(kLogits.data(), kLogits.size());
  EXPECT_NEAR(sampled.logprob, std::log(dist[sampled.token]), 1e-6);
  ASSERT_EQ(sampled.top_logprobs.size(), 5u);
  const std::vector<int> order = {0, 6, 1, 2, 7};
  for (size_t i = 0; i < 5; ++i) {
    EXPECT_EQ(sampled.top_logprobs[i].token, order[i]);
    EXPECT_NEAR(sampled.top_logprobs[i].logprob, std::log(std::max(dist[order[i]], 1e-10)), 1e-5);
  }
  GenerationConfig greedy;
  greedy.temperature = 0;
  greedy.logprobs = true;
  greedy.top_logprobs = 2;
  Sampler g(greedy, kLogits.size());
  const auto choice = g.sample(kLogits.data(), kLogits.size());
  EXPECT_EQ(choice.token, 0);
  EXPECT_EQ(choice.logprob, 0.0f);
  EXPECT_NEAR(choice.top_logprobs[1].logprob, std::log(1e-10), 1e-4);  // about -23.03
}

TEST(Sampler, RefusesARowOfTheWrongWidthAndBadConfigs) {
  GenerationConfig config;
  Sampler sampler(config, 8);
  EXPECT_THROW(sampler.sample(kLogits.data(), 7), graphrt::Error);
  config.logit_bias = {{8, 1.0f}};
  try {
    Sampler bad(config, 8);
    FAIL() << "a bias for token 8 of 8 was accepted";
  } catch (const graphrt::Error& e) {
    EXPECT_EQ(e.context_value("field"), "logit_bias");
  }
  config.logit_bias.clear();
  config.stop_token_ids = {9};
  try {
    Sampler bad(config, 8);
    FAIL() << "a stop token 9 of 8 was accepted";
  } catch (const graphrt::Error& e) {
    EXPECT_EQ(e.context_value("field"), "stop_token_ids");
  }
}

}  // namespace
