#include "generation/generate_request.h"

#include <functional>
#include <limits>
#include <set>

#include <nlohmann/json.hpp>

#include "graphrt/error.h"

namespace graphrt_serve {

using graphrt::Error;
using graphrt::ErrorKind;
using json = nlohmann::json;

namespace {

// A value in an error message: numbers as written, anything else by its type (an array may be large or deep).
std::string describe(const json& v) { return v.is_number() ? v.dump() : std::string("a ") + v.type_name(); }

std::vector<int32_t> token_ids(const json& v, const char* field) {
  if (!v.is_array()) throw Error(ErrorKind::kTypeMismatch, std::string(field) + " must be an array of token ids (integers)").with("field", field);
  std::vector<int32_t> out;
  out.reserve(v.size());
  for (size_t i = 0; i < v.size(); ++i) {
    const json& t = v[i];
    if (!t.is_number_integer())
      throw Error(ErrorKind::kTypeMismatch, std::string(field) + " element " + std::to_string(i) + " is " + describe(t) + ", not an integer")
          .with("field", field);
    const bool negative = t.is_number_unsigned() ? false : t.get<int64_t>() < 0;
    if (negative || (t.is_number_unsigned() ? t.get<uint64_t>() > uint64_t(std::numeric_limits<int32_t>::max())
                                            : t.get<int64_t>() > std::numeric_limits<int32_t>::max()))
      throw Error(ErrorKind::kOutOfRange, std::string(field) + " element " + std::to_string(i) + " is " + t.dump() +
                                              ", not a token id (0 <= id < the vocabulary size)")
          .with("field", field);
    out.push_back(static_cast<int32_t>(t.get<int64_t>()));
  }
  return out;
}

int64_t max_tokens(const json& v) {
  if (!v.is_number_integer())
    throw Error(ErrorKind::kTypeMismatch, "max_tokens must be an integer, got " + describe(v)).with("field", "max_tokens");
  if (v.is_number_unsigned() ? v.get<uint64_t>() < 1 || v.get<uint64_t>() > uint64_t(1) << 40 : v.get<int64_t>() < 1)
    throw Error(ErrorKind::kOutOfRange, "max_tokens is " + v.dump() + "; it must be at least 1 (and at most 2^40)")
        .with("field", "max_tokens");
  return v.get<int64_t>();
}

// max_tokens or stop_token_ids, given once (top level or parameters).
void set_option(GenerateRequest& r, const std::string& key, const json& v, bool& seen_max, bool& seen_stop) {
  bool& seen = key == "max_tokens" ? seen_max : seen_stop;
  if (seen) throw Error(key + " is given twice (top level and parameters)").with("field", key);
  seen = true;
  if (key == "max_tokens") r.max_tokens = max_tokens(v);
  else r.stop_token_ids = token_ids(v, "stop_token_ids");
}

}  // namespace

namespace {

// What the parse refuses while it reads, before the tree holds it: nesting deeper than a generate
// request's three levels ({"parameters": {"stop_token_ids": [...]}}), a key given twice in one
// object (the tree would keep the last silently; /infer refuses them too), an array longer than
// kMaxGenerateTokenIds.
class ParseGuard {
 public:
  bool operator()(int depth, json::parse_event_t event, json& parsed) {
    if (depth > 3) throw Error("nested deeper than a generate request (3 levels)").with("field", "body");
    switch (event) {
      case json::parse_event_t::object_start: keys_.emplace_back(); break;
      case json::parse_event_t::object_end: keys_.pop_back(); break;
      case json::parse_event_t::key: {
        const std::string key = parsed.get<std::string>();
        if (!keys_.back().insert(key).second)
          throw Error("key " + graphrt::quote_untrusted(key) + " is given twice in one object")
              .with("field", graphrt::shown_name(key));
        last_key_ = key;
        break;
      }
      case json::parse_event_t::array_start: elements_.push_back(0); break;
      case json::parse_event_t::array_end: elements_.pop_back(); break;
      case json::parse_event_t::value:
        if (!elements_.empty() && ++elements_.back() > kMaxGenerateTokenIds)
          throw Error(ErrorKind::kOutOfRange, "an array of more than " + std::to_string(kMaxGenerateTokenIds) +
                                                  " elements (a generate request's limit)")
              .with("field", graphrt::shown_name(last_key_));
        break;
    }
    return true;
  }

 private:
  std::vector<std::set<std::string>> keys_;  // per open object
  std::vector<size_t> elements_;             // per open array
  std::string last_key_;
};

}  // namespace

GenerateRequest decode_generate_request(const std::string& body) {
  if (body.size() > kMaxGenerateBodyBytes)
    throw Error(ErrorKind::kOutOfRange, "the body is " + std::to_string(body.size()) + " bytes; a generate request "
                                        "takes at most " + std::to_string(kMaxGenerateBodyBytes))
        .with("field", "body");
  ParseGuard guard;
  const json root = json::parse(body, std::ref(guard), false);
  if (root.is_discarded()) throw Error("the body is not JSON").with("field", "body");
  if (!root.is_object()) throw Error("the body must be a JSON object").with("field", "body");
  GenerateRequest r;
  bool seen_ids = false, seen_max = false, seen_stop = false;
  for (auto it = root.begin(); it != root.end(); ++it) {
    const std::string& k = it.key();
    if (k == "id") {
      if (!it->is_string()) throw Error(ErrorKind::kTypeMismatch, "id must be a string").with("field", "id");
      r.has_id = true;
      r.id = it->get<std::string>();
    } else if (k == "input_ids") {
      r.input_ids = token_ids(*it, "input_ids");
      seen_ids = true;
    } else if (k == "max_tokens" || k == "stop_token_ids") {
      set_option(r, k, *it, seen_max, seen_stop);
    } else if (k == "parameters") {
      if (!it->is_object()) throw Error(ErrorKind::kTypeMismatch, "parameters must be an object").with("field", "parameters");
      for (auto p = it->begin(); p != it->end(); ++p)  // others (stream, temperature...) are ignored, as /infer does
        if (p.key() == "max_tokens" || p.key() == "stop_token_ids") set_option(r, p.key(), *p, seen_max, seen_stop);
    } else if (k == "text_input") {
      throw Error(ErrorKind::kUnsupported, "text is not accepted: graphrt-serve has no tokenizer; send input_ids")
          .with("field", "text_input");
    } else {
      throw Error("unknown field " + graphrt::quote_untrusted(k) + " (known: id, input_ids, max_tokens, stop_token_ids, parameters)")
          .with("field", k);
    }
  }
  if (!seen_ids) throw Error("input_ids is missing: the prompt's token ids").with("field", "input_ids");
  if (r.input_ids.empty()) throw Error("input_ids is empty: the prompt needs at least one token").with("field", "input_ids");
  return r;
}

}  // namespace graphrt_serve
