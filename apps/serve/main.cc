// graphrt-serve: serves the models of a repository over the Open Inference
// Protocol (REST; metrics for Prometheus). Flags and ports follow Triton's, so
// that clients and tooling written for it carry over.
#include <pthread.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <iostream>
#include <mutex>
#include <thread>

#include "common/args.h"
#include "graphrt/error.h"
#include "graphrt/log.h"
#include "graphrt/runtime.h"
#include "grpc/grpc_frontend.h"
#include "http/api_key.h"
#include "http/http_frontend.h"
#include "http/metrics_frontend.h"
#include "metrics/metrics.h"
#include "models/cache_guard.h"
#include "models/repository.h"

#ifndef GRAPHRT_SERVE_VERSION
#define GRAPHRT_SERVE_VERSION "0.0.0"
#endif

using graphrt_apps::Args;
using graphrt_apps::UsageError;

namespace {

const graphrt_apps::AppHelp kHelp = {
    "graphrt-serve", "--model-repository DIR [options]",
    "Serves the models of a repository over the Open Inference Protocol: REST (with Triton's binary\n"
    "tensor and repository extensions), gRPC (inference.GRPCInferenceService, grpc.health.v1) and\n"
    "Prometheus metrics. DIR/<model>/<version>/ holds a model (one .so/.tar/Relax file, or kernels .so +\n"
    "graph .json + .params, or an MLC-LLM model folder as it is, served on OpenAI's /v1 endpoints and\n"
    "generate); DIR/<model>/config.json is optional. SIGTERM or SIGINT: stop accepting,\n"
    "answer the requests in flight, exit 0.",
    "  graphrt-serve --model-repository models/\n"
    "  graphrt-serve --model-repository models/ --http-port 0 --grpc-port -1 --metrics-port -1\n"};

const std::vector<graphrt_apps::FlagSpec> kFlags = {
    {"--model-repository", true, false, "DIR", "the model repository (required)"},
    {"--http-port", true, false, "N", "REST (Open Inference Protocol) port; 0 picks a free one (default 8000)"},
    {"--grpc-port", true, false, "N", "gRPC port; 0 picks a free one, -1 disables (default 8001)"},
    {"--metrics-port", true, false, "N", "Prometheus metrics (GET /metrics); 0 picks a free one, -1 disables (default 8002)"},
    {"--host", true, false, "ADDR", "address to listen on (default 0.0.0.0)"},
    {"--threads", true, false, "N", "kernel thread pool size (default: graphrt's)"},
    {"--http-threads", true, false, "N", "HTTP connections, and gRPC calls that may block, served at once (default 64)"},
    {"--max-request-bytes", true, false, "N", "largest request body accepted; larger: 413 (default 67108864)"},
    {"--read-timeout-ms", true, false, "N", "drop a client that sends nothing for this long mid-request (default 10000)"},
    {"--request-read-timeout-ms", true, false, "N",
     "a request's head and body must arrive within this long of its first byte; slower: 408 (default 30000)"},
    {"--keep-alive-timeout-ms", true, false, "N", "close a keep-alive connection idle this long (default 5000)"},
    {"--max-header-bytes", true, false, "N", "largest request line + headers; larger: 431 (default 65536)"},
    {"--max-connections", true, false, "N", "HTTP connections open at once; one more gets 503 (default 1000)"},
    {"--api-key", true, false, "KEY", "the /v1 (OpenAI) endpoints need Authorization: Bearer KEY (default: none)"},
    {"--api-key-file", true, false, "FILE", "as --api-key, the key being FILE's first line"},
    {"--model-control-mode", true, false, "MODE",
     "none (default): serve what the repository holds at start, load/unload refused (403); explicit: clients "
     "may load and unload models; poll: reload changed model folders every --repository-poll-secs"},
    {"--load-model", true, true, "NAME",
     "with --model-control-mode explicit: a model to load at start (repeatable; '*': every model folder); "
     "without it explicit mode starts with none loaded, as Triton's"},
    {"--infer-timeout-ms", true, false, "N",
     "deadline of an inference request (its wait for an instance and its run) when neither the request's "
     "timeout parameter nor the model's timeout_us sets one; 0: none (default 60000)"},
    {"--exit-timeout-secs", true, false, "N",
     "after SIGTERM, how long requests in flight may take before the process exits anyway (status 1; default 30)"},
    {"--repository-poll-secs", true, false, "N", "with --model-control-mode poll: seconds between scans (default 15)"},
    {"--params-cache", true, false, "DIR",
     "map models' params (a graph's params, a Relax executable's tensor constants) from cache files in DIR, "
     "written on first load, so that replicas on one host share one copy (created if missing; default: none, "
     "each process decodes its own)"},
};

// The --params-cache folder, created when missing (its parent must exist). Throws graphrt::Error.
std::string params_cache_dir(const std::string& dir) {
  if (mkdir(dir.c_str(), 0755) != 0 && errno != EEXIST)
    throw graphrt::Error(graphrt::Error::kind_of_errno(errno),
                         std::string("cannot create the params cache folder: ") + std::strerror(errno))
        .with("dir", dir);
  struct stat st;
  if (stat(dir.c_str(), &st) != 0 || !S_ISDIR(st.st_mode))
    throw graphrt::Error("the params cache is not a folder").with("dir", dir);
  if (access(dir.c_str(), W_OK) != 0)
    throw graphrt::Error("the params cache folder is not writable").with("dir", dir);
  return dir;
}

// SIGTERM and SIGINT at every stage. Before the server serves (models loading, ports being
// bound) the process exits at once, 0: nothing was served. While it serves, the first signal
// starts the drain (wait() returns it); a SIGINT after it, or --exit-timeout-secs passing before
// the drain ends, ends the process with 1 and one line saying so.
class StopSignals {
 public:
  StopSignals(const sigset_t& set, int exit_timeout_secs) : set_(set), exit_timeout_secs_(exit_timeout_secs) {
    watcher_ = std::thread([this] { watch(); });
  }
  ~StopSignals() {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      drained_ = true;
    }
    watcher_.join();
  }
  // The server serves from now on.
  void serving() {
    std::lock_guard<std::mutex> lock(mutex_);
    serving_ = true;
  }
  // Called on the watcher's thread when --exit-timeout-secs passes, just before the process
  // exits; null: nothing. Once this returns, no call of the previous one is running.
  void on_exit_timeout(std::function<void()> last_words) {
    std::lock_guard<std::mutex> lock(last_words_mutex_);
    last_words_ = std::move(last_words);
  }
  // Blocks until the first signal; returns its number.
  int wait() {
    std::unique_lock<std::mutex> lock(mutex_);
    cv_.wait(lock, [&] { return signal_ != 0; });
    return signal_;
  }

 private:
  void watch() {
    const timespec tick{0, 50 * 1000 * 1000};
    int sig = 0;
    while (sig <= 0) {  // ticks: a serve() that throws (a port in use) ends the watcher too
      {
        std::lock_guard<std::mutex> lock(mutex_);
        if (drained_) return;
      }
      sig = sigtimedwait(&set_, nullptr, &tick);
    }
    {
      std::lock_guard<std::mutex> lock(mutex_);
      if (!serving_) {
        std::cout << "graphrt-serve: signal " << sig << " before serving: exiting" << std::endl;
        std::_Exit(0);
      }
      signal_ = sig;
    }
    cv_.notify_all();
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(exit_timeout_secs_);
    for (;;) {
      {
        std::lock_guard<std::mutex> lock(mutex_);
        if (drained_) return;
      }
      const int again = sigtimedwait(&set_, nullptr, &tick);
      if (again == SIGINT) {  // Ctrl-C twice; a repeated SIGTERM (supervisors resend it) keeps draining
        std::cerr << "graphrt-serve: signal " << again << " again: exiting without waiting for the requests in flight"
                  << std::endl;
        std::_Exit(1);
      }
      if (std::chrono::steady_clock::now() >= deadline) {
        std::cerr << "graphrt-serve: --exit-timeout-secs (" << exit_timeout_secs_
                  << ") passed with requests in flight: exiting" << std::endl;
        {
          std::lock_guard<std::mutex> lock(last_words_mutex_);
          if (last_words_) last_words_();
        }
        std::_Exit(1);
      }
    }
  }

  sigset_t set_;
  int exit_timeout_secs_;
  std::mutex mutex_, last_words_mutex_;
  std::function<void()> last_words_;
  std::condition_variable cv_;
  bool serving_ = false, drained_ = false;
  int signal_ = 0;
  std::thread watcher_;
};

void print_library_warning(graphrt::LogLevel, const char* message, void*) {
  std::cerr << "graphrt-serve: warning: " << graphrt_apps::one_line(message) << std::endl;
}

int serve(int argc, char** argv) {
  Args args(kHelp, kFlags);
  if (!args.parse(argc, argv)) return 0;
  if (!args.positional().empty()) throw UsageError("unexpected argument '" + args.positional()[0] + "'");
  if (!args.has("--model-repository")) throw UsageError("--model-repository DIR is required");

  graphrt_serve::HttpOptions http;
  http.host = args.get("--host", "0.0.0.0");
  http.port = static_cast<int>(args.get_int("--http-port", 8000, 0, 65535));
  http.threads = static_cast<int>(args.get_int("--http-threads", 64, 1, 4096));
  http.max_request_bytes = static_cast<size_t>(args.get_int("--max-request-bytes", 64 << 20, 1024, 1LL << 40));
  http.read_timeout_ms = static_cast<int>(args.get_int("--read-timeout-ms", 10000, 1, 3600000));
  http.request_timeout_ms = static_cast<int>(args.get_int("--request-read-timeout-ms", 30000, 1, 3600000));
  http.keep_alive_timeout_ms = static_cast<int>(args.get_int("--keep-alive-timeout-ms", 5000, 1, 3600000));
  http.max_header_bytes = static_cast<size_t>(args.get_int("--max-header-bytes", 65536, 1024, 1 << 24));
  http.max_connections = static_cast<size_t>(args.get_int("--max-connections", 1000, 1, 1 << 20));
  if (args.has("--api-key") && args.has("--api-key-file")) throw UsageError("give --api-key or --api-key-file, not both");
  if (args.has("--api-key")) http.api_key = args.get("--api-key", "");
  if (args.has("--api-key-file")) http.api_key = graphrt_serve::read_api_key_file(args.get("--api-key-file", ""));
  if (args.has("--api-key") && http.api_key.empty()) throw UsageError("--api-key must not be empty");
  graphrt_serve::ModelControlMode control_mode = graphrt_serve::ModelControlMode::kNone;
  if (!graphrt_serve::parse_model_control_mode(args.get("--model-control-mode", "none"), &control_mode))
    throw UsageError("--model-control-mode must be none, explicit or poll, not '" +
                     args.get("--model-control-mode", "") + "'");
  const std::vector<std::string> startup_models = args.all("--load-model");
  if (!startup_models.empty() && control_mode != graphrt_serve::ModelControlMode::kExplicit)
    throw UsageError("--load-model applies to --model-control-mode explicit (the other modes load every model "
                     "folder of the repository at start)");
  const int64_t infer_timeout_ms = args.get_int("--infer-timeout-ms", 60000, 0, 86400000);
  const int exit_timeout_secs = static_cast<int>(args.get_int("--exit-timeout-secs", 30, 1, 86400));
  const int poll_secs = static_cast<int>(args.get_int("--repository-poll-secs", 15, 1, 86400));
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
  graphrt_serve::install_sigbus_handler();  // a params cache truncated under the server (cache_guard.h)
  StopSignals stop(stop_signals, exit_timeout_secs);

  if (threads > 0) graphrt::set_num_threads(threads);
  graphrt::set_log_callback(print_library_warning, nullptr);
  const std::string cache_dir = args.has("--params-cache") ? params_cache_dir(args.get("--params-cache")) : "";
  graphrt_serve::Metrics metrics;
  graphrt_serve::Repository repository(args.get("--model-repository"), &metrics, cache_dir);
  repository.set_control_mode(control_mode);
  repository.set_default_timeout_us(infer_timeout_ms * 1000);
  repository.set_warning_sink(
      [](const std::string& line) { std::cerr << "graphrt-serve: warning: " << line << std::endl; });
  repository.set_load_log_sink([](const std::string& line) { std::cerr << "graphrt-serve: " << line << std::endl; });
  repository.set_startup_models(startup_models);
  repository.check_folder();  // an unreadable repository is refused before any port is taken
  for (const std::string& name : startup_models)
    if (name != "*" && !repository.has_model_folder(name))
      throw UsageError("--load-model '" + name + "': the repository has no model folder of that name");

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
  // The ports are bound (a second server on them has failed by now) and answer while the models
  // load: live, not ready. A load that waits (another process's params-cache lock) or takes long
  // still honours SIGTERM (StopSignals).
  std::cerr << "graphrt-serve: ports bound: http " << http_port << " grpc " << bound_grpc_port << " metrics "
            << bound_metrics_port << "; loading the repository" << std::endl;
  try {
    repository.load_all();
  } catch (...) {
    frontend.stop();
    if (grpc_frontend) grpc_frontend->stop();
    http_thread.join();
    if (metrics_frontend) metrics_frontend->stop();
    metrics_thread.join();
    throw;
  }
  for (const auto& e : repository.index(false))
    if (e.state != "READY") std::cerr << "graphrt-serve: model '" << e.name << "' not loaded: " << e.reason << "\n";
  // Tests and scripts read the ports from this line (0 asks for free ports): requests may come now.
  stop.serving();
  std::cout << "graphrt-serve: listening: http " << http_port << " grpc " << bound_grpc_port << " metrics "
            << bound_metrics_port << std::endl;

  // --model-control-mode poll: the folder is scanned on this thread until the stop.
  std::mutex poll_mutex;
  std::condition_variable poll_cv;
  bool poll_stop = false;
  std::thread poll_thread;
  if (control_mode == graphrt_serve::ModelControlMode::kPoll)
    poll_thread = std::thread([&] {
      std::unique_lock<std::mutex> lock(poll_mutex);
      while (!poll_cv.wait_for(lock, std::chrono::seconds(poll_secs), [&] { return poll_stop; })) {
        lock.unlock();
        for (const std::string& name : repository.poll())
          std::cerr << "graphrt-serve: polled: model '" << name << "' changed" << std::endl;
        lock.lock();
      }
    });

  const int signal_number = stop.wait();
  if (poll_thread.joinable()) {
    {
      std::lock_guard<std::mutex> lock(poll_mutex);
      poll_stop = true;
    }
    poll_cv.notify_all();
    poll_thread.join();
  }
  std::cout << "graphrt-serve: signal " << signal_number << ": draining" << std::endl;
  repository.set_draining();
  // Streams still open at the exit timeout end with an error event and their closing chunk,
  // not mid-body (a client would see a truncated response and could not tell why).
  stop.on_exit_timeout([&frontend, exit_timeout_secs] {
    frontend.cut_streams("the server stopped: --exit-timeout-secs (" + std::to_string(exit_timeout_secs) +
                             ") passed before the stream ended",
                         2000);  // time to flush each stream's last queued events on a loaded machine
  });
  frontend.stop();
  if (grpc_frontend) grpc_frontend->stop();  // returns when the RPCs in flight are answered
  http_thread.join();
  stop.on_exit_timeout(nullptr);
  if (metrics_frontend) metrics_frontend->stop();
  metrics_thread.join();
  std::cout << "graphrt-serve: stopped" << std::endl;
  return 0;
}

}  // namespace

int main(int argc, char** argv) { return graphrt_apps::run_app("graphrt-serve", serve, argc, argv); }
