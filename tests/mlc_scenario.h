// The shared MLC-LLM package (fixtures/mlc/tiny_gpt2_chat) as the language-model tests drive it:
// case.json's serving scenario through graphrt::LanguageModel, every logit array against TVM's
// expected file. Used by the CPU tests (tests/apps/mlc_folder_test.cc) and the device ones
// (tests/backends/opencl/opencl_language_model_test.cc).
#pragma once

#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "fixture_cases.h"
#include "graphrt/language_model.h"
#include "test_support.h"

namespace graphrt_test {
namespace mlc {

constexpr const char* kPackage = "mlc/tiny_gpt2_chat";

inline std::string package_dir() { return fixture_path(kPackage); }
inline nlohmann::json package_case() { return case_json(kPackage); }

// The sizes the case's create step passes.
inline graphrt::MlcFolderOptions case_options() {
  const nlohmann::json c = package_case()["cache_config"];
  graphrt::MlcFolderOptions o;
  o.max_num_sequence = c["max_batch_size"].get<int64_t>();
  o.max_total_seq_len = c["max_total_seq_len"].get<int64_t>();
  o.prefill_chunk_size = c["prefill_chunk_size"].get<int64_t>();
  o.page_size = c["page_size"].get<int64_t>();
  return o;
}

inline Npy expected(const std::string& file) { return read_npy(package_dir() + "/" + file); }

// Largest |got - want| over every logit; got's rows are want's in order ([1, b, v] or [b, 1, v]).
inline double max_error(const graphrt::StepLogits& got, const Npy& want) {
  const size_t bytes = got.rows() * static_cast<size_t>(got.vocab_size()) * sizeof(float);
  EXPECT_EQ(want.data.size(), bytes);
  if (want.data.size() != bytes) return INFINITY;
  const float* w = reinterpret_cast<const float*>(want.data.data());
  double worst = 0;
  for (size_t r = 0; r < got.rows(); ++r)
    for (int64_t i = 0; i < got.vocab_size(); ++i)
      worst = std::max(worst, std::fabs(double(got.row(r)[i]) - w[r * got.vocab_size() + i]));
  return worst;
}

inline graphrt::StepLogits host_rows(const Npy& a, int64_t rows) {
  const int64_t width = static_cast<int64_t>(a.data.size() / sizeof(float)) / rows;
  graphrt::NDArray out = graphrt::NDArray::empty({rows, width}, DLDataType{kDLFloat, 32, 1}, graphrt::cpu());
  out.copy_from_bytes(a.data.data(), a.data.size());
  return graphrt::StepLogits(out);
}

inline std::vector<int32_t> ids_of(const nlohmann::json& j) { return j.get<std::vector<int32_t>>(); }

// The logits of a decode as step rows (they may live on the model's device).
inline graphrt::StepLogits host_logits(const graphrt::NDArray& l, int64_t vocab) {
  const graphrt::NDArray rows = l.view({1, vocab}, l.dtype());
  return graphrt::StepLogits(rows.device().device_type == kDLCPU ? rows : rows.copy_to_device(graphrt::cpu()));
}

// case.json's scenario through the C++ API; every logit array against TVM's. `tolerance`: the
// case's, or 0 for no check (then only the arrays' worst errors are reported). `softmax`: run
// the softmax_with_temperature step (a library built for a GPU API has no such function: MLC
// samples on its host there).
inline std::vector<double> run_scenario(graphrt::LanguageModel& lm, double tolerance, bool softmax = true) {
  std::vector<double> errors;
  const nlohmann::json c = package_case();
  for (const nlohmann::json& st : c["scenario"]) {
    const std::string op = st["op"];
    SCOPED_TRACE(op);
    if (op == "add_sequence") {
      for (const nlohmann::json& id : st["seq_ids"]) lm.add_sequence(id.get<int64_t>());
    } else if (op == "remove_sequence") {
      lm.remove_sequence(st["seq_id"].get<int64_t>());
    } else if (op == "fork_sequence") {
      lm.fork_sequence(st["parent"].get<int64_t>(), st["child"].get<int64_t>(), st["fork_pos"].get<int64_t>());
    } else if (op == "batch_prefill" || op == "batch_decode") {
      std::vector<graphrt::SequenceStep> steps;
      for (size_t i = 0; i < st["seq_ids"].size(); ++i)
        steps.push_back({st["seq_ids"][i].get<int64_t>(), ids_of(st["input_ids"][i])});
      errors.push_back(max_error(lm.step(steps), expected(st["expect_logits"])));
    } else if (op == "prefill") {
      errors.push_back(max_error(lm.step({{st["seq_id"].get<int64_t>(), ids_of(st["input_ids"])}}),
                                 expected(st["expect_logits"])));
    } else if (op == "decode") {
      const graphrt::NDArray l = lm.decode(st["seq_id"].get<int64_t>(), ids_of(st["input_ids"]).at(0));
      EXPECT_EQ((std::vector<int64_t>{1, 1, lm.vocab_size()}), l.shape());
      errors.push_back(max_error(host_logits(l, lm.vocab_size()), expected(st["expect_logits"])));
    } else if (op == "total_sequence_length") {
      EXPECT_EQ(st["expect_int"].get<int64_t>(), lm.total_sequence_length());
    } else if (op == "softmax_with_temperature") {
      if (!softmax) continue;
      // TVM's softmax of its own logits file, repeated: the kernel alone, whatever the steps gave.
      const int64_t repeat = st["repeat"].get<int64_t>();
      const Npy logits = expected(st["logits"]);
      Npy rows = logits;
      for (int64_t i = 1; i < repeat; ++i) rows.data.insert(rows.data.end(), logits.data.begin(), logits.data.end());
      const graphrt::StepLogits probs =
          lm.softmax_with_temperature(host_rows(rows, repeat), st["temperature"].get<std::vector<float>>());
      errors.push_back(max_error(probs, expected(st["expect_probs"])));
    } else {
      ADD_FAILURE() << "unknown step " << op;
    }
    if (!errors.empty() && tolerance > 0) {
      EXPECT_LE(errors.back(), tolerance) << op;
    }
  }
  return errors;
}

// The scenario's single-sequence prefill and decode (a prompt, then its first greedy token).
struct PrefillDecode {
  std::vector<int32_t> prompt;
  int32_t next = 0;
  graphrt_test::Npy after_prompt, after_next;
};

inline PrefillDecode single_sequence_steps() {
  PrefillDecode p;
  const nlohmann::json c = package_case();
  for (const nlohmann::json& st : c["scenario"]) {
    if (st["op"] == "prefill") {
      p.prompt = ids_of(st["input_ids"]);
      p.after_prompt = expected(st["expect_logits"]);
    } else if (st["op"] == "decode") {
      p.next = ids_of(st["input_ids"]).at(0);
      p.after_next = expected(st["expect_logits"]);
    }
  }
  return p;
}

// Forks at a page cut inside and popn on both sides of the fork, on `lm` (made with
// case_options()): every continuation gives the logits TVM gave for the same tokens.
inline void fork_and_popn(graphrt::LanguageModel& lm, double tolerance) {
  const PrefillDecode p = single_sequence_steps();
  ASSERT_GE(p.prompt.size(), 3u);
  const int64_t n = static_cast<int64_t>(p.prompt.size());
  lm.add_sequence(10);
  EXPECT_LE(max_error(lm.step({{10, p.prompt}}), p.after_prompt), tolerance);
  // A child holding all but the prompt's last token: the page is cut inside, so its tokens are
  // copied on the device (the library's copy kernel); fed that last token, the child is the
  // parent again.
  lm.fork_sequence(10, 11, n - 1);
  EXPECT_EQ(n - 1, lm.sequence_length(11));
  EXPECT_LE(max_error(lm.step({{11, {p.prompt.back()}}}), p.after_prompt), tolerance);
  EXPECT_LE(max_error(host_logits(lm.decode(11, p.next), lm.vocab_size()), p.after_next), tolerance);
  // popn drops the decoded token; decoding it again gives its logits again.
  lm.popn(11, 1);
  EXPECT_EQ(n, lm.sequence_length(11));
  EXPECT_LE(max_error(lm.step({{11, {p.next}}}), p.after_next), tolerance);
  // popn of the parent: its last two prompt tokens again, one step each (a step of several
  // tokens onto a sequence's cached ones takes the library's prefill attention over pages,
  // which TVM's OpenCL build of this model gets wrong on PoCL with TVM's runtime too).
  lm.popn(10, 2);
  EXPECT_EQ(n - 2, lm.sequence_length(10));
  lm.step({{10, {p.prompt[static_cast<size_t>(n - 2)]}}});
  EXPECT_LE(max_error(lm.step({{10, {p.prompt.back()}}}), p.after_prompt), tolerance);
  // Both in one batch_decode: the parent's row is its first decode's again.
  const graphrt::StepLogits both = lm.step({{10, {p.next}}, {11, {p.next}}});
  ASSERT_EQ(2u, both.rows());
  EXPECT_LE(max_error(graphrt::StepLogits(both.array().view({1, lm.vocab_size()}, both.array().dtype())), p.after_next),
            tolerance);
  EXPECT_EQ(2 * n + 3, lm.total_sequence_length());
  try {
    lm.popn(11, n + 3);
    ADD_FAILURE() << "popn past the sequence's length";
  } catch (const graphrt::Error& e) {
    EXPECT_EQ(graphrt::ErrorKind::kOutOfRange, e.kind()) << e.what();
    EXPECT_EQ("11", e.context_value("sequence")) << e.what();
  }
}

}  // namespace mlc
}  // namespace graphrt_test
