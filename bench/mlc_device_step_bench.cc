// An MLC-LLM model folder through graphrt::LanguageModel on a device (its <name>-<device>.so):
// load to ready (from nothing loaded to the host logits of a first one-token prefill) and the
// decode step of one sequence and of a batch, each step the embedding, one forward pass and the
// logits on the host, greedy; bench/mlc_device_bench.py runs it beside TVM v0.26's runtime.
// Where tests/backends/opencl/opencl_transfer_counter.c is preloaded, the host<->device transfers and kernel
// launches of a decode step are counted too.
//
// usage: mlc_device_step_bench FOLDER DEVICE [STEPS] [BATCHES]   (DEVICE cpu|opencl|vulkan,
// BATCHES comma-separated, default 1,4). Prints one JSON line per measurement.
#include <dlfcn.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "graphrt/language_model.h"
#include "graphrt/session.h"

namespace {

using Clock = std::chrono::steady_clock;

double ms_since(Clock::time_point t0) { return std::chrono::duration<double, std::milli>(Clock::now() - t0).count(); }

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

// The interposer's counters (tests/backends/opencl/opencl_transfer_counter.c), when it is in the process.
struct Counts {
  uint64_t v[8] = {};
};
using CountsFn = void (*)(uint64_t*);

CountsFn counter() { return reinterpret_cast<CountsFn>(dlsym(RTLD_DEFAULT, "opencl_transfer_counts")); }

Counts read_counts() {
  Counts c;
  if (CountsFn f = counter()) f(c.v);
  return c;
}

DLDevice parse_device(const std::string& name) {
  if (name == "cpu") return graphrt::cpu();
  if (name == "opencl") return DLDevice{kDLOpenCL, 0};
  if (name == "vulkan") return DLDevice{kDLVulkan, 0};
  if (name == "cuda") return DLDevice{kDLCUDA, 0};
  std::fprintf(stderr, "unknown device '%s'\n", name.c_str());
  std::exit(2);
}

int32_t argmax(const float* row, int64_t n) { return static_cast<int32_t>(std::max_element(row, row + n) - row); }

void load_to_ready(const std::string& folder, DLDevice device) {
  const auto t0 = Clock::now();
  graphrt::Session session(graphrt::runtime(), device);
  graphrt::LanguageModel lm(session, folder);
  lm.add_sequence(0);
  const graphrt::StepLogits l = lm.step({{0, {464}}});
  const double ms = ms_since(t0);
  std::printf("{\"measure\": \"load_to_ready\", \"ms\": %.3f, \"first_token\": %d}\n", ms,
              argmax(l.row(0), l.vocab_size()));
}

void decode_steps(graphrt::LanguageModel& lm, int64_t batch, int steps) {
  std::vector<graphrt::SequenceStep> step;
  for (int64_t s = 0; s < batch; ++s) {
    lm.add_sequence(s);
    step.push_back({s, {11, 22, 33, 44}});  // the prompt of bench/mlc_decode_step_bench.py
  }
  graphrt::StepLogits l = lm.step(step);
  std::vector<double> times;
  Counts before = read_counts();
  for (int i = 0; i < steps; ++i) {
    for (int64_t s = 0; s < batch; ++s) step[static_cast<size_t>(s)].tokens = {argmax(l.row(static_cast<size_t>(s)), l.vocab_size())};
    const auto t0 = Clock::now();
    l = lm.step(step);
    times.push_back(ms_since(t0));
  }
  const Counts after = read_counts();
  std::printf("{\"measure\": \"decode\", \"batch\": %lld, \"steps\": %d, \"step_ms\": %.3f, \"tokens\": [",
              static_cast<long long>(batch), steps, median(times));
  for (int64_t s = 0; s < batch; ++s)
    std::printf("%s%d", s ? ", " : "", argmax(l.row(static_cast<size_t>(s)), l.vocab_size()));
  std::printf("]");
  if (counter()) {
    const char* names[8] = {"writes", "write_bytes", "reads", "read_bytes", "copies", "copy_bytes", "launches",
                            "finishes"};
    std::printf(", \"per_step\": {");
    for (int k = 0; k < 8; ++k)
      std::printf("%s\"%s\": %.2f", k ? ", " : "", names[k], double(after.v[k] - before.v[k]) / steps);
    std::printf("}");
  }
  std::printf("}\n");
  for (int64_t s = 0; s < batch; ++s) lm.remove_sequence(s);
}

std::vector<int64_t> parse_batches(const std::string& text) {
  std::vector<int64_t> out;
  size_t at = 0;
  while (at < text.size()) {
    const size_t comma = text.find(',', at);
    out.push_back(std::atoll(text.substr(at, comma - at).c_str()));
    if (comma == std::string::npos) break;
    at = comma + 1;
  }
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 3) {
    std::fprintf(stderr, "usage: %s FOLDER DEVICE [STEPS] [BATCHES]\n", argv[0]);
    return 2;
  }
  const std::string folder = argv[1];
  const DLDevice device = parse_device(argv[2]);
  const int steps = argc > 3 ? std::max(1, std::atoi(argv[3])) : 60;
  const std::vector<int64_t> batches = parse_batches(argc > 4 ? argv[4] : "1,4");
  try {
    load_to_ready(folder, device);
    graphrt::Session session(graphrt::runtime(), device);
    graphrt::LanguageModel lm(session, folder);
    for (int64_t b : batches) decode_steps(lm, b, steps);
  } catch (const graphrt::Error& e) {
    std::fprintf(stderr, "%s\n", e.what());
    return 1;
  }
  return 0;
}
