// A closed-loop gRPC load client for graphrt-serve's benchmark (bench/serve_bench.py): N
// threads, each with its own channel (its own HTTP/2 connection, as wrk's connections), send
// the same ModelInferRequest back to back for a fixed time and record each call's latency.
// A C++ client, so that its own cost per call is small next to the server's (grpcio from
// Python threads adds 100-200 us and holds the GIL).
//
//   serve_grpc_load HOST:PORT REQUEST.pb CONCURRENCY SECONDS
// REQUEST.pb: a serialized inference.ModelInferRequest. Prints one line:
//   requests N errors E rps R p50_us P p99_us Q
#include <grpcpp/grpcpp.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <iterator>
#include <limits>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "grpc_service.grpc.pb.h"

using Clock = std::chrono::steady_clock;

int main(int argc, char** argv) {
  if (argc != 5) {
    std::cerr << "usage: serve_grpc_load HOST:PORT REQUEST.pb CONCURRENCY SECONDS\n";
    return 2;
  }
  std::ifstream f(argv[2], std::ios::binary);
  const std::string bytes((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  inference::ModelInferRequest request;
  if (!f || !request.ParseFromString(bytes)) {
    std::cerr << "serve_grpc_load: cannot read a ModelInferRequest from " << argv[2] << "\n";
    return 1;
  }
  const int concurrency = std::max(1, std::atoi(argv[3]));
  const auto duration = std::chrono::duration<double>(std::atof(argv[4]));
  std::vector<std::vector<double>> latencies(concurrency);
  std::atomic<int64_t> errors{0};
  std::string first_error;
  std::mutex error_mutex;
  std::vector<std::thread> threads;
  const Clock::time_point start = Clock::now();
  const Clock::time_point stop = start + std::chrono::duration_cast<Clock::duration>(duration);
  for (int t = 0; t < concurrency; ++t)
    threads.emplace_back([&, t] {
      // The channel Triton's C++ client (and so perf_analyzer) makes: message sizes unbounded,
      // its keepalive defaults (no pings unless configured), synchronous ModelInfer calls.
      grpc::ChannelArguments args;
      args.SetInt(GRPC_ARG_USE_LOCAL_SUBCHANNEL_POOL, 1);  // a connection of its own
      args.SetMaxSendMessageSize(std::numeric_limits<int>::max());
      args.SetMaxReceiveMessageSize(std::numeric_limits<int>::max());
      args.SetInt(GRPC_ARG_KEEPALIVE_TIME_MS, std::numeric_limits<int>::max());
      args.SetInt(GRPC_ARG_KEEPALIVE_TIMEOUT_MS, 20000);
      args.SetInt(GRPC_ARG_KEEPALIVE_PERMIT_WITHOUT_CALLS, 0);
      args.SetInt(GRPC_ARG_HTTP2_MAX_PINGS_WITHOUT_DATA, 2);
      auto stub = inference::GRPCInferenceService::NewStub(
          grpc::CreateCustomChannel(argv[1], grpc::InsecureChannelCredentials(), args));
      inference::ModelInferResponse response;
      while (Clock::now() < stop) {
        grpc::ClientContext context;
        const Clock::time_point t0 = Clock::now();
        const grpc::Status status = stub->ModelInfer(&context, request, &response);
        latencies[t].push_back(std::chrono::duration<double, std::micro>(Clock::now() - t0).count());
        if (!status.ok()) {
          errors.fetch_add(1);
          std::lock_guard<std::mutex> lock(error_mutex);
          if (first_error.empty()) first_error = status.error_message();
        }
      }
    });
  for (auto& t : threads) t.join();
  const double elapsed = std::chrono::duration<double>(Clock::now() - start).count();
  std::vector<double> all;
  for (const auto& l : latencies) all.insert(all.end(), l.begin(), l.end());
  std::sort(all.begin(), all.end());
  if (all.empty()) {
    std::cerr << "serve_grpc_load: no call completed\n";
    return 1;
  }
  std::printf("requests %zu errors %lld rps %.1f p50_us %.1f p99_us %.1f\n", all.size(),
              static_cast<long long>(errors.load()), all.size() / elapsed, all[all.size() / 2],
              all[std::min(all.size() - 1, all.size() * 99 / 100)]);
  if (!first_error.empty()) std::fprintf(stderr, "serve_grpc_load: first error: %s\n", first_error.c_str());
  return errors.load() ? 1 : 0;
}
