/* graphrt_lm_step and the sequence calls of graphrt/c_api.h from C, on the MLC fixture
 * (fixtures/mlc/tiny_gpt2_chat): case.json's serving scenario, whose token ids are written
 * here as case.json gives them, against TVM v0.26's logits (expected_*.npy, within the case's
 * tolerance 1e-5): three prompts in one step (batch_prefill), four decode steps of the three
 * (batch_decode), each decode's tokens the argmax of the step before (the greedy completion),
 * a single sequence's prefill and decode. Every refusal (an empty step, NULL arrays, a sequence
 * not added or twice, a token outside the vocabulary, no token, bad offsets) fails with its
 * kind and a message naming what is at fault, and leaves the cache as it was: the scenario goes
 * on after each with TVM's logits. graphrt_lm_open_library on the token-id library
 * relax_tiny_llm_gqa: its case's prefill and decodes against TVM's logits, and the text calls
 * refused (a library alone has no tokenizer).
 *
 * usage: graphrt_c_lm_step FIXTURES_DIR   (exit 77: the fixture is absent) */
#include <graphrt/c_api.h>
#include <math.h>
#include <unistd.h>

#include "c_test_support.h"

#define TOLERANCE 1e-5

static const char* g_package; /* the folder expect_logits reads TVM's files from */
static int64_t g_vocab;

static const int32_t g_vocab_token = 96; /* past relax_tiny_llm_gqa's vocabulary */
static graphrt_lm_t lm_missing = NULL;

static int32_t argmax(const float* row) {
  int64_t best = 0;
  for (int64_t i = 1; i < g_vocab; ++i)
    if (row[i] > row[best]) best = i;
  return (int32_t)best;
}

/* The step's rows against TVM's file (rows x vocab floats, in the step's order). */
static void expect_logits(const float* got, size_t rows, const char* file) {
  Npy want = read_npy(g_package, file);
  double worst = 0;
  CHECK_TRUE(want.count == rows * (size_t)g_vocab);
  for (size_t i = 0; i < want.count; ++i) worst = fmax(worst, fabs((double)got[i] - want.values[i]));
  if (worst > TOLERANCE) {
    fprintf(stderr, "%s: logits differ from TVM's by %g\n", file, worst);
    exit(1);
  }
  free(want.values);
}

int main(int argc, char** argv) {
  char package[4096];
  if (argc != 2) {
    fprintf(stderr, "usage: graphrt_c_lm_step FIXTURES_DIR\n");
    return 2;
  }
  snprintf(package, sizeof package, "%s/mlc/tiny_gpt2_chat", argv[1]);
  g_package = package;
  {
    char config[4200];
    snprintf(config, sizeof config, "%s/mlc-chat-config.json", package);
    if (access(config, R_OK) != 0) {
      fprintf(stderr, "fixture %s absent\n", package);
      return 77;
    }
  }
  graphrt_lm_t lm = NULL;
  CHECK_CALL(graphrt_lm_open(package, NULL, 0, 0, &lm));
  CHECK_CALL(graphrt_lm_vocab_size(lm, &g_vocab));
  CHECK_TRUE(g_vocab == 50257);

  /* case.json's scenario: sequences 0, 1, 2 and their prompts in one step. */
  const int64_t ids[3] = {0, 1, 2};
  const int32_t prompts[17] = {464, 3139, 286, 4881, 318, 7454, 2402, 257, 640, 11, 4299, 751, 7, 64, 11, 275, 2599};
  const int64_t offsets[4] = {0, 5, 10, 17};
  const float* logits = NULL;
  for (int i = 0; i < 3; ++i) CHECK_CALL(graphrt_lm_add_sequence(lm, ids[i]));
  CHECK_REFUSED(GRAPHRT_ERROR_INVALID_ARGUMENT, "sequence 1 is already", graphrt_lm_add_sequence(lm, 1));
  CHECK_CALL(graphrt_lm_step(lm, 3, ids, prompts, offsets, &logits));
  expect_logits(logits, 3, "expected_00_batch_prefill_logits.npy");

  /* The four decode steps: each token the argmax of the step before, which is case.json's
   * input of that step (its greedy completions). */
  const int32_t decode_ids[4][3] = {{21008, 38992, 28543}, {40501, 23014, 16467}, {31708, 10976, 38404},
                                    {3223, 19451, 11219}};
  const char* const files[4] = {"expected_01_batch_decode0_logits.npy", "expected_02_batch_decode1_logits.npy",
                                "expected_03_batch_decode2_logits.npy", "expected_04_batch_decode3_logits.npy"};
  for (int s = 0; s < 4; ++s) {
    int32_t next[3];
    for (int r = 0; r < 3; ++r) next[r] = argmax(logits + (size_t)r * (size_t)g_vocab);
    CHECK_TRUE(memcmp(next, decode_ids[s], sizeof next) == 0);
    if (s == 1) {
      /* Refusals, each before any pass: the scenario then goes on as if they had not been. */
      const int64_t unknown[2] = {0, 99};
      const int64_t twice[2] = {2, 2};
      const int32_t out_of_range[2] = {next[0], 50257};
      const int64_t empty[3] = {0, 1, 1};
      const int64_t down[3] = {0, 2, 1};
      const int64_t not_zero[3] = {1, 1, 2};
      CHECK_REFUSED(GRAPHRT_ERROR_INVALID_ARGUMENT, "no sequence", graphrt_lm_step(lm, 0, ids, next, NULL, &logits));
      CHECK_TRUE(logits == NULL);
      CHECK_REFUSED(GRAPHRT_ERROR_INVALID_ARGUMENT, "seq_ids", graphrt_lm_step(lm, 3, NULL, next, NULL, &logits));
      CHECK_REFUSED(GRAPHRT_ERROR_INVALID_ARGUMENT, "tokens", graphrt_lm_step(lm, 3, ids, NULL, NULL, &logits));
      CHECK_REFUSED(GRAPHRT_ERROR_INVALID_ARGUMENT, "logits", graphrt_lm_step(lm, 3, ids, next, NULL, NULL));
      CHECK_REFUSED(GRAPHRT_ERROR_NOT_FOUND, "sequence 99", graphrt_lm_step(lm, 2, unknown, next, NULL, &logits));
      CHECK_REFUSED(GRAPHRT_ERROR_INVALID_ARGUMENT, "sequence 2 is twice",
                    graphrt_lm_step(lm, 2, twice, next, NULL, &logits));
      CHECK_REFUSED(GRAPHRT_ERROR_OUT_OF_RANGE, "50257", graphrt_lm_step(lm, 2, ids, out_of_range, NULL, &logits));
      CHECK_REFUSED(GRAPHRT_ERROR_INVALID_ARGUMENT, "sequence 1 is given no token",
                    graphrt_lm_step(lm, 2, ids, next, empty, &logits));
      CHECK_REFUSED(GRAPHRT_ERROR_INVALID_ARGUMENT, "offsets[2]", graphrt_lm_step(lm, 2, ids, next, down, &logits));
      CHECK_REFUSED(GRAPHRT_ERROR_INVALID_ARGUMENT, "offsets[0]", graphrt_lm_step(lm, 2, ids, next, not_zero, &logits));
      CHECK_REFUSED(GRAPHRT_ERROR_NOT_FOUND, "sequence 7", graphrt_lm_remove_sequence(lm, 7));
      CHECK_REFUSED(GRAPHRT_ERROR_INVALID_ARGUMENT, "null language model", graphrt_lm_step(NULL, 3, ids, next, NULL, &logits));
    }
    CHECK_CALL(graphrt_lm_step(lm, 3, ids, next, NULL, &logits));
    expect_logits(logits, 3, files[s]);
  }

  /* One sequence: its prompt (one prefill), then its first greedy token (one decode). The
   * generation calls take a sequence id not in use (0, 1, 2 are). */
  const int64_t ten = 10;
  const int64_t prompt_offsets[2] = {0, 5};
  CHECK_CALL(graphrt_lm_add_sequence(lm, ten));
  CHECK_CALL(graphrt_lm_step(lm, 1, &ten, prompts, prompt_offsets, &logits));
  expect_logits(logits, 1, "expected_07_prefill_logits.npy");
  const int32_t first = argmax(logits);
  CHECK_TRUE(first == 21008);
  CHECK_CALL(graphrt_lm_step(lm, 1, &ten, &first, NULL, &logits));
  expect_logits(logits, 1, "expected_08_decode_logits.npy");
  {
    const char* text = NULL;
    CHECK_CALL(graphrt_lm_generate(lm, "The capital of France is", "{\"temperature\": 0, \"max_tokens\": 2}", NULL, NULL,
                                   &text, NULL));
    CHECK_TRUE(strlen(text) > 0);
  }
  for (int i = 0; i < 3; ++i) CHECK_CALL(graphrt_lm_remove_sequence(lm, ids[i]));
  CHECK_CALL(graphrt_lm_remove_sequence(lm, ten));
  CHECK_REFUSED(GRAPHRT_ERROR_NOT_FOUND, "sequence 0", graphrt_lm_step(lm, 1, ids, &first, NULL, &logits));
  graphrt_lm_free(lm);

  /* A token-id library alone (the relax-ffi case's sizes: 64 tokens, chunks of 16). */
  {
    char library[4300], tiny[4200];
    snprintf(tiny, sizeof tiny, "%.4000s/relax-ffi/relax_tiny_llm_gqa", argv[1]);
    snprintf(library, sizeof library, "%s/deploy_relax.so", tiny);
    const int32_t prompt[5] = {24, 3, 56, 72, 0}; /* input_ids_prefill.npy */
    const int32_t decodes[2] = {42, 12};          /* input_ids_decode0.npy, input_ids_decode1.npy */
    const int64_t five[2] = {0, 5};
    const int64_t zero = 0;
    const char* text = NULL;
    g_package = tiny;
    CHECK_CALL(graphrt_lm_open_library(library, 64, 16, 0, 0, &lm));
    CHECK_CALL(graphrt_lm_vocab_size(lm, &g_vocab));
    CHECK_TRUE(g_vocab == 96);
    CHECK_CALL(graphrt_lm_add_sequence(lm, zero));
    CHECK_CALL(graphrt_lm_step(lm, 1, &zero, prompt, five, &logits));
    expect_logits(logits, 1, "output_prefill_logits.npy");
    CHECK_CALL(graphrt_lm_step(lm, 1, &zero, &decodes[0], NULL, &logits));
    expect_logits(logits, 1, "output_decode0_logits.npy");
    CHECK_CALL(graphrt_lm_step(lm, 1, &zero, &decodes[1], NULL, &logits));
    expect_logits(logits, 1, "output_decode1_logits.npy");
    CHECK_REFUSED(GRAPHRT_ERROR_OUT_OF_RANGE, "96", graphrt_lm_step(lm, 1, &zero, &g_vocab_token, NULL, &logits));
    CHECK_REFUSED(GRAPHRT_ERROR_FAILED_PRECONDITION, "library alone",
                  graphrt_lm_generate(lm, "x", NULL, NULL, NULL, &text, NULL));
    CHECK_REFUSED(GRAPHRT_ERROR_NOT_FOUND, "deploy_missing.so",
                  graphrt_lm_open_library("/nonexistent/deploy_missing.so", 0, 0, 0, 0, &lm_missing));
    CHECK_TRUE(lm_missing == NULL);
    graphrt_lm_free(lm);
  }
  printf("graphrt_lm_step: the scenario's and the token-id library's logits within %g of TVM's, every refusal named\n",
         TOLERANCE);
  return 0;
}
