// mlc-chat-config.json and the library's _metadata (graphrt/mlc_chat_config.h): the keys an
// engine needs, checked for type and range; every refusal names the file and the field.
#include "graphrt/mlc_chat_config.h"

#include <functional>
#include <vector>

#include "graphrt/error.h"
#include "graphrt/json_reader.h"
#include "graphrt/regular_file.h"

namespace graphrt {

namespace {

// Far above any config (Llama-3's is ~5 KB with its template), low enough for a hostile file.
constexpr size_t kMaxConfigBytes = size_t(16) << 20;
// A config nests a few levels (kv_cache, params[i].shape); what else it holds is skipped.
constexpr int kMaxConfigDepth = 64;

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

// Calls member(key) for each member of the object `r` is at; `what` names it when it is something else.
template <typename Member>
void read_object(JsonReader& r, const Where& w, const std::string& what, Member member) {
  if (!r.next_is_object()) {
    const JsonType t = r.next_type();
    if (what.empty()) {
      r.skip_value();  // malformed text is reported as such first
      r.expect_end();
      throw Error(ErrorKind::kInvalidArgument, w.name + " is JSON " + json_type_name(t) + ", not an object")
          .with(w.context_key, w.name);
    }
    throw field_error(w, what, "'" + what + "' is not an object", ErrorKind::kTypeMismatch);
  }
  r.object(member);
}

// The document `text` as an object, each member handed to `member`.
template <typename Member>
void read_document(const std::string& text, const Where& w, Member member) {
  if (text.size() > kMaxConfigBytes)
    throw Error(ErrorKind::kInvalidArgument, w.name + " is " + std::to_string(text.size()) + " bytes, over the " +
                                                 std::to_string(kMaxConfigBytes) + " a model's config may have")
        .with(w.context_key, w.name);
  try {
    JsonReader r(text, JsonLimits{kMaxConfigBytes, kMaxConfigDepth}, w.name.c_str());
    read_object(r, w, "", [&](std::string_view key) { member(r, key); });
    r.expect_end();
  } catch (Error& e) {
    if (e.context_value(w.context_key).empty()) e.with(w.context_key, w.name);
    throw;
  }
}

// Malformed text where a value should be is reported as such, not as a value of the wrong type.
void require_value(JsonReader& r) {
  const JsonType t = r.next_type();
  if (t == JsonType::kEnd || t == JsonType::kInvalid) r.skip_value();
}

// An integer field (null keeps `*out`); integers past int64 read as its largest.
void read_int(JsonReader& r, const char* key, const Where& w, int64_t* out) {
  require_value(r);
  if (r.consume_null()) return;
  uint64_t big = 0;
  if (r.read_integer(out)) return;
  if (r.read_unsigned(&big)) {
    *out = INT64_MAX;
    return;
  }
  const JsonType t = r.next_type();
  std::string what = json_type_name(t);
  if (t == JsonType::kNumber) {
    const std::string_view number = r.read_number_text();
    if (number.find_first_of(".eE") == std::string_view::npos) what = "an integer outside the 64-bit range";
  }
  throw field_error(w, key, std::string("'") + key + "' is " + what + ", not an integer", ErrorKind::kTypeMismatch);
}

void read_number(JsonReader& r, const char* key, const Where& w, double* out) {
  require_value(r);
  if (r.consume_null()) return;
  if (!r.next_is_number())
    throw field_error(w, key, std::string("'") + key + "' is " + json_type_name(r.next_type()) + ", not a number",
                      ErrorKind::kTypeMismatch);
  *out = r.read_double();
}

void read_string(JsonReader& r, const char* key, const Where& w, std::string* out) {
  require_value(r);
  if (r.consume_null()) return;
  if (!r.next_is_string())
    throw field_error(w, key, std::string("'") + key + "' is " + json_type_name(r.next_type()) + ", not a string",
                      ErrorKind::kTypeMismatch);
  *out = r.read_string();
}

void require_present(bool present, const Where& w, const char* key) {
  if (!present)
    throw field_error(w, key, std::string("the required field '") + key + "' is missing", ErrorKind::kNotFound);
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

// One member of an object whose fields are a table: the field named `key`, read by `read`.
struct Field {
  const char* key;
  std::function<void(JsonReader&)> read;
};

// Reads the member `key` through its entry in `fields` (unknown keys are skipped); true when it was one.
bool read_field(JsonReader& r, std::string_view key, const std::vector<Field>& fields) {
  for (const Field& f : fields) {
    if (key == f.key) {
      f.read(r);
      return true;
    }
  }
  r.skip_value();
  return false;
}

MlcParam read_param(JsonReader& r, size_t i, const Where& w) {
  const Where at{w.context_key, w.name, "params[" + std::to_string(i) + "]."};
  if (!r.next_is_object())
    throw field_error(w, "params[" + std::to_string(i) + "]", "a param is not an object", ErrorKind::kTypeMismatch);
  MlcParam out;
  bool has_name = false;
  r.object([&](std::string_view key) {
    if (key == "name") {
      if (r.next_type() != JsonType::kNull) has_name = true;
      read_string(r, "name", at, &out.name);
    } else if (key == "dtype") {
      read_string(r, "dtype", at, &out.dtype);
    } else if (key == "shape") {
      if (r.consume_null()) return;
      if (!r.next_is_array()) throw field_error(at, "shape", "'shape' is not an array", ErrorKind::kTypeMismatch);
      out.shape.clear();
      r.array([&](size_t) {
        // A symbolic dimension is written as its name (a string) or -1.
        int64_t d = -1;
        if (!r.read_integer(&d)) {
          d = -1;
          r.skip_value();
        }
        out.shape.push_back(d);
      });
    } else {
      r.skip_value();
    }
  });
  require_present(has_name, at, "name");
  return out;
}

}  // namespace

MlcChatConfig parse_mlc_chat_config(const std::string& text, const std::string& file) {
  const Where w{"file", file, ""};
  MlcChatConfig c;
  bool has_type = false, has_vocab = false, has_chunk = false;
  auto required = [](bool* seen, JsonReader& r) {
    if (r.next_type() != JsonType::kNull) *seen = true;
  };
  const std::vector<Field> fields = {
      {"model_type",
       [&](JsonReader& r) {
         required(&has_type, r);
         read_string(r, "model_type", w, &c.model_type);
       }},
      {"vocab_size",
       [&](JsonReader& r) {
         required(&has_vocab, r);
         read_int(r, "vocab_size", w, &c.vocab_size);
       }},
      {"prefill_chunk_size",
       [&](JsonReader& r) {
         required(&has_chunk, r);
         read_int(r, "prefill_chunk_size", w, &c.prefill_chunk_size);
       }},
      {"context_window_size", [&](JsonReader& r) { read_int(r, "context_window_size", w, &c.context_window_size); }},
      {"sliding_window_size", [&](JsonReader& r) { read_int(r, "sliding_window_size", w, &c.sliding_window_size); }},
      {"attention_sink_size", [&](JsonReader& r) { read_int(r, "attention_sink_size", w, &c.attention_sink_size); }},
      {"tensor_parallel_shards",
       [&](JsonReader& r) { read_int(r, "tensor_parallel_shards", w, &c.tensor_parallel_shards); }},
      {"pipeline_parallel_stages",
       [&](JsonReader& r) { read_int(r, "pipeline_parallel_stages", w, &c.pipeline_parallel_stages); }},
      {"temperature", [&](JsonReader& r) { read_number(r, "temperature", w, &c.temperature); }},
      {"top_p", [&](JsonReader& r) { read_number(r, "top_p", w, &c.top_p); }},
      {"presence_penalty", [&](JsonReader& r) { read_number(r, "presence_penalty", w, &c.presence_penalty); }},
      {"frequency_penalty", [&](JsonReader& r) { read_number(r, "frequency_penalty", w, &c.frequency_penalty); }},
      {"repetition_penalty", [&](JsonReader& r) { read_number(r, "repetition_penalty", w, &c.repetition_penalty); }},
  };
  read_document(text, w, [&](JsonReader& r, std::string_view key) { read_field(r, key, fields); });
  require_present(has_type, w, "model_type");
  require_present(has_vocab, w, "vocab_size");
  require_present(has_chunk, w, "prefill_chunk_size");
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
  const Where kv{w.context_key, w.name, "kv_cache."};
  MlcModelMetadata m;
  const std::vector<Field> kv_fields = {
      {"num_hidden_layers", [&](JsonReader& r) { read_int(r, "num_hidden_layers", kv, &m.num_hidden_layers); }},
      {"num_attention_heads", [&](JsonReader& r) { read_int(r, "num_attention_heads", kv, &m.num_attention_heads); }},
      {"num_key_value_heads", [&](JsonReader& r) { read_int(r, "num_key_value_heads", kv, &m.num_key_value_heads); }},
      {"head_dim", [&](JsonReader& r) { read_int(r, "head_dim", kv, &m.head_dim); }},
  };
  const std::vector<Field> fields = {
      {"model_type", [&](JsonReader& r) { read_string(r, "model_type", w, &m.model_type); }},
      {"kv_state_kind", [&](JsonReader& r) { read_string(r, "kv_state_kind", w, &m.kv_state_kind); }},
      {"context_window_size", [&](JsonReader& r) { read_int(r, "context_window_size", w, &m.context_window_size); }},
      {"sliding_window_size", [&](JsonReader& r) { read_int(r, "sliding_window_size", w, &m.sliding_window_size); }},
      {"prefill_chunk_size", [&](JsonReader& r) { read_int(r, "prefill_chunk_size", w, &m.prefill_chunk_size); }},
      {"max_batch_size", [&](JsonReader& r) { read_int(r, "max_batch_size", w, &m.max_batch_size); }},
      {"tensor_parallel_shards",
       [&](JsonReader& r) { read_int(r, "tensor_parallel_shards", w, &m.tensor_parallel_shards); }},
      {"pipeline_parallel_stages",
       [&](JsonReader& r) { read_int(r, "pipeline_parallel_stages", w, &m.pipeline_parallel_stages); }},
      {"seqlen_padding_factor",
       [&](JsonReader& r) { read_int(r, "seqlen_padding_factor", w, &m.seqlen_padding_factor); }},
      {"kv_cache",
       [&](JsonReader& r) {
         if (r.consume_null()) return;
         read_object(r, w, "kv_cache", [&](std::string_view key) { read_field(r, key, kv_fields); });
       }},
      // No params: the library takes param_0, param_1, ... (MLC's legacy form).
      {"params",
       [&](JsonReader& r) {
         if (r.consume_null()) return;
         if (!r.next_is_array()) throw field_error(w, "params", "'params' is not an array", ErrorKind::kTypeMismatch);
         m.params.clear();
         r.array([&](size_t i) { m.params.push_back(read_param(r, i, w)); });
       }},
  };
  read_document(text, w, [&](JsonReader& r, std::string_view key) { read_field(r, key, fields); });
  require_at_least(w, "seqlen_padding_factor", m.seqlen_padding_factor, 1);
  require_at_least(w, "max_batch_size", m.max_batch_size, 0);
  require_at_least(w, "prefill_chunk_size", m.prefill_chunk_size, 0);
  m.text = text;
  return m;
}

}  // namespace graphrt
