#include "llm/tokenizer/json_fields.h"

#include <cstdio>

#include "graphrt/error.h"

namespace graphrt::llm {

std::string quote_cut(std::string_view s, size_t limit) {
  std::string out = "'";
  const size_t n = s.size() < limit ? s.size() : limit;
  for (size_t i = 0; i < n; ++i) {
    const auto c = static_cast<unsigned char>(s[i]);
    if (c < 0x20 || c == 0x7F || c == '\'' || c == '\\') {
      char buf[8];
      std::snprintf(buf, sizeof(buf), "\\x%02X", c);
      out += buf;
    } else {
      out += static_cast<char>(c);
    }
  }
  out += n < s.size() ? "'..." : "'";
  return out;
}

std::string member_path(const std::string& path, std::string_view key) {
  const std::string shown = shown_name(std::string(key), 48);
  return path.empty() ? shown : path + "." + shown;
}

void fail_field(const std::string& origin, const std::string& path, const std::string& what) {
  throw Error(origin + ": " + (path.empty() ? std::string("the document") : "'" + path + "'") + " " + what)
      .with("file", origin)
      .with("field", path);
}

JsonDoc::JsonDoc(std::string_view text, std::string origin, JsonLimits limits, const char* context_key)
    : text_(text), origin_(std::move(origin)), limits_(limits) {
  try {
    JsonReader r(text_, limits_, origin_.c_str());
    (void)r.peek();
    root_offset_ = r.offset();
    // The whole text is checked here, so that malformed text is refused as such before any
    // field is read; the members of the root object and of the objects in it (tokenizer.json's
    // model, whose vocabulary is most of the text) are found in the same pass.
    if (r.next_is_object()) members_.emplace(root_offset_, std::make_unique<Members>(scan_members(r, 1)));
    else r.skip_value();
    r.expect_end();
  } catch (Error& e) {
    if (context_key && e.context_value(context_key).empty()) e.with(context_key, origin_);
    throw;
  }
}

JsonReader JsonDoc::reader_at(size_t offset) const {
  JsonReader r(text_, limits_, origin_.c_str());
  r.rewind(offset);
  return r;
}

JsonDoc::Members JsonDoc::scan_members(JsonReader& r, int nested) const {
  Members out;
  r.object([&](std::string_view key) {
    (void)r.peek();
    const size_t at = r.offset();
    const auto it = out.find(key);
    if (it == out.end()) out.emplace(std::string(key), at);
    else it->second = at;  // the last of a repeated name counts
    if (nested > 0 && r.next_is_object()) members_[at] = std::make_unique<Members>(scan_members(r, nested - 1));
    else r.skip_value();
  });
  return out;
}

const JsonDoc::Members& JsonDoc::members(size_t object_offset) const {
  auto& slot = members_[object_offset];
  if (!slot) {
    JsonReader r = reader_at(object_offset);
    slot = std::make_unique<Members>(scan_members(r, 0));
  }
  return *slot;
}

const std::vector<size_t>& JsonDoc::elements(size_t array_offset) const {
  auto& slot = elements_[array_offset];
  if (!slot) {
    JsonReader r = reader_at(array_offset);
    auto out = std::make_unique<std::vector<size_t>>();
    r.array([&](size_t) {
      (void)r.peek();
      out->push_back(r.offset());
      r.skip_value();
    });
    slot = std::move(out);
  }
  return *slot;
}

JsonType JsonAt::type() const { return offset == kAbsent ? JsonType::kNull : doc->reader_at(offset).next_type(); }

bool JsonAt::is_integer() const {
  if (offset == kAbsent) return false;
  JsonReader r = reader();
  int64_t v = 0;
  return r.read_integer(&v);
}

JsonReader JsonAt::reader() const { return doc->reader_at(offset); }

JsonAt JsonAt::member(const char* key) const {
  object();
  const JsonDoc::Members& members = doc->members(offset);
  const auto it = members.find(std::string_view(key));
  std::string sub = path.empty() ? key : path + "." + key;
  if (it == members.end()) fail_field(origin, sub, "is missing");
  return JsonAt{doc, it->second, origin, std::move(sub)};
}

JsonAt JsonAt::member_or_null(const char* key) const {
  if (has(key)) return member(key);
  return JsonAt{doc, kAbsent, origin, path.empty() ? key : path + "." + key};
}

JsonAt JsonAt::element(size_t index) const {
  array();
  const std::vector<size_t>& elements = doc->elements(offset);
  std::string sub = path + "[" + std::to_string(index) + "]";
  if (index >= elements.size()) fail_field(origin, sub, "is missing");
  return JsonAt{doc, elements[index], origin, std::move(sub)};
}

bool JsonAt::has(const char* key) const {
  if (!is_object()) return false;
  const JsonDoc::Members& members = doc->members(offset);
  return members.find(std::string_view(key)) != members.end();
}

bool JsonAt::has_non_null(const char* key) const { return has(key) && !member(key).is_null(); }

size_t JsonAt::size() const {
  array();
  return doc->elements(offset).size();
}

size_t JsonAt::object_size() const {
  object();
  return doc->members(offset).size();
}

void JsonAt::each_member(const std::function<void(const std::string&, const JsonAt&)>& visit) const {
  object();
  for (const auto& [name, at] : doc->members(offset)) visit(name, JsonAt{doc, at, origin, member_path(path, name)});
}

void JsonAt::object() const {
  const JsonType t = type();
  if (t != JsonType::kObject) fail(std::string("is not an object (") + json_type_name(t) + ")");
}

void JsonAt::array() const {
  const JsonType t = type();
  if (t != JsonType::kArray) fail(std::string("is not an array (") + json_type_name(t) + ")");
}

std::string JsonAt::string() const {
  const JsonType t = type();
  if (t != JsonType::kString) fail(std::string("is not a string (") + json_type_name(t) + ")");
  return reader().read_string();
}

bool JsonAt::boolean() const {
  const JsonType t = type();
  if (t != JsonType::kBool) fail(std::string("is not a boolean (") + json_type_name(t) + ")");
  return reader().read_bool();
}

int64_t JsonAt::integer(int64_t min, int64_t max) const {
  const JsonType t = type();
  const std::string range = "[" + std::to_string(min) + ", " + std::to_string(max) + "]";
  if (t != JsonType::kNumber) fail(std::string("is not an integer (") + json_type_name(t) + ")");
  JsonReader r = reader();
  int64_t v = 0;
  if (!r.read_integer(&v)) {
    uint64_t big = 0;
    if (r.read_unsigned(&big)) fail("is out of range " + range);
    fail("is not an integer (number)");
  }
  if (v < min || v > max) fail(std::to_string(v) + " is out of range " + range);
  return v;
}

double JsonAt::number() const {
  const JsonType t = type();
  if (t != JsonType::kNumber) fail(std::string("is not a number (") + json_type_name(t) + ")");
  try {
    return reader().read_double();
  } catch (Error& e) {
    throw e.with("file", origin).with("field", path);
  }
}

std::string JsonAt::string_or(const char* key, const std::string& fallback) const {
  return has_non_null(key) ? member(key).string() : fallback;
}

bool JsonAt::bool_or(const char* key, bool fallback) const {
  return has_non_null(key) ? member(key).boolean() : fallback;
}

std::unordered_map<std::string, int32_t> read_token_ids(const JsonAt& object) {
  object.object();
  std::unordered_map<std::string, int32_t> out;
  JsonReader r = object.reader();
  r.object([&](std::string_view key) {
    int64_t id = -1;
    if (!r.read_integer(&id) || id < 0 || id > kMaxTokenId) {
      // The refusal, with the file and the field: integer() throws for every value that gets here.
      (void)r.peek();
      id = object.at_offset(r.offset(), member_path(object.path, key)).integer(0, kMaxTokenId);
    }
    out.insert_or_assign(std::string(key), static_cast<int32_t>(id));
  });
  return out;
}

}  // namespace graphrt::llm
