#include "generation/generate_request.h"

#include <limits>

#include "graphrt/error.h"
#include "graphrt/json_reader.h"

namespace graphrt_serve {

using graphrt::Error;
using graphrt::ErrorKind;
using graphrt::JsonReader;
using graphrt::JsonType;

namespace {

// A generate request nests three deep: {"parameters": {"stop_token_ids": [...]}}.
constexpr graphrt::JsonLimits kGenerateJsonLimits{kMaxGenerateBodyBytes, 3};

// The base's name of the type with its article, as the messages say it ("an object", "null").
std::string type_phrase(JsonType t) {
  const std::string name = graphrt::json_type_name(t);
  if (t == JsonType::kNull) return name;
  return (name[0] == 'a' || name[0] == 'o' ? "an " : "a ") + name;
}

// A value that is not what `what` needs: numbers as written, anything else by its type (an array
// may be large or deep). The value is skipped first, so malformed or too deep text is reported
// as such, not as a wrong type.
std::string describe_and_skip(JsonReader& r) {
  const JsonType t = r.next_type();
  if (t == JsonType::kNumber) return std::string(r.read_number_text());
  r.skip_value();
  return type_phrase(t);
}

// True for what describe_and_skip() returned for an integer (digits, no fraction or exponent).
bool is_integer_text(const std::string& what) {
  return !what.empty() && (what[0] == '-' || (what[0] >= '0' && what[0] <= '9')) &&
         what.find_first_of(".eE") == std::string::npos;
}

int32_t token_id(JsonReader& r, const char* field, size_t i) {
  int64_t v = 0;
  if (r.read_integer(&v)) {
    if (v >= 0 && v <= std::numeric_limits<int32_t>::max()) return static_cast<int32_t>(v);
    throw Error(ErrorKind::kOutOfRange, std::string(field) + " element " + std::to_string(i) + " is " +
                                            std::to_string(v) + ", not a token id (0 <= id < the vocabulary size)")
        .with("field", field);
  }
  const std::string what = describe_and_skip(r);
  if (is_integer_text(what))  // an integer past int64
    throw Error(ErrorKind::kOutOfRange, std::string(field) + " element " + std::to_string(i) + " is " + what +
                                            ", not a token id (0 <= id < the vocabulary size)")
        .with("field", field);
  throw Error(ErrorKind::kTypeMismatch, std::string(field) + " element " + std::to_string(i) + " is " + what +
                                            ", not an integer")
      .with("field", field);
}

std::vector<int32_t> token_ids(JsonReader& r, const char* field) {
  if (!r.next_is_array()) {
    r.skip_value();
    throw Error(ErrorKind::kTypeMismatch, std::string(field) + " must be an array of token ids (integers)")
        .with("field", field);
  }
  std::vector<int32_t> out;
  r.array([&](size_t i) {
    if (i >= kMaxGenerateTokenIds)
      throw Error(ErrorKind::kOutOfRange, "an array of more than " + std::to_string(kMaxGenerateTokenIds) +
                                              " elements (a generate request's limit)")
          .with("field", field);
    out.push_back(token_id(r, field, i));
  });
  return out;
}

int64_t max_tokens(JsonReader& r) {
  int64_t v = 0;
  if (!r.read_integer(&v)) {
    const std::string what = describe_and_skip(r);
    if (is_integer_text(what))  // an integer past int64
      throw Error(ErrorKind::kOutOfRange, "max_tokens is " + what + "; it must be at least 1 (and at most 2^40)")
          .with("field", "max_tokens");
    throw Error(ErrorKind::kTypeMismatch, "max_tokens must be an integer, got " + what).with("field", "max_tokens");
  }
  if (v < 1 || v > int64_t(1) << 40)
    throw Error(ErrorKind::kOutOfRange, "max_tokens is " + std::to_string(v) + "; it must be at least 1 (and at most 2^40)")
        .with("field", "max_tokens");
  return v;
}

// max_tokens or stop_token_ids, given once (top level or parameters).
void set_option(GenerateRequest& req, std::string_view key, JsonReader& r, bool& seen_max, bool& seen_stop) {
  const bool is_max = key == "max_tokens";
  bool& seen = is_max ? seen_max : seen_stop;
  if (seen) throw Error(std::string(key) + " is given twice (top level and parameters)").with("field", std::string(key));
  seen = true;
  if (is_max) req.max_tokens = max_tokens(r);
  else req.stop_token_ids = token_ids(r, "stop_token_ids");
}

GenerateRequest read_request(JsonReader& r) {
  if (!r.next_is_object()) {
    r.skip_value();  // malformed text is reported as such first
    r.expect_end();
    throw Error("the body must be a JSON object").with("field", "body");
  }
  GenerateRequest req;
  bool seen_ids = false, seen_max = false, seen_stop = false;
  r.object_unique_keys([&](std::string_view k) {
    if (k == "id") {
      if (!r.next_is_string()) throw Error(ErrorKind::kTypeMismatch, "id must be a string").with("field", "id");
      req.has_id = true;
      req.id = r.read_string();
    } else if (k == "input_ids") {
      req.input_ids = token_ids(r, "input_ids");
      seen_ids = true;
    } else if (k == "max_tokens" || k == "stop_token_ids") {
      set_option(req, k, r, seen_max, seen_stop);
    } else if (k == "parameters") {
      if (!r.next_is_object())
        throw Error(ErrorKind::kTypeMismatch, "parameters must be an object").with("field", "parameters");
      r.object_unique_keys([&](std::string_view p) {  // others (stream, temperature...) are ignored, as /infer does
        if (p == "max_tokens" || p == "stop_token_ids") set_option(req, p, r, seen_max, seen_stop);
        else r.skip_value();
      });
    } else if (k == "text_input") {
      throw Error(ErrorKind::kUnsupported, "text is not accepted: graphrt-serve has no tokenizer; send input_ids")
          .with("field", "text_input");
    } else {
      const std::string key(k);
      throw Error("unknown field " + graphrt::quote_untrusted(key) +
                  " (known: id, input_ids, max_tokens, stop_token_ids, parameters)")
          .with("field", graphrt::shown_name(key));
    }
  });
  r.expect_end();
  if (!seen_ids) throw Error("input_ids is missing: the prompt's token ids").with("field", "input_ids");
  if (req.input_ids.empty()) throw Error("input_ids is empty: the prompt needs at least one token").with("field", "input_ids");
  return req;
}

}  // namespace

GenerateRequest decode_generate_request(const std::string& body) {
  if (body.size() > kMaxGenerateBodyBytes)
    throw Error(ErrorKind::kOutOfRange, "the body is " + std::to_string(body.size()) + " bytes; a generate request "
                                        "takes at most " + std::to_string(kMaxGenerateBodyBytes))
        .with("field", "body");
  try {
    JsonReader r(body, kGenerateJsonLimits, "the body");
    return read_request(r);
  } catch (Error& e) {
    // The reader's own refusals (malformed text, nesting, a repeated key) name no field.
    if (e.context_value("field").empty()) {
      const std::string member = e.context_value("member");
      e.with("field", member.empty() ? "body" : member);
    }
    throw;
  }
}

}  // namespace graphrt_serve
