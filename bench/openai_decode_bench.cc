// The OpenAI chat request decoder on one body as a chat client sends it (a system prompt and
// three turns, the sampling fields, a stop list, logit_bias, stream_options), for instruction
// counts under callgrind:
//   valgrind --tool=callgrind --toggle-collect='graphrt_serve::decode_openai_request*' openai_decode_bench
// Wall clock on a shared machine is noise; instruction counts per decode are not.
#include <cstdio>
#include <cstdlib>
#include <string>

#include "openai/openai_request.h"

int main(int argc, char** argv) {
  const int repeats = argc > 1 ? std::atoi(argv[1]) : 1;
  const std::string body =
      R"({"model":"chat","messages":[)"
      R"({"role":"system","content":"You are a helpful assistant. Answer briefly and cite the step you used."},)"
      R"({"role":"user","content":"What is the capital of France, and why is it not Lyon?"},)"
      R"({"role":"assistant","content":"Paris. It has been the seat of government since the tenth century."},)"
      R"({"role":"user","content":[{"type":"text","text":"And of Italy? "},{"type":"text","text":"One word."}]}],)"
      R"("temperature":0.7,"top_p":0.95,"max_tokens":64,"stream":true,"stream_options":{"include_usage":true},)"
      R"("stop":["\n\n","User:"],"logit_bias":{"13":-100,"42":5},"n":1,"seed":7,"presence_penalty":0.5,)"
      R"("response_format":{"type":"text"},"user":"bench-user-1"})";
  size_t messages = 0;
  for (int r = 0; r < repeats; ++r)
    messages += graphrt_serve::decode_openai_request(body, graphrt_serve::OpenAIEndpoint::kChat).messages.size();
  std::printf("%zu body bytes, %zu messages decoded\n", body.size(), messages);
  return 0;
}
