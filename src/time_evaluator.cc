#include "graphrt/time_evaluator.h"
#include "layer_api/time_evaluator_support.h"

#include <algorithm>
#include <chrono>
#include <cstring>
#include <thread>

#include "graphrt/device_api.h"
#include "graphrt/error.h"
#include "graphrt/module.h"
#include "graphrt/packed_func.h"
#include "graphrt/registry.h"
#include "graphrt/runtime.h"

namespace graphrt {

namespace {

void sync(DLDevice device) {
  if (device.device_type != kDLCPU) device_api(device)->synchronize(device, nullptr);
}

}  // namespace

void check_timing_options(const TimingOptions& o) {
  if (o.number < 1 || o.repeat < 1) throw Error("time evaluator: number and repeat must be >= 1");
  if (o.min_repeat_ms < 0 || o.cooldown_interval_ms < 0 || o.cache_flush_bytes < 0)
    throw Error("time evaluator: min_repeat_ms, cooldown_interval_ms and cache_flush_bytes must be >= 0");
  if (o.repeats_to_cooldown < 1) throw Error("time evaluator: repeats_to_cooldown must be >= 1");
}

namespace {

// Two host buffers copied into each other: touching them evicts the caches
// that the timed code would otherwise find warm.
class CacheFlusher {
 public:
  explicit CacheFlusher(int64_t bytes) : a_(static_cast<size_t>(bytes), 1), b_(static_cast<size_t>(bytes), 2) {}
  void flush() {
    if (!a_.empty()) std::memcpy(a_.data(), b_.data(), a_.size());
  }

 private:
  std::vector<char> a_, b_;
};

}  // namespace

std::vector<double> time_repeats(const std::function<void()>& body, DLDevice device, const TimingOptions& options,
                                 const std::function<void()>& before_repeat) {
  using clock = std::chrono::steady_clock;
  check_timing_options(options);
  CacheFlusher flusher(options.cache_flush_bytes);
  body();  // warm-up: lazy loading and first-touch allocation stay out of the figures
  sync(device);
  std::vector<double> seconds;
  int number = options.number;
  for (int r = 0; r < options.repeat; ++r) {
    if (before_repeat) before_repeat();
    flusher.flush();
    sync(device);
    double duration_ms = 0;
    int zero_times = 0;
    do {
      if (duration_ms > 0) {
        // Grow toward min_repeat_ms by at least the golden ratio, as TVM does.
        number = static_cast<int>(std::max(options.min_repeat_ms / (duration_ms / number) + 1, number * 1.618));
      }
      clock::time_point start = clock::now();
      for (int i = 0; i < number; ++i) body();
      sync(device);
      int64_t ns = std::chrono::duration_cast<std::chrono::nanoseconds>(clock::now() - start).count();
      if (ns == 0) ++zero_times;
      duration_ms = static_cast<double>(ns) / 1e6;
    } while (duration_ms < options.min_repeat_ms && zero_times < options.limit_zero_time_iterations);
    seconds.push_back(duration_ms / 1e3 / number);
    if (options.cooldown_interval_ms > 0 && r % options.repeats_to_cooldown == 0)
      std::this_thread::sleep_for(std::chrono::milliseconds(options.cooldown_interval_ms));
  }
  return seconds;
}

std::string pack_doubles(const std::vector<double>& values) {
  std::string blob(values.size() * sizeof(double), '\0');
  if (!values.empty()) std::memcpy(&blob[0], values.data(), blob.size());
  return blob;
}

namespace {

// runtime.RPCTimeEvaluator(module, func_name, device_type, device_id, number,
// repeat, min_repeat_ms, limit_zero_time_iterations, cooldown_interval_ms,
// repeats_to_cooldown, cache_flush_bytes, f_preproc) -> a function that calls
// module[func_name] with its own arguments and returns the timings as bytes.
void make_time_evaluator(const TVMArgs& args, RetValue* ret) {
  if (args.size() < 10) throw Error("runtime.RPCTimeEvaluator needs at least 10 arguments");
  Module module = args.as_module(0);
  std::string name = args.as_string(1);
  PackedFunc fn = module->require_function(name);
  DLDevice device{static_cast<DLDeviceType>(args.as_int(2)), static_cast<int32_t>(args.as_int(3))};
  TimingOptions options;
  options.number = static_cast<int>(args.as_int(4));
  options.repeat = static_cast<int>(args.as_int(5));
  options.min_repeat_ms = static_cast<int>(args.as_int(6));
  options.limit_zero_time_iterations = static_cast<int>(args.as_int(7));
  options.cooldown_interval_ms = static_cast<int>(args.as_int(8));
  options.repeats_to_cooldown = static_cast<int>(args.as_int(9));
  options.cache_flush_bytes = args.size() > 10 ? args.as_int(10) : 0;
  std::string preproc_name = args.size() > 11 ? args.as_string(11) : "";
  check_timing_options(options);
  PackedFunc preproc;
  if (!preproc_name.empty()) {
    preproc = registry_get(preproc_name);
    if (!preproc) throw Error(ErrorKind::kNotFound,
                              "time evaluator: no global function " + quote_untrusted(preproc_name) + " (f_preproc)");
  }
  ret->set_function(make_function(
      [module, fn, device, options, preproc](const TVMArgs& call_args, RetValue* out) {
        RetValue ignored;
        std::function<void()> before;
        if (preproc) before = [&] { preproc->call(call_args, &ignored); };
        std::vector<double> seconds = time_repeats([&] { fn->call(call_args, &ignored); }, device, options, before);
        out->set_bytes(pack_doubles(seconds));
      },
      "time_evaluator:" + name));
}

}  // namespace

void register_time_evaluator(Runtime& runtime) {
  runtime.set_function("runtime.RPCTimeEvaluator", make_function(make_time_evaluator, "runtime.RPCTimeEvaluator"));
}

}  // namespace graphrt
