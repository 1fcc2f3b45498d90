// TVM's CUDA-graph builtins (TVM v0.26 src/runtime/vm/cuda/cuda_graph_builtin.cc),
// which relax.transform.RewriteCUDAGraph emits:
//
//   vm.builtin.cuda_graph.get_cached_alloc(vm, alloc_func, entry_index)
//     calls alloc_func() once per entry_index and VM; later calls return that
//     first result (the storages the captured region works in).
//   vm.builtin.cuda_graph.run_or_capture(vm, capture_func, args, entry_index[, shape_expr])
//     runs capture_func(*args) and returns its result (the tensors the region
//     leaves for the code after it).
//
// With a device before the host in the VM's device list (a CUDA VM), the
// first run_or_capture of an (entry_index, shape_expr) runs capture_func
// once (warm-up: lazy kernel loading happens outside any capture), then once
// more under the device's stream capture (DeviceAPI::capture_begin/end); later
// calls replay the captured graph (capture_launch) and return the captured
// run's result without running capture_func. Where the device cannot capture
// (no capture support, a capture in progress on the thread, a call that fails
// while capturing) a warning says why and that entry runs capture_func every
// time. On a host-only VM nothing is captured or replayed: capture_func runs
// at every call, so nothing cached can go stale.
#include <map>
#include <unordered_map>
#include <utility>
#include <vector>

#include "graphrt/device_api.h"
#include "graphrt/log.h"
#include "backends/relax/builtin.h"
#include "backends/relax/interpreter.h"

namespace graphrt {
namespace relax {

namespace {

// One captured region: the graph (null when capture was unavailable) and the
// captured run's result.
struct CapturedRegion {
  DLDevice device{kDLCPU, 0};
  void* graph = nullptr;
  Value states;
};

struct CudaGraphState : VirtualMachine::Extension {
  std::unordered_map<int64_t, Value> allocations;
  std::map<std::pair<int64_t, std::vector<int64_t>>, CapturedRegion> regions;
  const DeviceApis* apis = nullptr;  // the VM's, which outlive its extensions

  ~CudaGraphState() override {
    for (auto& r : regions) {
      if (!r.second.graph) continue;
      try {
        apis->of(r.second.device).capture_free(r.second.device, r.second.graph);
      } catch (const std::exception&) {
        // Nothing more can be released while the VM goes.
      }
    }
  }
};

const char kStateKey = 0;  // its address names the extension

CudaGraphState& state_of(VirtualMachine& vm) {
  CudaGraphState& state = vm.extension<CudaGraphState>(&kStateKey);
  state.apis = &vm.device_apis();
  return state;
}

void require_callable(const BuiltinArgs& args, int i, const char* what) {
  const Value& v = args.at(i);
  if (!std::holds_alternative<Ref<ClosureObj>>(v) && !std::holds_alternative<PackedFunc>(v))
    throw args.type_error(i, what, "a closure or function");
}

void get_cached_alloc(VirtualMachine& vm, const BuiltinArgs& args, Value* ret) {
  if (args.size() != 3) throw args.error("takes (vm, alloc_func, entry_index), not " + std::to_string(args.size()) + " arguments");
  require_callable(args, 1, "alloc_func");
  const int64_t entry = args.as_int(2, "entry_index");
  CudaGraphState& state = state_of(vm);
  auto it = state.allocations.find(entry);
  if (it == state.allocations.end()) it = state.allocations.emplace(entry, vm.call_value(args.at(1), nullptr, 0)).first;
  *ret = it->second;
}

// Ends a capture whose run failed and drops what it recorded.
void abandon_capture(DeviceAPI* api, DLDevice device) {
  try {
    if (void* partial = api->capture_end(device)) api->capture_free(device, partial);
  } catch (const std::exception&) {
    // The failed call is the reason worth reporting.
  }
}

// Runs the region once under capture; region.graph stays null, with the
// reason returned, when the device could not capture it.
std::string capture(VirtualMachine& vm, const Value& func, const std::vector<const Value*>& argv, CapturedRegion* region) {
  DeviceAPI* api = nullptr;
  try {
    api = &vm.device_apis().of(region->device);
    api->capture_begin(region->device);
  } catch (const std::exception& e) {
    return e.what();
  }
  try {
    region->states = vm.call_value(func, argv.data(), static_cast<int>(argv.size()));
  } catch (const std::exception& e) {
    abandon_capture(api, region->device);
    region->states = Value();
    return std::string("a call failed while capturing: ") + e.what();
  }
  try {
    region->graph = api->capture_end(region->device);
  } catch (const std::exception& e) {
    region->graph = nullptr;
    region->states = Value();
    return e.what();
  }
  return "";
}

void run_or_capture(VirtualMachine& vm, const BuiltinArgs& args, Value* ret) {
  if (args.size() != 4 && args.size() != 5)
    throw args.error("takes (vm, capture_func, args, entry_index[, shape_expr]), not " + std::to_string(args.size()) +
                     " arguments");
  require_callable(args, 1, "capture_func");
  const Ref<TupleObj>& tuple = args.as_tuple(2, "args");
  const int64_t entry = args.as_int(3, "entry_index");
  std::vector<int64_t> dims;
  if (args.size() == 5) dims = args.as_shape(4, "shape_expr").dims;
  std::vector<const Value*> argv;
  for (const Value& v : tuple->items) argv.push_back(&v);
  const DLDevice device = vm.devices().front();
  auto run = [&] { return vm.call_value(args.at(1), argv.data(), static_cast<int>(argv.size())); };
  if (device.device_type == kDLCPU) {
    *ret = run();
    return;
  }
  CudaGraphState& state = state_of(vm);
  auto key = std::make_pair(entry, std::move(dims));
  auto it = state.regions.find(key);
  if (it != state.regions.end()) {
    if (!it->second.graph) {
      *ret = run();
      return;
    }
    vm.device_apis().of(device).capture_launch(device, it->second.graph);
    *ret = it->second.states;
    return;
  }
  Value warm = run();
  CapturedRegion region;
  region.device = device;
  const std::string why = capture(vm, args.at(1), argv, &region);
  if (!region.graph)
    log_warning(std::string(args.name()) + ": entry " + std::to_string(entry) +
                " runs without a CUDA graph (capture unavailable: " + why + ")");
  *ret = region.graph ? region.states : warm;
  state.regions.emplace(std::move(key), std::move(region));
}

const BuiltinEntry kEntries[] = {
    {"vm.builtin.cuda_graph.get_cached_alloc", get_cached_alloc},
    {"vm.builtin.cuda_graph.run_or_capture", run_or_capture},
};

}  // namespace

const BuiltinEntry* cuda_graph_builtins(size_t* count) {
  *count = sizeof(kEntries) / sizeof(kEntries[0]);
  return kEntries;
}

}  // namespace relax
}  // namespace graphrt
