// graphrt::LanguageModel (graphrt/language_model.h): a Relax language model on TVM's paged KV
// cache, stepped as MLC's engine steps it. The cache is a VM value that the Relax back end's
// builtins work on; the session layer reaches them only by their TVM names (it includes no
// back end), and this file is the one place in the library and the apps that names them.
#include "graphrt/language_model.h"

#include <algorithm>
#include <map>

#include "graphrt/device_api.h"
#include "graphrt/relax_vm.h"
#include "model_state.h"

namespace graphrt {

namespace {

// TVM's names of what a step calls (backends/relax/kv_cache/builtins.cc registers them).
constexpr const char* kShapeTuple = "runtime.ShapeTuple";
constexpr const char* kAddSequence = "vm.builtin.kv_state_add_sequence";
constexpr const char* kRemoveSequence = "vm.builtin.kv_state_remove_sequence";
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

// The function `name` of the model, or an error naming it and the option that named it.
const FunctionSpec& model_function(const Model& model, const std::string& name, const char* option) {
  std::string list;
  for (const FunctionSpec& f : model.functions()) {
    if (f.name == name) return f;
    list += (list.empty() ? "" : ", ") + f.name;
  }
  throw Error(ErrorKind::kNotFound, "the model has no function " + quote_untrusted(name) + " (functions: " + list + ")")
      .with("function", name)
      .with("option", option);
}

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
  Impl(const Model& model, Runtime& runtime, DLDevice device, const LanguageModelOptions& options);

  RetValue shape(int64_t v) const { return call(shape_tuple, {int_value(v)}); }
  NDArray token_tensor(const int32_t* tokens, int64_t n) const;
  int64_t& length_of(int64_t id);
  NDArray forward(const PackedFunc& fn, int64_t id, const int32_t* tokens, int64_t n, int64_t* length);

  Runtime& runtime;  // the model's session's (it outlives the model)
  RelaxVM vm;
  DeviceApis apis;  // the host's and the device's: the token tensors
  DLDevice device;
  DLDataType ids_dtype;
  PackedFunc create, prefill, decode;
  PackedFunc shape_tuple, add, remove, begin, end, total_length;
  RetValue cache;
  std::map<int64_t, int64_t> lengths;  // the tokens each sequence holds
};

LanguageModel::Impl::Impl(const Model& model, Runtime& rt, DLDevice dev, const LanguageModelOptions& o)
    : runtime(rt), vm(model.root(), dev, RelaxVM::Allocator::kPooled, rt), apis(rt, {cpu(), dev}), device(dev) {
  model_function(model, o.create_cache, "create_cache");
  ids_dtype = token_dtype(model_function(model, o.prefill, "prefill"));
  model_function(model, o.decode, "decode");
  create = vm.function(o.create_cache);
  prefill = vm.function(o.prefill);
  decode = vm.function(o.decode);
  shape_tuple = global(runtime, kShapeTuple);
  add = global(runtime, kAddSequence);
  remove = global(runtime, kRemoveSequence);
  begin = global(runtime, kBeginForward);
  end = global(runtime, kEndForward);
  total_length = global(runtime, kTotalLength);
  try {
    // The last argument: sliding windows, which graphrt's cache does not do.
    cache = call(create, {shape(o.max_batch_size), shape(o.max_total_seq_len), shape(o.prefill_chunk_size),
                          shape(o.page_size), shape(0)});
  } catch (Error& e) {
    throw e.with("function", o.create_cache);
  }
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
    throw Error(ErrorKind::kNotFound, "sequence " + std::to_string(id) + " is not in the KV cache (add_sequence first)")
        .with("sequence", std::to_string(id));
  return it->second;
}

// One forward pass: begin_forward([id], [n]), fn(tokens, cache) -> (logits, cache), end_forward.
// `length` (the sequence's, when counted) grows with begin_forward, which gives the tokens
// their positions whether or not fn then succeeds.
NDArray LanguageModel::Impl::forward(const PackedFunc& fn, int64_t id, const int32_t* tokens, int64_t n,
                                     int64_t* length) {
  RetValue input;
  input.set_ndarray(token_tensor(tokens, n));
  call(begin, {cache, shape(id), shape(n)});
  if (length) *length += n;
  RelaxValue result;
  try {
    result = RelaxValue::from(call(fn, {input, cache}), runtime);
  } catch (...) {
    try {
      call(end, {cache});  // no pass stays open after a failure
    } catch (const Error&) {
      // The function's own error says more; it is the one thrown.
    }
    throw;
  }
  call(end, {cache});
  if (!result.is_tuple() || result.items.size() != 2 || result.items[0].kind != RelaxValue::Kind::kTensor ||
      result.items[1].kind != RelaxValue::Kind::kObject)
    throw Error(ErrorKind::kTypeMismatch, "a forward function returned something other than (logits, the KV cache)");
  cache.set_object(result.items[1].object);
  return result.items[0].tensor;
}

LanguageModel::LanguageModel(const Model& model, LanguageModelOptions options) : options_(std::move(options)) {
  if (model.kind() != ModelKind::kRelax)
    throw Error("a language model is a Relax executable; this model is a graph");
  check_sizes(options_);
  impl_ = std::make_unique<Impl>(model, *model.state_->runtime, model.state_->device, options_);
  try {
    // The probe: one token tells the vocabulary, and that prefill works on the cache made.
    call(impl_->add, {impl_->cache, int_value(0)});
    const int32_t zero = 0;
    const NDArray logits = impl_->forward(impl_->prefill, 0, &zero, 1, nullptr);
    call(impl_->remove, {impl_->cache, int_value(0)});
    vocab_ = logits.shape().empty() ? 0 : logits.shape().back();
  } catch (Error& e) {
    throw e.with("function", options_.prefill);
  }
  if (vocab_ < 1)
    throw Error(ErrorKind::kUnsupported, "function " + quote_untrusted(options_.prefill) + " returned no logits [..., vocab]")
        .with("function", options_.prefill)
        .with("option", "prefill");
}

LanguageModel::~LanguageModel() = default;

void LanguageModel::add_sequence(int64_t id) {
  if (impl_->lengths.count(id))
    throw Error("sequence " + std::to_string(id) + " is already in the KV cache").with("sequence", std::to_string(id));
  call(impl_->add, {impl_->cache, int_value(id)});
  impl_->lengths[id] = 0;
}

void LanguageModel::remove_sequence(int64_t id) {
  impl_->length_of(id);
  call(impl_->remove, {impl_->cache, int_value(id)});
  impl_->lengths.erase(id);
}

NDArray LanguageModel::prefill(int64_t id, const std::vector<int32_t>& tokens) {
  int64_t& length = impl_->length_of(id);
  const int64_t n = static_cast<int64_t>(tokens.size());
  if (n == 0) throw Error("prefill of sequence " + std::to_string(id) + " with no token").with("sequence", std::to_string(id));
  for (size_t i = 0; i < tokens.size(); ++i)
    if (tokens[i] < 0 || tokens[i] >= vocab_)
      throw Error(ErrorKind::kOutOfRange, "token " + std::to_string(i) + " is " + std::to_string(tokens[i]) +
                                              ", outside the model's vocabulary [0, " + std::to_string(vocab_) + ")")
          .with("sequence", std::to_string(id));
  if (length + n > options_.max_total_seq_len)
    throw Error(ErrorKind::kOutOfRange, "sequence " + std::to_string(id) + " holds " + std::to_string(length) +
                                            " tokens; " + std::to_string(n) + " more pass the KV cache's " +
                                            std::to_string(options_.max_total_seq_len) + " per sequence")
        .with("sequence", std::to_string(id))
        .with("option", "max_total_seq_len");
  NDArray logits;
  for (int64_t at = 0; at < n; at += options_.prefill_chunk_size) {
    const int64_t chunk = std::min(options_.prefill_chunk_size, n - at);
    logits = impl_->forward(impl_->prefill, id, tokens.data() + at, chunk, &length);
  }
  return logits;
}

NDArray LanguageModel::decode(int64_t id, int32_t token) {
  int64_t& length = impl_->length_of(id);
  if (token < 0 || token >= vocab_)
    throw Error(ErrorKind::kOutOfRange, "token " + std::to_string(token) + " is outside the model's vocabulary [0, " +
                                            std::to_string(vocab_) + ")")
        .with("sequence", std::to_string(id));
  if (length + 1 > options_.max_total_seq_len)
    throw Error(ErrorKind::kOutOfRange, "sequence " + std::to_string(id) + " holds " + std::to_string(length) +
                                            " tokens, the KV cache's " + std::to_string(options_.max_total_seq_len) +
                                            " per sequence")
        .with("sequence", std::to_string(id))
        .with("option", "max_total_seq_len");
  return impl_->forward(impl_->decode, id, &token, 1, &length);
}

int64_t LanguageModel::total_sequence_length() const { return call(impl_->total_length, {impl_->cache}).as_int(); }

}  // namespace graphrt
