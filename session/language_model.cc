// graphrt::LanguageModel (graphrt/language_model.h): a Relax language model on TVM's paged KV
// cache, stepped as MLC's engine steps it (MLC cpp/serve/model.cc: the embedding, the forward
// functions and their argument shapes). The cache is a VM value that the Relax back end's
// builtins work on; the session layer reaches them only by their TVM names (it includes no
// back end), and this file is the one place in the library and the apps that names them.
#include "graphrt/language_model.h"

#include <algorithm>
#include <cstring>
#include <map>
#include <set>

#include "graphrt/device_api.h"
#include "graphrt/relax_vm.h"
#include "mlc_folder.h"
#include "model_state.h"

namespace graphrt {

namespace {

// TVM's names of what a step calls (backends/relax/kv_cache/builtins.cc registers them).
constexpr const char* kAddSequence = "vm.builtin.kv_state_add_sequence";
constexpr const char* kRemoveSequence = "vm.builtin.kv_state_remove_sequence";
constexpr const char* kForkSequence = "vm.builtin.kv_state_fork_sequence";
constexpr const char* kPopn = "vm.builtin.kv_state_popn";
constexpr const char* kBeginForward = "vm.builtin.kv_state_begin_forward";
constexpr const char* kEndForward = "vm.builtin.kv_state_end_forward";
constexpr const char* kTotalLength = "vm.builtin.attention_kv_cache_get_total_sequence_length";

// `runtime`: the model's session's, whose Relax back end registered them.
PackedFunc global(const Runtime& runtime, const char* name) {
  PackedFunc f = runtime.function(name);
  if (!f)
    throw Error(ErrorKind::kNotFound, std::string("the session's runtime has no global function '") + name +
                                          "' (a build, or a runtime, without the Relax back end)")
        .with("function", name);
  return f;
}

RetValue call(const PackedFunc& f, const std::vector<RetValue>& args) {
  return call_with_values(f, args);
}

RetValue int_value(int64_t v) {
  RetValue r;
  r.set_int(v);
  return r;
}

const FunctionSpec* find_function(const Model& model, const std::string& name) {
  for (const FunctionSpec& f : model.functions())
    if (f.name == name) return &f;
  return nullptr;
}

// The function `name` of the model, or an error naming it and the option that named it.
const FunctionSpec& model_function(const Model& model, const std::string& name, const char* option) {
  if (const FunctionSpec* f = find_function(model, name)) return *f;
  std::string list;
  for (const FunctionSpec& f : model.functions()) list += (list.empty() ? "" : ", ") + f.name;
  Error e(ErrorKind::kNotFound, "the model has no function " + quote_untrusted(name) + " (functions: " + list + ")");
  e.with("function", name);
  if (option) e.with("option", option);
  throw e;
}

std::string seq_name(int64_t id) { return std::to_string(id); }

// The dtype of the token ids the prefill function takes: int32 or int64 [1, n].
DLDataType token_dtype(const FunctionSpec& prefill) {
  DLDataType t{kDLInt, 32, 1};
  if (!prefill.inputs.empty() && prefill.inputs[0].known) t = prefill.inputs[0].dtype;
  if (t.code != kDLInt || (t.bits != 32 && t.bits != 64) || t.lanes != 1)
    throw Error(ErrorKind::kUnsupported, "function " + quote_untrusted(prefill.name) + " takes token ids of type " +
                                             dtype_to_string(t) + ", not int32 or int64")
        .with("function", prefill.name)
        .with("option", "prefill");
  return t;
}

void check_sizes(const LanguageModelOptions& o) {
  const std::pair<const char*, int64_t> sizes[] = {{"max_batch_size", o.max_batch_size},
                                                   {"max_total_seq_len", o.max_total_seq_len},
                                                   {"prefill_chunk_size", o.prefill_chunk_size},
                                                   {"page_size", o.page_size}};
  for (const auto& s : sizes)
    if (s.second < 1)
      throw Error(std::string(s.first) + " is " + std::to_string(s.second) + "; it must be at least 1")
          .with("option", s.first);
}

}  // namespace

// Hidden: a nested class takes the exported visibility of LanguageModel, and these are internal.
struct __attribute__((visibility("hidden"))) LanguageModel::Impl {
  // The forward functions an MLC library has (MLC cpp/serve/function_table.cc's names).
  enum class Pass { kPrefill, kDecode, kBatchPrefill, kBatchDecode };
  // A part of one sequence's new tokens in a forward pass.
  struct Span {
    int64_t id;
    const int32_t* tokens;
    int64_t n;
  };

  Impl(const Model& model, Runtime& runtime, DLDevice device);
  void bind_token_model(const Model& model, const LanguageModelOptions& options);
  void bind_folder_model(const Model& model);
  void make_cache(const LanguageModelOptions& options, const std::string& create_name);

  RetValue shape(int64_t v) const { return shape(std::vector<int64_t>{v}); }
  RetValue shape(const std::vector<int64_t>& v) const;
  NDArray host_int32(const int32_t* values, int64_t n, int64_t padded) const;
  NDArray token_tensor(const int32_t* tokens, int64_t n) const;
  int64_t& length_of(int64_t id);
  RetValue embed_spans(const std::vector<Span>& spans, int64_t total, Pass pass) const;
  // One forward pass of the spans (one span unless a batch pass): begin_forward, the
  // function, end_forward; the logits of each span's last token, [spans, vocab].
  NDArray forward(Pass pass, const std::vector<Span>& spans);
  NDArray run_function(Pass pass, const std::vector<Span>& spans, int64_t total);
  NDArray logits_rows(const NDArray& logits, size_t rows, const std::string& function) const;

  Runtime& runtime;  // the model's session's (it outlives the model)
  std::shared_ptr<Model> folder_model;  // an MLC folder's library, loaded by the constructor
  RelaxVM vm;
  DeviceApis apis;  // the host's and the device's: the token tensors
  DLDevice device;
  bool embeddings = false;  // an MLC library: embed, then functions on embeddings and weights
  DLDataType ids_dtype{kDLInt, 32, 1};
  std::string names[4];  // the forward functions' names, by Pass
  PackedFunc functions[4];
  PackedFunc create, embed, softmax;
  PackedFunc add, remove, fork, popn, begin, end, total_length;
  RetValue weights;  // an MLC library's packed last argument
  RetValue cache;
  int64_t vocab = 0;
  int64_t padding = 1;  // token ids are zero-padded to a multiple of it before embed
  std::map<int64_t, int64_t> lengths;  // the tokens each sequence holds
};

LanguageModel::Impl::Impl(const Model& model, Runtime& rt, DLDevice dev)
    : runtime(rt), vm(model.root(), dev, RelaxVM::Allocator::kPooled, rt), apis(rt, {cpu(), dev}), device(dev) {
  add = global(runtime, kAddSequence);
  remove = global(runtime, kRemoveSequence);
  fork = global(runtime, kForkSequence);
  popn = global(runtime, kPopn);
  begin = global(runtime, kBeginForward);
  end = global(runtime, kEndForward);
  total_length = global(runtime, kTotalLength);
}

void LanguageModel::Impl::bind_token_model(const Model& model, const LanguageModelOptions& o) {
  model_function(model, o.create_cache, "create_cache");
  ids_dtype = token_dtype(model_function(model, o.prefill, "prefill"));
  model_function(model, o.decode, "decode");
  names[static_cast<int>(Pass::kPrefill)] = o.prefill;
  names[static_cast<int>(Pass::kDecode)] = o.decode;
  functions[static_cast<int>(Pass::kPrefill)] = vm.function(o.prefill);
  functions[static_cast<int>(Pass::kDecode)] = vm.function(o.decode);
  create = vm.function(o.create_cache);
}

void LanguageModel::Impl::bind_folder_model(const Model& model) {
  embeddings = true;
  static const char* const kNames[4] = {"prefill", "decode", "batch_prefill", "batch_decode"};
  for (const char* required : {"embed", "create_tir_paged_kv_cache"}) model_function(model, required, nullptr);
  embed = vm.function("embed");
  create = vm.function("create_tir_paged_kv_cache");
  for (int i = 0; i < 4; ++i) {
    names[i] = kNames[i];
    if (find_function(model, kNames[i])) functions[i] = vm.function(kNames[i]);
  }
  // Each pair is used whole or not at all; one of them must be there.
  const bool single = functions[0] && functions[1], batch = functions[2] && functions[3];
  if (!single && !batch)
    model_function(model, !functions[0] && !functions[2] ? "prefill" : functions[0] ? "decode" : "batch_decode", nullptr);
  if (!single) functions[0] = functions[1] = PackedFunc();
  if (!batch) functions[2] = functions[3] = PackedFunc();
  if (find_function(model, "softmax_with_temperature")) softmax = vm.function("softmax_with_temperature");
}

void LanguageModel::Impl::make_cache(const LanguageModelOptions& o, const std::string& create_name) {
  try {
    // The last argument: sliding windows, which graphrt's cache does not do.
    cache = call(create, {shape(o.max_batch_size), shape(o.max_total_seq_len), shape(o.prefill_chunk_size),
                          shape(o.page_size), shape(0)});
  } catch (Error& e) {
    throw e.with("function", create_name);
  }
}

// TVM's ShapeTuple, the core's (graphrt/value.h): made here, not through runtime.ShapeTuple.
RetValue LanguageModel::Impl::shape(const std::vector<int64_t>& v) const {
  RetValue r;
  r.set_object(Ref<Object>(make_ref<ShapeObject>(v)));
  return r;
}

NDArray LanguageModel::Impl::host_int32(const int32_t* values, int64_t n, int64_t padded) const {
  NDArray host = apis.empty({padded}, DLDataType{kDLInt, 32, 1}, cpu());
  int32_t* out = static_cast<int32_t*>(host->data);
  std::copy(values, values + n, out);
  std::fill(out + n, out + padded, 0);
  return host;
}

NDArray LanguageModel::Impl::token_tensor(const int32_t* tokens, int64_t n) const {
  NDArray host = apis.empty({1, n}, ids_dtype, cpu());
  if (ids_dtype.bits == 32) {
    host.copy_from_bytes(tokens, static_cast<size_t>(n) * sizeof(int32_t));
  } else {
    const std::vector<int64_t> wide(tokens, tokens + n);
    host.copy_from_bytes(wide.data(), wide.size() * sizeof(int64_t));
  }
  return device.device_type == kDLCPU ? host : apis.copy_to_device(host, device);
}

int64_t& LanguageModel::Impl::length_of(int64_t id) {
  auto it = lengths.find(id);
  if (it == lengths.end())
    throw Error(ErrorKind::kNotFound, "sequence " + seq_name(id) + " is not in the KV cache (add_sequence first)")
        .with("sequence", seq_name(id));
  return it->second;
}

// The spans' tokens, one buffer zero-padded to the padding factor, through embed: [padded, h],
// viewed as the pass's input ([1, total, h], or [b, 1, h] for a batch decode).
RetValue LanguageModel::Impl::embed_spans(const std::vector<Span>& spans, int64_t total, Pass pass) const {
  std::vector<int32_t> ids;
  ids.reserve(static_cast<size_t>(total));
  for (const Span& s : spans) ids.insert(ids.end(), s.tokens, s.tokens + s.n);
  const int64_t padded = (total + padding - 1) / padding * padding;
  NDArray host = host_int32(ids.data(), total, padded);
  RetValue input;
  input.set_ndarray(device.device_type == kDLCPU ? host : apis.copy_to_device(host, device));
  NDArray rows;
  try {
    rows = call(embed, {input, weights}).as_ndarray();
  } catch (Error& e) {
    throw e.with("function", "embed");
  }
  if (rows.shape().size() != 2 || rows.shape()[0] < total)
    throw Error(ErrorKind::kTypeMismatch, "embed returned " + shape_to_string(rows.shape()) + " for " +
                                              std::to_string(padded) + " token ids, not [n, hidden]")
        .with("function", "embed");
  const int64_t hidden = rows.shape()[1];
  RetValue out;
  out.set_ndarray(pass == Pass::kBatchDecode ? rows.view({total, 1, hidden}, rows.dtype())
                                             : rows.view({1, total, hidden}, rows.dtype()));
  return out;
}

NDArray LanguageModel::Impl::run_function(Pass pass, const std::vector<Span>& spans, int64_t total) {
  const PackedFunc& fn = functions[static_cast<int>(pass)];
  std::vector<RetValue> args;
  if (!embeddings) {
    args.resize(1);
    args[0].set_ndarray(token_tensor(spans[0].tokens, spans[0].n));
  } else {
    args.push_back(embed_spans(spans, total, pass));
    if (pass == Pass::kBatchPrefill) {
      // logit_positions[i]: the last token of span i in the concatenated input.
      std::vector<int32_t> positions;
      int64_t at = 0;
      for (const Span& s : spans) positions.push_back(static_cast<int32_t>((at += s.n) - 1));
      NDArray host = host_int32(positions.data(), static_cast<int64_t>(positions.size()),
                                static_cast<int64_t>(positions.size()));
      args.emplace_back();
      args.back().set_ndarray(device.device_type == kDLCPU ? host : apis.copy_to_device(host, device));
    }
  }
  args.push_back(cache);
  if (embeddings) args.push_back(weights);
  const Value result = Value::from(call(fn, args));
  if (!result.is_tuple() || result.items.size() != 2 || result.items[0].kind != Value::Kind::kTensor ||
      result.items[1].kind != Value::Kind::kObject)
    throw Error(ErrorKind::kTypeMismatch, "function '" + names[static_cast<int>(pass)] +
                                              "' returned something other than (logits, the KV cache)")
        .with("function", names[static_cast<int>(pass)]);
  cache.set_object(result.items[1].object);
  return result.items[0].tensor;
}

NDArray LanguageModel::Impl::forward(Pass pass, const std::vector<Span>& spans) {
  // A library with only the batch functions takes one sequence through them.
  if (!functions[static_cast<int>(pass)] && embeddings)
    pass = pass == Pass::kPrefill ? Pass::kBatchPrefill : pass == Pass::kDecode ? Pass::kBatchDecode : pass;
  std::vector<int64_t> ids, appended;
  int64_t total = 0;
  for (const Span& s : spans) {
    ids.push_back(s.id);
    appended.push_back(s.n);
    total += s.n;
  }
  call(begin, {cache, shape(ids), shape(appended)});
  // begin_forward gave the tokens their positions whether or not the function succeeds.
  for (const Span& s : spans) {
    auto it = lengths.find(s.id);
    if (it != lengths.end()) it->second += s.n;
  }
  NDArray logits;
  try {
    logits = run_function(pass, spans, total);
  } catch (Error& e) {
    try {
      call(end, {cache});  // no pass stays open after a failure
    } catch (const Error&) {
      // The function's own error says more; it is the one thrown.
    }
    throw e.with("function", names[static_cast<int>(pass)]);
  }
  call(end, {cache});
  return logits_rows(logits, spans.size(), names[static_cast<int>(pass)]);
}

// The logits as [rows, vocab] (prefill/decode: [1, 1, vocab]; batch_prefill [1, b, vocab];
// batch_decode [b, 1, vocab]: one row per sequence either way).
NDArray LanguageModel::Impl::logits_rows(const NDArray& logits, size_t rows, const std::string& function) const {
  const DLDataType f32{kDLFloat, 32, 1};
  const int64_t width = logits.shape().empty() ? 0 : logits.shape().back();
  if (logits.dtype() != f32 || width < 1 || logits.nbytes() != rows * static_cast<size_t>(width) * sizeof(float) ||
      (vocab > 0 && width != vocab))
    throw Error(ErrorKind::kTypeMismatch, "function '" + function + "' returned logits " +
                                              dtype_to_string(logits.dtype()) + shape_to_string(logits.shape()) + " for " +
                                              std::to_string(rows) + " sequences, not float32 [.., " +
                                              (vocab > 0 ? std::to_string(vocab) : std::string("vocab")) + "]")
        .with("function", function);
  return logits.view({static_cast<int64_t>(rows), width}, f32);
}

LanguageModel::LanguageModel(const Model& model, LanguageModelOptions options) : options_(std::move(options)) {
  if (model.kind() != ModelKind::kRelax)
    throw Error("a language model is a Relax executable; this model is a graph");
  check_sizes(options_);
  impl_ = std::make_unique<Impl>(model, *model.state_->runtime, model.state_->device);
  impl_->bind_token_model(model, options_);
  impl_->make_cache(options_, options_.create_cache);
  try {
    // The probe: one token tells the vocabulary, and that prefill works on the cache made.
    call(impl_->add, {impl_->cache, int_value(0)});
    const int32_t zero = 0;
    const NDArray logits = impl_->forward(Impl::Pass::kPrefill, {{0, &zero, 1}});
    call(impl_->remove, {impl_->cache, int_value(0)});
    vocab_ = logits.shape().back();
  } catch (Error& e) {
    throw e.with("function", options_.prefill);
  }
  if (vocab_ < 1)
    throw Error(ErrorKind::kUnsupported, "function " + quote_untrusted(options_.prefill) + " returned no logits [..., vocab]")
        .with("function", options_.prefill)
        .with("option", "prefill");
  impl_->vocab = vocab_;
}

LanguageModel::LanguageModel(const Session& session, const std::string& folder, MlcFolderOptions options)
    : folder_(folder) {
  config_ = read_mlc_chat_config(folder);
  library_ = options.model_lib.empty() ? find_model_library(folder, session.device()) : options.model_lib;
  ModelSource source;
  source.path = library_;
  std::shared_ptr<Model> model;
  try {
    model = session.load(source);
  } catch (Error& e) {
    throw e.with("file", library_);
  }
  if (model->kind() != ModelKind::kRelax)
    throw Error(ErrorKind::kInvalidArgument, library_ + " is not a Relax executable").with("file", library_);
  model_function(*model, "_metadata", nullptr);
  impl_ = std::make_unique<Impl>(*model, *model->state_->runtime, model->state_->device);
  impl_->folder_model = model;
  try {
    metadata_ = parse_mlc_model_metadata(call(impl_->vm.function("_metadata"), {}).as_string());
  } catch (Error& e) {
    throw e.with("function", "_metadata");
  }
  const std::string config_file = folder + "/" + kMlcChatConfigName;
  mlc_folder::check_agreement(config_, metadata_, config_file);
  impl_->bind_folder_model(*model);
  // Without prefill/decode, one sequence per pass still goes through the batch functions.
  if (!options.use_batch_functions && impl_->functions[0]) impl_->functions[2] = impl_->functions[3] = PackedFunc();
  options_ = mlc_folder::cache_sizes(config_, metadata_, options);
  options_.create_cache = "create_tir_paged_kv_cache";
  check_sizes(options_);
  impl_->padding = metadata_.seqlen_padding_factor;
  vocab_ = impl_->vocab = config_.vocab_size;
  impl_->weights = mlc_folder::load_weights(impl_->runtime, folder, impl_->device, metadata_);
  impl_->make_cache(options_, options_.create_cache);
}

std::string LanguageModel::find_model_library(const std::string& folder, DLDevice device) {
  return mlc_folder::find_model_library(folder, device);
}

LanguageModel::~LanguageModel() = default;

bool LanguageModel::batches_sequences() const {
  return impl_->functions[static_cast<int>(Impl::Pass::kBatchPrefill)] != nullptr;
}

int64_t LanguageModel::max_sequence_length() const {
  return is_mlc_folder() ? mlc_folder::sequence_limit(config_, metadata_, options_.max_total_seq_len)
                         : options_.max_total_seq_len;
}

void LanguageModel::add_sequence(int64_t id) {
  if (id < 0) throw Error("sequence id " + seq_name(id) + " is negative").with("sequence", seq_name(id));
  if (impl_->lengths.count(id))
    throw Error("sequence " + seq_name(id) + " is already in the KV cache").with("sequence", seq_name(id));
  call(impl_->add, {impl_->cache, int_value(id)});
  impl_->lengths[id] = 0;
}

void LanguageModel::remove_sequence(int64_t id) {
  impl_->length_of(id);
  call(impl_->remove, {impl_->cache, int_value(id)});
  impl_->lengths.erase(id);
}

void LanguageModel::fork_sequence(int64_t parent, int64_t child, int64_t fork_pos) {
  const int64_t length = impl_->length_of(parent);
  if (child < 0) throw Error("sequence id " + seq_name(child) + " is negative").with("sequence", seq_name(child));
  if (impl_->lengths.count(child))
    throw Error("sequence " + seq_name(child) + " is already in the KV cache").with("sequence", seq_name(child));
  if (fork_pos < -1 || fork_pos > length)
    throw Error(ErrorKind::kOutOfRange, "fork of sequence " + seq_name(parent) + " at " + std::to_string(fork_pos) +
                                            "; it holds " + std::to_string(length) + " tokens (-1: all of them)")
        .with("sequence", seq_name(parent));
  call(impl_->fork, {impl_->cache, int_value(parent), int_value(child), int_value(fork_pos)});
  impl_->lengths[child] = fork_pos == -1 ? length : fork_pos;
}

void LanguageModel::popn(int64_t id, int64_t n) {
  int64_t& length = impl_->length_of(id);
  if (n < 0 || n > length)
    throw Error(ErrorKind::kOutOfRange, "popn of " + std::to_string(n) + " tokens from sequence " + seq_name(id) +
                                            ", which holds " + std::to_string(length))
        .with("sequence", seq_name(id));
  call(impl_->popn, {impl_->cache, int_value(id), int_value(n)});
  length -= n;
}

bool LanguageModel::has_sequence(int64_t id) const { return impl_->lengths.count(id) != 0; }

int64_t LanguageModel::sequence_length(int64_t id) const { return impl_->length_of(id); }

namespace {

void check_tokens(int64_t id, const std::vector<int32_t>& tokens, int64_t vocab) {
  if (tokens.empty()) throw Error("sequence " + seq_name(id) + " is given no token").with("sequence", seq_name(id));
  for (size_t i = 0; i < tokens.size(); ++i)
    if (tokens[i] < 0 || tokens[i] >= vocab)
      throw Error(ErrorKind::kOutOfRange, "token " + std::to_string(i) + " of sequence " + seq_name(id) + " is " +
                                              std::to_string(tokens[i]) + ", outside the model's vocabulary [0, " +
                                              std::to_string(vocab) + ")")
          .with("sequence", seq_name(id));
}

void check_room(int64_t id, int64_t length, int64_t n, int64_t limit) {
  if (length + n > limit)
    throw Error(ErrorKind::kOutOfRange, "sequence " + seq_name(id) + " holds " + std::to_string(length) + " tokens; " +
                                            std::to_string(n) + " more pass the " + std::to_string(limit) +
                                            " a sequence may hold")
        .with("sequence", seq_name(id))
        .with("option", "max_total_seq_len");
}

// Copies `rows` (pass row, step row) of `from` ([n, vocab], on any device) into the host array
// `to`: straight from the device, one copy per run of rows consecutive in both (a decode step's
// whole batch is one copy), and only the rows asked for.
void copy_rows(const DeviceApis& apis, const NDArray& from, const std::vector<std::pair<size_t, size_t>>& rows,
               NDArray& to) {
  const DLDataType f32{kDLFloat, 32, 1};
  const int64_t width = from.shape()[1];
  const uint64_t row_bytes = static_cast<uint64_t>(width) * sizeof(float);
  for (size_t i = 0; i < rows.size();) {
    size_t j = i + 1;
    while (j < rows.size() && rows[j].first == rows[j - 1].first + 1 && rows[j].second == rows[j - 1].second + 1) ++j;
    const int64_t n = static_cast<int64_t>(j - i);
    const NDArray src = from.view({n, width}, f32, rows[i].first * row_bytes);
    const NDArray dst = to.view({n, width}, f32, rows[i].second * row_bytes);
    apis.copy(src.handle(), dst.handle());
    i = j;
  }
}

}  // namespace

NDArray LanguageModel::prefill(int64_t id, const std::vector<int32_t>& tokens) {
  int64_t& length = impl_->length_of(id);
  check_tokens(id, tokens, vocab_);
  const int64_t n = static_cast<int64_t>(tokens.size());
  check_room(id, length, n, max_sequence_length());
  NDArray logits;
  for (int64_t at = 0; at < n; at += options_.prefill_chunk_size) {
    const int64_t chunk = std::min(options_.prefill_chunk_size, n - at);
    logits = impl_->forward(Impl::Pass::kPrefill, {{id, tokens.data() + at, chunk}});
  }
  return logits.view({1, 1, vocab_}, logits.dtype());
}

NDArray LanguageModel::decode(int64_t id, int32_t token) {
  const int64_t length = impl_->length_of(id);
  check_tokens(id, {token}, vocab_);
  check_room(id, length, 1, max_sequence_length());
  const NDArray logits = impl_->forward(Impl::Pass::kDecode, {{id, &token, 1}});
  return logits.view({1, 1, vocab_}, logits.dtype());
}

StepLogits LanguageModel::step(const std::vector<SequenceStep>& steps) {
  if (steps.empty()) throw Error("a step of no sequence");
  std::set<int64_t> seen;
  bool all_single = true;
  for (const SequenceStep& s : steps) {
    if (!seen.insert(s.id).second)
      throw Error("sequence " + seq_name(s.id) + " is twice in one step").with("sequence", seq_name(s.id));
    const int64_t length = impl_->length_of(s.id);
    check_tokens(s.id, s.tokens, vocab_);
    check_room(s.id, length, static_cast<int64_t>(s.tokens.size()), max_sequence_length());
    all_single = all_single && s.tokens.size() == 1;
  }
  const int64_t rows = static_cast<int64_t>(steps.size());
  const bool batch = batches_sequences() && steps.size() > 1;
  // Each pass's logits and which of its rows are which step's (pass row, step row).
  std::vector<std::pair<NDArray, std::vector<std::pair<size_t, size_t>>>> passes;
  if (!batch) {
    for (size_t i = 0; i < steps.size(); ++i) {
      const SequenceStep& s = steps[i];
      const NDArray l = s.tokens.size() == 1 ? decode(s.id, s.tokens[0]) : prefill(s.id, s.tokens);
      passes.push_back({l.view({1, vocab_}, l.dtype()), {{0, i}}});
    }
  } else {
    // Passes of at most max_batch_size sequences and (prefill) prefill_chunk_size tokens; a
    // sequence cut by the budget goes on first in the next pass.
    const int64_t max_seqs = options_.max_batch_size;
    const int64_t budget = all_single ? max_seqs : options_.prefill_chunk_size;
    size_t next = 0;
    int64_t taken = 0;  // tokens of steps[next] already passed
    while (next < steps.size()) {
      std::vector<Impl::Span> spans;
      std::vector<std::pair<size_t, size_t>> finished;
      int64_t room = budget;
      while (next < steps.size() && room > 0 && static_cast<int64_t>(spans.size()) < max_seqs) {
        const SequenceStep& s = steps[next];
        const int64_t left = static_cast<int64_t>(s.tokens.size()) - taken;
        const int64_t n = std::min(left, room);
        spans.push_back({s.id, s.tokens.data() + taken, n});
        room -= n;
        if (n == left) {
          finished.push_back({spans.size() - 1, next});
          ++next;
          taken = 0;
        } else {
          taken += n;
        }
      }
      const Impl::Pass pass = all_single ? Impl::Pass::kBatchDecode : Impl::Pass::kBatchPrefill;
      passes.push_back({impl_->forward(pass, spans), std::move(finished)});
    }
  }
  // One pass whose rows are the step's in order: its logits are the result (no copy on the CPU).
  if (passes.size() == 1 && passes[0].first.shape()[0] == rows && passes[0].first.device().device_type == kDLCPU)
    return StepLogits(passes[0].first);
  NDArray out = impl_->apis.empty({rows, vocab_}, DLDataType{kDLFloat, 32, 1}, cpu());
  for (const auto& p : passes) copy_rows(impl_->apis, p.first, p.second, out);
  return StepLogits(out);
}

StepLogits LanguageModel::softmax_with_temperature(const StepLogits& logits, const std::vector<float>& temperatures) {
  const char* const kName = "softmax_with_temperature";
  if (!impl_->softmax)
    throw Error(ErrorKind::kNotFound, std::string("the model library has no function '") + kName + "'")
        .with("function", kName);
  const int64_t n = static_cast<int64_t>(logits.rows());
  if (n == 0 || static_cast<int64_t>(temperatures.size()) != n)
    throw Error(ErrorKind::kInvalidArgument, std::to_string(temperatures.size()) + " temperatures for " +
                                                 std::to_string(n) + " rows of logits; one per row")
        .with("function", kName);
  for (float t : temperatures)
    if (!(t >= 0.0f))
      throw Error(ErrorKind::kOutOfRange, "temperature " + std::to_string(t) + " is negative or not a number")
          .with("function", kName);
  const DLDataType f32{kDLFloat, 32, 1};
  NDArray host_logits = logits.array().view({n, 1, logits.vocab_size()}, f32);
  NDArray host_t = impl_->apis.empty({n}, f32, cpu());
  host_t.copy_from_bytes(temperatures.data(), temperatures.size() * sizeof(float));
  const bool on_cpu = impl_->device.device_type == kDLCPU;
  RetValue a, t;
  a.set_ndarray(on_cpu ? host_logits : impl_->apis.copy_to_device(host_logits, impl_->device));
  t.set_ndarray(on_cpu ? host_t : impl_->apis.copy_to_device(host_t, impl_->device));
  NDArray probs;
  try {
    probs = call(impl_->softmax, {a, t}).as_ndarray();
  } catch (Error& e) {
    throw e.with("function", kName);
  }
  if (probs.dtype() != f32 || probs.nbytes() != logits.array().nbytes())
    throw Error(ErrorKind::kTypeMismatch, std::string(kName) + " returned " + dtype_to_string(probs.dtype()) +
                                              shape_to_string(probs.shape()) + ", not float32 [n, 1, vocab]")
        .with("function", kName);
  if (!on_cpu) probs = impl_->apis.copy_to_device(probs, cpu());
  return StepLogits(probs.view({n, logits.vocab_size()}, f32));
}

int64_t LanguageModel::total_sequence_length() const { return call(impl_->total_length, {impl_->cache}).as_int(); }

}  // namespace graphrt
