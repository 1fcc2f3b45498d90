// The session layer (the top of libgraphrt, docs/architecture.md; as IREE's runtime session): one
// typed way in. A Session (a runtime, a device, options) loads a Model from
// any artifact graphrt reads; a Model carries typed metadata taken from the
// executor or executable itself (functions, inputs and outputs with names,
// dtypes and shapes, -1 for a symbolic dimension, params) and hands out
// Runners (bind inputs by copy or zero-copy, run, read outputs).
//
// Calls by name (GetFunction("default"), "create_with_options", ...) stay
// behind this header: they are TVM's compatibility faces over the same objects.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "graphrt/graph_executor.h"
#include "graphrt/module.h"
#include "graphrt/runtime.h"
#include "graphrt/value.h"

#pragma GCC visibility push(default)  // exported: see graphrt/export.h

namespace graphrt {

// One input or output: name, dtype, shape (-1 where symbolic). `known` is
// false where the artifact does not say a dtype and rank (a Relax parameter
// its code does not check as a tensor of one dtype and rank).
struct TensorSpec {
  std::string name;
  DLDataType dtype{kDLFloat, 32, 1};
  std::vector<int64_t> shape;
  bool known = true;
  // Relax: one per dimension, the symbolic variable a -1 dimension is (dimensions with the
  // same variable have the same size), else -1; empty where the artifact has none (graphs).
  std::vector<int64_t> symbols;
};

struct FunctionSpec {
  std::string name;                 // "default" for a graph
  std::vector<TensorSpec> inputs;   // data inputs only (params are not inputs)
  std::vector<TensorSpec> outputs;  // empty where only a run says (Relax)
};

enum class ModelKind { kGraph, kRelax };

// What kind of model a loaded root module is, told by its type key here and nowhere else: a
// graph executor factory (a one-file export, GraphExecutorFactory or TVM's older
// GraphRuntimeFactory), a Relax executable (relax.VMExecutable, relax.Executable before TVM
// v0.20); nothing for another module (a kernels library: the three-file form's).
std::optional<ModelKind> model_kind_of(const Module& root);

// Where a model is: a library (one-file export, .tar, tvmc package, Relax
// executable), or a kernels library with a graph JSON and a params file.
struct ModelSource {
  std::string path;
  std::string graph_json_path;  // three-file form
  std::string params_path;      // three-file form, optional
  // A params cache file (graphrt/params_cache.h), "" for none: the model's params (a graph's,
  // a Relax executable's tensor constants) are mapped from it, written first when missing or
  // stale, so that processes serving one model share one copy. Valid for `path` (or
  // `params_path` in the three-file form): name the file the cache stands for there.
  std::string params_cache;
};

struct SessionOptions {
  LoadOptions load;
  std::string memory_plan;  // "" (the default, or GRAPHRT_MEMORY_PLAN), "tvm", "liveness", "auto"
  bool device_graph = false;
};

class Runner;

// Runs measured per callee (a graph's nodes; a Relax function's kernels, builtins and VM
// functions): a table, and one run as a Chrome trace (JSON).
struct RunProfile {
  std::string table;
  std::string chrome_trace;
};

class Model {
 public:
  struct State;
  explicit Model(std::shared_ptr<State> state);
  ModelKind kind() const;
  const Module& root() const;
  const std::vector<FunctionSpec>& functions() const;
  // `name` "" is the model's entry: a graph's "default", a Relax "main" (or its only function).
  const FunctionSpec& function(const std::string& name = "") const;
  const std::vector<std::string>& params() const;  // names of the weights bound at load
  // Graph exports of one model at several batch sizes carry the same params. When this graph
  // factory's params are `with`'s (names, dtypes, shapes and bytes), both bind one decoded copy
  // from now on (each factory's own copy goes; runners made later bind the shared arrays):
  // true then. False, nothing changed, for other params or models (Relax, three-file form).
  bool share_params(Model& with);
  // A runner of `function`; the first runner of a graph uses the executor made at load.
  std::unique_ptr<Runner> runner(const std::string& function = "") const;

 private:
  friend class LanguageModel;  // graphrt/language_model.h: a VM on the model's device
  std::shared_ptr<State> state_;
};

// What two runners hold in common. The runners of one graph model share the graph parsed at
// load (its nodes and attributes: a server's instances hold one copy of the structure) and never
// an executor (the inputs, outputs and memory a run writes), so that they run concurrently.
struct RunnerSharing {
  bool graph = false;     // the parsed graph (graph runners only)
  bool executor = false;  // the executor and the memory its runs write
};

class Runner {
 public:
  virtual ~Runner();  // out of line: the vtable is emitted once, in libgraphrt
  virtual const FunctionSpec& function() const = 0;
  virtual void set_input(const std::string& name, const DLTensor* value) = 0;  // a copy
  // Binds function().inputs[index] by copy, for a caller that has already checked `value`
  // against that spec (dtype; rank and every dimension the spec fixes; contiguous, on the
  // host or the model's device): nothing is checked again (a server checks each request once,
  // naming the field at fault, before it takes a runner), but what keeps memory safe: a graph
  // input's byte count (an Error naming the input). Other callers use set_input, which checks.
  virtual void set_checked_input(int index, const DLTensor* value) = 0;
  virtual void set_input_zero_copy(const std::string& name, const DLTensor* value) = 0;
  virtual void run() = 0;
  virtual int num_outputs() const = 0;
  virtual NDArray output(int index) const = 0;
  // The last run's result, structured (graphrt/value.h): a Relax function's return value as
  // it is (a tensor, a nested tuple, a shape, an int, ...), a graph's outputs as a tuple of
  // tensors. output(i) is its i-th tensor, depth first. A Relax runner before any run: an
  // Error (failed precondition).
  virtual Value result() const = 0;
  // With the inputs set: a graph's `repeat` runs after `warmup`, per node; a Relax function's
  // one call per callee table and one traced call (`repeat` and `warmup` do not apply).
  virtual RunProfile profile(int repeat, int warmup) = 0;
  // What a graph runner's executor plans and holds; nothing for Relax.
  virtual std::optional<MemoryReport> memory_report() const = 0;
  // What this runner shares with `other` (see RunnerSharing): all false for runners of other
  // models or kinds.
  virtual RunnerSharing sharing_with(const Runner& other) const = 0;
};

class Session {
 public:
  // `runtime` must outlive the session and its models. Loads and runs reach its library and
  // record loaders, devices and functions, not the default runtime's (docs/architecture.md,
  // "Process-wide state outside the Runtime", says what TVM's C ABI still reaches there).
  Session(Runtime& runtime, DLDevice device, SessionOptions options = {});
  std::shared_ptr<Model> load(const ModelSource& source) const;
  // A Model over `root`, already loaded from source.path (the rest of `source` as for load).
  std::shared_ptr<Model> open(Module root, const ModelSource& source) const;
  Runtime& runtime() const { return runtime_; }
  DLDevice device() const { return device_; }

 private:
  Runtime& runtime_;
  DLDevice device_;
  SessionOptions options_;
};

}  // namespace graphrt

#pragma GCC visibility pop
