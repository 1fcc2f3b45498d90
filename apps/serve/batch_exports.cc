#include "batch_exports.h"
#include "private_copy.h"

#include <dirent.h>
#include <sys/stat.h>

#include <algorithm>
#include <chrono>
#include <set>

#include "common/model.h"
#include "graphrt/error.h"
#include "graphrt/graph_executor.h"
#include "version_folder.h"

namespace graphrt_serve {

using graphrt::Error;
using graphrt::ErrorKind;
using Clock = std::chrono::steady_clock;

namespace {

// N of "batch_<N>.so" / "batch_<N>.tar"; 0 when `name` is not of that form.
int64_t batch_of_file_name(const std::string& name) {
  const std::string prefix = "batch_";
  if (name.compare(0, prefix.size(), prefix) != 0) return 0;
  const size_t dot = name.find('.', prefix.size());
  if (dot == std::string::npos) return 0;
  const std::string ext = name.substr(dot);
  if (ext != ".so" && ext != ".tar") return 0;
  const std::string digits = name.substr(prefix.size(), dot - prefix.size());
  if (digits.empty() || digits.size() > 9 || digits[0] == '0') return 0;
  int64_t n = 0;
  for (char c : digits) {
    if (c < '0' || c > '9') return 0;
    n = n * 10 + (c - '0');
  }
  return n;
}

std::string tensor_text(const TensorMetadata& t) {
  return "'" + t.name + "' " + datatype_name(t.datatype) + " " + shape_text(t.shape);
}

// One export's data inputs and outputs, and where its executor takes each input.
struct Signature {
  std::vector<TensorMetadata> inputs, outputs;
  std::vector<int> input_indices;
};

Signature signature_of(const graphrt_apps::Model& model, const graphrt::GraphExecutor& executor,
                       const BatchExport& e) {
  const std::set<std::string> params(model.param_names.begin(), model.param_names.end());
  Signature s;
  auto add = [&](const graphrt::TensorInfo& info, const std::string& name, const char* what,
                 std::vector<TensorMetadata>* to) {
    TensorMetadata t{name, true, {}, true, info.shape};
    if (!datatype_from_dl(info.dtype, &t.datatype))
      throw Error(ErrorKind::kUnsupported, e.file + ": " + what + " type " + dl_type_name(info.dtype) +
                                               " has no protocol datatype")
          .with("file", e.path).with("tensor", name);
    if (t.shape.empty() || t.shape[0] != e.batch)
      throw Error(e.file + ": " + what + " '" + name + "' has shape " + shape_text(t.shape) + "; a batch_" +
                  std::to_string(e.batch) + " export has " + std::to_string(e.batch) +
                  " as the leading dimension of every input and output")
          .with("file", e.path).with("tensor", name);
    to->push_back(t);
  };
  for (const graphrt::TensorInfo& info : executor.input_info()) {
    if (params.count(info.name)) continue;
    add(info, info.name, "input", &s.inputs);
    s.input_indices.push_back(executor.input_index(info.name));
  }
  int o = 0;
  for (const graphrt::TensorInfo& info : executor.output_info())
    add(info, "output_" + std::to_string(o++), "output", &s.outputs);
  return s;
}

bool same_but_batch(const TensorMetadata& a, const TensorMetadata& b) {
  return a.name == b.name && a.datatype == b.datatype && a.shape.size() == b.shape.size() &&
         std::equal(a.shape.begin() + 1, a.shape.end(), b.shape.begin() + 1);
}

// Throws unless `got` (of export `e`) matches `want` (of export `first`) but for the batch.
void check_agrees(const std::vector<TensorMetadata>& got, const std::vector<TensorMetadata>& want,
                  const char* what, const BatchExport& e, const BatchExport& first) {
  const char* rule = ": batch exports of one model differ only in the leading (batch) dimension";
  if (got.size() != want.size())
    throw Error(e.file + " has " + std::to_string(got.size()) + " " + what + "s, " + first.file + " has " +
                std::to_string(want.size()) + rule)
        .with("file", e.path);
  for (size_t i = 0; i < got.size(); ++i)
    if (!same_but_batch(got[i], want[i]))
      throw Error(e.file + ": " + what + " " + std::to_string(i) + " is " + tensor_text(got[i]) + ", " + first.file +
                  "'s is " + tensor_text(want[i]) + rule)
          .with("file", e.path).with("tensor", got[i].name);
}

// One executor per export; a batch runs on the smallest that holds its rows.
class PaddedGraphInstance : public Instance {
 public:
  struct Sized {
    int64_t batch;
    std::shared_ptr<graphrt::GraphExecutor> executor;
    std::vector<int> input_indices;
  };
  explicit PaddedGraphInstance(std::vector<Sized> sized) : sized_(std::move(sized)) {}

  void run(const std::vector<const InputTensor*>& inputs, std::vector<OutputTensor>* outputs,
           InferTimings* timings) override {
    auto t0 = Clock::now();
    const int64_t rows = inputs.empty() || inputs[0]->shape.empty() ? 0 : inputs[0]->shape[0];
    auto fit = std::find_if(sized_.begin(), sized_.end(), [&](const Sized& s) { return s.batch >= rows; });
    if (rows < 1 || fit == sized_.end())
      throw Error("batch of " + std::to_string(rows) + " rows; the largest export takes " +
                  std::to_string(sized_.back().batch))
          .with("field", "shape");
    scratch_.resize(inputs.size());
    for (size_t i = 0; i < inputs.size(); ++i) {
      const InputTensor& in = *inputs[i];
      std::vector<int64_t> shape = in.shape;
      shape[0] = fit->batch;
      const char* data = in.data();
      if (rows < fit->batch) {
        // Zero rows after the real ones; their outputs are dropped below. Sound for models
        // that compute each row on its own (no reduction across the batch).
        scratch_[i].assign(in.data(), in.size());
        scratch_[i].resize(in.size() / static_cast<size_t>(rows) * static_cast<size_t>(fit->batch), '\0');
        data = scratch_[i].data();
      }
      DLTensor t{};
      t.data = const_cast<char*>(data);  // set_input only reads it
      t.device = DLDevice{kDLCPU, 0};
      t.ndim = static_cast<int>(shape.size());
      datatype_to_dl(in.datatype, &t.dtype);
      t.shape = shape.data();
      fit->executor->set_input(fit->input_indices[i], &t);
    }
    timings->input_ns = ns_since(t0);
    t0 = Clock::now();
    fit->executor->run();
    timings->infer_ns = ns_since(t0);
    t0 = Clock::now();
    outputs->clear();
    for (int o = 0; o < fit->executor->num_outputs(); ++o) {
      const graphrt::NDArray array = fit->executor->get_output(o);
      OutputTensor out;
      out.name = "output_" + std::to_string(o);
      datatype_from_dl(array.dtype(), &out.datatype);  // checked at load
      out.shape = array.shape();
      out.shape[0] = rows;
      out.data.resize(array.nbytes());
      array.copy_to_bytes(&out.data[0], out.data.size());
      out.data.resize(out.data.size() / static_cast<size_t>(fit->batch) * static_cast<size_t>(rows));
      outputs->push_back(std::move(out));
    }
    timings->output_ns = ns_since(t0);
  }

 private:
  std::vector<Sized> sized_;           // smallest batch first
  std::vector<std::string> scratch_;   // padded inputs, reused between runs
};

}  // namespace

std::vector<BatchExport> find_batch_exports(const std::string& dir) {
  const std::vector<std::string> files = version_folder_files(dir);
  std::vector<BatchExport> out;
  std::string others;
  for (const std::string& n : files) {
    if (const int64_t b = batch_of_file_name(n)) out.push_back(BatchExport{b, n, dir + "/" + n});
    else others += (others.empty() ? "" : ", ") + n;
  }
  if (out.empty()) return out;
  if (!others.empty())
    throw Error(ErrorKind::kNotFound, "a version folder of batch exports holds batch_<N>.so or batch_<N>.tar files "
                                      "only; also found " + others)
        .with("dir", dir);
  std::sort(out.begin(), out.end(), [](const BatchExport& a, const BatchExport& b) { return a.batch < b.batch; });
  for (size_t i = 1; i < out.size(); ++i)
    if (out[i].batch == out[i - 1].batch)
      throw Error(out[i].file + " and " + out[i - 1].file + " are both batch " + std::to_string(out[i].batch))
          .with("file", out[i].path);
  return out;
}

namespace {

// The params that exports of one folder bind in common: exports of one model at several batch
// sizes carry the same params, and each export's factory would hold its own decoded copy. Every
// export whose params are byte for byte the first one's binds one decoded copy instead, and its
// factory is replaced by one without params (remove_params), so that its own copy goes.
struct SharedParams {
  std::string bytes;        // the first export's params, in save_param_dict form
  graphrt::ParamList params;  // decoded once
};

// Replaces `model`'s factory with one without params when its params are `shared`'s; true then.
bool share_params(graphrt_apps::Model& model, SharedParams* shared, const BatchExport& e) {
  if (!model.is_factory) return false;
  std::string bytes = graphrt::call_function(model.root->require_function("get_params_bytes"), graphrt::ArgList())
                          .as_string();
  if (shared->bytes.empty() && shared->params.empty()) {
    shared->params = graphrt::load_param_dict(bytes, e.path);
    shared->bytes = std::move(bytes);
  } else if (bytes != shared->bytes) {
    return false;
  }
  model.root = graphrt::call_function(model.root->require_function("remove_params"), graphrt::ArgList()).as_module();
  return true;
}

std::shared_ptr<graphrt::GraphExecutor> make_batch_executor(const graphrt_apps::Model& model, bool shared_params,
                                                            const SharedParams& shared) {
  if (!shared_params) return graphrt_apps::make_executor(model, DLDevice{kDLCPU, 0}, "", false);
  graphrt::GraphExecutorOptions options;
  options.owner = model.root;  // the factory (without params): its library tree stays loaded
  return graphrt::GraphExecutor::create_with_params(model.graph_json, model.root->imports().at(0),
                                                    {DLDevice{kDLCPU, 0}}, options, shared.params);
}

}  // namespace

LoadedBatchExports load_batch_exports(const std::vector<BatchExport>& exports, int instance_count) {
  std::vector<graphrt_apps::Model> models;
  std::vector<Signature> signatures;
  std::vector<std::shared_ptr<graphrt::GraphExecutor>> first_executors;
  std::vector<bool> shares;
  SharedParams shared;
  for (const BatchExport& e : exports) {
    try {
      const PrivateCopy copy(e.path);  // a later write to the file cannot reach the loaded code
      try {
        models.push_back(graphrt_apps::load_model(copy.path(), graphrt::LoadOptions{}, "", ""));
      } catch (const Error& err) {
        throw copy.original(err);
      }
    } catch (Error& err) {
      throw err.with("file", e.path);
    }
    if (models.back().is_relax)
      throw Error(ErrorKind::kUnsupported, e.file + " is a Relax executable; batch_<N> files are graph exports "
                                                    "(a Relax model batches through a symbolic dimension)")
          .with("file", e.path);
    try {
      shares.push_back(share_params(models.back(), &shared, e));
    } catch (Error& err) {
      throw err.with("file", e.path);
    }
    first_executors.push_back(make_batch_executor(models.back(), shares.back(), shared));
    signatures.push_back(signature_of(models.back(), *first_executors.back(), e));
    check_agrees(signatures.back().inputs, signatures[0].inputs, "input", e, exports[0]);
    check_agrees(signatures.back().outputs, signatures[0].outputs, "output", e, exports[0]);
  }
  std::string().swap(shared.bytes);
  LoadedBatchExports loaded;
  loaded.inputs = signatures[0].inputs;
  loaded.outputs = signatures[0].outputs;
  for (TensorMetadata& t : loaded.inputs) t.shape[0] = -1;
  for (TensorMetadata& t : loaded.outputs) t.shape[0] = -1;
  loaded.largest_batch = exports.back().batch;
  for (int i = 0; i < instance_count; ++i) {
    std::vector<PaddedGraphInstance::Sized> sized;
    for (size_t k = 0; k < exports.size(); ++k)
      sized.push_back({exports[k].batch,
                       i == 0 ? first_executors[k] : make_batch_executor(models[k], shares[k], shared),
                       signatures[k].input_indices});
    loaded.instances.push_back(std::make_unique<PaddedGraphInstance>(std::move(sized)));
  }
  return loaded;
}

}  // namespace graphrt_serve
