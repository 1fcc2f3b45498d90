// graphrt-serve: serves the models of a repository over the Open Inference
// Protocol (REST; metrics for Prometheus). Flags and ports follow Triton's, so
// that clients and tooling written for it carry over.
#include <pthread.h>
#include <signal.h>

#include <chrono>
#include <cstdio>
#include <iostream>
#include <thread>

#include "common/args.h"
#include "graphrt/error.h"
#include "graphrt/runtime.h"
#include "grpc_frontend.h"
#include "http_frontend.h"
#include "metrics.h"
#include "repository.h"

#ifndef GRAPHRT_SERVE_VERSION
#define GRAPHRT_SERVE_VERSION "0.0.0"
#endif

using graphrt_apps::Args;
using graphrt_apps::UsageError;

namespace {

const char* kUsage =
    "usage: graphrt-serve --model-repository DIR [--http-port 8000] [--grpc-port 8001] [--metrics-port 8002]\n"
    "                     [--host ADDR]\n"
    "                     [--threads N] [--http-threads N] [--max-request-bytes N] [--read-timeout-ms N]\n"
    "  --model-repository DIR  DIR/<model>/<version>/ holds a model (one .so/.tar/Relax file, or\n"
    "                          kernels .so + graph .json + .params); DIR/<model>/config.json is optional\n"
    "  --http-port N           REST (Open Inference Protocol) port; 0 picks a free one\n"
    "  --grpc-port N           gRPC (inference.GRPCInferenceService, grpc.health.v1) port; 0 picks a free\n"
    "                          one, -1 disables\n"
    "  --metrics-port N        Prometheus metrics (GET /metrics); 0 picks a free one, -1 disables\n"
    "  --host ADDR             address to listen on (default 0.0.0.0)\n"
    "  --threads N             kernel thread pool size (default: graphrt's)\n"
    "  --http-threads N        HTTP connections, and gRPC calls, served at once (default 64)\n"
    "  --max-request-bytes N   largest request body accepted (default 67108864); larger: 413\n"
    "  --read-timeout-ms N     drop a client that sends nothing for this long mid-request (default 10000)\n"
    "  --version               print the version\n"
    "SIGTERM or SIGINT: stop accepting, answer the requests in flight, exit 0.\n";

int serve(int argc, char** argv) {
  Args args({{"--model-repository", true}, {"--http-port", true},       {"--grpc-port", true},
             {"--metrics-port", true},     {"--host", true},            {"--threads", true},
             {"--http-threads", true},     {"--max-request-bytes", true}, {"--read-timeout-ms", true},
             {"--help", false},            {"-h", false},               {"--version", false}});
  args.parse(argc, argv);
  if (args.has("--help") || args.has("-h")) {
    std::cout << kUsage;
    return 0;
  }
  if (args.has("--version")) {
    std::cout << "graphrt-serve " << GRAPHRT_SERVE_VERSION << "\n";
    return 0;
  }
  if (!args.positional().empty()) throw UsageError("unexpected argument '" + args.positional()[0] + "'");
  if (!args.has("--model-repository")) throw UsageError("--model-repository DIR is required");

  graphrt_serve::HttpOptions http;
  http.host = args.get("--host", "0.0.0.0");
  http.port = static_cast<int>(args.get_int("--http-port", 8000, 0, 65535));
  http.threads = static_cast<int>(args.get_int("--http-threads", 64, 1, 4096));
  http.max_request_bytes = static_cast<size_t>(args.get_int("--max-request-bytes", 64 << 20, 1024, 1LL << 40));
  http.read_timeout_ms = static_cast<int>(args.get_int("--read-timeout-ms", 10000, 1, 3600000));
  const int grpc_port = static_cast<int>(args.get_int("--grpc-port", 8001, -1, 65535));
  const int metrics_port = static_cast<int>(args.get_int("--metrics-port", 8002, -1, 65535));
  const int threads = static_cast<int>(args.get_int("--threads", 0, 0, 4096));

  // Every thread started from here on inherits the blocked signals; one waits for them.
  sigset_t stop_signals;
  sigemptyset(&stop_signals);
  sigaddset(&stop_signals, SIGTERM);
  sigaddset(&stop_signals, SIGINT);
  pthread_sigmask(SIG_BLOCK, &stop_signals, nullptr);
  signal(SIGPIPE, SIG_IGN);

  if (threads > 0) graphrt::set_num_threads(threads);
  graphrt_serve::Metrics metrics;
  graphrt_serve::Repository repository(args.get("--model-repository"), &metrics);
  repository.load_all();
  for (const auto& e : repository.index(false))
    if (e.state != "READY") std::cerr << "graphrt-serve: model '" << e.name << "' not loaded: " << e.reason << "\n";

  graphrt_serve::ServerInfo info;
  info.version = GRAPHRT_SERVE_VERSION;
  graphrt_serve::HttpFrontend frontend(&repository, info, http);
  const int http_port = frontend.bind();
  std::unique_ptr<graphrt_serve::MetricsFrontend> metrics_frontend;
  int bound_metrics_port = -1;
  if (metrics_port >= 0) {
    metrics_frontend = std::make_unique<graphrt_serve::MetricsFrontend>(&metrics, http.host, metrics_port);
    bound_metrics_port = metrics_frontend->bind();
  }
  std::unique_ptr<graphrt_serve::GrpcFrontend> grpc_frontend;
  int bound_grpc_port = -1;
  if (grpc_port >= 0) {
    graphrt_serve::GrpcOptions grpc;
    grpc.host = http.host;
    grpc.port = grpc_port;
    grpc.max_request_bytes = http.max_request_bytes;
    grpc.threads = http.threads;
    grpc_frontend = std::make_unique<graphrt_serve::GrpcFrontend>(&repository, info, grpc);
    bound_grpc_port = grpc_frontend->start();
  }
  std::thread http_thread([&] { frontend.serve(); });
  std::thread metrics_thread([&] {
    if (metrics_frontend) metrics_frontend->serve();
  });
  // Ready only once both listeners run: a stop() that came before a listener started would
  // be lost, and scripts take the line below as "requests may come now".
  for (int i = 0; i < 5000 && !(frontend.running() && (!metrics_frontend || metrics_frontend->running())); ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  // Tests and scripts read the ports from this line (0 asks for free ports).
  std::cout << "graphrt-serve: listening: http " << http_port << " grpc " << bound_grpc_port << " metrics "
            << bound_metrics_port << std::endl;

  int signal_number = 0;
  sigwait(&stop_signals, &signal_number);
  std::cout << "graphrt-serve: signal " << signal_number << ": draining" << std::endl;
  repository.set_draining();
  frontend.stop();
  if (grpc_frontend) grpc_frontend->stop();  // returns when the RPCs in flight are answered
  http_thread.join();
  if (metrics_frontend) metrics_frontend->stop();
  metrics_thread.join();
  std::cout << "graphrt-serve: stopped" << std::endl;
  return 0;
}

}  // namespace

int main(int argc, char** argv) { return graphrt_apps::run_app("graphrt-serve", serve, argc, argv); }
