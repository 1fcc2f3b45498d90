#include "backends/vm/host/signature.h"

#include "graphrt/error.h"

namespace graphrt {
namespace vm {
namespace {

bool letter_type(char c, ValueType* out) {
  switch (c) {
    case 'i': *out = ValueType::kI32; return true;
    case 'I': *out = ValueType::kI64; return true;
    case 'f': *out = ValueType::kF32; return true;
    case 'F': *out = ValueType::kF64; return true;
    case 'r': *out = ValueType::kRef; return true;
    default: return false;
  }
}

Error malformed(const std::string& cconv, const std::string& why) {
  return Error("malformed signature '" + cconv + "': " + why);
}

std::vector<SignatureItem> parse_fragment(const std::string& cconv, const std::string& frag,
                                          bool allow_variadic) {
  std::vector<SignatureItem> items;
  if (frag == "v") return items;
  for (size_t i = 0; i < frag.size(); ++i) {
    SignatureItem item;
    if (letter_type(frag[i], &item.type)) {
      items.push_back(item);
      continue;
    }
    if (frag[i] != 'C') throw malformed(cconv, std::string("unknown type letter '") + frag[i] + "'");
    if (!allow_variadic) throw malformed(cconv, "variadic span in results");
    item.variadic = true;
    ValueType t;
    for (++i; i < frag.size() && letter_type(frag[i], &t); ++i) item.tuple.push_back(t);
    if (i >= frag.size() || frag[i] != 'D') throw malformed(cconv, "unterminated C..D span");
    if (item.tuple.empty()) throw malformed(cconv, "empty C..D span");
    items.push_back(item);
  }
  return items;
}

void append_items(std::string* out, const std::vector<SignatureItem>& items) {
  if (items.empty()) {
    *out += 'v';
    return;
  }
  for (const SignatureItem& item : items) {
    if (!item.variadic) {
      *out += value_type_letter(item.type);
      continue;
    }
    *out += 'C';
    for (ValueType t : item.tuple) *out += value_type_letter(t);
    *out += 'D';
  }
}

std::vector<ValueType> flat_types(const std::vector<SignatureItem>& items) {
  std::vector<ValueType> out;
  for (const SignatureItem& item : items) out.push_back(item.type);
  return out;
}

}  // namespace

Signature parse_signature(const std::string& cconv) {
  Signature sig;
  if (cconv.empty()) return sig;
  if (cconv[0] != '0') throw malformed(cconv, "version byte must be '0'");
  const std::string rest = cconv.substr(1);
  const size_t split = rest.find('_');
  sig.args = parse_fragment(cconv, rest.substr(0, split), true);
  if (split != std::string::npos) sig.results = parse_fragment(cconv, rest.substr(split + 1), false);
  return sig;
}

std::string canonical_signature(const std::string& cconv) { return parse_signature(cconv).to_string(); }

bool Signature::is_variadic() const {
  for (const SignatureItem& item : args) {
    if (item.variadic) return true;
  }
  return false;
}

std::vector<ValueType> Signature::arg_types() const { return flat_types(args); }
std::vector<ValueType> Signature::result_types() const { return flat_types(results); }

std::string Signature::to_string() const {
  std::string out = "0";
  append_items(&out, args);
  out += '_';
  append_items(&out, results);
  return out;
}

void check_values(const std::vector<SignatureItem>& items, const Value* values, size_t count,
                  const std::string& what) {
  size_t pos = 0;
  auto expect = [&](ValueType t) {
    if (pos >= count) throw Error(what + ": too few values");
    if (values[pos].type != t) {
      throw Error(what + ": value " + std::to_string(pos) + " is " + value_type_name(values[pos].type) +
                  ", expected " + value_type_name(t));
    }
    ++pos;
  };
  for (const SignatureItem& item : items) {
    if (!item.variadic) {
      expect(item.type);
      continue;
    }
    expect(ValueType::kI32);
    const int32_t count = values[pos - 1].i32;
    if (count < 0) throw Error(what + ": negative span count");
    for (int32_t k = 0; k < count; ++k) {
      for (ValueType t : item.tuple) expect(t);
    }
  }
  if (pos != count) throw Error(what + ": too many values");
}

}  // namespace vm
}  // namespace graphrt
