#include "backends/relax/profile_report.h"

#include <algorithm>
#include <cstdio>
#include <vector>

#include "graphrt/chrome_trace.h"

namespace graphrt {
namespace relax {

namespace {

std::string row(const char* name, const char* kind, const std::string& calls, const std::string& total,
                const std::string& mean, const std::string& percent) {
  char line[512];
  std::snprintf(line, sizeof(line), "%-40s %-8s %8s %12s %12s %8s\n", name, kind, calls.c_str(), total.c_str(),
                mean.c_str(), percent.c_str());
  return line;
}

std::string fixed(double v, int digits) {
  char s[64];
  std::snprintf(s, sizeof(s), "%.*f", digits, v);
  return s;
}

const char* kind_name(const Callee& c) {
  switch (c.kind) {
    case Callee::kBuiltin: return "builtin";
    case Callee::kPacked: return "kernel";
    case Callee::kVMFunction: return "vm";
  }
  return "?";
}

}  // namespace

std::string chrome_trace(const VirtualMachine& vm, int64_t entry, double total_us) {
  const auto& functions = vm.executable().functions;
  ChromeTraceWriter trace;
  trace.complete_event(functions[static_cast<size_t>(entry)].name, "vm", 0.0, total_us, 0);
  for (const auto& e : vm.trace_events()) {
    const size_t f = static_cast<size_t>(e.function);
    trace.complete_event(functions[f].name, kind_name(vm.linked().callees[f]), e.start_us, e.duration_us, e.depth + 1);
  }
  return trace.finish();
}

std::string profile_table(const VirtualMachine& vm, double total_seconds) {
  const auto& stats = vm.call_stats();
  std::vector<size_t> order;
  for (size_t i = 0; i < stats.size(); ++i)
    if (stats[i].calls) order.push_back(i);
  std::sort(order.begin(), order.end(), [&](size_t a, size_t b) { return stats[a].seconds > stats[b].seconds; });
  std::string out = row("Name", "Kind", "Calls", "Total (us)", "Mean (us)", "Percent");
  for (size_t i : order) {
    const double us = stats[i].seconds * 1e6;
    out += row(vm.executable().functions[i].name.c_str(), kind_name(vm.linked().callees[i]),
               std::to_string(stats[i].calls), fixed(us, 2), fixed(us / static_cast<double>(stats[i].calls), 2),
               fixed(total_seconds > 0 ? 100.0 * stats[i].seconds / total_seconds : 0, 2));
  }
  out += row("Total (one call)", "", "", fixed(total_seconds * 1e6, 2), "", "100.00");
  return out;
}

}  // namespace relax
}  // namespace graphrt
