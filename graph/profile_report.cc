// Text and Chrome-trace renderings of a profile.
#include <algorithm>
#include <cstdio>
#include <map>
#include <sstream>

#include "graphrt/chrome_trace.h"
#include "graphrt/graph_executor.h"

namespace graphrt {

namespace {
// Names go last so that none is ever cut, however long TVM made it.
std::string row(const std::string& name, double total, int64_t calls, int runs, double grand_total) {
  char buf[128];
  std::snprintf(buf, sizeof(buf), "%12.2f %12.2f %8lld %7.2f%%  ", runs > 0 ? total / runs : 0.0, total,
                static_cast<long long>(calls), grand_total > 0 ? 100.0 * total / grand_total : 0.0);
  return buf + name + "\n";
}

std::string header(const char* what) {
  char buf[128];
  std::snprintf(buf, sizeof(buf), "%12s %12s %8s %8s  %s\n", "mean (us)", "total (us)", "calls", "share", what);
  return buf;
}
}  // namespace

std::string ProfileReport::table() const {
  std::ostringstream os;
  os << "Per node: mean = time per run, total = over " << runs << " run" << (runs == 1 ? "" : "s");
  if (warmup > 0) os << " (after " << warmup << " warm-up run" << (warmup == 1 ? "" : "s") << ", not counted)";
  os << "\n" << header("node");
  bool any_in_place = false;
  for (const NodeProfile& n : nodes) {
    os << row(n.node, n.total_us, n.calls, runs, total_us);
    any_in_place = any_in_place || n.done_in_place;
  }
  if (any_in_place)
    os << "(0 calls: a concatenation done in place; the nodes producing its inputs write into its output)\n";
  std::map<std::string, NodeProfile> by_function;
  for (const NodeProfile& n : nodes) {
    NodeProfile& f = by_function[n.function];
    f.function = n.function;
    f.total_us += n.total_us;
    f.calls += n.calls;
  }
  std::vector<NodeProfile> functions;
  for (auto& kv : by_function) functions.push_back(kv.second);
  std::sort(functions.begin(), functions.end(), [](const NodeProfile& a, const NodeProfile& b) { return a.total_us > b.total_us; });
  os << "\nPer function:\n" << header("function");
  for (const NodeProfile& f : functions) os << row(f.function, f.total_us, f.calls, runs, total_us);
  char total[160];
  std::snprintf(total, sizeof(total), "\nAll nodes: %.2f us per run (mean), %.2f us total over %d run(s)\n",
                runs ? total_us / runs : 0.0, total_us, runs);
  os << total;
  return os.str();
}

std::string ProfileReport::chrome_trace() const {
  ChromeTraceWriter trace;
  for (const TraceEvent& e : events) trace.complete_event(e.node, e.function, e.start_us, e.duration_us);
  return trace.finish();
}

}  // namespace graphrt
