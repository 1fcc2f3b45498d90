// Text and Chrome-trace renderings of a profile.
#include <algorithm>
#include <cstdio>
#include <map>
#include <sstream>

#include "graphrt/graph_executor.h"

namespace graphrt {

namespace {
std::string json_escape(const std::string& s) {
  std::string out;
  for (char c : s) {
    if (c == '"' || c == '\\') out += '\\';
    if (static_cast<unsigned char>(c) < 0x20) continue;
    out += c;
  }
  return out;
}

std::string row(const std::string& name, double us, int64_t calls, double total) {
  char buf[512];
  std::snprintf(buf, sizeof(buf), "%-60.60s %12.2f %8lld %7.2f%%\n", name.c_str(), us, static_cast<long long>(calls),
                total > 0 ? 100.0 * us / total : 0.0);
  return buf;
}
}  // namespace

std::string ProfileReport::table() const {
  std::ostringstream os;
  char header[256];
  std::snprintf(header, sizeof(header), "%-60s %12s %8s %8s\n", "node", "time (us)", "calls", "share");
  os << "Per node (" << runs << " run" << (runs == 1 ? "" : "s") << "):\n" << header;
  for (const NodeProfile& n : nodes) os << row(n.node, n.total_us, n.calls, total_us);
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
  std::snprintf(header, sizeof(header), "%-60s %12s %8s %8s\n", "function", "time (us)", "calls", "share");
  os << "\nPer function:\n" << header;
  for (const NodeProfile& f : functions) os << row(f.function, f.total_us, f.calls, total_us);
  char total[128];
  std::snprintf(total, sizeof(total), "\nTotal: %.2f us over %d run(s), %.2f us per run\n", total_us, runs,
                runs ? total_us / runs : 0.0);
  os << total;
  return os.str();
}

std::string ProfileReport::chrome_trace() const {
  std::ostringstream os;
  os << "{\"displayTimeUnit\":\"ns\",\"traceEvents\":[";
  for (size_t i = 0; i < events.size(); ++i) {
    const TraceEvent& e = events[i];
    char nums[128];
    std::snprintf(nums, sizeof(nums), "\"ts\":%.3f,\"dur\":%.3f", e.start_us, e.duration_us);
    os << (i ? "," : "") << "{\"name\":\"" << json_escape(e.node) << "\",\"cat\":\"" << json_escape(e.function)
       << "\",\"ph\":\"X\",\"pid\":1,\"tid\":1," << nums << "}";
  }
  os << "]}";
  return os.str();
}

}  // namespace graphrt
