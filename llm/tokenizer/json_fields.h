// Reading the tokenizers' JSON files (tokenizer.json, vocab.json, added_tokens.json,
// tokenizer_config.json, tokenizer_info) with the base reader (graphrt/json_reader.h), and typed
// field access whose errors name the file and the field ("model.merges[12]").
//
// These formats are read out of order (a normalizer's "type" decides what its other members
// mean, and may come after them), so a JsonDoc keeps no tree: the text is checked whole once,
// and an object's or an array's members are found by one scan of its text the first time one
// of them is asked for (their offsets kept, not their values). The large parts (a vocabulary
// of 150k tokens, its merges) are read straight from the text into what the tokenizer keeps.
//
// A member name given twice: the last counts, as in Hugging Face's reader (serde_json's map
// visitors overwrite) and as graphrt did before it read them with the base reader.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "graphrt/json_reader.h"

namespace graphrt::llm {

// Nesting deeper than this is refused: the files read here nest a few levels (a Sequence of
// decoders in a Sequence); hostile input must not cost stack or time.
constexpr int kMaxJsonDepth = 64;
// Far above any shipped tokenizer file (Llama-3's tokenizer.json is 9 MB, Gemma's 33 MB).
constexpr size_t kMaxTokenizerFileBytes = size_t(512) << 20;
constexpr JsonLimits kTokenizerJsonLimits{kMaxTokenizerFileBytes, kMaxJsonDepth};
// The largest token id the tokenizers accept (ids are int32 on the model's side).
constexpr int64_t kMaxTokenId = (int64_t(1) << 31) - 1;

// `s` for an error message: quoted, control bytes escaped, cut after `limit` bytes.
std::string quote_cut(std::string_view s, size_t limit = 48);
// `path` + "." + `key`, the key shown as it is when short printable ASCII, else quoted and cut.
std::string member_path(const std::string& path, std::string_view key);

// An error [file, field] about the field at `path` of `origin`.
[[noreturn]] void fail_field(const std::string& origin, const std::string& path, const std::string& what);

class JsonDoc;

// A JSON value of a document with the file and the path it was found at, for errors. An
// absent member (member_or_null) is a null at its path.
struct JsonAt {
  const JsonDoc* doc;
  size_t offset;  // the value's first byte in the text; kAbsent for an absent member
  const std::string& origin;
  std::string path;

  static constexpr size_t kAbsent = ~size_t(0);

  JsonType type() const;
  bool is_null() const { return type() == JsonType::kNull; }
  bool is_object() const { return type() == JsonType::kObject; }
  bool is_array() const { return type() == JsonType::kArray; }
  bool is_string() const { return type() == JsonType::kString; }
  bool is_integer() const;  // a number without fraction or exponent, within int64

  JsonAt member(const char* key) const;
  // The member, or a JSON null at its path when absent.
  JsonAt member_or_null(const char* key) const;
  JsonAt element(size_t index) const;
  bool has(const char* key) const;
  // True when the member is there and not null.
  bool has_non_null(const char* key) const;
  // The number of elements (refused unless an array) or members (unless an object).
  size_t size() const;
  size_t object_size() const;

  // Calls visit(name, value) for each member (refused unless an object), in the bytewise order
  // of their names, the last of a repeated name.
  void each_member(const std::function<void(const std::string&, const JsonAt&)>& visit) const;

  void object() const;  // refused unless an object
  void array() const;   // refused unless an array
  std::string string() const;
  bool boolean() const;
  int64_t integer(int64_t min, int64_t max) const;
  double number() const;

  std::string string_or(const char* key, const std::string& fallback) const;
  bool bool_or(const char* key, bool fallback) const;

  // The value's text as written (to hand a part of a document to its own reader).
  std::string raw_text() const { return reader().raw_value(); }
  // A reader at this value (for the large parts, read in one pass by their callers).
  JsonReader reader() const;
  // The value at `at`, an offset a reader() of this value reached, named `sub_path`.
  JsonAt at_offset(size_t at, std::string sub_path) const { return JsonAt{doc, at, origin, std::move(sub_path)}; }

  [[noreturn]] void fail(const std::string& what) const { fail_field(origin, path, what); }
};

// The text of one JSON document, checked whole (malformed or too deep text is an
// invalid-argument error "<origin> is not valid JSON: ... at byte N", carrying `origin` as its
// `context_key` context value unless that is null), and the members of its objects and arrays
// as they are asked for. `text` must outlive the document.
class JsonDoc {
 public:
  JsonDoc(std::string_view text, std::string origin, JsonLimits limits, const char* context_key = "file");
  JsonDoc(const JsonDoc&) = delete;
  JsonDoc& operator=(const JsonDoc&) = delete;

  JsonAt root(std::string path = "") const { return JsonAt{this, root_offset_, origin_, std::move(path)}; }
  const std::string& origin() const { return origin_; }
  JsonReader reader_at(size_t offset) const;

  // Where an object's member values begin (the last of a repeated name), by name.
  using Members = std::map<std::string, size_t, std::less<>>;
  const Members& members(size_t object_offset) const;
  // Where an array's elements begin, in order.
  const std::vector<size_t>& elements(size_t array_offset) const;

 private:
  // The members of the object at `r`, and those of the objects in it `nested` levels down.
  Members scan_members(JsonReader& r, int nested) const;

  std::string_view text_;
  std::string origin_;
  JsonLimits limits_;
  size_t root_offset_ = 0;
  mutable std::unordered_map<size_t, std::unique_ptr<Members>> members_;
  mutable std::unordered_map<size_t, std::unique_ptr<std::vector<size_t>>> elements_;
};

// A {token: id} object (a vocabulary, added_tokens.json), ids in [0, kMaxTokenId]; the last of
// a repeated token counts.
std::unordered_map<std::string, int32_t> read_token_ids(const JsonAt& object);

}  // namespace graphrt::llm
