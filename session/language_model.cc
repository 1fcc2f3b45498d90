// graphrt::LanguageModel (graphrt/language_model.h): a Relax language model on TVM's paged KV
// cache, stepped as MLC's engine steps it (MLC cpp/serve/model.cc: the embedding, the forward
// functions and their argument shapes). The cache is a VM value that the Relax back end's
// builtins work on; the session layer reaches them only by their TVM names (it includes no
// back end), and this file is the one place in the library and the apps that names them.
#include "graphrt/language_model.h"

#include <algorithm>
#include <initializer_list>
#include <map>

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

// A packed call of the values given, through arrays on the stack: a step's calls allocate
// nothing of their own.
constexpr size_t kMaxArgs = 8;
RetValue call_n(const PackedFunc& f, const RetValue* args, size_t n) {
  if (!f) throw Error(ErrorKind::kFailedPrecondition, "call of a null function");
  if (n > kMaxArgs) throw Error(ErrorKind::kInternal, "a language-model call of " + std::to_string(n) + " arguments");
  TVMValue values[kMaxArgs];
  int codes[kMaxArgs];
  for (size_t i = 0; i < n; ++i) {
    values[i] = args[i].value();
    codes[i] = args[i].code();
  }
  RetValue ret;
  f->call(TVMArgs(values, codes, static_cast<int>(n)), &ret);
  return ret;
}

RetValue call(const PackedFunc& f, std::initializer_list<RetValue> args) { return call_n(f, args.begin(), args.size()); }

bool same_dims(const NDArray& a, const int64_t* dims, size_t n) {
  return a.shape().size() == n && std::equal(dims, dims + n, a.shape().begin());
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
  // The shape tuple held in `slot`, refilled with `v` when no one else holds it, else a new
  // one kept there: begin_forward's arguments, made once for a steady decode.
  RetValue shape_in(Ref<ShapeObject>& slot, const std::vector<int64_t>& v);
  // A host array of `dims` from `kept` that no one else holds, else a new one kept there: a
  // step's token ids and logit positions, written anew each step.
  NDArray host_array(std::vector<NDArray>& kept, std::initializer_list<int64_t> dims, DLDataType dtype);
  // An array of `dims` over `of`'s memory, not owning it (the caller keeps `of` while it is
  // used): the embeddings as the forward function takes them, one kept per shape and re-aimed
  // at each step's embeddings instead of a view made per step.
  NDArray alias(const NDArray& of, std::initializer_list<int64_t> dims);
  NDArray host_int32(const int32_t* values, int64_t n, int64_t padded);
  NDArray token_tensor(const int32_t* tokens, int64_t n);
  int64_t& length_of(int64_t id);
  // The spans' embeddings as the pass takes them; `rows` keeps embed's result alive.
  RetValue embed_spans(const Span* spans, size_t count, int64_t total, Pass pass, NDArray* rows);
  // One forward pass of the spans (one span unless a batch pass): begin_forward, the
  // function, end_forward; the logits of each span's last token as the function returned
  // them ([1, 1, vocab], [1, spans, vocab] or [spans, 1, vocab]), checked.
  NDArray forward(Pass pass, const Span* spans, size_t count);
  NDArray forward(Pass pass, const Span& span) { return forward(pass, &span, 1); }
  NDArray run_function(Pass pass, const Span* spans, size_t count, int64_t total);
  void check_logits(const NDArray& logits, size_t rows, const std::string& function) const;

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

  // Kept from step to step so that a steady decode allocates nothing (their capacity stays).
  std::vector<int64_t> pass_ids, pass_lengths, step_ids;
  Ref<ShapeObject> ids_shape, lengths_shape;
  std::vector<NDArray> host_ids, host_positions, host_logits, aliases;
  std::vector<Span> spans;
  struct Row {
    size_t pass, pass_row, step_row;
  };
  std::vector<NDArray> pass_logits;
  std::vector<Row> rows;
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

RetValue LanguageModel::Impl::shape_in(Ref<ShapeObject>& slot, const std::vector<int64_t>& v) {
  if (slot && slot->ref_count() == 1) slot->dims.assign(v.begin(), v.end());
  else slot = make_ref<ShapeObject>(v);
  RetValue r;
  r.set_object(Ref<Object>(slot));
  return r;
}

NDArray LanguageModel::Impl::host_array(std::vector<NDArray>& kept, std::initializer_list<int64_t> dims,
                                        DLDataType dtype) {
  for (const NDArray& a : kept)
    if (a.use_count() == 1 && a.dtype() == dtype && same_dims(a, dims.begin(), dims.size())) return a;
  NDArray a = apis.empty(std::vector<int64_t>(dims), dtype, cpu());
  // A few shapes (the batch sizes of a serving loop); past them the oldest makes room.
  constexpr size_t kKept = 8;
  if (kept.size() >= kKept) kept.erase(kept.begin());
  kept.push_back(a);
  return a;
}

NDArray LanguageModel::Impl::alias(const NDArray& of, std::initializer_list<int64_t> dims) {
  NDArray* found = nullptr;
  for (NDArray& a : aliases)
    if (a.use_count() == 1 && a.dtype() == of.dtype() && a.device() == of.device() &&
        same_dims(a, dims.begin(), dims.size()))
      found = &a;
  if (!found) {
    constexpr size_t kKept = 8;
    if (aliases.size() >= kKept) aliases.erase(aliases.begin());
    aliases.push_back(NDArray::wrap(nullptr, std::vector<int64_t>(dims), of.dtype(), of.device(), nullptr));
    found = &aliases.back();
  }
  (*found)->data = static_cast<char*>(of->data) + of->byte_offset;  // as NDArray::view: offset 0
  (*found)->byte_offset = 0;
  return *found;
}

NDArray LanguageModel::Impl::host_int32(const int32_t* values, int64_t n, int64_t padded) {
  NDArray host = host_array(host_ids, {padded}, DLDataType{kDLInt, 32, 1});
  int32_t* out = static_cast<int32_t*>(host->data);
  std::copy(values, values + n, out);
  std::fill(out + n, out + padded, 0);
  return host;
}

NDArray LanguageModel::Impl::token_tensor(const int32_t* tokens, int64_t n) {
  NDArray host = host_array(host_ids, {1, n}, ids_dtype);
  if (ids_dtype.bits == 32) std::copy(tokens, tokens + n, static_cast<int32_t*>(host->data));
  else std::copy(tokens, tokens + n, static_cast<int64_t*>(host->data));
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
// aliased as the pass's input ([1, total, h], or [b, 1, h] for a batch decode).
RetValue LanguageModel::Impl::embed_spans(const Span* spans, size_t count, int64_t total, Pass pass, NDArray* rows) {
  const int64_t padded = (total + padding - 1) / padding * padding;
  NDArray host = host_array(host_ids, {padded}, DLDataType{kDLInt, 32, 1});
  int32_t* out = static_cast<int32_t*>(host->data);
  for (size_t i = 0; i < count; ++i) out = std::copy(spans[i].tokens, spans[i].tokens + spans[i].n, out);
  std::fill(out, static_cast<int32_t*>(host->data) + padded, 0);
  RetValue input;
  input.set_ndarray(device.device_type == kDLCPU ? host : apis.copy_to_device(host, device));
  try {
    *rows = call(embed, {input, weights}).as_ndarray();
  } catch (Error& e) {
    throw e.with("function", "embed");
  }
  if (rows->shape().size() != 2 || rows->shape()[0] < total)
    throw Error(ErrorKind::kTypeMismatch, "embed returned " + shape_to_string(rows->shape()) + " for " +
                                              std::to_string(padded) + " token ids, not [n, hidden]")
        .with("function", "embed");
  const int64_t hidden = rows->shape()[1];
  RetValue r;
  r.set_ndarray(pass == Pass::kBatchDecode ? alias(*rows, {total, 1, hidden}) : alias(*rows, {1, total, hidden}));
  return r;
}

NDArray LanguageModel::Impl::run_function(Pass pass, const Span* spans, size_t count, int64_t total) {
  const PackedFunc& fn = functions[static_cast<int>(pass)];
  RetValue args[4];
  size_t n = 0;
  NDArray rows;  // embed's result, which the first argument aliases: kept until the call returns
  if (!embeddings) {
    args[n++].set_ndarray(token_tensor(spans[0].tokens, spans[0].n));
  } else {
    args[n++] = embed_spans(spans, count, total, pass, &rows);
    if (pass == Pass::kBatchPrefill) {
      // logit_positions[i]: the last token of span i in the concatenated input.
      NDArray host = host_array(host_positions, {static_cast<int64_t>(count)}, DLDataType{kDLInt, 32, 1});
      int32_t* p = static_cast<int32_t*>(host->data);
      int64_t at = 0;
      for (size_t i = 0; i < count; ++i) p[i] = static_cast<int32_t>((at += spans[i].n) - 1);
      args[n++].set_ndarray(device.device_type == kDLCPU ? host : apis.copy_to_device(host, device));
    }
  }
  args[n++] = cache;
  if (embeddings) args[n++] = weights;
  const RetValue result = call_n(fn, args, n);
  // (logits, the cache), read in place: no Value tree per step.
  const ArrayObject* tuple = result.code() == kTVMObjectHandle
                                 ? dynamic_cast<const ArrayObject*>(static_cast<const Object*>(result.value().v_handle))
                                 : nullptr;
  RetValue logits, next_cache;
  if (tuple && tuple->size() == 2) {
    tuple->get_item(0, &logits);
    tuple->get_item(1, &next_cache);
  }
  if (!tuple || tuple->size() != 2 ||
      (logits.code() != kTVMNDArrayHandle && logits.code() != kTVMDLTensorHandle) ||
      next_cache.code() != kTVMObjectHandle || !next_cache.value().v_handle)
    throw Error(ErrorKind::kTypeMismatch, "function '" + names[static_cast<int>(pass)] +
                                              "' returned something other than (logits, the KV cache)")
        .with("function", names[static_cast<int>(pass)]);
  cache = std::move(next_cache);
  return logits.as_ndarray();
}

NDArray LanguageModel::Impl::forward(Pass pass, const Span* spans, size_t count) {
  // A library with only the batch functions takes one sequence through them.
  if (!functions[static_cast<int>(pass)] && embeddings)
    pass = pass == Pass::kPrefill ? Pass::kBatchPrefill : pass == Pass::kDecode ? Pass::kBatchDecode : pass;
  pass_ids.clear();
  pass_lengths.clear();
  int64_t total = 0;
  for (size_t i = 0; i < count; ++i) {
    pass_ids.push_back(spans[i].id);
    pass_lengths.push_back(spans[i].n);
    total += spans[i].n;
  }
  call(begin, {cache, shape_in(ids_shape, pass_ids), shape_in(lengths_shape, pass_lengths)});
  // begin_forward gave the tokens their positions whether or not the function succeeds.
  for (size_t i = 0; i < count; ++i) {
    auto it = lengths.find(spans[i].id);
    if (it != lengths.end()) it->second += spans[i].n;
  }
  NDArray logits;
  try {
    logits = run_function(pass, spans, count, total);
  } catch (Error& e) {
    try {
      call(end, {cache});  // no pass stays open after a failure
    } catch (const Error&) {
      // The function's own error says more; it is the one thrown.
    }
    throw e.with("function", names[static_cast<int>(pass)]);
  }
  call(end, {cache});
  check_logits(logits, count, names[static_cast<int>(pass)]);
  return logits;
}

// The logits, one row per sequence whatever the shape (prefill/decode: [1, 1, vocab];
// batch_prefill [1, b, vocab]; batch_decode [b, 1, vocab]).
void LanguageModel::Impl::check_logits(const NDArray& logits, size_t rows, const std::string& function) const {
  const DLDataType f32{kDLFloat, 32, 1};
  const int64_t width = logits.shape().empty() ? 0 : logits.shape().back();
  if (logits.dtype() != f32 || width < 1 || logits.shape().size() < 2 ||
      logits.nbytes() != rows * static_cast<size_t>(width) * sizeof(float) || (vocab > 0 && width != vocab))
    throw Error(ErrorKind::kTypeMismatch, "function '" + function + "' returned logits " +
                                              dtype_to_string(logits.dtype()) + shape_to_string(logits.shape()) + " for " +
                                              std::to_string(rows) + " sequences, not float32 [.., " +
                                              (vocab > 0 ? std::to_string(vocab) : std::string("vocab")) + "]")
        .with("function", function);
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
    const NDArray logits = impl_->forward(Impl::Pass::kPrefill, Impl::Span{0, &zero, 1});
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

void check_tokens(int64_t id, const int32_t* tokens, size_t n, int64_t vocab) {
  if (n == 0) throw Error("sequence " + seq_name(id) + " is given no token").with("sequence", seq_name(id));
  for (size_t i = 0; i < n; ++i)
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

}  // namespace

NDArray LanguageModel::prefill(int64_t id, const std::vector<int32_t>& tokens) {
  int64_t& length = impl_->length_of(id);
  check_tokens(id, tokens.data(), tokens.size(), vocab_);
  const int64_t n = static_cast<int64_t>(tokens.size());
  check_room(id, length, n, max_sequence_length());
  NDArray logits;
  for (int64_t at = 0; at < n; at += options_.prefill_chunk_size) {
    const int64_t chunk = std::min(options_.prefill_chunk_size, n - at);
    logits = impl_->forward(Impl::Pass::kPrefill, Impl::Span{id, tokens.data() + at, chunk});
  }
  return logits.view({1, 1, vocab_}, logits.dtype());
}

NDArray LanguageModel::decode(int64_t id, int32_t token) {
  const int64_t length = impl_->length_of(id);
  check_tokens(id, &token, 1, vocab_);
  check_room(id, length, 1, max_sequence_length());
  const NDArray logits = impl_->forward(Impl::Pass::kDecode, Impl::Span{id, &token, 1});
  return logits.view({1, 1, vocab_}, logits.dtype());
}

StepLogits LanguageModel::step(const std::vector<SequenceStep>& steps) { return step(steps.data(), steps.size()); }

StepLogits LanguageModel::step(const SequenceStep* steps, size_t count) {
  if (count == 0 || !steps) throw Error("a step of no sequence");
  Impl& m = *impl_;
  // A sequence twice: the ids sorted in a kept buffer (no set per step).
  m.step_ids.clear();
  for (size_t i = 0; i < count; ++i) m.step_ids.push_back(steps[i].id);
  std::sort(m.step_ids.begin(), m.step_ids.end());
  const auto twice = std::adjacent_find(m.step_ids.begin(), m.step_ids.end());
  if (twice != m.step_ids.end())
    throw Error("sequence " + seq_name(*twice) + " is twice in one step").with("sequence", seq_name(*twice));
  bool all_single = true;
  const int64_t limit = max_sequence_length();
  for (size_t i = 0; i < count; ++i) {
    const SequenceStep& s = steps[i];
    const int64_t length = m.length_of(s.id);
    check_tokens(s.id, s.tokens.data(), s.tokens.size(), vocab_);
    check_room(s.id, length, static_cast<int64_t>(s.tokens.size()), limit);
    all_single = all_single && s.tokens.size() == 1;
  }
  const bool batch = batches_sequences() && count > 1;
  // Each pass's logits, and which of its rows are which step's.
  m.pass_logits.clear();
  m.rows.clear();
  if (!batch) {
    for (size_t i = 0; i < count; ++i) {
      const SequenceStep& s = steps[i];
      NDArray l;
      const int64_t n = static_cast<int64_t>(s.tokens.size());
      for (int64_t at = 0; at < n; at += options_.prefill_chunk_size) {
        const int64_t chunk = std::min(options_.prefill_chunk_size, n - at);
        l = m.forward(n == 1 ? Impl::Pass::kDecode : Impl::Pass::kPrefill, Impl::Span{s.id, s.tokens.data() + at, chunk});
      }
      m.rows.push_back({m.pass_logits.size(), 0, i});
      m.pass_logits.push_back(std::move(l));
    }
  } else {
    // Passes of at most max_batch_size sequences and (prefill) prefill_chunk_size tokens; a
    // sequence cut by the budget goes on first in the next pass.
    const int64_t max_seqs = options_.max_batch_size;
    const int64_t budget = all_single ? max_seqs : options_.prefill_chunk_size;
    size_t next = 0;
    int64_t taken = 0;  // tokens of steps[next] already passed
    while (next < count) {
      m.spans.clear();
      int64_t room = budget;
      while (next < count && room > 0 && static_cast<int64_t>(m.spans.size()) < max_seqs) {
        const SequenceStep& s = steps[next];
        const int64_t left = static_cast<int64_t>(s.tokens.size()) - taken;
        const int64_t n = std::min(left, room);
        m.spans.push_back({s.id, s.tokens.data() + taken, n});
        room -= n;
        if (n == left) {
          m.rows.push_back({m.pass_logits.size(), m.spans.size() - 1, next});
          ++next;
          taken = 0;
        } else {
          taken += n;
        }
      }
      const Impl::Pass pass = all_single ? Impl::Pass::kBatchDecode : Impl::Pass::kBatchPrefill;
      m.pass_logits.push_back(m.forward(pass, m.spans.data(), m.spans.size()));
    }
  }
  // One pass whose rows are the step's in order: its logits are the result (no copy on the CPU).
  if (m.pass_logits.size() == 1 && m.pass_logits[0].device().device_type == kDLCPU &&
      m.pass_logits[0].nbytes() == count * static_cast<size_t>(vocab_) * sizeof(float)) {
    NDArray only = std::move(m.pass_logits[0]);
    m.pass_logits.clear();  // the model's storage is the caller's alone until it lets go
    return StepLogits(std::move(only));
  }
  // Else the rows asked for, copied straight from each pass's logits (on any device) into one
  // host array: one copy per run of rows consecutive in both (a decode's whole batch is one).
  const DLDataType f32{kDLFloat, 32, 1};
  NDArray out = m.host_array(m.host_logits, {static_cast<int64_t>(count), vocab_}, f32);
  const uint64_t row_bytes = static_cast<uint64_t>(vocab_) * sizeof(float);
  for (size_t i = 0; i < m.rows.size();) {
    size_t j = i + 1;
    while (j < m.rows.size() && m.rows[j].pass == m.rows[i].pass && m.rows[j].pass_row == m.rows[j - 1].pass_row + 1 &&
           m.rows[j].step_row == m.rows[j - 1].step_row + 1)
      ++j;
    const int64_t n = static_cast<int64_t>(j - i);
    const NDArray& from = m.pass_logits[m.rows[i].pass];
    const NDArray src = from.view({n, vocab_}, f32, m.rows[i].pass_row * row_bytes);
    const NDArray dst = out.view({n, vocab_}, f32, m.rows[i].step_row * row_bytes);
    m.apis.copy(src.handle(), dst.handle());
    i = j;
  }
  m.pass_logits.clear();
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
