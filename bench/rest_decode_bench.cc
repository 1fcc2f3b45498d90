// The REST infer request decoder on one mlp request body (784 FP32 elements, as a client
// writes them), for instruction counts under callgrind:
//   valgrind --tool=callgrind --toggle-collect='graphrt_serve::decode_rest_request*' rest_decode_bench
// Wall clock on a shared machine is noise; instruction counts per decode are not.
#include <cstdio>
#include <cstdlib>
#include <string>

#include "protocol/infer_request.h"

int main(int argc, char** argv) {
  const int repeats = argc > 1 ? std::atoi(argv[1]) : 1;
  std::string body = R"({"id":"bench","inputs":[{"name":"x","shape":[1,784],"datatype":"FP32","data":[)";
  for (int i = 0; i < 784; ++i) {
    char number[32];
    // Values like an image's pixels scaled to [0, 1], nine significant digits (what float32 needs).
    std::snprintf(number, sizeof number, "%s%.9g", i ? "," : "", static_cast<double>((i * 37 % 256) / 255.0f));
    body += number;
  }
  body += R"(]}],"outputs":[{"name":"output0"}]})";
  size_t bytes = 0;
  for (int r = 0; r < repeats; ++r) bytes += graphrt_serve::decode_rest_request(body.data(), body.size(), nullptr).inputs[0].size();
  std::printf("%zu body bytes, %zu tensor bytes decoded\n", body.size(), bytes);
  return 0;
}
