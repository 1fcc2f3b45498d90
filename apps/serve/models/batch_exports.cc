#include "models/batch_exports.h"

#include <dirent.h>
#include <sys/stat.h>

#include <algorithm>
#include <chrono>
#include <set>

#include "graphrt/error.h"
#include "graphrt/session.h"
#include "models/private_copy.h"
#include "models/runner_instance.h"
#include "models/version_folder.h"

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

// One export's data inputs and outputs (its Model's; params are not inputs).
struct Signature {
  std::vector<TensorMetadata> inputs, outputs;
};

Signature signature_of(const graphrt::FunctionSpec& fn, const BatchExport& e) {
  Signature s;
  auto add = [&](const graphrt::TensorSpec& spec, const std::string& name, const char* what,
                 std::vector<TensorMetadata>* to) {
    TensorMetadata t{name, true, {}, true, spec.shape};
    if (!datatype_from_dl(spec.dtype, &t.datatype))
      throw Error(ErrorKind::kUnsupported, e.file + ": " + what + " type " + dl_type_name(spec.dtype) +
                                               " has no protocol datatype")
          .with("file", e.path).with("tensor", name);
    if (t.shape.empty() || t.shape[0] != e.batch)
      throw Error(e.file + ": " + what + " '" + name + "' has shape " + shape_text(t.shape) + "; a batch_" +
                  std::to_string(e.batch) + " export has " + std::to_string(e.batch) +
                  " as the leading dimension of every input and output")
          .with("file", e.path).with("tensor", name);
    to->push_back(t);
  };
  for (const graphrt::TensorSpec& spec : fn.inputs) add(spec, spec.name, "input", &s.inputs);
  for (size_t o = 0; o < fn.outputs.size(); ++o) add(fn.outputs[o], "output_" + std::to_string(o), "output", &s.outputs);
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

// One runner per export; a batch runs on the smallest that holds its rows.
class PaddedGraphInstance : public Instance {
 public:
  struct Sized {
    int64_t batch;
    std::unique_ptr<graphrt::Runner> runner;
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
    set_inputs(inputs, rows, *fit);
    timings->input_ns = ns_since(t0);
    t0 = Clock::now();
    fit->runner->run();
    timings->infer_ns = ns_since(t0);
    t0 = Clock::now();
    outputs->clear();
    host_copies_.resize(static_cast<size_t>(fit->runner->num_outputs()));
    for (int o = 0; o < fit->runner->num_outputs(); ++o) {
      OutputTensor out = output_view(fit->runner->output(o), "output_" + std::to_string(o),
                                     &host_copies_[static_cast<size_t>(o)]);
      out.shape[0] = rows;  // the padding rows' outputs dropped: the view ends before them
      out.view_size = out.view_size / static_cast<size_t>(fit->batch) * static_cast<size_t>(rows);
      outputs->push_back(std::move(out));
    }
    timings->output_ns = ns_since(t0);
  }

 private:
  void set_inputs(const std::vector<const InputTensor*>& inputs, int64_t rows, const Sized& fit) {
    scratch_.resize(inputs.size());
    for (size_t i = 0; i < inputs.size(); ++i) {
      const InputTensor& in = *inputs[i];
      std::vector<int64_t> shape = in.shape;
      shape[0] = fit.batch;
      const char* data = in.data();
      if (rows < fit.batch) {
        // Zero rows after the real ones; their outputs are dropped. Sound for models
        // that compute each row on its own (no reduction across the batch).
        scratch_[i].assign(in.data(), in.size());
        scratch_[i].resize(in.size() / static_cast<size_t>(rows) * static_cast<size_t>(fit.batch), '\0');
        data = scratch_[i].data();
      }
      bind_checked_input(*fit.runner, static_cast<int>(i), in, std::move(shape), data);
    }
  }

  std::vector<Sized> sized_;           // smallest batch first
  std::vector<std::string> scratch_;   // padded inputs, reused between runs
  std::vector<graphrt::NDArray> host_copies_;  // output_view's, for outputs not on the host
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

// Export `e` through the session layer (on the CPU), from a private copy: a later write to the
// file cannot reach the loaded code. Throws naming the file; a Relax executable is refused.
std::shared_ptr<graphrt::Model> open_export(const BatchExport& e) {
  std::shared_ptr<graphrt::Model> model;
  try {
    graphrt::Module root;
    {
      const PrivateCopy copy(e.path);
      try {
        root = graphrt::load_module(copy.path(), graphrt::LoadOptions{});
      } catch (const Error& err) {
        throw copy.original(err);
      }
    }
    model = graphrt::Session(graphrt::runtime(), DLDevice{kDLCPU, 0}).open(root, graphrt::ModelSource{e.path, "", "", ""});
  } catch (Error& err) {
    throw err.with("file", e.path);
  }
  if (model->kind() == graphrt::ModelKind::kRelax)
    throw Error(ErrorKind::kUnsupported, e.file + " is a Relax executable; batch_<N> files are graph exports "
                                                  "(a Relax model batches through a symbolic dimension)")
        .with("file", e.path);
  return model;
}

}  // namespace

// Exports of one model at several batch sizes carry the same params: every export whose params
// are the first one's binds one decoded copy with it (graphrt::Model::share_params).
LoadedBatchExports load_batch_exports(const std::vector<BatchExport>& exports, int instance_count) {
  std::vector<std::shared_ptr<graphrt::Model>> models;
  std::vector<Signature> signatures;
  for (const BatchExport& e : exports) {
    models.push_back(open_export(e));
    try {
      models.back()->share_params(*models.front());
    } catch (Error& err) {
      throw err.with("file", e.path);
    }
    signatures.push_back(signature_of(models.back()->function(), e));
    check_agrees(signatures.back().inputs, signatures[0].inputs, "input", e, exports[0]);
    check_agrees(signatures.back().outputs, signatures[0].outputs, "output", e, exports[0]);
  }
  LoadedBatchExports loaded;
  loaded.inputs = signatures[0].inputs;
  loaded.outputs = signatures[0].outputs;
  for (TensorMetadata& t : loaded.inputs) t.shape[0] = -1;
  for (TensorMetadata& t : loaded.outputs) t.shape[0] = -1;
  loaded.largest_batch = exports.back().batch;
  for (int i = 0; i < instance_count; ++i) {
    std::vector<PaddedGraphInstance::Sized> sized;
    for (size_t k = 0; k < exports.size(); ++k) sized.push_back({exports[k].batch, models[k]->runner()});
    loaded.instances.push_back(std::make_unique<PaddedGraphInstance>(std::move(sized)));
  }
  return loaded;
}

}  // namespace graphrt_serve
