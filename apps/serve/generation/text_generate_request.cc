#include "generation/text_generate_request.h"

#include <algorithm>

#include <nlohmann/json.hpp>

#include "graphrt/error.h"

namespace graphrt_serve {

using graphrt::Error;
using graphrt::ErrorKind;
using json = nlohmann::json;

namespace {

Error field_error(ErrorKind kind, const std::string& field, const std::string& message) {
  return Error(kind, field + " " + message).with("field", field);
}

// A TensorRT-LLM field, or one of graphrt's sampling fields, into `sampling` (graphrt's spelling).
void sampling_field(const std::string& key, const json& v, json& sampling) {
  const auto set = [&](const std::string& name, const json& value) {
    if (sampling.contains(name)) throw field_error(ErrorKind::kInvalidArgument, key, "is given twice");
    sampling[name] = value;
  };
  if (key == "stop_words") {
    const bool none = v.is_null() || v == "" || (v.is_array() && v.empty());
    if (!none) set("stop", v);
  } else if (key == "random_seed") {
    set("seed", v);
  } else if (key == "end_id") {
    if (!v.is_number_integer()) throw field_error(ErrorKind::kTypeMismatch, key, "must be a token id");
    set("stop_token_ids", json::array({v}));
  } else if (key == "return_log_probs") {
    if (!v.is_boolean()) throw field_error(ErrorKind::kTypeMismatch, key, "must be true or false");
    set("logprobs", v);
  } else if (key == "beam_width") {
    if (v != 1) throw field_error(ErrorKind::kUnsupported, key, "must be 1 (no beam search)");
  } else if (key == "bad_words") {
    if (!(v.is_null() || v == "" || (v.is_array() && v.empty())))
      throw field_error(ErrorKind::kUnsupported, key, "is not supported (use logit_bias)");
  } else if (key == "exclude_input_in_output") {
    if (!v.is_boolean()) throw field_error(ErrorKind::kTypeMismatch, key, "must be true or false");
  } else if (key == "pad_id") {
    if (!v.is_number_integer()) throw field_error(ErrorKind::kTypeMismatch, key, "must be a token id");
  } else {
    const auto& known = graphrt::generation_config_fields();
    if (std::find(known.begin(), known.end(), key) == known.end())
      throw field_error(ErrorKind::kInvalidArgument, key, "is not a field of generate (text_input, parameters, "
                                                          "stream, id, or a sampling field)");
    set(key, v);
  }
}

}  // namespace

bool is_text_generate_request(const std::string& body) {
  const json j = json::parse(body, nullptr, false);
  return j.is_object() && j.contains("text_input");
}

TextGenerateRequest decode_text_generate_request(const std::string& body) {
  const json j = json::parse(body, nullptr, false);
  if (j.is_discarded()) throw Error(ErrorKind::kInvalidArgument, "the request body is not valid JSON");
  if (!j.is_object()) throw Error(ErrorKind::kTypeMismatch, "the request body must be a JSON object");
  TextGenerateRequest r;
  json sampling = json::object();
  const auto stream_field = [&](const json& v) {
    if (!v.is_boolean()) throw field_error(ErrorKind::kTypeMismatch, "stream", "must be true or false");
    if (r.has_stream) throw field_error(ErrorKind::kInvalidArgument, "stream", "is given twice");
    r.has_stream = true;
    r.stream = v.get<bool>();
  };
  bool has_text = false;
  for (const auto& kv : j.items()) {
    const std::string& key = kv.key();
    const json& v = kv.value();
    if (key == "text_input") {
      if (!v.is_string()) throw field_error(ErrorKind::kTypeMismatch, key, "must be a string");
      r.text_input = v.get<std::string>();
      has_text = true;
    } else if (key == "id") {
      if (!v.is_string()) throw field_error(ErrorKind::kTypeMismatch, key, "must be a string");
      r.has_id = true;
      r.id = v.get<std::string>();
    } else if (key == "stream") {
      stream_field(v);
    } else if (key == "parameters") {
      if (!v.is_object()) throw field_error(ErrorKind::kTypeMismatch, key, "must be an object");
      for (const auto& p : v.items()) {
        if (p.key() == "stream") stream_field(p.value());
        else sampling_field(p.key(), p.value(), sampling);
      }
    } else {
      sampling_field(key, v, sampling);
    }
  }
  if (!has_text) throw field_error(ErrorKind::kInvalidArgument, "text_input", "is required");
  r.sampling_json = sampling.dump();
  return r;
}

}  // namespace graphrt_serve
