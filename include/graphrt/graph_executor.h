// graphrt::GraphExecutor — runs a TVM graph (graph JSON + kernels + params).
#pragma once

#include "graphrt/export.h"

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "graphrt/blob_reader.h"
#include "graphrt/module.h"
#include "graphrt/ndarray.h"
#include "graphrt/params_cache.h"
#include "graphrt/time_evaluator.h"

#pragma GCC visibility push(default)  // exported: see graphrt/export.h
namespace graphrt {

struct GraphDef;

enum class MemoryPlan {
  kTvm,       // the graph's storage_id sharing, exactly as TVM allocates it
  kLiveness,  // intermediates packed into one arena per device from tensor lifetimes
  // The liveness plan where it needs less memory than TVM's, else TVM's. The
  // liveness plan is only computed when TVM's needs at least kAutoPlanMinBytes
  // (below that, what it could save is not worth the planning time).
  kAuto,
};
constexpr size_t kAutoPlanMinBytes = size_t(1) << 20;

// The one reader and writer of memory-plan names: "tvm", "liveness", "auto".
// An unknown name is an Error that lists the valid ones.
MemoryPlan memory_plan_from_name(const std::string& name);
const char* memory_plan_name(MemoryPlan plan);

struct GraphExecutorOptions {
  // Default: kAuto, unless GRAPHRT_MEMORY_PLAN (tvm, liveness, auto) is set.
  MemoryPlan memory_plan = MemoryPlan::kAuto;
  bool memory_plan_from_env = true;
  // Capture the whole run as one device graph (CUDA graphs) on the first
  // run() and replay it afterwards. Needs a single non-CPU device; otherwise,
  // or when capture fails, runs node by node and says why once (a warning, graphrt/log.h).
  bool device_graph = false;
  // Kept alive as long as the executor (a factory passes itself: the root of
  // the module tree that loads of the same library share).
  Module owner;
  // Whose device APIs hold and copy the executor's tensors, resolved once at
  // creation (null: the process's default runtime). A factory passes the
  // runtime it was loaded through. It must outlive the executor.
  Runtime* runtime = nullptr;
  // The graph JSON already parsed (a factory parses it once for all the executors it makes,
  // which then share it): used instead of parsing the JSON text again.
  std::shared_ptr<const GraphDef> parsed_graph;
};

struct TensorInfo {
  std::string name;
  std::vector<int64_t> shape;
  DLDataType dtype;
};

struct MemoryReport {
  // Plans cover the memory the executor allocates (bound params are left out).
  size_t tvm_plan_bytes = 0;       // sum of TVM's storage pools
  size_t liveness_plan_bytes = 0;  // arena size of the liveness re-plan
  size_t allocated_bytes = 0;      // what this executor actually holds
  int liveness_concatenations_in_place = 0;  // done in place by the liveness re-plan
  MemoryPlan active = MemoryPlan::kTvm;  // the plan in use (never kAuto)
};

struct NodeProfile {
  std::string node;
  std::string function;
  double total_us = 0;
  int64_t calls = 0;
  // A concatenation the liveness plan did in place: its inputs are written
  // into its output, and its function is never called (calls stays 0).
  bool done_in_place = false;
};

struct ProfileReport {
  std::vector<NodeProfile> nodes;  // in node order
  double total_us = 0;
  int runs = 0;
  int warmup = 0;             // unrecorded runs before the profiled ones
  // Per node and per function: mean time per run, total over the runs, calls, share; full names.
  std::string table() const;
  // Chrome trace-event JSON (Perfetto / chrome://tracing open it).
  std::string chrome_trace() const;
  struct TraceEvent {
    std::string node, function;
    double start_us = 0, duration_us = 0;
  };
  std::vector<TraceEvent> events;  // every profiled call, for the trace
};

class GraphExecutor {
 public:
  // `lib` answers the graph's func_names (searched through its imports).
  // devices[0] is the fallback device.
  static std::shared_ptr<GraphExecutor> create(const std::string& graph_json, const Module& lib,
                                               const std::vector<DLDevice>& devices,
                                               const GraphExecutorOptions& options = {});
  // create, then set_params(params) with the arrays bound instead of copied
  // where they fit (CPU, the input's dtype and size, 64-byte aligned): they
  // become those inputs' memory, shared with their other holders (read-only
  // for kernels), and the memory plans leave those inputs out. A write to
  // such an input (set_input, set_params) first gives this executor its own copy.
  static std::shared_ptr<GraphExecutor> create_with_params(const std::string& graph_json, const Module& lib,
                                                           const std::vector<DLDevice>& devices,
                                                           const GraphExecutorOptions& options,
                                                           const ParamList& params);
  ~GraphExecutor();

  int num_inputs() const;   // all arg nodes, parameters included (as TVM)
  int num_outputs() const;
  int input_index(const std::string& name) const;   // -1 when absent
  int output_index(const std::string& name) const;  // "<node name>:<i>" or node name; -1 when absent
  std::string input_name(int index) const;
  std::vector<std::string> input_names() const;
  // Inputs the user is expected to set: arg nodes minus loaded params.
  std::vector<TensorInfo> input_info() const;
  std::vector<TensorInfo> output_info() const;

  void set_input(int index, const DLTensor* value);
  void set_input(const std::string& name, const DLTensor* value);  // unknown name: Error listing valid ones
  // set_input(index, value) for a caller that has already checked `value` against the input
  // (input_info(): dtype and shape; contiguous; on the host or the input's device): the bytes
  // are copied with no check of their own but their byte count's (a mismatch is an Error naming
  // the input). Other callers use set_input.
  void set_checked_input(int index, const DLTensor* value);
  void set_input_zero_copy(int index, const DLTensor* value);
  void set_output_zero_copy(int index, const DLTensor* value);
  NDArray get_input(int index) const;
  NDArray get_output(int index) const;                  // throws before the first run()
  void copy_output_to(int index, DLTensor* out) const;  // throws before the first run()

  void load_params(const std::string& bytes);
  // Copies named params into the inputs they name (unknown names ignored, as
  // TVM) and leaves them out of input_info().
  void set_params(const ParamList& params);
  void share_params(const GraphExecutor& other, const std::string& bytes);
  std::vector<std::string> param_names() const;

  // Throws when an input was never set (set_input, zero-copy or params), naming the params
  // to load and the data inputs to set.
  void run();
  // True once run() replays a captured device graph.
  bool device_graph_active() const;
  // Runs `warmup` times unrecorded (first-run costs: lazy loads, caches), then `runs` times
  // timing every node.
  ProfileReport profile(int runs = 1, int warmup = 1);

  // Node-level access for debugging (TVM's debug executor). Node indices are
  // the graph JSON's; nodes without a kernel (params, __nop) do nothing.
  int num_nodes() const;
  int node_index(const std::string& name) const;  // first node of that name; -1 when absent
  // Runs the nodes after the last one executed up to `node`; from the first
  // node when `node` is not after it or when `from_start`.
  void execute_node(int node, bool from_start = false);
  NDArray node_output(int node, int index) const;  // the executor's own tensor
  // Seconds per call of one node's kernel, one value per repeat (zeros for a
  // node without a kernel). time_nodes does a full run first so every node
  // sees real inputs.
  std::vector<double> time_node(int node, const TimingOptions& options);
  std::vector<std::vector<double>> time_nodes(const TimingOptions& options);

  MemoryReport memory_report() const;
  const GraphDef& graph() const;
  std::vector<DLDevice> devices() const;

  struct Impl;

 private:
  explicit GraphExecutor(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

// True for the names relay.build gives the params it binds ("p0", "p1", ...): how a graph's
// params are told from its data inputs before a params file is loaded.
bool is_tvm_param_name(const std::string& name);

// TVM's save_param_dict format: ordered (name, array) pairs.
ParamList load_param_dict(const std::string& bytes, const std::string& origin = "");
std::string save_param_dict(const ParamList& params);

// The payload of a GraphExecutorFactory blob record (graph JSON, params,
// module name): the writer whose reader is the factory's binary loader.
void write_graph_executor_factory(BlobWriter& writer, const std::string& graph_json, const ParamList& params,
                                  const std::string& module_name = "default");

// What the root of a one-file graph export (TVM's GraphExecutorFactory module)
// holds: its graph JSON and the names of the params it binds (no weight is
// copied). An Error of kind type mismatch when `factory` is another module.
struct GraphFactoryInfo {
  std::string graph_json;
  std::vector<std::string> param_names;
  ParamList params;  // the factory's own arrays (what its executors bind), shared: not copies
};
GraphFactoryInfo graph_factory_info(const Module& factory);

// Wraps an executor as a TVM "GraphExecutor" module (set_input, run, ...).
Module make_graph_executor_module(std::shared_ptr<GraphExecutor> executor);
std::shared_ptr<GraphExecutor> graph_executor_of(const Module& module);  // null if not one

// Three-file form: kernels .so (or any module) + graph JSON + params bytes.
std::shared_ptr<GraphExecutor> create_graph_executor(const std::string& graph_json, const Module& lib,
                                                     const std::string& params_bytes,
                                                     const std::vector<DLDevice>& devices,
                                                     const GraphExecutorOptions& options = {});

}  // namespace graphrt
#pragma GCC visibility pop

// The library's own (not exported).
namespace graphrt {
// load_param_dict with the arrays from `runtime`'s CPU (read_ndarray_records').
ParamList load_param_dict(const Runtime& runtime, const std::string& bytes, const std::string& origin);
}  // namespace graphrt
