// Graph JSON reading: graphrt's reader (lexing, building the GraphDef,
// validating) against nlohmann/json's SAX pass with a handler that does
// nothing (the least any SAX-based reader would cost) and its DOM parse, on
// the same text. Medians of N parses per fixture (docs/architecture.md,
// "Readers of untrusted input").
//
//   build/bench/graph_json_bench [fixtures_dir] [--runs N]
#include <nlohmann/json.hpp>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "graphrt/graph_json.h"

namespace {

using json = nlohmann::json;

struct NoOpSax : nlohmann::json_sax<json> {
  size_t values = 0;
  bool null() override { return ++values, true; }
  bool boolean(bool) override { return ++values, true; }
  bool number_integer(number_integer_t) override { return ++values, true; }
  bool number_unsigned(number_unsigned_t) override { return ++values, true; }
  bool number_float(number_float_t, const string_t&) override { return ++values, true; }
  bool string(string_t&) override { return ++values, true; }
  bool binary(binary_t&) override { return ++values, true; }
  bool start_object(std::size_t) override { return true; }
  bool key(string_t&) override { return ++values, true; }
  bool end_object() override { return true; }
  bool start_array(std::size_t) override { return true; }
  bool end_array() override { return true; }
  bool parse_error(std::size_t, const std::string&, const nlohmann::detail::exception&) override { return false; }
};

template <typename F>
double median_us(int runs, F f) {
  std::vector<double> times;
  for (int i = 0; i < runs; ++i) {
    auto start = std::chrono::steady_clock::now();
    f();
    times.push_back(std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - start).count());
  }
  std::sort(times.begin(), times.end());
  return times[times.size() / 2];
}

}  // namespace

int main(int argc, char** argv) {
  std::string dir = GRAPHRT_BENCH_FIXTURES_DIR;
  int runs = 201;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--runs") == 0 && i + 1 < argc) runs = std::max(1, std::atoi(argv[++i]));
    else dir = argv[i];
  }
  std::printf("%-14s %9s %18s %18s %14s\n", "fixture", "bytes", "graphrt (us)", "sax no-op (us)", "dom (us)");
  size_t sink = 0;
  for (const char* name : {"chain1000", "squeezenet1.1"}) {
    std::string path = dir + "/" + name + "/deploy_graph.json";
    std::ifstream in(path, std::ios::binary);
    if (!in) {
      std::printf("%-14s (missing: %s)\n", name, path.c_str());
      continue;
    }
    std::stringstream text_stream;
    text_stream << in.rdbuf();
    const std::string text = text_stream.str();
    double reader = median_us(runs, [&] { sink += graphrt::parse_graph_json(text).nodes.size(); });
    double sax = median_us(runs, [&] {
      NoOpSax handler;
      json::sax_parse(text, &handler);
      sink += handler.values;
    });
    double dom = median_us(runs, [&] { sink += json::parse(text).size(); });
    std::printf("%-14s %9zu %18.0f %18.0f %14.0f\n", name, text.size(), reader, sax, dom);
  }
  return sink == 0 ? 1 : 0;
}
