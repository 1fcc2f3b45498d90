#include "graphrt/graph_executor.h"
#include "graphrt/log.h"
#include "graphrt/run_deadline.h"
#include "src/layer_api/time_evaluator_support.h"

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <unordered_map>

#include "graphrt/graph_json.h"
#include "graphrt/device_api.h"
#include "graphrt/packed_func.h"
#include "src/layer_api/user_mistakes.h"
#include "device_graph.h"
#include "node_profiler.h"
#include "op_call.h"
#include "storage_plan.h"
#include "src/layer_api/kernel_failure.h"
#include "src/layer_api/string_distance.h"
#include "src/layer_api/thread_pool_run_scope.h"

namespace graphrt {

struct GraphExecutor::Impl {
  explicit Impl(std::shared_ptr<const GraphDef> parsed) : graph_def(std::move(parsed)), graph(*graph_def) {}
  Module owner;  // GraphExecutorOptions::owner
  std::shared_ptr<const GraphDef> graph_def;  // shared with the other executors of a factory
  const GraphDef& graph;
  Module lib;
  std::vector<DLDevice> devices;
  // The device APIs of `devices` in GraphExecutorOptions::runtime, resolved at
  // creation: what allocates and copies the tensors (the runtime owns them).
  std::unique_ptr<DeviceApis> apis;
  MemoryPlan plan_kind = MemoryPlan::kTvm;
  size_t active_plan_bytes = 0;
  std::vector<bool> node_done_in_place;  // per node (empty: none): see in_place_concat.h
  // Per entry: its memory is a bound param's array, shared with the arrays'
  // other holders (whole alias groups). Writes go to an own copy first.
  std::vector<bool> external;
  std::vector<NDArray> own_copies;  // params unshared by a write
  // Per alias group moved to a caller's memory by a zero-copy input: where it pointed before,
  // and whether that was a bound param's. A copied input goes back there: it must never write
  // into memory the caller lent for an earlier run (and may have freed since).
  std::map<uint32_t, std::pair<void*, bool>> before_zero_copy;

  std::vector<NDArray> buffers;          // allocated storage
  std::vector<NDArray> entries;          // one view per entry (its DLTensor is what kernels see)
  std::vector<uint32_t> alias_group;     // per entry
  std::vector<std::vector<uint32_t>> group_members;  // representative entry -> entries
  std::vector<std::vector<DLTensor*>> flat_views;    // per entry: flattened copies to patch on zero-copy
  std::vector<std::unique_ptr<DLTensor>> flat_storage;
  std::vector<std::unique_ptr<int64_t>> flat_shapes;
  std::vector<NDArray> shared_param_owners;  // keeps another executor's params alive
  std::vector<OpCall> ops;
  std::vector<std::vector<uint32_t>> op_entries;  // per op: the entries of its tensor arguments
  std::map<std::string, int> input_by_name;
  std::map<std::string, int> output_by_name;
  std::vector<std::string> param_names;
  bool device_graph_requested = false;
  DeviceGraph device_graph;  // device_graph.h: capture and replay
  std::vector<bool> input_set;  // per arg node: set_input, zero-copy or a param has filled it
  size_t inputs_unset = 0;
  bool ran = false;             // outputs hold a run's results
  int last_executed_node = -1;

  // Generated kernels called straight from one compact array (the per-node
  // cost of a run is this loop); other calls go through OpCall::invoke.
  std::vector<OpCall::Direct> direct_calls;

  void run_op(size_t i, uint64_t generation) {
    const OpCall::Direct& c = direct_calls[i];
    if (!c.fn) {
      ops[i].invoke();
      return;
    }
    TVMValue ret;
    int ret_code = kTVMNullptr;
    if (c.fn(c.values, c.codes, c.num_args, &ret, &ret_code, nullptr) != 0)
      ops[i].fail(kernel_failure(ops[i].function_name(), generation));
  }

  void run_ops() {
    // Read once per run, not per node: kernels set the last error only when they fail.
    const uint64_t generation = last_error_generation();
    if (!run_deadline_set()) {
      for (size_t i = 0, n = direct_calls.size(); i < n; ++i) run_op(i, generation);
      return;
    }
    // A run with a deadline (graphrt/run_deadline.h) checks it between nodes.
    for (size_t i = 0, n = direct_calls.size(); i < n; ++i) {
      if (run_deadline_passed())
        throw Error(ErrorKind::kInterrupted, "run interrupted: its deadline passed before node " +
                                                 std::to_string(i) + " of " + std::to_string(n) + " ('" +
                                                 ops[i].node_name() + "')")
            .with("node", ops[i].node_name());
      run_op(i, generation);
    }
  }

  // A run being captured: each op's work is marked with its index, which
  // follow_move_in_device_graph names to the device.
  void run_ops_marking_steps(DeviceAPI* api, DLDevice device) {
    const uint64_t generation = last_error_generation();
    for (size_t i = 0, n = direct_calls.size(); i < n; ++i) {
      api->capture_step(device, static_cast<uint32_t>(i));
      run_op(i, generation);
    }
  }

  std::string capture_blocker(DLDevice* device) const {
    int non_cpu = 0;
    for (const DLDevice& d : devices) {
      if (d.device_type != kDLCPU) {
        *device = d;
        ++non_cpu;
      }
    }
    if (non_cpu != 1) return "graph capture needs exactly one GPU device";
    for (const NDArray& b : buffers) {
      if (b->device.device_type == kDLCPU) return "the graph has host storage (CPU nodes cannot be captured)";
    }
    for (const OpCall& op : ops) {
      if (op.function_name() == "__copy") return "the graph has device copies (__copy nodes)";
    }
    return "";
  }

  // TVM silently puts tensors of a device type nobody was given on devices[0]; the kernels then
  // fail on their first argument check. Say at creation what the graph wants instead.
  void check_devices_match_graph() const {
    std::map<int, size_t> wanted;  // device type -> number of tensors placed there
    for (int type : graph.device_type) ++wanted[type];
    if (wanted.empty() && module_tree_has(lib, "cuda")) wanted[kDLCUDA] = 0;
    if (wanted.empty() && module_tree_has(lib, "opencl")) wanted[kDLOpenCL] = 0;
    if (wanted.empty() && module_tree_has(lib, "vulkan")) wanted[kDLVulkan] = 0;
    for (const auto& kv : wanted) {
      bool given = false;
      for (const DLDevice& d : devices) given |= d.device_type == kv.first;
      if (given) continue;
      std::string type = device_type_name(kv.first);
      std::string given_list;
      for (const DLDevice& d : devices) given_list += (given_list.empty() ? "" : ", ") + device_to_string(d);
      std::string why = kv.second ? "its device_index attrs place " + std::to_string(kv.second) + " tensors on " + type
                                  : "its library holds a " + quote_untrusted(type) + " module";
      throw Error("the graph wants a " + upper(type) + " device (" + why + ") but was given " + given_list +
                  ": create it on a " + type + " device (Python: lib[\"default\"](graphrt." + type + "(0)))")
          .with("option", "device=" + type);
    }
  }

  static std::string device_type_name(int type) {
    std::string s = device_to_string(DLDevice{static_cast<DLDeviceType>(type), 0});
    return s.substr(0, s.find('('));
  }

  static std::string upper(std::string s) {
    for (char& c : s) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
    return s;
  }

  static bool module_tree_has(const Module& m, const std::string& type_key) {
    if (m->type_key() == type_key) return true;
    for (const ModuleNode* child : imported_modules(*m))
      if (child->type_key() == type_key) return true;
    return false;
  }

  DLDevice device_for_type(int type) const {
    for (const DLDevice& d : devices) {
      if (d.device_type == type) return d;
    }
    return devices[0];
  }

  uint32_t input_entry(int index) const {
    if (index < 0 || static_cast<size_t>(index) >= graph.arg_nodes.size())
      throw Error(ErrorKind::kOutOfRange, "input index " + std::to_string(index) + " out of range (graph has " +
                  std::to_string(graph.arg_nodes.size()) + " inputs)");
    return graph.entry_id(graph.arg_nodes[index], 0);
  }

  uint32_t output_entry(int index) const {
    if (index < 0 || static_cast<size_t>(index) >= graph.heads.size())
      throw Error(ErrorKind::kOutOfRange, "output index " + std::to_string(index) + " out of range (graph has " +
                  std::to_string(graph.heads.size()) + " outputs)");
    return graph.entry_id(graph.heads[index]);
  }

  StoragePlan make_plan(MemoryPlan kind) const {
    int fallback = devices[0].device_type;
    return kind == MemoryPlan::kLiveness ? plan_liveness(graph, fallback, external) : plan_tvm(graph, fallback, external);
  }

  // Marks the inputs that `params` can back directly: CPU arrays of the
  // entry's dtype and size, 64-byte aligned, on a CPU entry. Returns, per
  // alias group representative, the array that backs it.
  std::vector<NDArray> choose_bound_params(const ParamList& params) {
    size_t n = graph.num_entries();
    std::vector<NDArray> backing(n);
    if (params.empty()) return backing;
    external.assign(n, false);
    int fallback = devices[0].device_type;
    for (const auto& p : params) {
      auto it = input_by_name.find(p.first);
      if (it == input_by_name.end() || !p.second.defined()) continue;
      uint32_t entry = input_entry(it->second);
      const DLTensor* a = p.second.handle();
      uint32_t group = alias_group[entry];
      bool fits = a->device.device_type == kDLCPU && entry_device_type(graph, entry, fallback) == kDLCPU &&
                  a->dtype == graph.dtype[entry] && a->byte_offset == 0 && tensor_is_contiguous(a) &&
                  reinterpret_cast<uintptr_t>(a->data) % 64 == 0 && !backing[group].defined();
      for (uint32_t member : group_members[group]) fits = fits && entry_bytes(graph, member) <= p.second.nbytes();
      if (!fits || entry_bytes(graph, entry) != p.second.nbytes()) continue;
      backing[group] = p.second;
      for (uint32_t member : group_members[group]) external[member] = true;
    }
    return backing;
  }

  // `backing`: per alias group, the bound param array (see choose_bound_params).
  // Resolves kAuto: TVM's plan, unless it is large and liveness needs less.
  StoragePlan choose_plan() {
    if (plan_kind != MemoryPlan::kAuto) return make_plan(plan_kind);
    StoragePlan tvm = make_plan(MemoryPlan::kTvm);
    plan_kind = MemoryPlan::kTvm;
    if (tvm.total_bytes() < kAutoPlanMinBytes) return tvm;
    StoragePlan live = make_plan(MemoryPlan::kLiveness);
    if (live.total_bytes() >= tvm.total_bytes()) return tvm;
    plan_kind = MemoryPlan::kLiveness;
    return live;
  }

  void setup_storage(const std::vector<NDArray>& backing) {
    StoragePlan plan = choose_plan();
    active_plan_bytes = plan.total_bytes();
    node_done_in_place = std::move(plan.node_done_in_place);
    for (const StoragePlan::Buffer& b : plan.buffers) {
      if (!b.used) {
        buffers.emplace_back();
        continue;
      }
      int64_t words = static_cast<int64_t>((b.bytes + 3) / 4);
      buffers.push_back(apis->empty({words}, DLDataType{kDLFloat, 32, 1}, device_for_type(b.device_type)));
    }
    size_t n = graph.num_entries();
    entries.reserve(n);
    for (size_t e = 0; e < n; ++e) {
      try {
        if (plan.entry_buffer[e] == StoragePlan::kExternal) {
          entries.push_back(backing[alias_group[e]].view(graph.shape[e], graph.dtype[e], 0));
        } else {
          if (!external.empty()) external[e] = false;  // TVM's plan kept its storage id
          entries.push_back(buffers[plan.entry_buffer[e]].view(graph.shape[e], graph.dtype[e], plan.entry_offset[e]));
        }
      } catch (Error& err) {
        throw err.with("entry", std::to_string(e));
      }
    }
    flat_views.assign(n, {});
  }

  void setup_alias_groups() {
    size_t n = graph.num_entries();
    alias_group = alias_groups(graph);
    group_members.assign(n, {});
    for (uint32_t e = 0; e < n; ++e) group_members[alias_group[e]].push_back(e);
  }

  // A zero-copy input: the group points at the caller's memory until a copied input.
  void lend(uint32_t entry, void* data) {
    before_zero_copy.emplace(alias_group[entry], std::make_pair(entries[entry]->data,
                                                                 !external.empty() && external[entry]));
    point_group_at(entry, data);
  }

  void take_back(uint32_t entry) {
    auto lent = before_zero_copy.find(alias_group[entry]);
    if (lent == before_zero_copy.end()) return;
    const std::pair<void*, bool> own = lent->second;
    before_zero_copy.erase(lent);
    point_group_at(entry, own.first);
    if (own.second)
      for (uint32_t member : group_members[alias_group[entry]]) external[member] = true;
  }

  // Before a write into `entry`: its own storage again (after a zero-copy input); and for a
  // bound param, this executor's own copy, so the arrays' other holders keep their values.
  void unshare(uint32_t entry) {
    take_back(entry);
    if (external.empty() || !external[entry]) return;
    size_t bytes = 0;
    uint32_t group = alias_group[entry];
    for (uint32_t member : group_members[group]) bytes = std::max(bytes, entry_bytes(graph, member));
    NDArray own = apis->empty({static_cast<int64_t>((bytes + 3) / 4)}, DLDataType{kDLFloat, 32, 1}, DLDevice{kDLCPU, 0});
    std::memcpy(own->data, entries[entry]->data, entry_bytes(graph, entry));
    point_group_at(entry, own->data);
    own_copies.push_back(std::move(own));
  }

  DLTensor* argument_tensor(uint32_t entry, bool flatten) {
    DLTensor* t = entries[entry].handle();
    if (!flatten) return t;
    auto shape = std::make_unique<int64_t>(shape_numel(t->shape, t->ndim));
    auto flat = std::make_unique<DLTensor>(*t);
    flat->ndim = 1;
    flat->shape = shape.get();
    flat_views[entry].push_back(flat.get());
    flat_shapes.push_back(std::move(shape));
    flat_storage.push_back(std::move(flat));
    return flat_storage.back().get();
  }

  void setup_ops() {
    ops.clear();
    op_entries.clear();
    for (auto& v : flat_views) v.clear();
    flat_storage.clear();
    flat_shapes.clear();
    // Graphs call few kernels many times (a layer repeated): each name is looked up once.
    std::unordered_map<std::string, PackedFunc> resolved;
    for (uint32_t nid = 0; nid < graph.nodes.size(); ++nid) {
      const GraphNode& node = graph.nodes[nid];
      if (node.op != "tvm_op" || node.func_name == "__nop") continue;
      if (!node_done_in_place.empty() && node_done_in_place[nid]) continue;
      std::vector<DLTensor*> args;
      std::vector<uint32_t> arg_entries;
      for (const NodeEntry& in : node.inputs) arg_entries.push_back(graph.entry_id(in));
      for (uint32_t i = 0; i < node.num_outputs; ++i) arg_entries.push_back(graph.entry_id(nid, i));
      for (uint32_t e : arg_entries) args.push_back(argument_tensor(e, node.flatten_data));
      op_entries.push_back(std::move(arg_entries));
      PackedFunc fn;
      if (node.func_name != "__copy") {
        PackedFunc& known = resolved[node.func_name];
        if (!known) known = resolve(nid, node);
        fn = known;
      }
      ops.push_back(OpCall::make(nid, node.name, node.func_name, std::move(fn), std::move(args), apis.get()));
    }
    direct_calls.clear();
    for (OpCall& op : ops) direct_calls.push_back(op.direct());
  }

  PackedFunc resolve(uint32_t nid, const GraphNode& node) {
    PackedFunc fn = lib->get_function(node.func_name, true);
    if (fn) return fn;
    std::vector<std::string> names = lib->function_names();
    for (const Module& m : lib->imports()) {
      for (const std::string& name : m->function_names()) names.push_back(name);
    }
    // When most of the graph's functions are missing, the graph and the library do not belong
    // together: one missing name and its look-alikes would send the user hunting for a typo.
    std::vector<std::string> wanted, missing;
    for (const GraphNode& n : graph.nodes) {
      if (n.op == "null" || n.func_name == "__copy" || n.func_name == "__nop" || n.func_name.empty()) continue;
      if (std::find(wanted.begin(), wanted.end(), n.func_name) != wanted.end()) continue;
      wanted.push_back(n.func_name);
      if (!lib->get_function(n.func_name, true)) missing.push_back(n.func_name);
    }
    const std::string usage = module_usage_hint(apis->runtime(), lib->type_key());
    if (!usage.empty())
      throw Error(ErrorKind::kNotFound, "the graph's library is " + usage).with("symbol", node.func_name);
    if (missing.size() * 2 > wanted.size()) {
      std::string list;
      for (size_t i = 0; i < missing.size() && i < 3; ++i) list += (i ? ", " : "") + missing[i];
      if (missing.size() > 3) list += ", ...";
      throw Error(ErrorKind::kNotFound,
                  "the graph and the library come from different exports: the library has " +
                  std::to_string(wanted.size() - missing.size()) + " of the " + std::to_string(wanted.size()) +
                  " functions the graph calls (missing: " + list +
                  "); pass the kernels library exported together with this graph")
          .with("symbol", node.func_name);
    }
    std::string hint = closest_matches(node.func_name, names, 3);
    throw Error(ErrorKind::kNotFound,
                "graph node " + std::to_string(nid) + " " + quote_untrusted(node.name) + " calls function " + quote_untrusted(node.func_name) +
                ", which the library does not have" + (hint.empty() ? "" : " (did you mean: " + hint + "?)"))
        .with("node", node.name)
        .with("symbol", node.func_name);
  }

  void mark_input_set(int index) {
    if (!input_set[index]) {
      input_set[index] = true;
      --inputs_unset;
    }
  }

  // Splits inputs into data inputs and params (loaded ones, or ones named as relay.build
  // names the params it binds).
  void split_inputs(const std::vector<int>& indices, std::vector<std::string>* data,
                    std::vector<std::string>* params) const {
    for (int i : indices) {
      const std::string& name = graph.nodes[graph.arg_nodes[i]].name;
      bool is_param = is_tvm_param_name(name) ||
                      std::find(param_names.begin(), param_names.end(), name) != param_names.end();
      (is_param ? params : data)->push_back(name);
    }
  }

  static std::string join_names(const std::vector<std::string>& names, size_t limit) {
    std::string s;
    for (size_t i = 0; i < names.size() && i < limit; ++i) s += (i ? ", " : "") + names[i];
    if (names.size() > limit) s += ", ... " + names.back() + " (" + std::to_string(names.size()) + ")";
    return s;
  }

  // "data inputs: a, b; params: p0, p1, ... p51 (52)"
  std::string describe_inputs(const std::vector<int>& indices, size_t limit) const {
    std::vector<std::string> data, params;
    split_inputs(indices, &data, &params);
    std::string out = "data inputs: " + (data.empty() ? std::string("none") : join_names(data, limit));
    if (!params.empty()) out += "; params: " + join_names(params, limit);
    return out;
  }

  void check_inputs_set() const {
    if (inputs_unset == 0) return;
    std::vector<int> unset;
    for (size_t i = 0; i < input_set.size(); ++i)
      if (!input_set[i]) unset.push_back(static_cast<int>(i));
    std::vector<std::string> data, params;
    split_inputs(unset, &data, &params);
    std::string msg = "run() before every input was set:";
    if (!params.empty())
      msg += " params not loaded: " + join_names(params, 6) +
             "; load them with load_params (the model's params file, e.g. deploy_params.params)" +
             (data.empty() ? "" : ";");
    if (!data.empty()) msg += " inputs not set: " + join_names(data, 6) + "; set them with set_input";
    Error error(ErrorKind::kFailedPrecondition, msg);
    if (!params.empty()) error.with("option", "params");
    throw error;
  }

  void check_ran(int output) const {
    if (!ran) throw Error(ErrorKind::kFailedPrecondition,
                          "output " + std::to_string(output) + " read before run(): it holds no results yet; call run() first");
  }

  void build_name_maps() {
    input_set.assign(graph.arg_nodes.size(), false);
    inputs_unset = graph.arg_nodes.size();
    for (size_t i = 0; i < graph.arg_nodes.size(); ++i) input_by_name[graph.nodes[graph.arg_nodes[i]].name] = static_cast<int>(i);
    for (size_t i = 0; i < graph.heads.size(); ++i) {
      const NodeEntry& h = graph.heads[i];
      const std::string& name = graph.nodes[h.node_id].name;
      output_by_name[name + ":" + std::to_string(h.index)] = static_cast<int>(i);
      output_by_name[name] = static_cast<int>(i);
    }
  }

  void check_tensor_matches(uint32_t entry, const DLTensor* value, const std::string& what) const {
    const DLTensor* mine = entries[entry].handle();
    // A caller's raw DLTensor (TVM's C ABI): null pointers and a rank no tensor has are refused
    // before the shape is read (a message prints it).
    if (!value) throw Error(what + ": null tensor");
    if (value->ndim < 0 || value->ndim > 64) throw Error(what + ": ndim " + std::to_string(value->ndim) + " is not a rank");
    if (value->ndim > 0 && !value->shape) throw Error(what + ": null shape");
    bool same_shape = mine->ndim == value->ndim &&
                      std::equal(mine->shape, mine->shape + mine->ndim, value->shape);
    if (!same_shape || mine->dtype != value->dtype)
      throw Error(what + " expects " + shape_to_string(mine->shape, mine->ndim) + " " + dtype_to_string(mine->dtype) +
                  ", got " + shape_to_string(value->shape, value->ndim) + " " + dtype_to_string(value->dtype));
    if (!value->data && tensor_nbytes(mine) != 0) throw Error(what + ": null data");
  }

  void point_group_at(uint32_t entry, void* data) {
    for (uint32_t member : group_members[alias_group[entry]]) {
      if (!external.empty()) external[member] = false;
    }
    if (device_graph.active()) follow_move_in_device_graph(entry, data);  // it holds the old address
    for (uint32_t member : group_members[alias_group[entry]]) {
      entries[member]->data = data;
      for (DLTensor* flat : flat_views[member]) flat->data = data;
    }
  }

  // Points the captured graph's uses of `entry`'s alias group at `data`. The
  // ops using the group are the steps to update; an op that also has another
  // tensor at the old address (the memory plan reuses storage, a caller may
  // pass one buffer twice) makes the address ambiguous.
  void follow_move_in_device_graph(uint32_t entry, void* data) {
    uint32_t group = alias_group[entry];
    const char* old = static_cast<const char*>(entries[entry]->data);
    size_t nbytes = 0;
    std::vector<uint32_t> steps;
    std::string blocker;
    for (uint32_t member : group_members[group]) {
      if (entries[member]->data != old) blocker = "the tensor's views start at different addresses";
      nbytes = std::max(nbytes, entry_bytes(graph, member));
    }
    for (size_t i = 0; i < ops.size() && blocker.empty(); ++i) {
      bool uses = false;
      const std::string* clash = nullptr;
      for (uint32_t e : op_entries[i]) {
        if (alias_group[e] == group) {
          uses = true;
          continue;
        }
        const char* other = static_cast<const char*>(entries[e]->data);
        if (other < old + nbytes && old < other + entry_bytes(graph, e)) clash = &graph.nodes[ops[i].node_id()].name;
      }
      if (uses && clash) blocker = "node " + quote_untrusted(*clash) + " has another tensor at the same address";
      if (uses) steps.push_back(static_cast<uint32_t>(i));
    }
    device_graph.follow_move(old, nbytes, data, steps, blocker);
  }

  ProfiledOps profiled_ops() { return ProfiledOps{graph, ops, node_done_in_place, devices, *apis}; }

  void check_zero_copy(uint32_t entry, const DLTensor* value, const std::string& what) const {
    check_tensor_matches(entry, value, what);
    const DLTensor* mine = entries[entry].handle();
    auto address = reinterpret_cast<uintptr_t>(value->data) + value->byte_offset;
    if (address % 64 != 0) throw Error(what + ": zero-copy tensors must be 64-byte aligned");
    if (!(mine->device == value->device))
      throw Error(what + ": zero-copy tensor is on " + device_to_string(value->device) + ", graph expects " +
                  device_to_string(mine->device));
    if (!tensor_is_contiguous(value)) throw Error(what + ": zero-copy tensors must be contiguous");
  }
};

namespace {

// The executor's run as DeviceGraph sees it (an adapter, so that Impl, a part
// of an exported class, stays without a vtable or typeinfo to export).
class ExecutorRun final : public CapturableRun {
 public:
  explicit ExecutorRun(GraphExecutor::Impl& impl) : impl_(impl) {}
  void run_all() override { impl_.run_ops(); }
  void run_all_marking_steps(DeviceAPI* api, DLDevice device) override { impl_.run_ops_marking_steps(api, device); }
  std::string capture_blocker(DLDevice* device) const override { return impl_.capture_blocker(device); }

 private:
  GraphExecutor::Impl& impl_;
};

}  // namespace

GraphExecutor::GraphExecutor(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
GraphExecutor::~GraphExecutor() = default;

MemoryPlan memory_plan_from_name(const std::string& name) {
  if (name == "tvm") return MemoryPlan::kTvm;
  if (name == "liveness") return MemoryPlan::kLiveness;
  if (name == "auto") return MemoryPlan::kAuto;
  throw Error("unknown memory plan " + quote_untrusted(name) + " (use 'tvm', 'liveness' or 'auto')");
}

const char* memory_plan_name(MemoryPlan plan) {
  switch (plan) {
    case MemoryPlan::kTvm: return "tvm";
    case MemoryPlan::kLiveness: return "liveness";
    case MemoryPlan::kAuto: return "auto";
  }
  return "?";
}

static MemoryPlan plan_from_env(MemoryPlan fallback) {
  const char* env = std::getenv("GRAPHRT_MEMORY_PLAN");
  if (!env || !*env) return fallback;
  try {
    return memory_plan_from_name(env);
  } catch (Error& e) {
    throw e.with("environment", "GRAPHRT_MEMORY_PLAN");
  }
}

std::shared_ptr<GraphExecutor> GraphExecutor::create(const std::string& graph_json, const Module& lib,
                                                     const std::vector<DLDevice>& devices,
                                                     const GraphExecutorOptions& options) {
  return create_with_params(graph_json, lib, devices, options, {});
}

std::shared_ptr<GraphExecutor> GraphExecutor::create_with_params(const std::string& graph_json, const Module& lib,
                                                                 const std::vector<DLDevice>& devices,
                                                                 const GraphExecutorOptions& options,
                                                                 const ParamList& params) {
  if (!lib) throw Error("graph executor needs a library module");
  if (devices.empty()) throw Error("graph executor needs at least one device");
  auto impl = std::make_unique<Impl>(options.parsed_graph ? options.parsed_graph
                                                          : std::make_shared<const GraphDef>(parse_graph_json(graph_json)));
  impl->lib = lib;
  impl->owner = options.owner;
  impl->devices = devices;
  impl->plan_kind = options.memory_plan_from_env ? plan_from_env(options.memory_plan) : options.memory_plan;
  impl->device_graph_requested = options.device_graph;
  impl->check_devices_match_graph();
  impl->apis = std::make_unique<DeviceApis>(options.runtime ? *options.runtime : runtime(), devices);
  impl->device_graph.use(*impl->apis);
  impl->build_name_maps();
  impl->setup_alias_groups();
  impl->setup_storage(impl->choose_bound_params(params));
  impl->setup_ops();
  auto executor = std::shared_ptr<GraphExecutor>(new GraphExecutor(std::move(impl)));
  executor->set_params(params);  // copies only what could not be bound
  return executor;
}

int GraphExecutor::num_inputs() const { return static_cast<int>(impl_->graph.arg_nodes.size()); }
int GraphExecutor::num_outputs() const { return static_cast<int>(impl_->graph.heads.size()); }

int GraphExecutor::input_index(const std::string& name) const {
  auto it = impl_->input_by_name.find(name);
  return it == impl_->input_by_name.end() ? -1 : it->second;
}

int GraphExecutor::output_index(const std::string& name) const {
  auto it = impl_->output_by_name.find(name);
  return it == impl_->output_by_name.end() ? -1 : it->second;
}

std::string GraphExecutor::input_name(int index) const {
  impl_->input_entry(index);
  return impl_->graph.nodes[impl_->graph.arg_nodes[index]].name;
}

std::vector<std::string> GraphExecutor::input_names() const {
  std::vector<std::string> names;
  for (uint32_t a : impl_->graph.arg_nodes) names.push_back(impl_->graph.nodes[a].name);
  return names;
}

std::vector<TensorInfo> GraphExecutor::input_info() const {
  std::vector<TensorInfo> out;
  const GraphDef& g = impl_->graph;
  for (uint32_t a : g.arg_nodes) {
    const std::string& name = g.nodes[a].name;
    if (std::find(impl_->param_names.begin(), impl_->param_names.end(), name) != impl_->param_names.end()) continue;
    uint32_t e = g.entry_id(a, 0);
    out.push_back(TensorInfo{name, g.shape[e], g.dtype[e]});
  }
  return out;
}

std::vector<TensorInfo> GraphExecutor::output_info() const {
  std::vector<TensorInfo> out;
  const GraphDef& g = impl_->graph;
  for (const NodeEntry& h : g.heads) {
    uint32_t e = g.entry_id(h);
    out.push_back(TensorInfo{g.nodes[h.node_id].name, g.shape[e], g.dtype[e]});
  }
  return out;
}

void GraphExecutor::set_input(int index, const DLTensor* value) {
  uint32_t entry = impl_->input_entry(index);
  impl_->check_tensor_matches(entry, value, "input " + quote_untrusted(input_name(index)));
  impl_->unshare(entry);
  impl_->apis->copy(value, impl_->entries[entry].handle());
  impl_->mark_input_set(index);
}

void GraphExecutor::set_checked_input(int index, const DLTensor* value) {
  uint32_t entry = impl_->input_entry(index);
  DLTensor* mine = impl_->entries[entry].handle();
  // The one check kept: a size that differs would read past the caller's bytes.
  if (tensor_nbytes(value) != tensor_nbytes(mine))
    throw Error("input " + quote_untrusted(input_name(index)) + " takes " + std::to_string(tensor_nbytes(mine)) + " bytes, got " +
                std::to_string(tensor_nbytes(value)))
        .with("input", input_name(index));
  impl_->unshare(entry);
  mine = impl_->entries[entry].handle();
  if (mine->device.device_type == kDLCPU && value->device.device_type == kDLCPU)
    std::memcpy(static_cast<char*>(mine->data) + mine->byte_offset,
                static_cast<const char*>(value->data) + value->byte_offset, tensor_nbytes(mine));
  else
    copy_tensor(value, mine);  // to or from a device: the device API's copy
  impl_->mark_input_set(index);
}

void GraphExecutor::set_input(const std::string& name, const DLTensor* value) {
  int index = input_index(name);
  if (index < 0) {
    std::vector<int> all(impl_->graph.arg_nodes.size());
    for (size_t i = 0; i < all.size(); ++i) all[i] = static_cast<int>(i);
    throw Error(ErrorKind::kNotFound,
                "unknown input " + quote_untrusted(name) + " (" + impl_->describe_inputs(all, 8) + ")").with("tensor", name);
  }
  set_input(index, value);
}

void GraphExecutor::set_input_zero_copy(int index, const DLTensor* value) {
  uint32_t entry = impl_->input_entry(index);
  impl_->check_zero_copy(entry, value, "input " + quote_untrusted(input_name(index)));
  impl_->lend(entry, static_cast<char*>(value->data) + value->byte_offset);
  impl_->mark_input_set(index);
}

void GraphExecutor::set_output_zero_copy(int index, const DLTensor* value) {
  uint32_t entry = impl_->output_entry(index);
  impl_->check_zero_copy(entry, value, "output " + std::to_string(index));
  impl_->point_group_at(entry, static_cast<char*>(value->data) + value->byte_offset);
}

NDArray GraphExecutor::get_input(int index) const { return impl_->entries[impl_->input_entry(index)]; }
NDArray GraphExecutor::get_output(int index) const {
  uint32_t entry = impl_->output_entry(index);
  impl_->check_ran(index);
  return impl_->entries[entry];
}

void GraphExecutor::copy_output_to(int index, DLTensor* out) const {
  uint32_t entry = impl_->output_entry(index);
  impl_->check_ran(index);
  impl_->check_tensor_matches(entry, out, "output " + std::to_string(index));
  impl_->apis->copy(impl_->entries[entry].handle(), out);
}

void GraphExecutor::load_params(const std::string& bytes) { set_params(load_param_dict(bytes, "params")); }

void GraphExecutor::set_params(const ParamList& params) {
  for (const auto& p : params) {
    int index = input_index(p.first);
    if (index < 0) continue;  // TVM ignores params the graph does not use
    uint32_t entry = impl_->input_entry(index);
    const DLTensor* mine = impl_->entries[entry].handle();
    if (tensor_nbytes(mine) != p.second.nbytes())
      throw Error("param " + quote_untrusted(p.first) + " has " + std::to_string(p.second.nbytes()) + " bytes " +
                  shape_to_string(p.second.shape()) + " " + dtype_to_string(p.second.dtype()) + ", the graph expects " +
                  std::to_string(tensor_nbytes(mine)) + " bytes " + shape_to_string(mine->shape, mine->ndim) + " " +
                  dtype_to_string(mine->dtype))
          .with("param", p.first);
    const bool bound_here = !impl_->external.empty() && impl_->external[entry] && mine->data == p.second->data;
    if (!bound_here) {
      impl_->unshare(entry);
      impl_->apis->copy(p.second.handle(), impl_->entries[entry].handle());
    }
    impl_->mark_input_set(index);
    if (std::find(impl_->param_names.begin(), impl_->param_names.end(), p.first) == impl_->param_names.end())
      impl_->param_names.push_back(p.first);
  }
}

void GraphExecutor::share_params(const GraphExecutor& other, const std::string& bytes) {
  ParamList params = load_param_dict(bytes, "params");
  for (const auto& p : params) {
    int index = input_index(p.first);
    if (index < 0) continue;
    int other_index = other.input_index(p.first);
    if (other_index < 0) throw Error(ErrorKind::kNotFound,
                                     "share_params: the other executor has no input " + quote_untrusted(p.first)).with("param", p.first);
    NDArray theirs = other.get_input(other_index);
    uint32_t entry = impl_->input_entry(index);
    impl_->check_tensor_matches(entry, theirs.handle(), "shared param " + quote_untrusted(p.first));
    impl_->point_group_at(entry, theirs->data);
    impl_->shared_param_owners.push_back(theirs);
    impl_->mark_input_set(index);
    if (std::find(impl_->param_names.begin(), impl_->param_names.end(), p.first) == impl_->param_names.end())
      impl_->param_names.push_back(p.first);
  }
}

std::vector<std::string> GraphExecutor::param_names() const { return impl_->param_names; }

void GraphExecutor::run() {
  impl_->check_inputs_set();
  ThreadPoolRunScope busy;
  RunningDeviceApis kernels_use(*impl_->apis);
  if (impl_->device_graph_requested) {
    ExecutorRun steps(*impl_);
    impl_->device_graph.run(steps);
  } else {
    impl_->run_ops();
  }
  impl_->ran = true;
}

bool GraphExecutor::device_graph_active() const { return impl_->device_graph.active(); }

ProfileReport GraphExecutor::profile(int runs, int warmup) {
  impl_->check_inputs_set();
  ThreadPoolRunScope busy;  // as run(): other executors' launches leave this core to it
  for (int i = 0; i < warmup; ++i) impl_->run_ops();
  ProfileReport report = profile_ops(impl_->profiled_ops(), runs);
  report.warmup = warmup;
  if (runs > 0) impl_->ran = true;
  return report;
}

int GraphExecutor::num_nodes() const { return static_cast<int>(impl_->graph.nodes.size()); }

int GraphExecutor::node_index(const std::string& name) const {
  for (size_t i = 0; i < impl_->graph.nodes.size(); ++i)
    if (impl_->graph.nodes[i].name == name) return static_cast<int>(i);
  return -1;
}

static void check_node(const GraphDef& graph, int node) {
  if (node < 0 || static_cast<size_t>(node) >= graph.nodes.size())
    throw Error(ErrorKind::kOutOfRange, "node index " + std::to_string(node) + " is out of range (the graph has " +
                std::to_string(graph.nodes.size()) + " nodes)");
}

void GraphExecutor::execute_node(int node, bool from_start) {
  check_node(impl_->graph, node);
  impl_->check_inputs_set();
  int first = !from_start && node > impl_->last_executed_node ? impl_->last_executed_node + 1 : 0;
  ThreadPoolRunScope busy;
  for (OpCall& op : impl_->ops) {
    int id = static_cast<int>(op.node_id());
    if (id >= first && id <= node) op.invoke();
  }
  impl_->last_executed_node = node;
  // Executing through the last node leaves every output computed, as run() does.
  if (node == num_nodes() - 1) impl_->ran = true;
}

NDArray GraphExecutor::node_output(int node, int index) const {
  check_node(impl_->graph, node);
  const GraphNode& n = impl_->graph.nodes[node];
  if (index < 0 || static_cast<uint32_t>(index) >= n.num_outputs)
    throw Error(ErrorKind::kOutOfRange,
                "node " + std::to_string(node) + " (" + quote_untrusted(n.name) + ") has " + std::to_string(n.num_outputs) +
                " outputs, not " + std::to_string(index + 1))
        .with("node", n.name);
  return impl_->entries[impl_->graph.entry_id(node, index)];
}

std::vector<double> GraphExecutor::time_node(int node, const TimingOptions& options) {
  check_node(impl_->graph, node);
  check_timing_options(options);
  ThreadPoolRunScope busy;
  return time_node_op(impl_->profiled_ops(), node, options);
}

std::vector<std::vector<double>> GraphExecutor::time_nodes(const TimingOptions& options) {
  check_timing_options(options);
  {
    ThreadPoolRunScope busy;
    impl_->run_ops();
  }
  std::vector<std::vector<double>> seconds;
  for (int i = 0; i < num_nodes(); ++i) seconds.push_back(time_node(i, options));
  return seconds;
}

MemoryReport GraphExecutor::memory_report() const {
  MemoryReport r;
  // The plan not in use is computed only here, on request.
  bool tvm_active = impl_->plan_kind == MemoryPlan::kTvm;
  StoragePlan other = impl_->make_plan(tvm_active ? MemoryPlan::kLiveness : MemoryPlan::kTvm);
  r.tvm_plan_bytes = tvm_active ? impl_->active_plan_bytes : other.total_bytes();
  r.liveness_plan_bytes = tvm_active ? other.total_bytes() : impl_->active_plan_bytes;
  const std::vector<bool>& in_place = tvm_active ? other.node_done_in_place : impl_->node_done_in_place;
  r.liveness_concatenations_in_place = static_cast<int>(std::count(in_place.begin(), in_place.end(), true));
  r.active = impl_->plan_kind;
  for (const NDArray& b : impl_->buffers) r.allocated_bytes += b.defined() ? b.nbytes() : 0;
  return r;
}

const GraphDef& GraphExecutor::graph() const { return impl_->graph; }
std::vector<DLDevice> GraphExecutor::devices() const { return impl_->devices; }

bool is_tvm_param_name(const std::string& name) {
  if (name.size() < 2 || name[0] != 'p') return false;
  for (size_t i = 1; i < name.size(); ++i)
    if (!std::isdigit(static_cast<unsigned char>(name[i]))) return false;
  return true;
}

std::shared_ptr<GraphExecutor> create_graph_executor(const std::string& graph_json, const Module& lib,
                                                     const std::string& params_bytes,
                                                     const std::vector<DLDevice>& devices,
                                                     const GraphExecutorOptions& options) {
  // The decoded params become the executor's storage (no second copy).
  if (params_bytes.empty()) return GraphExecutor::create(graph_json, lib, devices, options);
  const Runtime& params_runtime = options.runtime ? *options.runtime : runtime();
  return GraphExecutor::create_with_params(graph_json, lib, devices, options,
                                           load_param_dict(params_runtime, params_bytes, "params"));
}

}  // namespace graphrt
