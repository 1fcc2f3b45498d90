#include "node_profiler.h"

#include <chrono>

#include "graphrt/device_api.h"

namespace graphrt {

namespace {

using Clock = std::chrono::steady_clock;

// A profile's rows: every node with a kernel, in node order, those done in
// place included (never called); `row_of_op`: per op, its row.
std::vector<NodeProfile> profile_rows(const ProfiledOps& p, std::vector<size_t>* row_of_op) {
  std::vector<NodeProfile> rows;
  size_t next_op = 0;
  for (uint32_t nid = 0; nid < p.graph.nodes.size(); ++nid) {
    if (next_op < p.ops.size() && p.ops[next_op].node_id() == nid) {
      row_of_op->push_back(rows.size());
      rows.push_back(NodeProfile{p.ops[next_op].node_name(), p.ops[next_op].function_name(), 0, 0});
      ++next_op;
    } else if (!p.node_done_in_place.empty() && p.node_done_in_place[nid]) {
      rows.push_back(NodeProfile{p.graph.nodes[nid].name, p.graph.nodes[nid].func_name, 0, 0, true});
    }
  }
  return rows;
}

void synchronize_devices(const ProfiledOps& p) {
  for (const DLDevice& d : p.devices) {
    if (d.device_type != kDLCPU) p.apis.of(d).synchronize(d, nullptr);
  }
}

void profile_one_run(const ProfiledOps& p, const std::vector<size_t>& row_of_op, Clock::time_point origin,
                     ProfileReport* report) {
  for (size_t i = 0; i < p.ops.size(); ++i) {
    Clock::time_point start = Clock::now();
    p.ops[i].invoke();
    synchronize_devices(p);
    Clock::time_point end = Clock::now();
    double us = std::chrono::duration<double, std::micro>(end - start).count();
    NodeProfile& row = report->nodes[row_of_op[i]];
    row.total_us += us;
    row.calls += 1;
    report->total_us += us;
    report->events.push_back(ProfileReport::TraceEvent{
        p.ops[i].node_name(), p.ops[i].function_name(),
        std::chrono::duration<double, std::micro>(start - origin).count(), us});
  }
}

}  // namespace

ProfileReport profile_ops(const ProfiledOps& p, int runs) {
  ProfileReport report;
  report.runs = runs;
  std::vector<size_t> row_of_op;
  report.nodes = profile_rows(p, &row_of_op);
  Clock::time_point origin = Clock::now();
  for (int r = 0; r < runs; ++r) profile_one_run(p, row_of_op, origin, &report);
  return report;
}

std::vector<double> time_node_op(const ProfiledOps& p, int node, const TimingOptions& options) {
  for (OpCall& op : p.ops) {
    if (static_cast<int>(op.node_id()) != node) continue;
    DLDevice device = p.devices[0];
    for (const DLDevice& d : p.devices)
      if (d.device_type != kDLCPU) device = d;
    return time_repeats([&op] { op.invoke(); }, device, options);
  }
  return std::vector<double>(static_cast<size_t>(options.repeat), 0.0);
}

}  // namespace graphrt
