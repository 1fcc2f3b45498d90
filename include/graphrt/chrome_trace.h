// The one writer of Chrome's trace event format (chrome://tracing, Perfetto):
// the profiles of the graph executor and of the Relax VM are written as
// "complete" events (ph "X") on one process and thread, times in
// microseconds, through graphrt's JSON writer.
#pragma once

#include "graphrt/export.h"

#include <string>
#include <string_view>

#include "graphrt/json_writer.h"

#pragma GCC visibility push(default)  // exported: see graphrt/export.h
namespace graphrt {

class ChromeTraceWriter {
 public:
  ChromeTraceWriter();
  // One span: `name` and `category` may be any bytes (graphrt/json_writer.h says how they are written).
  void complete_event(std::string_view name, std::string_view category, double start_us, double duration_us);
  // The same with its call depth (args.depth): nested spans, as the Relax VM's calls.
  void complete_event(std::string_view name, std::string_view category, double start_us, double duration_us,
                      int depth);
  // The document; the writer is spent.
  std::string finish();

 private:
  void begin_event(std::string_view name, std::string_view category, double start_us, double duration_us);

  JsonWriter w_;
};

}  // namespace graphrt
#pragma GCC visibility pop
