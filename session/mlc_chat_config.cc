// mlc-chat-config.json and the library's _metadata (graphrt/mlc_chat_config.h): the keys an
// engine needs, checked for type and range; every refusal names the file and the field.
#include "graphrt/mlc_chat_config.h"

#include <nlohmann/json.hpp>

#include "graphrt/error.h"
#include "graphrt/regular_file.h"

namespace graphrt {

namespace {

using Json = nlohmann::json;

// Far above any config (Llama-3's is ~5 KB with its template), low enough for a hostile file.
constexpr size_t kMaxConfigBytes = size_t(16) << 20;

// Where a field is read from: the file (or function) and the path of the object in it.
struct Where {
  const char* context_key;  // "file" or "function"
  std::string name;
  std::string prefix;  // "" or "kv_cache."
};

Error field_error(const Where& w, const std::string& field, const std::string& message,
                  ErrorKind kind = ErrorKind::kInvalidArgument) {
  return Error(kind, w.name + ": " + message).with(w.context_key, w.name).with("field", w.prefix + field);
}

Json parse_object(const std::string& text, const Where& w) {
  if (text.size() > kMaxConfigBytes)
    throw Error(ErrorKind::kInvalidArgument, w.name + " is " + std::to_string(text.size()) + " bytes, over the " +
                                                 std::to_string(kMaxConfigBytes) + " a model's config may have")
        .with(w.context_key, w.name);
  Json j = Json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded()) throw Error(ErrorKind::kInvalidArgument, w.name + " is not JSON").with(w.context_key, w.name);
  if (!j.is_object())
    throw Error(ErrorKind::kInvalidArgument, w.name + " is JSON " + std::string(j.type_name()) + ", not an object")
        .with(w.context_key, w.name);
  return j;
}

const Json* member(const Json& obj, const char* key) {
  auto it = obj.find(key);
  return it == obj.end() || it->is_null() ? nullptr : &*it;
}

// An integer field: absent (or null) keeps `*out`, unless `required`.
void read_int(const Json& obj, const char* key, const Where& w, int64_t* out, bool required = false) {
  const Json* v = member(obj, key);
  if (!v) {
    if (required) throw field_error(w, key, std::string("the required field '") + key + "' is missing", ErrorKind::kNotFound);
    return;
  }
  if (!v->is_number_integer())
    throw field_error(w, key, std::string("'") + key + "' is " + v->type_name() + ", not an integer",
                      ErrorKind::kTypeMismatch);
  *out = v->is_number_unsigned() && v->get<uint64_t>() > uint64_t(INT64_MAX) ? INT64_MAX : v->get<int64_t>();
}

void read_number(const Json& obj, const char* key, const Where& w, double* out) {
  const Json* v = member(obj, key);
  if (!v) return;
  if (!v->is_number())
    throw field_error(w, key, std::string("'") + key + "' is " + v->type_name() + ", not a number",
                      ErrorKind::kTypeMismatch);
  *out = v->get<double>();
}

void read_string(const Json& obj, const char* key, const Where& w, std::string* out, bool required = false) {
  const Json* v = member(obj, key);
  if (!v) {
    if (required) throw field_error(w, key, std::string("the required field '") + key + "' is missing", ErrorKind::kNotFound);
    return;
  }
  if (!v->is_string())
    throw field_error(w, key, std::string("'") + key + "' is " + v->type_name() + ", not a string",
                      ErrorKind::kTypeMismatch);
  *out = v->get<std::string>();
}

void require_at_least(const Where& w, const char* key, int64_t value, int64_t least) {
  if (value < least)
    throw field_error(w, key, std::string("'") + key + "' is " + std::to_string(value) + "; it must be at least " +
                                  std::to_string(least),
                      ErrorKind::kOutOfRange);
}

// -1 (off) or a positive size, as MLC's windows and context sizes are.
void require_off_or_positive(const Where& w, const char* key, int64_t value) {
  if (value != -1 && value < 1)
    throw field_error(w, key, std::string("'") + key + "' is " + std::to_string(value) + "; it must be -1 or positive",
                      ErrorKind::kOutOfRange);
}

MlcParam read_param(const Json& p, size_t i, const Where& w) {
  const Where at{w.context_key, w.name, "params[" + std::to_string(i) + "]."};
  if (!p.is_object()) throw field_error(w, "params[" + std::to_string(i) + "]", "a param is not an object", ErrorKind::kTypeMismatch);
  MlcParam out;
  read_string(p, "name", at, &out.name, true);
  read_string(p, "dtype", at, &out.dtype);
  if (const Json* shape = member(p, "shape")) {
    if (!shape->is_array()) throw field_error(at, "shape", "'shape' is not an array", ErrorKind::kTypeMismatch);
    for (const Json& d : *shape) {
      // A symbolic dimension is written as its name (a string) or -1.
      out.shape.push_back(d.is_number_integer() ? d.get<int64_t>() : -1);
    }
  }
  return out;
}

}  // namespace

MlcChatConfig parse_mlc_chat_config(const std::string& text, const std::string& file) {
  const Where w{"file", file, ""};
  const Json j = parse_object(text, w);
  MlcChatConfig c;
  read_string(j, "model_type", w, &c.model_type, true);
  read_int(j, "vocab_size", w, &c.vocab_size, true);
  read_int(j, "prefill_chunk_size", w, &c.prefill_chunk_size, true);
  read_int(j, "context_window_size", w, &c.context_window_size);
  read_int(j, "sliding_window_size", w, &c.sliding_window_size);
  read_int(j, "attention_sink_size", w, &c.attention_sink_size);
  read_int(j, "tensor_parallel_shards", w, &c.tensor_parallel_shards);
  read_int(j, "pipeline_parallel_stages", w, &c.pipeline_parallel_stages);
  read_number(j, "temperature", w, &c.temperature);
  read_number(j, "top_p", w, &c.top_p);
  read_number(j, "presence_penalty", w, &c.presence_penalty);
  read_number(j, "frequency_penalty", w, &c.frequency_penalty);
  read_number(j, "repetition_penalty", w, &c.repetition_penalty);
  require_at_least(w, "vocab_size", c.vocab_size, 1);
  require_at_least(w, "prefill_chunk_size", c.prefill_chunk_size, 1);
  require_off_or_positive(w, "context_window_size", c.context_window_size);
  require_off_or_positive(w, "sliding_window_size", c.sliding_window_size);
  require_at_least(w, "tensor_parallel_shards", c.tensor_parallel_shards, 1);
  require_at_least(w, "pipeline_parallel_stages", c.pipeline_parallel_stages, 1);
  c.text = text;
  return c;
}

MlcChatConfig read_mlc_chat_config(const std::string& folder) {
  const std::string file = folder + "/" + kMlcChatConfigName;
  std::string text;
  try {
    text = read_regular_file(file, "MLC chat config", kMaxConfigBytes + 1);
  } catch (Error& e) {
    throw e.with("file", file);
  }
  return parse_mlc_chat_config(text, file);
}

MlcModelMetadata parse_mlc_model_metadata(const std::string& text) {
  const Where w{"function", "_metadata", ""};
  const Json j = parse_object(text, w);
  MlcModelMetadata m;
  read_string(j, "model_type", w, &m.model_type);
  read_string(j, "kv_state_kind", w, &m.kv_state_kind);
  read_int(j, "context_window_size", w, &m.context_window_size);
  read_int(j, "sliding_window_size", w, &m.sliding_window_size);
  read_int(j, "prefill_chunk_size", w, &m.prefill_chunk_size);
  read_int(j, "max_batch_size", w, &m.max_batch_size);
  read_int(j, "tensor_parallel_shards", w, &m.tensor_parallel_shards);
  read_int(j, "pipeline_parallel_stages", w, &m.pipeline_parallel_stages);
  read_int(j, "seqlen_padding_factor", w, &m.seqlen_padding_factor);
  require_at_least(w, "seqlen_padding_factor", m.seqlen_padding_factor, 1);
  require_at_least(w, "max_batch_size", m.max_batch_size, 0);
  require_at_least(w, "prefill_chunk_size", m.prefill_chunk_size, 0);
  if (const Json* kv = member(j, "kv_cache")) {
    if (!kv->is_object()) throw field_error(w, "kv_cache", "'kv_cache' is not an object", ErrorKind::kTypeMismatch);
    const Where at{w.context_key, w.name, "kv_cache."};
    read_int(*kv, "num_hidden_layers", at, &m.num_hidden_layers);
    read_int(*kv, "num_attention_heads", at, &m.num_attention_heads);
    read_int(*kv, "num_key_value_heads", at, &m.num_key_value_heads);
    read_int(*kv, "head_dim", at, &m.head_dim);
  }
  // No params: the library takes param_0, param_1, ... (MLC's legacy form).
  if (const Json* params = member(j, "params")) {
    if (!params->is_array()) throw field_error(w, "params", "'params' is not an array", ErrorKind::kTypeMismatch);
    for (size_t i = 0; i < params->size(); ++i) m.params.push_back(read_param((*params)[i], i, w));
  }
  m.text = text;
  return m;
}

}  // namespace graphrt
