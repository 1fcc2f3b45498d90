// Tokenizer encode throughput (MB/s of UTF-8 text), graphrt against the references: GPT-2's
// byte-level BPE from the MLC fixture's tokenizer.json (the npm package gpt-3-encoder is timed
// on the same text by tokenizer_bench.py), and a SentencePiece BPE model trained here, timed
// through graphrt and through Debian's libsentencepiece directly.
//
//   tokenizer_bench FIXTURES_DIR [MEGABYTES] [TEXT_OUT]
//
// The text is the licenses in /usr/share/common-licenses, repeated to MEGABYTES (default 4);
// TEXT_OUT, when given, receives it (for the JavaScript reference).
#include <dirent.h>

#include <sentencepiece_processor.h>
#include <sentencepiece_trainer.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <functional>
#include <sstream>
#include <string>
#include <vector>

#include "graphrt/tokenizer.h"

namespace {

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

std::string license_text(size_t bytes) {
  const std::string dir = "/usr/share/common-licenses";
  std::vector<std::string> names;
  if (DIR* d = opendir(dir.c_str())) {
    while (dirent* e = readdir(d)) {
      if (e->d_name[0] != '.') names.push_back(e->d_name);
    }
    closedir(d);
  }
  std::sort(names.begin(), names.end());
  std::string one;
  for (const std::string& n : names) one += read_file(dir + "/" + n);
  if (one.empty()) return "";
  std::string text;
  while (text.size() < bytes) text += one;
  text.resize(bytes);
  // Cut back to a line end so no character is split.
  const size_t end = text.rfind('\n');
  if (end != std::string::npos) text.resize(end + 1);
  return text;
}

// Seconds of the fastest of `runs` calls, after one call that warms caches.
double best_seconds(int runs, const std::function<size_t()>& call, size_t* tokens) {
  *tokens = call();
  double best = 1e30;
  for (int i = 0; i < runs; ++i) {
    const auto t0 = std::chrono::steady_clock::now();
    call();
    best = std::min(best, std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
  }
  return best;
}

void report(const char* what, size_t bytes, size_t tokens, double seconds) {
  std::printf("%-44s %8.2f MB/s  (%zu tokens, %.3f s)\n", what, bytes / seconds / 1e6, tokens, seconds);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: %s FIXTURES_DIR [MEGABYTES] [TEXT_OUT]\n", argv[0]);
    return 2;
  }
  const std::string fixtures = argv[1];
  const double megabytes = argc > 2 ? std::atof(argv[2]) : 4.0;
  const std::string text = license_text(static_cast<size_t>(megabytes * 1e6));
  if (text.empty()) {
    std::fprintf(stderr, "no texts in /usr/share/common-licenses\n");
    return 1;
  }
  if (argc > 3) std::ofstream(argv[3], std::ios::binary) << text;
  std::printf("text: %zu bytes of /usr/share/common-licenses\n", text.size());

  const graphrt::Tokenizer gpt2 = graphrt::Tokenizer::from_folder(fixtures + "/mlc/tiny_gpt2_chat");
  size_t tokens = 0;
  double s = best_seconds(3, [&] { return gpt2.encode(text).size(); }, &tokens);
  report("graphrt GPT-2 byte-level BPE (tokenizer.json)", text.size(), tokens, s);

  // A cold cache: a fresh tokenizer, one call.
  const graphrt::Tokenizer cold = graphrt::Tokenizer::from_folder(fixtures + "/mlc/tiny_gpt2_chat");
  const auto t0 = std::chrono::steady_clock::now();
  tokens = cold.encode(text).size();
  report("graphrt GPT-2, first call (cold word cache)", text.size(), tokens,
         std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());

  const std::string model_prefix = "/tmp/graphrt_tokenizer_bench_spm";
  const auto status = sentencepiece::SentencePieceTrainer::Train(
      "--input=/usr/share/common-licenses/GPL-3 --model_prefix=" + model_prefix +
      " --vocab_size=2000 --model_type=bpe --byte_fallback=true --character_coverage=1.0 --minloglevel=2");
  if (!status.ok()) {
    std::fprintf(stderr, "training failed: %s\n", status.ToString().c_str());
    return 1;
  }
  // SentencePiece's BPE slows down on one long input; a prompt is a few lines: both sides
  // encode the text line by line.
  std::vector<std::string> lines;
  for (size_t pos = 0; pos < text.size();) {
    const size_t end = text.find('\n', pos);
    lines.push_back(text.substr(pos, end - pos + 1));
    pos = end + 1;
  }
  sentencepiece::SentencePieceProcessor reference;
  if (!reference.Load(model_prefix + ".model").ok()) return 1;
  s = best_seconds(3, [&] {
    size_t n = 0;
    std::vector<int> ids;
    for (const std::string& line : lines) {
      reference.Encode(line, &ids);
      n += ids.size();
    }
    return n;
  }, &tokens);
  report("libsentencepiece BPE 2000 (direct, per line)", text.size(), tokens, s);
  const graphrt::Tokenizer spm = graphrt::Tokenizer::from_sentencepiece(model_prefix + ".model");
  s = best_seconds(3, [&] {
    size_t n = 0;
    for (const std::string& line : lines) n += spm.encode(line).size();
    return n;
  }, &tokens);
  report("graphrt SentencePiece BPE 2000 (per line)", text.size(), tokens, s);
  std::remove((model_prefix + ".model").c_str());
  std::remove((model_prefix + ".vocab").c_str());
  return 0;
}
