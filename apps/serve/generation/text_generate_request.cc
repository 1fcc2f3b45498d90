#include "generation/text_generate_request.h"

#include <algorithm>
#include <vector>

#include "graphrt/error.h"
#include "graphrt/json_reader.h"
#include "graphrt/json_writer.h"
#include "protocol/json_body.h"

namespace graphrt_serve {

using graphrt::Error;
using graphrt::ErrorKind;
using graphrt::JsonReader;
using graphrt::JsonType;
using graphrt::JsonWriter;

namespace {

// Deep enough for any sampling value (a list of stop strings, logit_bias) to be refused by its
// content, not by its nesting.
constexpr graphrt::JsonLimits kTextGenerateJsonLimits{kMaxTextGenerateBodyBytes, 32};

Error field_error(ErrorKind kind, const std::string& field, const std::string& message) {
  return Error(kind, field + " " + message).with("field", field);
}

Error field_error(ErrorKind kind, std::string_view field, const std::string& message) {
  return field_error(kind, graphrt::shown_name(std::string(field)), message);
}

// True for a value (as written) that TensorRT-LLM takes for "none": null, "" or [].
bool is_none(const std::string& raw) {
  if (raw == "null" || raw == "\"\"") return true;
  if (raw.empty() || raw[0] != '[') return false;
  const size_t next = raw.find_first_not_of(" \t\r\n", 1);
  return next != std::string::npos && raw[next] == ']';
}

// An integer's text (no fraction or exponent), as a token id is written; false, nothing read, else.
bool read_integer_text(JsonReader& r, std::string_view* text) {
  if (!r.next_is_number()) return false;
  const size_t at = r.offset();
  *text = r.read_number_text();
  if (text->find_first_of(".eE") == std::string_view::npos) return true;
  r.rewind(at);
  return false;
}

// The sampling fields in graphrt's spelling, each set once whichever name the request gave it by.
class SamplingFields {
 public:
  SamplingFields() { json_.begin_object(); }

  // The writer, at the member `name`, for the request's field `key`; refused when set already.
  JsonWriter& set(std::string_view key, std::string_view name) {
    if (std::find(names_.begin(), names_.end(), name) != names_.end())
      throw field_error(ErrorKind::kInvalidArgument, key, "is given twice");
    names_.emplace_back(name);
    return json_.key(name);
  }
  std::string take() { return json_.end_object().take(); }

 private:
  JsonWriter json_;
  std::vector<std::string> names_;
};

// A TensorRT-LLM field, or one of graphrt's sampling fields, into `sampling` (graphrt's spelling).
void sampling_field(std::string_view key, JsonReader& r, SamplingFields& sampling) {
  std::string_view integer;
  if (key == "stop_words") {
    const std::string v = r.raw_value();
    if (!is_none(v)) sampling.set(key, "stop").raw(v);
  } else if (key == "random_seed") {
    sampling.set(key, "seed").raw(r.raw_value());
  } else if (key == "end_id") {
    if (!read_integer_text(r, &integer)) refuse_value(r, field_error(ErrorKind::kTypeMismatch, key, "must be a token id"));
    sampling.set(key, "stop_token_ids").begin_array().raw(integer).end_array();
  } else if (key == "return_log_probs") {
    if (r.next_type() != JsonType::kBool)
      refuse_value(r, field_error(ErrorKind::kTypeMismatch, key, "must be true or false"));
    const bool v = r.read_bool();
    sampling.set(key, "logprobs").boolean(v);
  } else if (key == "beam_width") {
    const auto unsupported = [&] { return field_error(ErrorKind::kUnsupported, key, "must be 1 (no beam search)"); };
    if (!r.next_is_number()) refuse_value(r, unsupported());
    if (r.read_double() != 1) throw unsupported();
  } else if (key == "bad_words") {
    if (!is_none(r.raw_value())) throw field_error(ErrorKind::kUnsupported, key, "is not supported (use logit_bias)");
  } else if (key == "exclude_input_in_output") {
    if (r.next_type() != JsonType::kBool)
      refuse_value(r, field_error(ErrorKind::kTypeMismatch, key, "must be true or false"));
    r.read_bool();
  } else if (key == "pad_id") {
    if (!read_integer_text(r, &integer)) refuse_value(r, field_error(ErrorKind::kTypeMismatch, key, "must be a token id"));
  } else {
    const auto& known = graphrt::generation_config_fields();
    if (std::find(known.begin(), known.end(), key) == known.end())
      refuse_value(r, field_error(ErrorKind::kInvalidArgument, key, "is not a field of generate (text_input, "
                                                                    "parameters, stream, id, or a sampling field)"));
    sampling.set(key, key).raw(r.raw_value());
  }
}

}  // namespace

TextGenerateRequest decode_text_generate_request(const std::string& body) {
  if (body.size() > kMaxTextGenerateBodyBytes)
    throw Error(ErrorKind::kOutOfRange, "the request body is " + std::to_string(body.size()) +
                                            " bytes; a generate request takes at most " +
                                            std::to_string(kMaxTextGenerateBodyBytes));
  TextGenerateRequest out;
  std::string in_member;  // the top-level member being read: the field of the reader's refusals in its value
  try {
    JsonReader r(body, kTextGenerateJsonLimits, "the request body");
    if (!r.next_is_object()) {
      r.skip_value();  // malformed text is reported as such first
      r.expect_end();
      throw Error(ErrorKind::kTypeMismatch, "the request body must be a JSON object");
    }
    SamplingFields sampling;
    const auto stream_field = [&] {
      if (r.next_type() != JsonType::kBool)
        refuse_value(r, field_error(ErrorKind::kTypeMismatch, std::string("stream"), "must be true or false"));
      if (out.has_stream) refuse_value(r, field_error(ErrorKind::kInvalidArgument, std::string("stream"), "is given twice"));
      out.has_stream = true;
      out.stream = r.read_bool();
    };
    bool has_text = false;
    r.object_unique_keys([&](std::string_view k) {
      in_member.assign(k.data(), k.size());
      if (k == "text_input") {
        if (!r.next_is_string()) refuse_value(r, field_error(ErrorKind::kTypeMismatch, k, "must be a string"));
        out.text_input = r.read_string();
        has_text = true;
      } else if (k == "id") {
        if (!r.next_is_string()) refuse_value(r, field_error(ErrorKind::kTypeMismatch, k, "must be a string"));
        out.has_id = true;
        out.id = r.read_string();
      } else if (k == "stream") {
        stream_field();
      } else if (k == "parameters") {
        if (!r.next_is_object()) refuse_value(r, field_error(ErrorKind::kTypeMismatch, k, "must be an object"));
        r.object_unique_keys([&](std::string_view p) {
          if (p == "stream") stream_field();
          else sampling_field(p, r, sampling);
        });
      } else {
        sampling_field(k, r, sampling);
      }
      in_member.clear();
    });
    r.expect_end();
    if (!has_text) throw field_error(ErrorKind::kInvalidArgument, std::string("text_input"), "is required");
    out.sampling_json = sampling.take();
  } catch (Error& e) {
    name_json_refusal(e, body, kTextGenerateJsonLimits, "the request body", in_member);
    throw;
  }
  return out;
}

}  // namespace graphrt_serve
