// Tokenizer load time: a tokenizer.json's text (read once) made into a graphrt::Tokenizer,
// `runs` times; prints the median, the lowest and the highest time of one load. With runs 0 it
// only reads the file, so that callgrind's count of a load is the count at 1 less the count at 0
// (instructions do not depend on what else the machine runs):
//
//   tokenizer_load_bench TOKENIZER_JSON [RUNS]          (default 21)
//   valgrind --tool=callgrind tokenizer_load_bench TOKENIZER_JSON 1
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "graphrt/tokenizer.h"

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: %s TOKENIZER_JSON [RUNS]\n", argv[0]);
    return 2;
  }
  std::ifstream in(argv[1], std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  const std::string text = s.str();
  const int runs = argc > 2 ? std::atoi(argv[2]) : 21;
  std::vector<double> ms;
  size_t vocab = 0;
  for (int i = 0; i < runs; ++i) {
    const auto start = std::chrono::steady_clock::now();
    const graphrt::Tokenizer tok = graphrt::Tokenizer::from_tokenizer_json_text(text, argv[1]);
    ms.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count());
    vocab = tok.vocab_size();
  }
  if (ms.empty()) return 0;
  std::sort(ms.begin(), ms.end());
  std::printf("%zu bytes, vocab %zu: load median %.2f ms (min %.2f, max %.2f) over %d runs\n", text.size(), vocab,
              ms[ms.size() / 2], ms.front(), ms.back(), runs);
  return 0;
}
