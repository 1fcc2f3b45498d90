#include "graphrt/chrome_trace.h"

namespace graphrt {

ChromeTraceWriter::ChromeTraceWriter() {
  w_.begin_object().key("displayTimeUnit").string("ns").key("traceEvents").begin_array();
}

void ChromeTraceWriter::begin_event(std::string_view name, std::string_view category, double start_us,
                                    double duration_us) {
  w_.begin_object().key("name").string(name).key("cat").string(category).key("ph").string("X");
  w_.key("pid").integer(1).key("tid").integer(1).key("ts").fixed(start_us, 3).key("dur").fixed(duration_us, 3);
}

void ChromeTraceWriter::complete_event(std::string_view name, std::string_view category, double start_us,
                                       double duration_us) {
  begin_event(name, category, start_us, duration_us);
  w_.end_object();
}

void ChromeTraceWriter::complete_event(std::string_view name, std::string_view category, double start_us,
                                       double duration_us, int depth) {
  begin_event(name, category, start_us, duration_us);
  w_.key("args").begin_object().key("depth").integer(depth).end_object().end_object();
}

std::string ChromeTraceWriter::finish() {
  w_.end_array().end_object();
  return w_.take();
}

}  // namespace graphrt
