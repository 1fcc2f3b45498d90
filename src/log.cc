#include "graphrt/log.h"

#include <mutex>

namespace graphrt {

namespace {
struct LogSink {
  std::mutex mutex;
  LogCallback callback = nullptr;
  void* user_data = nullptr;
};
// Process-wide, below the Runtime (the base layer knows none): the C API's
// graphrt_set_log_callback is per process, and static destructors log too.
LogSink& log_sink() {
  static LogSink* sink = new LogSink();  // outlives every static destructor that might log
  return *sink;
}
}  // namespace

void set_log_callback(LogCallback callback, void* user_data) {
  std::lock_guard<std::mutex> lock(log_sink().mutex);
  log_sink().callback = callback;
  log_sink().user_data = user_data;
}

void log_warning(const std::string& message) {
  std::lock_guard<std::mutex> lock(log_sink().mutex);
  if (log_sink().callback) log_sink().callback(LogLevel::kWarning, message.c_str(), log_sink().user_data);
}

}  // namespace graphrt
